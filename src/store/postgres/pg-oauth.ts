/**
 * The OAuth store (src/store/oauth-store.ts) on PostgreSQL: tables `limbic_oauth_*` beside
 * `limbic_tokens` in the database's default schema, created with it (pg-tokens.ts, under its
 * advisory lock, in the same transaction) and used through its pool, so every `serve --http`
 * process on the database accepts the others' grants and sees their revocations at once. Secrets
 * are stored as their SHA-256 only.
 *
 * Single use holds across processes: a code is taken by one statement (`DELETE … RETURNING`,
 * `UPDATE … WHERE NOT used RETURNING`), which a racing second one waits for and then finds done.
 * A refresh rotation locks its grant's row first (as a revocation does, deleting it), then the
 * token's row, so rotations of one grant queue up and never deadlock with a revocation. A grant
 * owns its codes and tokens (ON DELETE CASCADE): deleting it ends all of them in one statement.
 */
import type pg from 'pg';
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

/**
 * Creates the tables when absent; run by pg-tokens.ts inside its creation transaction, under its
 * advisory lock. Skipped whole when they exist (all are made in one transaction, the last index
 * last): CREATE INDEX IF NOT EXISTS locks its table (SHARE) before it finds the index there, so a
 * process starting beside one that is rotating tokens deadlocked with it.
 */
export async function createPgOAuthTables(client: pg.PoolClient): Promise<void> {
  const present = await client.query<{ present: boolean }>(
    `SELECT to_regclass('limbic_oauth_refresh_tokens_by_grant') IS NOT NULL AS present`,
  );
  if (present.rows[0]?.present === true) return;
  await client.query(`
    CREATE TABLE IF NOT EXISTS limbic_oauth_clients (
      client_id                  text PRIMARY KEY,
      client_name                text,
      client_uri                 text,
      redirect_uris              text[] NOT NULL,
      token_endpoint_auth_method text NOT NULL,
      secret_hash                text,
      registered_by              text NOT NULL,
      created_at                 bigint NOT NULL
    );
    CREATE INDEX IF NOT EXISTS limbic_oauth_clients_by_registrant ON limbic_oauth_clients (registered_by, created_at);
    CREATE TABLE IF NOT EXISTS limbic_oauth_approval_codes (
      hash       text PRIMARY KEY,
      namespace  text NOT NULL,
      read_only  boolean NOT NULL,
      created_at bigint NOT NULL,
      expires_at bigint NOT NULL
    );
    CREATE TABLE IF NOT EXISTS limbic_oauth_grants (
      id           text PRIMARY KEY,
      client_id    text NOT NULL,
      client_name  text,
      namespace    text NOT NULL,
      read_only    boolean NOT NULL,
      resource     text NOT NULL,
      created_at   bigint NOT NULL,
      last_used_at bigint,
      issued       boolean NOT NULL DEFAULT false
    );
    CREATE TABLE IF NOT EXISTS limbic_oauth_codes (
      hash           text PRIMARY KEY,
      grant_id       text NOT NULL REFERENCES limbic_oauth_grants (id) ON DELETE CASCADE,
      client_id      text NOT NULL,
      redirect_uri   text NOT NULL,
      code_challenge text NOT NULL,
      resource       text NOT NULL,
      scope          text NOT NULL,
      expires_at     bigint NOT NULL,
      used           boolean NOT NULL DEFAULT false
    );
    CREATE INDEX IF NOT EXISTS limbic_oauth_codes_by_grant ON limbic_oauth_codes (grant_id);
    CREATE TABLE IF NOT EXISTS limbic_oauth_access_tokens (
      hash       text PRIMARY KEY,
      grant_id   text NOT NULL REFERENCES limbic_oauth_grants (id) ON DELETE CASCADE,
      scope      text NOT NULL,
      expires_at bigint NOT NULL
    );
    CREATE INDEX IF NOT EXISTS limbic_oauth_access_tokens_by_grant ON limbic_oauth_access_tokens (grant_id);
    CREATE TABLE IF NOT EXISTS limbic_oauth_refresh_tokens (
      hash       text PRIMARY KEY,
      grant_id   text NOT NULL REFERENCES limbic_oauth_grants (id) ON DELETE CASCADE,
      scope      text NOT NULL,
      expires_at bigint NOT NULL,
      used       boolean NOT NULL DEFAULT false
    );
    CREATE INDEX IF NOT EXISTS limbic_oauth_refresh_tokens_by_grant ON limbic_oauth_refresh_tokens (grant_id);
  `);
}

/** The grant's columns, of `g`, in a join. */
const GRANT_OF_G = GRANT_COLUMNS.split(', ')
  .map((c) => `g.${c}`)
  .join(', ');

interface ApprovalRow {
  namespace: string;
  read_only: boolean;
  created_at: string;
  expires_at: string;
}

/** The OAuth store on the pool `pool()` resolves to (pg-tokens.ts's, which creates the tables first). */
export function pgOAuthStore(pool: () => Promise<pg.Pool>): OAuthStore {
  const query = async <R extends pg.QueryResultRow>(sql: string, values: unknown[] = []): Promise<pg.QueryResult<R>> =>
    (await pool()).query<R>(sql, values);
  const transaction = async <T>(work: (c: pg.PoolClient) => Promise<T>): Promise<T> => {
    const client = await (await pool()).connect();
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  };
  const storeTokens = async (c: pg.PoolClient, grantId: string, t: IssuedTokens): Promise<void> => {
    await c.query('INSERT INTO limbic_oauth_access_tokens (hash, grant_id, scope, expires_at) VALUES ($1, $2, $3, $4)', [
      t.accessHash,
      grantId,
      t.scope,
      t.accessExpiresAt,
    ]);
    await c.query('INSERT INTO limbic_oauth_refresh_tokens (hash, grant_id, scope, expires_at) VALUES ($1, $2, $3, $4)', [
      t.refreshHash,
      grantId,
      t.scope,
      t.refreshExpiresAt,
    ]);
  };
  const count = async (sql: string, values: unknown[] = []): Promise<number> =>
    Number((await query<{ n: string }>(sql, values)).rows[0]?.n ?? 0);

  return {
    async addClient(c) {
      await query(`INSERT INTO limbic_oauth_clients (${CLIENT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [
        c.clientId,
        c.clientName ?? null,
        c.clientUri ?? null,
        [...c.redirectUris],
        c.tokenEndpointAuthMethod,
        c.secretHash ?? null,
        c.registeredBy,
        c.createdAt,
      ]);
    },
    async client(clientId) {
      const [row] = (await query<ClientRow>(`SELECT ${CLIENT_COLUMNS} FROM limbic_oauth_clients WHERE client_id = $1`, [clientId])).rows;
      return row === undefined ? undefined : toClient(row);
    },
    clientsRegisteredSince: (registeredBy, since) =>
      count('SELECT count(*) AS n FROM limbic_oauth_clients WHERE registered_by = $1 AND created_at >= $2', [registeredBy, since]),
    clientCount: () => count('SELECT count(*) AS n FROM limbic_oauth_clients'),

    async addApprovalCode(hash, code) {
      await query(
        'INSERT INTO limbic_oauth_approval_codes (hash, namespace, read_only, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)',
        [hash, code.namespace, code.readOnly, code.createdAt, code.expiresAt],
      );
    },
    async consumeApprovalCode(hash, now): Promise<ApprovalCode | undefined> {
      const [row] = (
        await query<ApprovalRow>(
          'DELETE FROM limbic_oauth_approval_codes WHERE hash = $1 AND expires_at > $2 RETURNING namespace, read_only, created_at, expires_at',
          [hash, now],
        )
      ).rows;
      if (row === undefined) return undefined;
      return { namespace: row.namespace, readOnly: row.read_only, createdAt: Number(row.created_at), expiresAt: Number(row.expires_at) };
    },

    async addGrantWithCode(grant, codeHash, code) {
      await transaction(async (c) => {
        await c.query(
          'INSERT INTO limbic_oauth_grants (id, client_id, client_name, namespace, read_only, resource, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
          [grant.id, grant.clientId, grant.clientName ?? null, grant.namespace, grant.readOnly, grant.resource, grant.createdAt],
        );
        await c.query(`INSERT INTO limbic_oauth_codes (hash, ${CODE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [
          codeHash,
          grant.id,
          code.clientId,
          code.redirectUri,
          code.codeChallenge,
          code.resource,
          code.scope,
          code.expiresAt,
        ]);
      });
    },
    async exchangeCode(codeHash, now): Promise<CodeExchange> {
      const [taken] = (
        await query<CodeRow>(
          `UPDATE limbic_oauth_codes SET used = true WHERE hash = $1 AND NOT used AND expires_at > $2 RETURNING ${CODE_COLUMNS}`,
          [codeHash, now],
        )
      ).rows;
      if (taken !== undefined) return { ok: true, code: toCode(taken) };
      // Not taken: say why. Reuse is told before expiry (a code seen twice ends its grant either way).
      const [row] = (
        await query<{ used: boolean; grant_id: string }>('SELECT used, grant_id FROM limbic_oauth_codes WHERE hash = $1', [codeHash])
      ).rows;
      if (row === undefined) return { ok: false, reason: 'unknown' };
      return row.used ? { ok: false, reason: 'reused', grantId: row.grant_id } : { ok: false, reason: 'expired' };
    },
    issueTokens: (grantId, tokens) =>
      transaction(async (c) => {
        // Locks the grant: a revocation running now waits for this, then deletes these tokens too.
        const marked = await c.query('UPDATE limbic_oauth_grants SET issued = true WHERE id = $1', [grantId]);
        if ((marked.rowCount ?? 0) === 0) return false;
        await storeTokens(c, grantId, tokens);
        return true;
      }),
    rotateRefreshToken: (refreshHash, clientId, now, next, resource) =>
      transaction(async (c): Promise<Rotation> => {
        const [of] = (
          await c.query<{ grant_id: string }>('SELECT grant_id FROM limbic_oauth_refresh_tokens WHERE hash = $1', [refreshHash])
        ).rows;
        if (of === undefined) return { ok: false, reason: 'unknown' };
        const [grant] = (
          await c.query<GrantRow>(`SELECT ${GRANT_COLUMNS} FROM limbic_oauth_grants WHERE id = $1 FOR NO KEY UPDATE`, [of.grant_id])
        ).rows;
        const [token] = (
          await c.query<{ scope: string; expires_at: string; used: boolean }>(
            'SELECT scope, expires_at, used FROM limbic_oauth_refresh_tokens WHERE hash = $1 FOR UPDATE',
            [refreshHash],
          )
        ).rows;
        if (grant === undefined || token === undefined) return { ok: false, reason: 'unknown' };
        const check = { clientId: grant.client_id, used: token.used, resource: grant.resource, expiresAt: Number(token.expires_at) };
        const refusal = rotationRefusal(check, clientId, resource, now);
        if (refusal === 'reused') await c.query('DELETE FROM limbic_oauth_grants WHERE id = $1', [grant.id]);
        if (refusal !== undefined) return { ok: false, reason: refusal };
        await c.query('UPDATE limbic_oauth_refresh_tokens SET used = true WHERE hash = $1', [refreshHash]);
        const scope = narrowScope(token.scope, next.scope);
        await storeTokens(c, grant.id, { ...next, scope });
        return { ok: true, grant: toGrant(grant), scope };
      }),
    async accessToken(hash, now) {
      const [row] = (
        await query<GrantRow & { scope: string; expires_at: string }>(
          `SELECT ${GRANT_OF_G}, a.scope, a.expires_at
           FROM limbic_oauth_access_tokens a JOIN limbic_oauth_grants g ON g.id = a.grant_id WHERE a.hash = $1 AND a.expires_at > $2`,
          [hash, now],
        )
      ).rows;
      return row === undefined
        ? undefined
        : { grant: toGrant(row), scope: row.scope, resource: row.resource, expiresAt: Number(row.expires_at) };
    },
    async touchGrant(grantId, now) {
      await query('UPDATE limbic_oauth_grants SET last_used_at = GREATEST(coalesce(last_used_at, 0), $2) WHERE id = $1', [grantId, now]);
    },

    listGrants: async () =>
      (await query<GrantRow>(`SELECT ${GRANT_COLUMNS} FROM limbic_oauth_grants WHERE issued ORDER BY created_at, id`)).rows.map(toGrant),
    revokeGrant: async (grantId) => ((await query('DELETE FROM limbic_oauth_grants WHERE id = $1', [grantId])).rowCount ?? 0) > 0,
    async revokeByTokenHash(hash, clientId) {
      await query(
        `DELETE FROM limbic_oauth_grants WHERE client_id = $2 AND id IN (
           SELECT grant_id FROM limbic_oauth_access_tokens WHERE hash = $1
           UNION SELECT grant_id FROM limbic_oauth_refresh_tokens WHERE hash = $1)`,
        [hash, clientId],
      );
    },
    async prune(now) {
      await query('DELETE FROM limbic_oauth_approval_codes WHERE expires_at <= $1', [now]);
      await query('DELETE FROM limbic_oauth_codes WHERE expires_at <= $1', [now]);
      await query('DELETE FROM limbic_oauth_access_tokens WHERE expires_at <= $1', [now]);
      await query('DELETE FROM limbic_oauth_refresh_tokens WHERE expires_at <= $1', [now]);
      // A grant lives while it has a token or an unexpired code; one a transaction holds now
      // (tokens being issued or rotated) is skipped, not waited for, and looked at next time.
      await query(
        `DELETE FROM limbic_oauth_grants WHERE id IN (
           SELECT id FROM limbic_oauth_grants g
           WHERE NOT EXISTS (SELECT 1 FROM limbic_oauth_access_tokens WHERE grant_id = g.id)
             AND NOT EXISTS (SELECT 1 FROM limbic_oauth_refresh_tokens WHERE grant_id = g.id)
             AND NOT EXISTS (SELECT 1 FROM limbic_oauth_codes WHERE grant_id = g.id)
           FOR UPDATE SKIP LOCKED)`,
      );
    },
  };
}
