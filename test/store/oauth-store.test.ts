/**
 * The OAuth store of issue 36 (src/store/oauth-store.ts) on both backends: the token file on SQLite
 * (a real file) and the `limbic_oauth_*` tables on a real PostgreSQL. Every method; single use of
 * approval and authorization codes, also with two store instances (two processes' worth of
 * connections) racing for one; refresh rotation, and a reused refresh token ending its whole grant;
 * revocation; pruning.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  AUTHORIZATION_CODE_PREFIX,
  ACCESS_TOKEN_PREFIX,
  REFRESH_TOKEN_PREFIX,
  hashSecret,
  newId,
  newSecret,
} from '../../src/http/oauth/secrets.js';
import type { AuthorizationCode, Grant, IssuedTokens, OAuthStore, RegisteredClient } from '../../src/store/oauth-store.js';
import { openPgTokenStore } from '../../src/store/postgres/pg-tokens.js';
import { openSqliteTokenStore } from '../../src/store/sqlite/sqlite-tokens.js';
import type { TokenStore } from '../../src/store/token-store.js';
import { CLI, tempDir } from '../helpers/fixtures.js';
import { startPgServer, type PgServer } from '../helpers/pg-server.js';

const pgStarted = await startPgServer();
const pgServer: PgServer | undefined = 'url' in pgStarted ? pgStarted : undefined;
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await pgServer?.stop();
});

/** A place for tokens: `open()` gives another store instance (its own connection or pool) on it. */
interface Place {
  open(): TokenStore;
}
const backends: { name: string; place: () => Promise<Place> }[] = [
  {
    name: 'SQLite',
    place: async () => {
      const { dir, cleanup } = tempDir('limbic-oauth-');
      cleanups.push(cleanup);
      return { open: () => openSqliteTokenStore(join(dir, 'memory.tokens.db')) };
    },
  },
];
if (pgServer !== undefined)
  backends.push({
    name: 'PostgreSQL',
    place: async () => {
      const url = await pgServer.createDatabase();
      cleanups.push(() => pgServer.dropDatabase(url));
      return { open: () => openPgTokenStore(url) };
    },
  });
else
  describe('OAuth store on PostgreSQL', () => {
    it.skip(`skipped: ${'unavailable' in pgStarted ? pgStarted.unavailable : ''}`, () => undefined);
  });

const NOW = 1_800_000_000_000;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const RESOURCE = 'http://127.0.0.1:8080/mcp';
const BOTH = 'memory:read memory:write';
const hashOf = (prefix: string): string => hashSecret(newSecret(prefix));

const client = (over: Partial<RegisteredClient> = {}): RegisteredClient => ({
  clientId: newId('c_'),
  clientName: 'Claude',
  clientUri: 'https://claude.ai',
  redirectUris: ['https://claude.ai/api/mcp/auth_callback', 'http://127.0.0.1/cb'],
  tokenEndpointAuthMethod: 'none',
  secretHash: undefined,
  registeredBy: hashSecret('203.0.113.7'),
  createdAt: NOW,
  ...over,
});

const tokensAt = (now: number, scope = BOTH): IssuedTokens => ({
  accessHash: hashOf(ACCESS_TOKEN_PREFIX),
  accessExpiresAt: now + HOUR,
  refreshHash: hashOf(REFRESH_TOKEN_PREFIX),
  refreshExpiresAt: now + 30 * 24 * HOUR,
  scope,
});

/** A new grant and its code, as POST /authorize makes them. */
async function authorizeGrant(
  oauth: OAuthStore,
  over: { clientId?: string; readOnly?: boolean; createdAt?: number; namespace?: string } = {},
): Promise<{ grant: Grant; codeHash: string; code: AuthorizationCode }> {
  const createdAt = over.createdAt ?? NOW;
  const grant: Grant = {
    id: newId('g_'),
    clientId: over.clientId ?? 'https://app.example/client.json',
    clientName: 'Example <app>',
    namespace: over.namespace ?? 'team',
    readOnly: over.readOnly ?? false,
    resource: RESOURCE,
    createdAt,
    lastUsedAt: undefined,
  };
  const code: AuthorizationCode = {
    grantId: grant.id,
    clientId: grant.clientId,
    redirectUri: 'https://app.example/cb',
    codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    resource: RESOURCE,
    scope: grant.readOnly ? 'memory:read' : BOTH,
    expiresAt: createdAt + 2 * MINUTE,
  };
  const codeHash = hashOf(AUTHORIZATION_CODE_PREFIX);
  await oauth.addGrantWithCode(grant, codeHash, code);
  return { grant, codeHash, code };
}

/** A grant through its code exchange to its first tokens, as /token makes them. */
async function issuedGrant(
  oauth: OAuthStore,
  over: Parameters<typeof authorizeGrant>[1] = {},
): Promise<{ grant: Grant; tokens: IssuedTokens; codeHash: string }> {
  const { grant, codeHash, code } = await authorizeGrant(oauth, over);
  const now = over.createdAt ?? NOW;
  expect(await oauth.exchangeCode(codeHash, now + 1)).toEqual({ ok: true, code });
  const tokens = tokensAt(now + 1, code.scope);
  expect(await oauth.issueTokens(grant.id, tokens)).toBe(true);
  return { grant, tokens, codeHash };
}

describe.each(backends)('OAuth store, $name', ({ place }) => {
  let opened: TokenStore[] = [];
  afterEach(async () => {
    await Promise.all(opened.map((s) => s.close()));
    opened = [];
  });
  /** Two store instances on one fresh file or database. */
  const two = async (): Promise<[OAuthStore, OAuthStore]> => {
    const p = await place();
    const a = p.open();
    const b = p.open();
    opened.push(a, b);
    return [a.oauth, b.oauth];
  };
  const one = async (): Promise<OAuthStore> => (await two())[0];

  it('keeps registered clients as given, counts them by registrant and time, and knows no other client id', async () => {
    const [oauth, other] = await two();
    const publicClient = client();
    const confidential = client({
      clientName: undefined,
      clientUri: undefined,
      tokenEndpointAuthMethod: 'client_secret_basic',
      secretHash: hashOf('secret_'),
      createdAt: NOW + 10 * MINUTE,
    });
    const elsewhere = client({ registeredBy: hashSecret('198.51.100.1'), createdAt: NOW + 20 * MINUTE });
    for (const c of [publicClient, confidential, elsewhere]) await oauth.addClient(c);

    expect(await other.client(publicClient.clientId)).toEqual(publicClient);
    expect(await other.client(confidential.clientId)).toEqual(confidential);
    expect(await other.client('c_000000000000')).toBeUndefined();
    expect(await other.client('https://app.example/client.json')).toBeUndefined();
    expect(await other.clientCount()).toBe(3);
    expect(await other.clientsRegisteredSince(publicClient.registeredBy, NOW)).toBe(2);
    expect(await other.clientsRegisteredSince(publicClient.registeredBy, NOW + 1)).toBe(1);
    expect(await other.clientsRegisteredSince(publicClient.registeredBy, NOW + HOUR)).toBe(0);
    expect(await other.clientsRegisteredSince(elsewhere.registeredBy, NOW)).toBe(1);
  });

  it('an approval code is taken once: unknown, used and expired codes give nothing', async () => {
    const [oauth, other] = await two();
    const hash = hashSecret('ABCD-EFGH-JKMN');
    const code = { namespace: 'team', readOnly: true, createdAt: NOW, expiresAt: NOW + 10 * MINUTE };
    await oauth.addApprovalCode(hash, code);
    expect(await other.consumeApprovalCode(hashSecret('ABCD-EFGH-JKMP'), NOW + 1)).toBeUndefined();
    expect(await other.consumeApprovalCode(hash, NOW + 1)).toEqual(code);
    expect(await oauth.consumeApprovalCode(hash, NOW + 2)).toBeUndefined();
    expect(await other.consumeApprovalCode(hash, NOW + 2)).toBeUndefined();

    const late = hashSecret('WXYZ-0123-4567');
    await oauth.addApprovalCode(late, { namespace: 'default', readOnly: false, createdAt: NOW, expiresAt: NOW + MINUTE });
    expect(await oauth.consumeApprovalCode(late, NOW + MINUTE)).toBeUndefined();
  });

  it('two store instances racing for the same approval codes: each code is taken by exactly one', async () => {
    const [a, b] = await two();
    const hashes = Array.from({ length: 20 }, (_, i) => hashSecret(`RACE-CODE-${String(i).padStart(4, '0')}`));
    for (const hash of hashes)
      await a.addApprovalCode(hash, { namespace: 'team', readOnly: false, createdAt: NOW, expiresAt: NOW + MINUTE });
    const results = await Promise.all(
      hashes.flatMap((hash) => [a.consumeApprovalCode(hash, NOW + 1), b.consumeApprovalCode(hash, NOW + 1)]),
    );
    for (let i = 0; i < hashes.length; i++) {
      const won = [results[2 * i], results[2 * i + 1]].filter((r) => r !== undefined);
      expect(won).toHaveLength(1);
    }
  });

  it('an authorization code is exchanged once: the second exchange says reused and names the grant; unknown and expired are told apart', async () => {
    const [oauth, other] = await two();
    const { grant, codeHash, code } = await authorizeGrant(oauth);
    expect(await other.exchangeCode(hashOf(AUTHORIZATION_CODE_PREFIX), NOW + 1)).toEqual({ ok: false, reason: 'unknown' });
    expect(await other.exchangeCode(codeHash, NOW + 1)).toEqual({ ok: true, code });
    expect(await oauth.exchangeCode(codeHash, NOW + 2)).toEqual({ ok: false, reason: 'reused', grantId: grant.id });
    // Reuse is still told once the code has expired (its grant is to be revoked either way).
    expect(await oauth.exchangeCode(codeHash, code.expiresAt + 1)).toEqual({ ok: false, reason: 'reused', grantId: grant.id });

    const late = await authorizeGrant(oauth);
    expect(await oauth.exchangeCode(late.codeHash, late.code.expiresAt)).toEqual({ ok: false, reason: 'expired' });
    // An expired code was not used up by trying: it stays expired, not reused.
    expect(await oauth.exchangeCode(late.codeHash, late.code.expiresAt + 1)).toEqual({ ok: false, reason: 'expired' });
  });

  it('two store instances racing to exchange the same authorization codes: exactly one wins each, the other is told reused', async () => {
    const [a, b] = await two();
    const codes = await Promise.all(Array.from({ length: 10 }, () => authorizeGrant(a)));
    const results = await Promise.all(
      codes.flatMap(({ codeHash }) => [a.exchangeCode(codeHash, NOW + 1), b.exchangeCode(codeHash, NOW + 1)]),
    );
    codes.forEach(({ grant }, i) => {
      const pair = [results[2 * i], results[2 * i + 1]];
      expect(pair.filter((r) => r?.ok === true)).toHaveLength(1);
      expect(pair.filter((r) => r?.ok === false)).toEqual([{ ok: false, reason: 'reused', grantId: grant.id }]);
    });
  });

  it('issued tokens: the access token gives its grant, scope, resource and expiry until it expires; a grant gone gets no tokens', async () => {
    const [oauth, other] = await two();
    const { grant, tokens } = await issuedGrant(oauth, { readOnly: true });
    expect(await other.accessToken(tokens.accessHash, NOW + 2)).toEqual({
      grant,
      scope: 'memory:read',
      resource: RESOURCE,
      expiresAt: tokens.accessExpiresAt,
    });
    expect(await other.accessToken(tokens.accessHash, tokens.accessExpiresAt)).toBeUndefined();
    expect(await other.accessToken(tokens.refreshHash, NOW + 2)).toBeUndefined();
    expect(await other.accessToken(hashOf(ACCESS_TOKEN_PREFIX), NOW + 2)).toBeUndefined();

    const revoked = await authorizeGrant(oauth);
    expect(await oauth.exchangeCode(revoked.codeHash, NOW + 1)).toMatchObject({ ok: true });
    expect(await other.revokeGrant(revoked.grant.id)).toBe(true);
    const late = tokensAt(NOW + 1);
    expect(await oauth.issueTokens(revoked.grant.id, late)).toBe(false);
    expect(await oauth.accessToken(late.accessHash, NOW + 2)).toBeUndefined();
    expect(await oauth.issueTokens('g_000000000000', tokensAt(NOW))).toBe(false);
  });

  it('listGrants shows only grants that have had tokens issued, oldest first', async () => {
    const [oauth, other] = await two();
    const later = await issuedGrant(oauth, { createdAt: NOW + HOUR, clientId: 'c_later' });
    await authorizeGrant(oauth, { createdAt: NOW });
    const exchangedOnly = await authorizeGrant(oauth, { createdAt: NOW });
    expect(await oauth.exchangeCode(exchangedOnly.codeHash, NOW + 1)).toMatchObject({ ok: true });
    const earlier = await issuedGrant(oauth, { createdAt: NOW + MINUTE, readOnly: true });
    expect(await other.listGrants()).toEqual([earlier.grant, later.grant]);
  });

  it('touchGrant records the last use, never moving it back, and listGrants and accessToken show it', async () => {
    const [oauth, other] = await two();
    const { grant, tokens } = await issuedGrant(oauth);
    expect((await other.listGrants())[0]?.lastUsedAt).toBeUndefined();
    await other.touchGrant(grant.id, NOW + 5 * MINUTE);
    await oauth.touchGrant(grant.id, NOW + 4 * MINUTE);
    expect(await oauth.listGrants()).toEqual([{ ...grant, lastUsedAt: NOW + 5 * MINUTE }]);
    expect((await oauth.accessToken(tokens.accessHash, NOW + 6 * MINUTE))?.grant.lastUsedAt).toBe(NOW + 5 * MINUTE);
    await oauth.touchGrant('g_000000000000', NOW);
  });

  it('a refresh token is rotated once: the new tokens work beside the old access token, and the used one coming back ends the whole grant', async () => {
    const [oauth, other] = await two();
    const { grant, tokens } = await issuedGrant(oauth);
    const second = tokensAt(NOW + 10 * MINUTE);
    expect(await other.rotateRefreshToken(tokens.refreshHash, grant.clientId, NOW + 10 * MINUTE, second)).toEqual({
      ok: true,
      grant,
      scope: BOTH,
    });
    expect(await oauth.accessToken(second.accessHash, NOW + 11 * MINUTE)).toMatchObject({ grant: { id: grant.id }, scope: BOTH });
    expect(await oauth.accessToken(tokens.accessHash, NOW + 11 * MINUTE)).toMatchObject({ grant: { id: grant.id } });
    const third = tokensAt(NOW + 20 * MINUTE);
    expect(await oauth.rotateRefreshToken(second.refreshHash, grant.clientId, NOW + 20 * MINUTE, third)).toMatchObject({ ok: true });

    // The first refresh token, used already, comes back (stolen, say): the family ends.
    const stolen = tokensAt(NOW + 30 * MINUTE);
    expect(await oauth.rotateRefreshToken(tokens.refreshHash, grant.clientId, NOW + 30 * MINUTE, stolen)).toEqual({
      ok: false,
      reason: 'reused',
    });
    for (const hash of [tokens.accessHash, second.accessHash, third.accessHash, stolen.accessHash])
      expect(await other.accessToken(hash, NOW + 31 * MINUTE)).toBeUndefined();
    expect(await other.listGrants()).toEqual([]);
    expect(await other.rotateRefreshToken(third.refreshHash, grant.clientId, NOW + 32 * MINUTE, tokensAt(NOW + 32 * MINUTE))).toEqual({
      ok: false,
      reason: 'unknown',
    });
  });

  it("another client's refresh is refused without rotating or ending anything; unknown and expired refresh tokens are refused", async () => {
    const oauth = await one();
    const { grant, tokens } = await issuedGrant(oauth);
    const stranger = tokensAt(NOW + MINUTE);
    expect(await oauth.rotateRefreshToken(tokens.refreshHash, 'c_stranger', NOW + MINUTE, stranger)).toEqual({
      ok: false,
      reason: 'other-client',
    });
    expect(await oauth.accessToken(stranger.accessHash, NOW + MINUTE)).toBeUndefined();
    expect(await oauth.accessToken(tokens.accessHash, NOW + MINUTE)).toMatchObject({ grant: { id: grant.id } });
    // The right client still rotates the same token: the stranger used nothing up.
    expect(await oauth.rotateRefreshToken(tokens.refreshHash, grant.clientId, NOW + MINUTE, tokensAt(NOW + MINUTE))).toMatchObject({
      ok: true,
    });

    expect(await oauth.rotateRefreshToken(hashOf(REFRESH_TOKEN_PREFIX), grant.clientId, NOW, tokensAt(NOW))).toEqual({
      ok: false,
      reason: 'unknown',
    });
    const old = await issuedGrant(oauth);
    const tooLate = tokensAt(old.tokens.refreshExpiresAt);
    expect(await oauth.rotateRefreshToken(old.tokens.refreshHash, old.grant.clientId, old.tokens.refreshExpiresAt, tooLate)).toEqual({
      ok: false,
      reason: 'expired',
    });
    expect(await oauth.accessToken(tooLate.accessHash, old.tokens.refreshExpiresAt)).toBeUndefined();
  });

  it("a refresh naming another resource than the grant's is refused without spending the token; naming the grant's own rotates", async () => {
    const [oauth, other] = await two();
    const { grant, tokens } = await issuedGrant(oauth);
    const elsewhere = tokensAt(NOW + MINUTE);
    for (const resource of ['https://attacker.example/mcp', `${RESOURCE}/`, RESOURCE.toUpperCase()])
      expect(await other.rotateRefreshToken(tokens.refreshHash, grant.clientId, NOW + MINUTE, elsewhere, resource)).toEqual({
        ok: false,
        reason: 'other-resource',
      });
    expect(await oauth.accessToken(elsewhere.accessHash, NOW + MINUTE)).toBeUndefined();
    const next = tokensAt(NOW + MINUTE);
    expect(await oauth.rotateRefreshToken(tokens.refreshHash, grant.clientId, NOW + MINUTE, next, RESOURCE)).toMatchObject({ ok: true });
    // A used token is reuse, whatever resource it names: the family ends.
    const again = tokensAt(NOW + 2 * MINUTE);
    expect(
      await oauth.rotateRefreshToken(tokens.refreshHash, grant.clientId, NOW + 2 * MINUTE, again, 'https://attacker.example/mcp'),
    ).toEqual({
      ok: false,
      reason: 'reused',
    });
    expect(await oauth.accessToken(next.accessHash, NOW + 2 * MINUTE)).toBeUndefined();
  });

  it('a refresh may narrow the scope, never widen it; asking for nothing keeps it', async () => {
    const oauth = await one();
    const full = await issuedGrant(oauth);
    const narrowed = tokensAt(NOW + MINUTE, 'memory:read');
    expect(await oauth.rotateRefreshToken(full.tokens.refreshHash, full.grant.clientId, NOW + MINUTE, narrowed)).toMatchObject({
      ok: true,
      scope: 'memory:read',
    });
    expect(await oauth.accessToken(narrowed.accessHash, NOW + MINUTE)).toMatchObject({ scope: 'memory:read' });
    // Narrowed stays narrowed: asking for both again gets read only.
    const again = tokensAt(NOW + 2 * MINUTE, BOTH);
    expect(await oauth.rotateRefreshToken(narrowed.refreshHash, full.grant.clientId, NOW + 2 * MINUTE, again)).toMatchObject({
      ok: true,
      scope: 'memory:read',
    });
    expect(await oauth.accessToken(again.accessHash, NOW + 2 * MINUTE)).toMatchObject({ scope: 'memory:read' });

    const reader = await issuedGrant(oauth, { readOnly: true });
    const widen = tokensAt(NOW + MINUTE, 'memory:write');
    expect(await oauth.rotateRefreshToken(reader.tokens.refreshHash, reader.grant.clientId, NOW + MINUTE, widen)).toMatchObject({
      ok: true,
      scope: 'memory:read',
    });
    const same = tokensAt(NOW + 2 * MINUTE, '');
    expect(await oauth.rotateRefreshToken(widen.refreshHash, reader.grant.clientId, NOW + 2 * MINUTE, same)).toMatchObject({
      ok: true,
      scope: 'memory:read',
    });
  });

  it('two store instances racing to rotate the same refresh token: exactly one rotates', async () => {
    const [a, b] = await two();
    const grants = await Promise.all(Array.from({ length: 10 }, () => issuedGrant(a)));
    const results = await Promise.all(
      grants.flatMap(({ grant, tokens }) => [
        a.rotateRefreshToken(tokens.refreshHash, grant.clientId, NOW + MINUTE, tokensAt(NOW + MINUTE)),
        b.rotateRefreshToken(tokens.refreshHash, grant.clientId, NOW + MINUTE, tokensAt(NOW + MINUTE)),
      ]),
    );
    grants.forEach((_, i) => {
      const pair = [results[2 * i], results[2 * i + 1]];
      expect(pair.filter((r) => r?.ok === true)).toHaveLength(1);
      // The loser presented a used token: that is reuse, and the family ends (RFC 9700 §4.14.2).
      expect(pair.filter((r) => r?.ok === false)).toEqual([{ ok: false, reason: 'reused' }]);
    });
    expect(await a.listGrants()).toEqual([]);
  });

  it('revokeGrant ends the grant with its codes and tokens, in every store instance; a second revoke finds none', async () => {
    const [oauth, other] = await two();
    const { grant, tokens, codeHash } = await issuedGrant(oauth);
    const kept = await issuedGrant(oauth);
    const pending = await authorizeGrant(oauth);
    expect(await other.revokeGrant(grant.id)).toBe(true);
    expect(await other.revokeGrant(pending.grant.id)).toBe(true);
    expect(await oauth.revokeGrant(grant.id)).toBe(false);
    expect(await oauth.accessToken(tokens.accessHash, NOW + 2)).toBeUndefined();
    expect(await oauth.rotateRefreshToken(tokens.refreshHash, grant.clientId, NOW + 2, tokensAt(NOW + 2))).toEqual({
      ok: false,
      reason: 'unknown',
    });
    expect(await oauth.exchangeCode(codeHash, NOW + 2)).toEqual({ ok: false, reason: 'unknown' });
    expect(await oauth.exchangeCode(pending.codeHash, NOW + 2)).toEqual({ ok: false, reason: 'unknown' });
    expect(await oauth.listGrants()).toEqual([kept.grant]);
    expect(await oauth.accessToken(kept.tokens.accessHash, NOW + 2)).toMatchObject({ grant: { id: kept.grant.id } });
  });

  it("revokeByTokenHash ends the grant of an access or refresh token only for that grant's client", async () => {
    const oauth = await one();
    const { grant, tokens } = await issuedGrant(oauth, { clientId: 'c_owner' });
    await oauth.revokeByTokenHash(tokens.accessHash, 'c_stranger');
    await oauth.revokeByTokenHash(tokens.refreshHash, 'c_stranger');
    await oauth.revokeByTokenHash(hashOf(ACCESS_TOKEN_PREFIX), 'c_owner');
    expect(await oauth.accessToken(tokens.accessHash, NOW + 2)).toMatchObject({ grant: { id: grant.id } });

    await oauth.revokeByTokenHash(tokens.refreshHash, 'c_owner');
    expect(await oauth.accessToken(tokens.accessHash, NOW + 2)).toBeUndefined();
    expect(await oauth.listGrants()).toEqual([]);

    const byAccess = await issuedGrant(oauth, { clientId: 'c_owner' });
    await oauth.revokeByTokenHash(byAccess.tokens.accessHash, 'c_owner');
    expect(await oauth.rotateRefreshToken(byAccess.tokens.refreshHash, 'c_owner', NOW + 2, tokensAt(NOW + 2))).toEqual({
      ok: false,
      reason: 'unknown',
    });
  });

  it('prune deletes what has expired and the grants left with no token or live code, and keeps the rest', async () => {
    const [oauth, other] = await two();
    const at = NOW + 2 * HOUR;
    const stale = hashSecret('PRUN-EAPP-R0VL');
    await oauth.addApprovalCode(stale, { namespace: 'team', readOnly: false, createdAt: NOW, expiresAt: NOW + 10 * MINUTE });
    const fresh = hashSecret('KEEP-APPR-0VAL');
    await oauth.addApprovalCode(fresh, { namespace: 'team', readOnly: false, createdAt: NOW, expiresAt: NOW + 24 * HOUR });
    // Its access token expires before `at`, its refresh token lives on: the grant stays.
    const keep = await issuedGrant(oauth);
    // Every token expired by `at`: the grant goes.
    const dead = await authorizeGrant(oauth);
    expect(await oauth.exchangeCode(dead.codeHash, NOW + 1)).toMatchObject({ ok: true });
    const deadTokens = { ...tokensAt(NOW + 1), refreshExpiresAt: NOW + HOUR };
    expect(await oauth.issueTokens(dead.grant.id, deadTokens)).toBe(true);
    // Awaiting its code's exchange, the code live at `at`: stays.
    const waiting = await authorizeGrant(oauth, { createdAt: at });
    // Its code expired unexchanged: goes.
    const abandoned = await authorizeGrant(oauth);

    await other.prune(at);
    expect(await oauth.listGrants()).toEqual([keep.grant]);
    // Asked as of an earlier time, what was pruned is gone, not merely expired.
    expect(await oauth.consumeApprovalCode(stale, NOW)).toBeUndefined();
    expect(await oauth.accessToken(keep.tokens.accessHash, NOW + 2)).toBeUndefined();
    expect(await oauth.rotateRefreshToken(deadTokens.refreshHash, dead.grant.clientId, NOW + 2, tokensAt(NOW + 2))).toEqual({
      ok: false,
      reason: 'unknown',
    });
    expect(await oauth.exchangeCode(abandoned.codeHash, NOW)).toEqual({ ok: false, reason: 'unknown' });
    expect(await oauth.revokeGrant(abandoned.grant.id)).toBe(false);
    // What is live at `at` works.
    expect(await oauth.consumeApprovalCode(fresh, at)).toMatchObject({ namespace: 'team' });
    expect(await oauth.rotateRefreshToken(keep.tokens.refreshHash, keep.grant.clientId, at, tokensAt(at))).toMatchObject({ ok: true });
    expect(await oauth.exchangeCode(waiting.codeHash, at + 1)).toMatchObject({ ok: true });
  });
});

describe.runIf(pgServer !== undefined)('OAuth store on PostgreSQL, a process starting beside busy ones', () => {
  it('opening the store does not wait for (or deadlock with) transactions writing the OAuth tables', async () => {
    const url = await (pgServer as PgServer).createDatabase();
    cleanups.push(() => (pgServer as PgServer).dropDatabase(url));
    const running = openPgTokenStore(url);
    const starting = openPgTokenStore(url);
    const busy = new pg.Client({ connectionString: url });
    try {
      await running.oauth.clientCount();
      // A request of a running process, mid-transaction, holding its tables' ROW EXCLUSIVE locks.
      await busy.connect();
      await busy.query('BEGIN');
      for (const [table, column] of [
        ['clients', 'created_at'],
        ['codes', 'expires_at'],
        ['access_tokens', 'expires_at'],
        ['refresh_tokens', 'expires_at'],
      ])
        await busy.query(`UPDATE limbic_oauth_${table} SET ${column} = ${column} WHERE false`);
      const opened = starting.oauth.clientCount().then(() => 'opened' as const);
      const outcome = await Promise.race([opened, new Promise<'waiting'>((resolve) => setTimeout(() => resolve('waiting'), 5_000))]);
      await busy.query('COMMIT');
      await opened;
      expect(outcome).toBe('opened');
    } finally {
      await busy.end().catch(() => undefined);
      await Promise.all([running.close(), starting.close()]);
    }
  });
});

/**
 * Two processes on one token file, let go at the same moment, each trying to take every approval
 * code, exchange every authorization code and rotate every refresh token (the built module, as
 * `serve --http` runs it): each is won by exactly one.
 */
const RACER = `
import { createHash, randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const { module, path } = JSON.parse((await lines.next()).value);
const { openSqliteTokenStore } = await import(module);
const store = openSqliteTokenStore(path);
process.stdout.write('ready\\n');
const { now, startAt, approvals, codes, refresh } = JSON.parse((await lines.next()).value);
// Both start at one moment: asleep until just before it, then spinning.
await new Promise((resolve) => setTimeout(resolve, Math.max(0, startAt - Date.now() - 20)));
while (Date.now() < startAt);
const hash = () => createHash('sha256').update(randomBytes(32)).digest('hex');
const oauth = store.oauth;
const won = { approvals: [], codes: [], refresh: [] };
// Each in its own random order: the two meet everywhere, not one always a step behind the other.
const order = approvals.map((_, i) => i).sort(() => Math.random() - 0.5);
for (const i of order) {
  if ((await oauth.consumeApprovalCode(approvals[i], now)) !== undefined) won.approvals.push(i);
  if ((await oauth.exchangeCode(codes[i], now)).ok) won.codes.push(i);
  const next = { accessHash: hash(), accessExpiresAt: now + 1e6, refreshHash: hash(), refreshExpiresAt: now + 1e7, scope: '' };
  if ((await oauth.rotateRefreshToken(refresh[i].hash, refresh[i].clientId, now, next)).ok) won.refresh.push(i);
}
await store.close();
process.stdout.write(JSON.stringify(won) + '\\n');
`;

describe('OAuth store on SQLite, two processes racing', () => {
  it('two processes on one token file take each approval code, authorization code and refresh token exactly once', async () => {
    const { dir, cleanup } = tempDir('limbic-oauth-race-');
    cleanups.push(cleanup);
    const path = join(dir, 'memory.tokens.db');
    const tokens = openSqliteTokenStore(path);
    const n = 400;
    const approvals: string[] = [];
    const codes: string[] = [];
    const refresh: { hash: string; clientId: string }[] = [];
    for (let i = 0; i < n; i++) {
      const approval = hashOf('approval_');
      await tokens.oauth.addApprovalCode(approval, { namespace: 'team', readOnly: false, createdAt: NOW, expiresAt: NOW + HOUR });
      approvals.push(approval);
      codes.push((await authorizeGrant(tokens.oauth)).codeHash);
      const { grant, tokens: issued } = await issuedGrant(tokens.oauth);
      refresh.push({ hash: issued.refreshHash, clientId: grant.clientId });
    }
    await tokens.close();

    const module = pathToFileURL(join(dirname(CLI), '..', 'store', 'sqlite', 'sqlite-tokens.js')).href;
    const racers = [0, 1].map(() => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', RACER], { stdio: ['pipe', 'pipe', 'inherit'] });
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      // A racer that fails ends its output: the test then fails on what it read, instead of waiting.
      const next = { next: () => lines.next() };
      child.stdin.write(`${JSON.stringify({ module, path })}\n`);
      return { child, next };
    });
    for (const { next } of racers) expect((await next.next()).value).toBe('ready');
    const task = JSON.stringify({ now: NOW + 2, startAt: Date.now() + 500, approvals, codes, refresh });
    for (const { child } of racers) child.stdin.end(`${task}\n`);
    const won = await Promise.all(
      racers.map(async ({ next }) => JSON.parse(String((await next.next()).value)) as Record<'approvals' | 'codes' | 'refresh', number[]>),
    );
    // Both took part (a race, not one process after the other): each won something.
    const wins = won.map((w) => w.approvals.length + w.codes.length + w.refresh.length);
    expect(Math.min(...wins), JSON.stringify(wins)).toBeGreaterThan(0);
    for (const kind of ['approvals', 'codes', 'refresh'] as const) {
      const all = [...(won[0]?.[kind] ?? []), ...(won[1]?.[kind] ?? [])].sort((a, b) => a - b);
      expect(all, kind).toEqual(Array.from({ length: n }, (_, i) => i));
    }
  }, 120_000);
});
