/**
 * The OAuth store (src/store/oauth-store.ts) in the token file: tables `oauth_*` beside `tokens`,
 * in the database sqlite-tokens.ts opens, so `token list` and `token revoke` see grants without
 * opening the memory. Secrets are stored as their SHA-256 only.
 *
 * Several processes may share the file (serve --http and the token commands), so every step that
 * reads and then writes runs in a BEGIN IMMEDIATE transaction: it takes the write lock before its
 * first read, and two processes consuming one code are serialised (the second sees it used). A
 * deferred transaction would read first and could fail to upgrade its lock instead of waiting.
 * Grants own their codes and tokens (ON DELETE CASCADE, and explicit deletes where a grant ends,
 * so a connection without foreign keys enforced leaves nothing behind either).
 */
import type Database from 'better-sqlite3';
import type { ApprovalCode, CodeExchange, IssuedTokens, OAuthStore, Rotation } from '../oauth-store.js';
import {
  CLIENT_COLUMNS,
  CODE_COLUMNS,
  GRANT_COLUMNS,
  narrowScope,
  rotationRefusal,
  toClient,
  toCode,
  toGrant,
  type ClientRow,
  type CodeRow,
  type GrantRow,
} from '../oauth-rows.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS oauth_clients (
  client_id TEXT PRIMARY KEY,
  client_name TEXT,
  client_uri TEXT,
  redirect_uris TEXT NOT NULL,
  token_endpoint_auth_method TEXT NOT NULL,
  secret_hash TEXT,
  registered_by TEXT NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS oauth_clients_by_registrant ON oauth_clients (registered_by, created_at);
CREATE TABLE IF NOT EXISTS oauth_approval_codes (
  hash TEXT PRIMARY KEY,
  namespace TEXT NOT NULL,
  read_only INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS oauth_grants (
  id TEXT PRIMARY KEY,
  client_id TEXT NOT NULL,
  client_name TEXT,
  namespace TEXT NOT NULL,
  read_only INTEGER NOT NULL,
  resource TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  last_used_at INTEGER,
  issued INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE TABLE IF NOT EXISTS oauth_codes (
  hash TEXT PRIMARY KEY,
  grant_id TEXT NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
  client_id TEXT NOT NULL,
  redirect_uri TEXT NOT NULL,
  code_challenge TEXT NOT NULL,
  resource TEXT NOT NULL,
  scope TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  used INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX IF NOT EXISTS oauth_codes_by_grant ON oauth_codes (grant_id);
CREATE TABLE IF NOT EXISTS oauth_access_tokens (
  hash TEXT PRIMARY KEY,
  grant_id TEXT NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
  scope TEXT NOT NULL,
  expires_at INTEGER NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS oauth_access_tokens_by_grant ON oauth_access_tokens (grant_id);
CREATE TABLE IF NOT EXISTS oauth_refresh_tokens (
  hash TEXT PRIMARY KEY,
  grant_id TEXT NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
  scope TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  used INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX IF NOT EXISTS oauth_refresh_tokens_by_grant ON oauth_refresh_tokens (grant_id);
`;

/** The grant's columns, of `g`, in a join. */
const GRANT_OF_G = GRANT_COLUMNS.split(', ')
  .map((c) => `g.${c}`)
  .join(', ');

interface ApprovalRow {
  namespace: string;
  read_only: number;
  created_at: number;
  expires_at: number;
}

/** Creates the OAuth tables in the token file's `db` (when absent) and serves them. */
export function openSqliteOAuthStore(db: Database.Database): OAuthStore {
  db.pragma('foreign_keys = ON');
  db.exec(SCHEMA);

  const insertClient = db.prepare(`INSERT INTO oauth_clients (${CLIENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
  const clientById = db.prepare<[string], ClientRow>(`SELECT ${CLIENT_COLUMNS} FROM oauth_clients WHERE client_id = ?`);
  const registeredSince = db.prepare<[string, number], { n: number }>(
    'SELECT count(*) AS n FROM oauth_clients WHERE registered_by = ? AND created_at >= ?',
  );
  const clientCount = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM oauth_clients');

  const insertApproval = db.prepare(
    'INSERT INTO oauth_approval_codes (hash, namespace, read_only, created_at, expires_at) VALUES (?, ?, ?, ?, ?)',
  );
  // One statement: the row is gone for whoever comes second, in this process or another.
  const takeApproval = db.prepare<[string, number], ApprovalRow>(
    'DELETE FROM oauth_approval_codes WHERE hash = ? AND expires_at > ? RETURNING namespace, read_only, created_at, expires_at',
  );

  const insertGrant = db.prepare(
    `INSERT INTO oauth_grants (id, client_id, client_name, namespace, read_only, resource, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertCode = db.prepare(`INSERT INTO oauth_codes (hash, ${CODE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
  const codeByHash = db.prepare<[string], CodeRow & { used: number }>(`SELECT ${CODE_COLUMNS}, used FROM oauth_codes WHERE hash = ?`);
  const markCodeUsed = db.prepare('UPDATE oauth_codes SET used = 1 WHERE hash = ?');

  const markIssued = db.prepare('UPDATE oauth_grants SET issued = 1 WHERE id = ?');
  const insertAccess = db.prepare('INSERT INTO oauth_access_tokens (hash, grant_id, scope, expires_at) VALUES (?, ?, ?, ?)');
  const insertRefresh = db.prepare('INSERT INTO oauth_refresh_tokens (hash, grant_id, scope, expires_at) VALUES (?, ?, ?, ?)');
  const refreshByHash = db.prepare<[string], GrantRow & { scope: string; expires_at: number; used: number }>(
    `SELECT ${GRANT_OF_G}, r.scope, r.expires_at, r.used
     FROM oauth_refresh_tokens r JOIN oauth_grants g ON g.id = r.grant_id WHERE r.hash = ?`,
  );
  const markRefreshUsed = db.prepare('UPDATE oauth_refresh_tokens SET used = 1 WHERE hash = ?');
  const accessByHash = db.prepare<[string, number], GrantRow & { scope: string; expires_at: number }>(
    `SELECT ${GRANT_OF_G}, a.scope, a.expires_at
     FROM oauth_access_tokens a JOIN oauth_grants g ON g.id = a.grant_id WHERE a.hash = ? AND a.expires_at > ?`,
  );
  const touch = db.prepare('UPDATE oauth_grants SET last_used_at = max(coalesce(last_used_at, 0), ?) WHERE id = ?');
  const issuedGrants = db.prepare<[], GrantRow>(`SELECT ${GRANT_COLUMNS} FROM oauth_grants WHERE issued = 1 ORDER BY created_at, id`);

  const deleteCodesOf = db.prepare('DELETE FROM oauth_codes WHERE grant_id = ?');
  const deleteAccessOf = db.prepare('DELETE FROM oauth_access_tokens WHERE grant_id = ?');
  const deleteRefreshOf = db.prepare('DELETE FROM oauth_refresh_tokens WHERE grant_id = ?');
  const deleteGrant = db.prepare('DELETE FROM oauth_grants WHERE id = ?');
  const grantOfToken = db.prepare<[string, string, string], { id: string }>(
    `SELECT g.id FROM oauth_grants g
     WHERE g.client_id = ? AND g.id IN (SELECT grant_id FROM oauth_access_tokens WHERE hash = ?
                                       UNION SELECT grant_id FROM oauth_refresh_tokens WHERE hash = ?)`,
  );

  const pruneApprovals = db.prepare('DELETE FROM oauth_approval_codes WHERE expires_at <= ?');
  const pruneCodes = db.prepare('DELETE FROM oauth_codes WHERE expires_at <= ?');
  const pruneAccess = db.prepare('DELETE FROM oauth_access_tokens WHERE expires_at <= ?');
  const pruneRefresh = db.prepare('DELETE FROM oauth_refresh_tokens WHERE expires_at <= ?');
  // A grant lives while it has a token or an unexpired code (one being exchanged right now).
  const deadGrants = db.prepare<[], { id: string }>(
    `SELECT id FROM oauth_grants g
     WHERE NOT EXISTS (SELECT 1 FROM oauth_access_tokens WHERE grant_id = g.id)
       AND NOT EXISTS (SELECT 1 FROM oauth_refresh_tokens WHERE grant_id = g.id)
       AND NOT EXISTS (SELECT 1 FROM oauth_codes WHERE grant_id = g.id)`,
  );

  /** Ends a grant and all it holds; whether there was one. Runs inside a caller's transaction. */
  const endGrant = (grantId: string): boolean => {
    deleteCodesOf.run(grantId);
    deleteAccessOf.run(grantId);
    deleteRefreshOf.run(grantId);
    return deleteGrant.run(grantId).changes > 0;
  };

  const storeTokens = (grantId: string, t: IssuedTokens): void => {
    insertAccess.run(t.accessHash, grantId, t.scope, t.accessExpiresAt);
    insertRefresh.run(t.refreshHash, grantId, t.scope, t.refreshExpiresAt);
  };

  const addGrantWithCode = db.transaction((...args: Parameters<OAuthStore['addGrantWithCode']>) => {
    const [grant, codeHash, code] = args;
    insertGrant.run(
      grant.id,
      grant.clientId,
      grant.clientName ?? null,
      grant.namespace,
      grant.readOnly ? 1 : 0,
      grant.resource,
      grant.createdAt,
    );
    insertCode.run(codeHash, grant.id, code.clientId, code.redirectUri, code.codeChallenge, code.resource, code.scope, code.expiresAt);
  });

  const exchangeCode = db.transaction((codeHash: string, now: number): CodeExchange => {
    const row = codeByHash.get(codeHash);
    if (row === undefined) return { ok: false, reason: 'unknown' };
    // Reuse is told before expiry: a code seen twice means its grant is revoked either way.
    if (row.used === 1) return { ok: false, reason: 'reused', grantId: row.grant_id };
    if (Number(row.expires_at) <= now) return { ok: false, reason: 'expired' };
    markCodeUsed.run(codeHash);
    return { ok: true, code: toCode(row) };
  });

  const issueTokens = db.transaction((grantId: string, tokens: IssuedTokens): boolean => {
    if (markIssued.run(grantId).changes === 0) return false;
    storeTokens(grantId, tokens);
    return true;
  });

  const rotate = db.transaction((refreshHash: string, clientId: string, now: number, next: IssuedTokens, resource?: string): Rotation => {
    const row = refreshByHash.get(refreshHash);
    if (row === undefined) return { ok: false, reason: 'unknown' };
    const check = { clientId: row.client_id, used: row.used === 1, resource: row.resource, expiresAt: row.expires_at };
    const refusal = rotationRefusal(check, clientId, resource, now);
    if (refusal === 'reused') endGrant(row.id);
    if (refusal !== undefined) return { ok: false, reason: refusal };
    markRefreshUsed.run(refreshHash);
    const scope = narrowScope(row.scope, next.scope);
    storeTokens(row.id, { ...next, scope });
    return { ok: true, grant: toGrant(row), scope };
  });

  const revokeGrant = db.transaction((grantId: string): boolean => endGrant(grantId));

  const revokeByTokenHash = db.transaction((hash: string, clientId: string): void => {
    const row = grantOfToken.get(clientId, hash, hash);
    if (row !== undefined) endGrant(row.id);
  });

  const prune = db.transaction((now: number): void => {
    pruneApprovals.run(now);
    pruneCodes.run(now);
    pruneAccess.run(now);
    pruneRefresh.run(now);
    for (const { id } of deadGrants.all()) endGrant(id);
  });

  // Synchronous underneath; the interface is asynchronous for the PostgreSQL tables.
  return {
    async addClient(c) {
      insertClient.run(
        c.clientId,
        c.clientName ?? null,
        c.clientUri ?? null,
        JSON.stringify(c.redirectUris),
        c.tokenEndpointAuthMethod,
        c.secretHash ?? null,
        c.registeredBy,
        c.createdAt,
      );
    },
    async client(clientId) {
      const row = clientById.get(clientId);
      return row === undefined ? undefined : toClient(row);
    },
    clientsRegisteredSince: async (registeredBy, since) => registeredSince.get(registeredBy, since)?.n ?? 0,
    clientCount: async () => clientCount.get()?.n ?? 0,

    async addApprovalCode(hash, code) {
      insertApproval.run(hash, code.namespace, code.readOnly ? 1 : 0, code.createdAt, code.expiresAt);
    },
    async consumeApprovalCode(hash, now): Promise<ApprovalCode | undefined> {
      const row = takeApproval.get(hash, now);
      if (row === undefined) return undefined;
      return { namespace: row.namespace, readOnly: row.read_only === 1, createdAt: row.created_at, expiresAt: row.expires_at };
    },

    addGrantWithCode: async (grant, codeHash, code) => addGrantWithCode.immediate(grant, codeHash, code),
    exchangeCode: async (codeHash, now) => exchangeCode.immediate(codeHash, now),
    issueTokens: async (grantId, tokens) => issueTokens.immediate(grantId, tokens),
    rotateRefreshToken: async (refreshHash, clientId, now, next, resource) => rotate.immediate(refreshHash, clientId, now, next, resource),
    async accessToken(hash, now) {
      const row = accessByHash.get(hash, now);
      return row === undefined ? undefined : { grant: toGrant(row), scope: row.scope, resource: row.resource, expiresAt: row.expires_at };
    },
    async touchGrant(grantId, now) {
      touch.run(now, grantId);
    },

    listGrants: async () => issuedGrants.all().map(toGrant),
    revokeGrant: async (grantId) => revokeGrant.immediate(grantId),
    revokeByTokenHash: async (hash, clientId) => revokeByTokenHash.immediate(hash, clientId),
    prune: async (now) => prune.immediate(now),
  };
}
