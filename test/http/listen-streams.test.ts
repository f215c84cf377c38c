/**
 * Issue 35, item 7: subscriptions/listen streams over `serve --http` are bounded per token (one
 * read-only token took all 1,024 places of its namespace and its owner got "Subscription limit
 * reached"), and a token's streams close when it is revoked, by `limbic token revoke` in another
 * process (they stayed open and heard every later write). Real 2026-07-28 clients, the real CLI,
 * on SQLite and PostgreSQL.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { HttpLimits } from '../../src/http/http-server.js';
import { CLI } from '../helpers/fixtures.js';
import { httpClient } from '../helpers/mcp-eras.js';
import { startPgServer, type PgServer } from '../helpers/pg-server.js';
import { connect, startTestServer, type TestServer } from './http-helpers.js';

const pgStarted = await startPgServer();
const pgServer: PgServer | undefined = 'url' in pgStarted ? pgStarted : undefined;
const pgDatabases: string[] = [];
afterAll(async () => {
  for (const url of pgDatabases) await pgServer?.dropDatabase(url);
  await pgServer?.stop();
});
const backends: { name: string; url: () => Promise<string | undefined> }[] = [{ name: 'SQLite', url: async () => undefined }];
if (pgServer !== undefined)
  backends.push({
    name: 'PostgreSQL',
    url: async () => {
      const url = await pgServer.createDatabase();
      pgDatabases.push(url);
      return url;
    },
  });
else
  describe('listen streams on PostgreSQL', () => {
    it.skip(`skipped: ${'unavailable' in pgStarted ? pgStarted.unavailable : ''}`, () => undefined);
  });

const GRAPH = 'memory://knowledge-graph';
/** What `closed` resolved to within `ms`, or 'open'. */
const within = <T>(ms: number, closed: Promise<T>): Promise<T | 'open'> =>
  Promise.race([closed, new Promise<'open'>((r) => setTimeout(() => r('open'), ms).unref())]);
type Listener = Awaited<ReturnType<typeof httpClient>>;

let servers: TestServer[] = [];
let listeners: Listener[] = [];
afterEach(async () => {
  await Promise.all(listeners.map((l) => l.close().catch(() => undefined)));
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
  listeners = [];
});

/** A 2026-07-28 client of `token` that records the resource updates it hears. */
const listener = async (s: TestServer, token: string): Promise<{ client: Listener; heard: string[] }> => {
  const client = await httpClient('modern', `${s.url}/mcp`, { token });
  listeners.push(client);
  const heard: string[] = [];
  client.setNotificationHandler('notifications/resources/updated', (n) => void heard.push(n.params.uri));
  return { client, heard };
};

describe.each(backends)('serve --http listen streams, $name', ({ url }) => {
  const start = async (limits: Partial<HttpLimits>): Promise<TestServer> => {
    const s = await startTestServer({ limits }, undefined, undefined, await url());
    servers.push(s);
    return s;
  };

  it("one token holds at most its share of its namespace's streams: the next is refused with what to do, and the owner still listens and hears", async () => {
    const s = await start({ maxStreamsPerToken: 2, maxStreamsPerNamespace: 4 });
    const reader = await s.token('default', true);
    const owner = await s.token('default');
    const { client } = await listener(s, reader.token);
    await client.listen({ resourceSubscriptions: [GRAPH] });
    await client.listen({ resourceSubscriptions: [GRAPH] });
    await expect(client.listen({ resourceSubscriptions: [GRAPH] })).rejects.toThrow(/limit.*Close one you no longer read/);
    expect(s.server.streamCount(reader.id)).toBe(2);
    // The owner's stream opens beside them, and hears a write.
    const own = await listener(s, owner.token);
    await own.client.listen({ resourceSubscriptions: [GRAPH] });
    const writer = await connect(s.url, owner.token);
    await writer.ok('create_entities', { entities: [{ name: 'Heard', entityType: 't', observations: [] }] });
    await expect.poll(() => own.heard, { timeout: 10_000 }).toContain(GRAPH);
    await writer.close();
  });

  it('a token revoked by `limbic token revoke` in another process hears no later write: its streams are closed, the others go on', async () => {
    const s = await start({ streamRecheckMs: 60_000 });
    const doomed = await s.token('default', true);
    const owner = await s.token('default');
    const revoked = await listener(s, doomed.token);
    const subscription = await revoked.client.listen({ resourceSubscriptions: [GRAPH] });
    const kept = await listener(s, owner.token);
    await kept.client.listen({ resourceSubscriptions: [GRAPH] });
    const revoke = spawnSync(process.execPath, [CLI, '--db', s.dbPath, '--no-model', 'token', 'revoke', doomed.id], {
      encoding: 'utf8',
      env: { ...process.env, LIMBIC_NAMESPACE: '' },
    });
    expect(revoke.status, revoke.stderr).toBe(0);
    // A write after the revocation: the owner's stream hears it, the revoked token's does not.
    const writer = await connect(s.url, owner.token);
    await writer.ok('create_entities', { entities: [{ name: 'After revoke', entityType: 't', observations: [] }] });
    await expect.poll(() => kept.heard, { timeout: 10_000 }).toContain(GRAPH);
    expect(revoked.heard).toEqual([]);
    expect(await within(10_000, subscription.closed)).toBe('remote');
    expect(s.server.streamCount(doomed.id)).toBe(0);
    expect(s.server.streamCount(owner.id)).toBe(1);
    await writer.close();
  });

  it('with no write at all, a revoked token’s idle stream is closed by the periodic check', async () => {
    const s = await start({ streamRecheckMs: 200 });
    const doomed = await s.token('default', true);
    const { client } = await listener(s, doomed.token);
    const subscription = await client.listen({ resourceSubscriptions: [GRAPH] });
    // A live token's stream stays open across checks.
    expect(await within(500, subscription.closed)).toBe('open');
    await s.revoke(doomed.id);
    expect(await within(10_000, subscription.closed)).toBe('remote');
    expect(s.server.streamCount(doomed.id)).toBe(0);
  });
});
