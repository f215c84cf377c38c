/**
 * Issue 26, items 4, 5 and 7: no token can take what the others need. A flood of requests by one
 * token is refused to that token (429/503 with Retry-After) while another token calls tools; a
 * flood of initializes holds nothing (issue 28: no sessions); a revoked token is refused at its next
 * request; malformed JSON-RPC with an id gets a JSON-RPC error with that id; statistics over HTTP
 * show no filesystem path. Limits are set small so a few requests show what thousands did.
 */
import { tmpdir } from 'node:os';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { HttpLimits } from '../../src/http/http-server.js';
import { startPgServer, type PgServer } from '../helpers/pg-server.js';
import { connect, holdGraphMethod, INITIALIZE, rawRequest, startTestServer, type HttpClient, type TestServer } from './http-helpers.js';

const pgStarted = await startPgServer();
const pgServer: PgServer | undefined = 'url' in pgStarted ? pgStarted : undefined;
const pgDatabases: string[] = [];
afterAll(async () => {
  for (const url of pgDatabases) await pgServer?.dropDatabase(url);
  await pgServer?.stop();
});
/** Where tokens and memories live: a SQLite file, or a fresh PostgreSQL database (tokens in a table there). */
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
  describe('bounds on PostgreSQL', () => {
    it.skip(`skipped: ${'unavailable' in pgStarted ? pgStarted.unavailable : ''}`, () => undefined);
  });

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

const bounds = (limits: Partial<HttpLimits>): Partial<HttpLimits> => ({
  maxInFlight: 1_000,
  maxInFlightPerNamespace: 1_000,
  maxInFlightPerToken: 1_000,
  maxQueuedPerToken: 1_000,
  maxHeavyInFlight: 1_000,
  maxHeavyInFlightPerToken: 1_000,
  // Long enough that no waiting request is refused for time on a loaded machine.
  queueWaitMs: 120_000,
  ...limits,
});

const initialize = (s: TestServer, token: string) =>
  rawRequest(s.url, { headers: { ...JSON_HEADERS, authorization: `Bearer ${token}` }, body: INITIALIZE });

/** A 2025-era tools/call with no handshake before it: the server keeps no session, so none is needed. */
const toolCall = (s: TestServer, token: string, id: number, name: string, args: Record<string, unknown> = {}) =>
  rawRequest(s.url, {
    headers: { ...JSON_HEADERS, authorization: `Bearer ${token}`, 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }),
  });

let servers: TestServer[] = [];
let clients: HttpClient[] = [];
afterEach(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
  clients = [];
});
const start = async (...args: Parameters<typeof startTestServer>): Promise<TestServer> => {
  const s = await startTestServer(...args);
  servers.push(s);
  return s;
};
const client = async (s: TestServer, token: string): Promise<HttpClient> => {
  const c = await connect(s.url, token);
  clients.push(c);
  return c;
};

describe('serve --http keeps no sessions (issue 28), so there are none to flood or to hijack', () => {
  it('a flood of initializes by one token holds nothing: each is answered with no session id, and every token keeps calling tools', async () => {
    const s = await start();
    const flooder = (await s.token('default', true)).token;
    const other = (await s.token('work')).token;
    const answers = await Promise.all(Array.from({ length: 50 }, () => initialize(s, flooder)));
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(a.headers['mcp-session-id']).toBeUndefined();
    }
    // No session was opened, so a call needs none: any request stands on its own token.
    const call = await toolCall(s, flooder, 1, 'get_statistics');
    expect(JSON.parse(call.body)).toMatchObject({ id: 1, result: { structuredContent: { entities: 0 } } });
    const c = await client(s, other);
    await c.ok('create_entities', { entities: [{ name: 'Still here', entityType: 't', observations: [] }] });
    expect((await c.ok<{ entities: unknown[] }>('open_nodes', { names: ['Still here'] })).entities).toHaveLength(1);
  });

  it('a session id from elsewhere is not a key to anything: the request is served as its own token allows', async () => {
    const s = await start();
    const reader = (await s.token('default', true)).token;
    const answer = await rawRequest(s.url, {
      headers: {
        ...JSON_HEADERS,
        authorization: `Bearer ${reader}`,
        'mcp-session-id': 'stolen-or-made-up',
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'create_entities', arguments: { entities: [] } },
      }),
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({
      id: 2,
      result: { isError: true, content: [{ text: expect.stringMatching(/read-only/) as unknown }] },
    });
  });

  it.each(backends)('a revoked token is refused from its next request on, whatever it did before ($name)', async ({ url }) => {
    const s = await start({}, undefined, undefined, await url());
    const keeper = await client(s, (await s.token('default')).token);
    const revoked = await s.token('default');
    expect((await initialize(s, revoked.token)).status).toBe(200);
    expect((await toolCall(s, revoked.token, 3, 'get_statistics')).status).toBe(200);
    await s.revoke(revoked.id); // as `limbic token revoke` in another process: straight to the token store
    expect((await toolCall(s, revoked.token, 4, 'get_statistics')).status).toBe(401);
    expect((await initialize(s, revoked.token)).status).toBe(401);
    await keeper.ok('get_statistics');
  });
});

describe('serve --http: requests in flight are bounded per token, per namespace and in all (issue 26)', () => {
  it("a flood of concurrent calls by one token runs a few at a time, refuses the excess with 429 and Retry-After, and never holds up another token's call", async () => {
    const held = holdGraphMethod('readGraph');
    const s = await start(
      { limits: bounds({ maxInFlight: 4, maxInFlightPerNamespace: 4, maxInFlightPerToken: 2, maxQueuedPerToken: 3 }) },
      undefined,
      held.wrap,
    );
    const flooder = (await s.token('default', true)).token;
    const other = await client(s, (await s.token('default')).token);
    const flood = Array.from({ length: 12 }, (_, i) => toolCall(s, flooder, 100 + i, 'read_graph'));
    // 2 run (held at the store), 3 wait, 7 are refused at once.
    await expect.poll(() => s.server.queuedCount(), { timeout: 20_000 }).toBe(3);
    await expect.poll(() => held.entered(), { timeout: 20_000 }).toBe(2);
    // Another token is served while the flooder's calls are held.
    await other.ok('create_entities', { entities: [{ name: 'Served', entityType: 't', observations: ['while flooded'] }] });
    expect((await other.ok<{ entities: unknown[] }>('open_nodes', { names: ['Served'] })).entities).toHaveLength(1);
    expect(held.entered()).toBe(2);
    held.releaseAll();
    const answers = await Promise.all(flood);
    const refused = answers.filter((a) => a.status !== 200);
    expect(refused).toHaveLength(7);
    for (const a of refused) {
      expect(a.status).toBe(429);
      expect(Number(a.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    expect(answers.filter((a) => a.status === 200)).toHaveLength(5);
  });

  it("when floods fill the server, another token's call waits and is the next to run, ahead of the flooders' queues", async () => {
    const held = holdGraphMethod('readGraph');
    const s = await start({ limits: bounds({ maxInFlight: 2, maxInFlightPerToken: 1, maxQueuedPerToken: 4 }) }, undefined, held.wrap);
    const floods: Promise<unknown>[] = [];
    for (const namespace of ['one', 'two']) {
      const token = (await s.token(namespace)).token;
      for (let i = 0; i < 4; i++) floods.push(toolCall(s, token, 200 + i, 'read_graph'));
    }
    await expect.poll(() => held.entered(), { timeout: 20_000 }).toBe(2);
    await expect.poll(() => s.server.queuedCount(), { timeout: 20_000 }).toBe(6);
    const late = (await s.token('three')).token;
    let lateStatus: number | undefined;
    const lateInit = initialize(s, late).then((a) => (lateStatus = a.status)); // waits for a place like any request
    await expect.poll(() => s.server.queuedCount(), { timeout: 20_000 }).toBe(7);
    held.releaseOne();
    // The place that freed went to the newcomer, not to the flooders' older requests.
    await expect.poll(() => lateStatus, { timeout: 20_000 }).toBe(200);
    await lateInit;
    await expect.poll(() => held.entered(), { timeout: 20_000 }).toBe(3);
    held.releaseAll();
    await Promise.all(floods);
  });
});

describe('serve --http: heavy calls take a bounded share (issue 35, item 12)', () => {
  it("a token's large reads run one at a time, while another token's large read and light calls run at once", async () => {
    const held = holdGraphMethod('readGraph');
    const s = await start(
      { limits: bounds({ maxInFlightPerToken: 4, maxHeavyInFlight: 4, maxHeavyInFlightPerToken: 1 }) },
      undefined,
      held.wrap,
    );
    const flooder = (await s.token('default', true)).token;
    const other = (await s.token('other')).token;
    const flood = Array.from({ length: 3 }, (_, i) => toolCall(s, flooder, 300 + i, 'read_graph'));
    await expect.poll(() => held.entered(), { timeout: 20_000 }).toBe(1);
    // The flooder's other two hold their request places and wait for a heavy one.
    await expect.poll(() => s.server.queuedCount(), { timeout: 20_000 }).toBe(0);
    const otherRead = toolCall(s, other, 400, 'read_graph');
    await expect.poll(() => held.entered(), { timeout: 20_000 }).toBe(2);
    expect((await toolCall(s, other, 401, 'get_statistics')).status).toBe(200);
    expect(held.entered()).toBe(2);
    held.releaseAll();
    expect((await otherRead).status).toBe(200);
    expect((await Promise.all(flood)).map((a) => a.status)).toEqual([200, 200, 200]);
  });
});

describe('serve --http: malformed JSON-RPC and statistics (issue 26)', () => {
  it('malformed JSON-RPC with an id gets a JSON-RPC error carrying that id, in either protocol generation; the server keeps answering', async () => {
    const s = await start();
    const { token } = await s.token('default');
    const post = (body: string, version: string) =>
      rawRequest(s.url, { headers: { ...JSON_HEADERS, authorization: `Bearer ${token}`, 'mcp-protocol-version': version }, body });
    const cases: [string, unknown, number][] = [
      ['{"jsonrpc":"2.0","id":7,"method":"tools/list",', 7, -32700],
      ['{"jsonrpc":"2.0","id":8,"method":123}', 8, -32600],
      ['{"jsonrpc":"1.0","id":"nine","method":"tools/list"}', 'nine', -32600],
      ['{"jsonrpc":"2.0","id":10,"method":"tools/call","params":[1,2]}', 10, -32600],
      ['{"jsonrpc":"2.0","id":11}', 11, -32600],
    ];
    for (const version of ['2025-06-18', '2026-07-28']) {
      for (const [body, id, code] of cases) {
        const answer = await post(body, version);
        expect(answer.status, body).toBe(400);
        const reply = JSON.parse(answer.body) as { jsonrpc: string; id: unknown; error: { code: number; message: string } };
        expect(reply, body).toMatchObject({ jsonrpc: '2.0', id, error: { code } });
        expect(reply.error.message).toMatch(/Nothing was done/);
      }
      const batch = await post('[{"jsonrpc":"2.0","id":12,"method":"tools/list"},{"jsonrpc":"2.0","id":13,"method":5}]', version);
      expect(batch.status).toBe(400);
      const replies = JSON.parse(batch.body) as { id: unknown; error: { code: number } }[];
      expect(replies.map((r) => [r.id, r.error.code])).toEqual([
        [12, -32600],
        [13, -32600],
      ]);
    }
    const fine = await toolCall(s, token, 15, 'get_statistics');
    expect(fine.status).toBe(200);
    expect(JSON.parse(fine.body)).toMatchObject({ id: 15, result: { structuredContent: { entities: 0 } } });
  });

  it('two requests with the same id at once are each answered: no session ties one to the other', async () => {
    const held = holdGraphMethod('readGraph');
    // Two large reads of one token at once (by default a token runs one at a time).
    const s = await start({ limits: { maxHeavyInFlightPerToken: 2 } }, undefined, held.wrap);
    const { token } = await s.token('default');
    const first = toolCall(s, token, 5, 'read_graph');
    await expect.poll(() => held.entered(), { timeout: 20_000 }).toBe(1);
    const second = toolCall(s, token, 5, 'read_graph');
    await expect.poll(() => held.entered(), { timeout: 20_000 }).toBe(2);
    held.releaseAll();
    for (const answered of await Promise.all([first, second])) {
      expect(answered.status).toBe(200);
      expect(JSON.parse(answered.body)).toMatchObject({ id: 5, result: { structuredContent: { entities: [] } } });
    }
  });

  it.each(backends)(
    'get_statistics over HTTP and /api/stats name the database, never its path, even in a model error ($name)',
    async ({ url }) => {
      const modelDir = `${tmpdir()}/limbic-no-such-models`;
      const pgUrl = await url();
      const s = await start(
        {},
        () => Promise.reject(new Error(`No embedding model is installed in ${modelDir}. Run "limbic model install".`)),
        undefined,
        pgUrl,
      );
      const { token } = await s.token('default', true);
      const c = await client(s, token);
      await c.call('search_semantic', { query: 'load the model' }).catch(() => undefined);
      await expect
        .poll(async () => (await c.ok<{ embeddings: { state: string } }>('get_statistics')).embeddings.state, { timeout: 20_000 })
        .toBe('unavailable');
      const tool = await c.ok<{ database: { path: string }; embeddings: { reason: string } }>('get_statistics');
      expect(tool.database.path).toBe(pgUrl === undefined ? 'memory.db' : 'PostgreSQL');
      expect(tool.embeddings.reason).toMatch(/installed in limbic-no-such-models\./);
      const api = await rawRequest(s.url, { method: 'GET', path: '/api/stats', headers: { authorization: `Bearer ${token}` } });
      for (const text of [JSON.stringify(tool), api.body]) {
        expect(text).not.toContain(tmpdir());
        expect(text).not.toContain(s.dir);
        if (pgUrl !== undefined) expect(text).not.toContain(new URL(pgUrl).host);
      }
    },
  );
});
