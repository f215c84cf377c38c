/**
 * `limbic serve --http` over real HTTP on loopback, driven by the SDK's Streamable HTTP client:
 * every tool, tokens (401), Host/Origin (403), body and answer limits (413 and its JSON-RPC twin),
 * read-only tokens, no sessions (issue 28), change notifications on a 2026-07-28 listen stream, many
 * clients at once, graceful shutdown.
 */
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { ERAS, httpClient } from '../helpers/mcp-eras.js';
import { connect, httpStatusOf, INITIALIZE, rawRequest, startTestServer, textOf, type TestServer } from './http-helpers.js';

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe.each(ERAS)('serve --http: tools, tokens and guards, $name', ({ era }) => {
  let s: TestServer;
  let rw: string;
  let ro: string;
  beforeAll(async () => {
    s = await startTestServer({ limits: { maxBodyBytes: 256 * 1024, maxAnswerBytes: 128 * 1024 } });
    rw = (await s.token('default')).token;
    ro = (await s.token('default', true)).token;
  });
  afterAll(async () => {
    await s.close();
  });

  it('answers every tool and the resource over Streamable HTTP', async () => {
    const c = await connect(s.url, rw, era);
    const { tools } = await c.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining([
        'add_observations',
        'create_entities',
        'create_relations',
        'delete_entities',
        'delete_observations',
        'delete_relations',
        'get_statistics',
        'hybrid_search',
        'open_nodes',
        'read_graph',
        'search_nodes',
        'search_semantic',
        'set_entity_status',
      ]),
    );
    expect(
      await c.ok('create_entities', {
        entities: [
          { name: 'Ada', entityType: 'person', observations: ['wrote the first program'] },
          { name: 'Engine', entityType: 'machine', observations: ['analytical, by Babbage'] },
        ],
      }),
    ).toEqual({
      entities: [
        { name: 'Ada', entityType: 'person', observations: ['wrote the first program'] },
        { name: 'Engine', entityType: 'machine', observations: ['analytical, by Babbage'] },
      ],
    });
    expect(await c.ok('create_relations', { relations: [{ from: 'Ada', to: 'Engine', relationType: 'programmed' }] })).toEqual({
      relations: [{ from: 'Ada', to: 'Engine', relationType: 'programmed' }],
    });
    expect(await c.ok('add_observations', { observations: [{ entityName: 'Ada', contents: ['born 1815', 'temporary note'] }] })).toEqual({
      results: [{ entityName: 'Ada', addedObservations: ['born 1815', 'temporary note'] }],
    });
    await c.ok('delete_observations', { deletions: [{ entityName: 'Ada', observations: ['temporary note'] }] });
    const opened = await c.ok<{ entities: { name: string; observations: string[] }[]; relations: unknown[] }>('open_nodes', {
      names: ['Ada'],
    });
    expect(opened.entities[0]?.observations).toEqual(['wrote the first program', 'born 1815']);
    expect(opened.relations).toHaveLength(1);
    const found = await c.ok<{ entities: { name: string }[] }>('search_nodes', { query: 'babbage' });
    expect(found.entities.map((e) => e.name)).toEqual(['Engine']);
    const hybrid = await c.ok<{ results: { name: string; scores: { fts_rank: number | null } }[] }>('hybrid_search', { query: 'program' });
    expect(hybrid.results[0]?.name).toBe('Ada');
    expect(hybrid.results[0]?.scores.fts_rank).toBe(1);
    const semantic = await c.ok<{ results: { name: string }[] }>('search_semantic', { query: 'program' });
    expect(semantic.results.map((r) => r.name)).toContain('Ada');
    expect(await c.ok('set_entity_status', { name: 'Engine', status: 'archived' })).toMatchObject({ success: true });
    const stats = await c.ok<{ entities: number; relations: number }>('get_statistics');
    expect(stats).toMatchObject({ entities: 2, relations: 1 });
    const resource = await c.client.readResource({ uri: 'memory://knowledge-graph' });
    expect(JSON.parse((resource.contents[0] as { text: string }).text).entities).toHaveLength(2);
    await c.ok('delete_relations', { relations: [{ from: 'Ada', to: 'Engine', relationType: 'programmed' }] });
    await c.ok('delete_entities', { entityNames: ['Engine'] });
    const graph = await c.ok<{ entities: { name: string }[]; relations: unknown[] }>('read_graph');
    expect(graph.entities.map((e) => e.name)).toEqual(['Ada']);
    expect(graph.relations).toEqual([]);
    await c.close();
  });

  it('a 2026-07-28 client listening (subscriptions/listen) hears of a write by a client of this generation; a 2025-era client is offered no subscription it could not receive', async () => {
    const listener = await httpClient('modern', `${s.url}/mcp`, { token: rw });
    const updates: string[] = [];
    listener.setNotificationHandler('notifications/resources/updated', (n) => void updates.push(n.params.uri));
    const subscription = await listener.listen({ resourceSubscriptions: ['memory://knowledge-graph'] });
    expect(subscription.honoredFilter.resourceSubscriptions).toEqual(['memory://knowledge-graph']);
    // From a 2025-era writer, the notification crosses generations.
    const writer = await connect(s.url, rw, era);
    expect(writer.client.getServerCapabilities()?.resources?.subscribe === true).toBe(era === 'modern');
    await writer.ok('create_entities', { entities: [{ name: 'Notified', entityType: 't', observations: [] }] });
    await expect.poll(() => updates, { timeout: 10_000 }).toContain('memory://knowledge-graph');
    await subscription.close();
    await writer.close();
    await listener.close();
  });

  it('401 with WWW-Authenticate without a token or with a wrong one; the SDK client fails to connect', async () => {
    const none = await rawRequest(s.url, { headers: JSON_HEADERS, body: INITIALIZE });
    expect(none.status).toBe(401);
    // The challenge also names where an OAuth client discovers how to get a token (issue 36).
    expect(none.headers['www-authenticate']).toBe(
      `Bearer realm="limbic", resource_metadata="${s.url}/.well-known/oauth-protected-resource/mcp", scope="memory:read memory:write"`,
    );
    expect(JSON.parse(none.body).error.message).toMatch(/limbic token create/);
    const wrong = await rawRequest(s.url, {
      headers: { ...JSON_HEADERS, authorization: 'Bearer limbic_not-a-real-token' },
      body: INITIALIZE,
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers['www-authenticate']).toMatch(/error="invalid_token"/);
    expect(wrong.body).not.toContain('limbic_not-a-real-token');
    await expect(connect(s.url, 'limbic_wrong', era)).rejects.toThrow(/401|Unauthorized|token/i);
    await expect(connect(s.url, undefined, era)).rejects.toThrow(/401|Unauthorized|token/i);
    const api = await rawRequest(s.url, { method: 'GET', path: '/api/stats' });
    expect(api.status).toBe(401);
  });

  it('403 for a Host or Origin that is not allowed (DNS rebinding), before the token is even read', async () => {
    const headers = { ...JSON_HEADERS, authorization: `Bearer ${rw}` };
    const port = new URL(s.url).port;
    const host = await rawRequest(s.url, { headers: { ...headers, host: `evil.example:${port}` }, body: INITIALIZE });
    expect(host.status).toBe(403);
    expect(JSON.parse(host.body).error.message).toMatch(/DNS-rebinding/);
    const origin = await rawRequest(s.url, { headers: { ...headers, origin: 'http://evil.example' }, body: INITIALIZE });
    expect(origin.status).toBe(403);
    const page = await rawRequest(s.url, { method: 'GET', path: '/', headers: { host: `attacker.example:${port}` } });
    expect(page.status).toBe(403);
    // Loopback names and a same-host origin pass.
    const good = await rawRequest(s.url, {
      headers: { ...headers, host: `localhost:${port}`, origin: `http://localhost:${port}` },
      body: INITIALIZE,
    });
    expect(good.status).toBe(200);
  });

  it('413 with the limit in the message for a body over the limit; nothing is written', async () => {
    const c = await connect(s.url, rw, era);
    const big = 'x'.repeat(300 * 1024);
    const error = await c.call('create_entities', { entities: [{ name: 'Huge', entityType: 't', observations: [big] }] }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(httpStatusOf(error)).toBe(413);
    expect(error?.message).toContain(String(256 * 1024));
    const raw = await rawRequest(s.url, { headers: { ...JSON_HEADERS, authorization: `Bearer ${rw}` }, body: big });
    expect(raw.status).toBe(413);
    expect(JSON.parse(raw.body).error.message).toContain(`limit of ${256 * 1024} bytes`);
    expect((await c.ok<{ entities: unknown[] }>('open_nodes', { names: ['Huge'] })).entities).toEqual([]);
    await c.close();
  });

  it('an answer over the limit is an error naming the limit and how to page; the write it reports is kept', async () => {
    const c = await connect(s.url, rw, era);
    const chunk = 'y'.repeat(15_000);
    const entities = Array.from({ length: 6 }, (_, i) => ({ name: `Big${i}`, entityType: 'blob', observations: [chunk] }));
    // 6 × 15 kB, shown twice (text + structuredContent), passes the 256 kB body limit but not the 128 kB answer limit.
    const error = await c.call('create_entities', { entities }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(new RegExp(`limit of ${128 * 1024} bytes.*limit/offset`));
    const page = await c.ok<{ entities: { name: string }[]; total: number }>('read_graph', { limit: 2, offset: 0 });
    expect(page.total).toBeGreaterThanOrEqual(6);
    const compact = await c.ok<{ entities: { name: string }[] }>('read_graph', { compact: true });
    expect(compact.entities.map((e) => e.name)).toEqual(expect.arrayContaining(entities.map((e) => e.name)));
    await c.ok('delete_entities', { entityNames: entities.map((e) => e.name) });
    await c.close();
  });

  it('/api/stats names the memory, not where the server keeps it, to any token (issue 26)', async () => {
    const api = await rawRequest(s.url, { method: 'GET', path: '/api/stats', headers: { authorization: `Bearer ${ro}` } });
    expect(api.status).toBe(200);
    const stats = JSON.parse(api.body) as { database: { path: string } };
    expect(stats.database.path).toMatch(/^[^/\\]+\.db$/);
    expect(api.body).not.toContain(tmpdir());
  });

  it('the page finds an entity by either Unicode form of its name, as the tools do (issue 26)', async () => {
    const writer = await connect(s.url, rw, era);
    try {
      await writer.ok('create_entities', { entities: [{ name: 'Café Page', entityType: 'place', observations: [] }] });
    } finally {
      await writer.close();
    }
    const page = await rawRequest(s.url, {
      method: 'GET',
      path: `/api/entity?name=${encodeURIComponent('Cafe\u0301 Page')}`,
      headers: { authorization: `Bearer ${ro}` },
    });
    expect(JSON.parse(page.body)).toMatchObject({ found: true, name: 'Café Page', entityType: 'place' });
  });

  it('a read-only token reads and searches, and every writing tool answers isError saying so', async () => {
    const writer = await connect(s.url, rw, era);
    await writer.ok('create_entities', { entities: [{ name: 'Kept', entityType: 't', observations: ['as it was'] }] });
    const reader = await connect(s.url, ro, era);
    expect((await reader.ok<{ entities: unknown[] }>('open_nodes', { names: ['Kept'] })).entities).toHaveLength(1);
    expect((await reader.ok<{ results: unknown[] }>('hybrid_search', { query: 'Kept' })).results.length).toBeGreaterThan(0);
    const attempts: [string, Record<string, unknown>][] = [
      ['create_entities', { entities: [{ name: 'New', entityType: 't', observations: [] }] }],
      ['create_relations', { relations: [{ from: 'Kept', to: 'Kept', relationType: 'self' }] }],
      ['add_observations', { observations: [{ entityName: 'Kept', contents: ['changed'] }] }],
      ['delete_entities', { entityNames: ['Kept'] }],
      ['delete_observations', { deletions: [{ entityName: 'Kept', observations: ['as it was'] }] }],
      ['delete_relations', { relations: [{ from: 'Kept', to: 'Kept', relationType: 'self' }] }],
      ['set_entity_status', { name: 'Kept', status: 'archived' }],
    ];
    for (const [tool, args] of attempts) {
      const result = await reader.call(tool, args);
      expect(result.isError, tool).toBe(true);
      expect(textOf(result), tool).toMatch(new RegExp(`read-only: ${tool}`));
    }
    // Every tool that does not declare itself read-only is refused, whatever it is (tools added later too).
    const { tools } = await reader.client.listTools();
    const writing = tools.filter((t) => t.annotations?.readOnlyHint !== true).map((t) => t.name);
    expect(writing).toEqual(expect.arrayContaining(attempts.map(([tool]) => tool)));
    for (const tool of writing) {
      const result = await reader.call(tool, {});
      expect(result.isError, tool).toBe(true);
      expect(textOf(result), tool).toContain(`read-only: ${tool}`);
    }
    const after = await writer.ok<{ entities: { observations: string[] }[]; relations: unknown[] }>('open_nodes', {
      names: ['Kept', 'New'],
    });
    expect(after.entities).toHaveLength(1);
    expect(after.entities[0]?.observations).toEqual(['as it was']);
    expect(after.relations).toEqual([]);
    await reader.close();
    await writer.close();
  });

  it('a revoked token is refused from its next request on', async () => {
    const made = await s.token('default');
    const c = await connect(s.url, made.token, era);
    await c.ok('get_statistics');
    await s.revoke(made.id);
    const refused = await c.call('get_statistics').then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(httpStatusOf(refused)).toBe(401);
    expect(refused?.message).toMatch(/revoked/);
    await c.close().catch(() => undefined);
  });

  it('serves many clients at once, each write visible to all', async () => {
    const clients = await Promise.all(Array.from({ length: 12 }, () => connect(s.url, rw, era)));
    await Promise.all(
      clients.map((c, i) =>
        Promise.all(
          Array.from({ length: 5 }, (_, j) =>
            c.ok('create_entities', { entities: [{ name: `c${i}-${j}`, entityType: 'load', observations: [`from client ${i}`] }] }),
          ),
        ),
      ),
    );
    const all = await clients[0]!.ok<{ entities: { entityType: string }[] }>('read_graph', { compact: true });
    expect(all.entities.filter((e) => e.entityType === 'load')).toHaveLength(60);
    await Promise.all(clients.map((c) => c.close()));
  });
});

describe.each(ERAS)('serve --http: start-up and shutdown, $name', ({ era }) => {
  it('refuses to listen beyond loopback with no token, saying what to do', async () => {
    await expect(startTestServer({ host: '0.0.0.0' })).rejects.toThrow(
      /no token configured.*limbic token create --namespace default.*127\.0\.0\.1/,
    );
  });

  it('--allowed-host admits another name for Host and Origin, and only that one', async () => {
    const s = await startTestServer({ allowedHosts: ['memory.example'] });
    const { token } = await s.token('default');
    const port = new URL(s.url).port;
    const headers = { ...JSON_HEADERS, authorization: `Bearer ${token}` };
    const named = await rawRequest(s.url, {
      headers: { ...headers, host: `memory.example:${port}`, origin: `https://memory.example` },
      body: INITIALIZE,
    });
    expect(named.status).toBe(200);
    const other = await rawRequest(s.url, { headers: { ...headers, host: `other.example:${port}` }, body: INITIALIZE });
    expect(other.status).toBe(403);
    await s.close();
  });

  it('shutdown finishes the writes under way: each is committed and answered, then new requests are refused', async () => {
    // Writes are held at the store until the server has begun to shut down, so they are truly under way.
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const held = (store: Store): Store => {
      const graph = new Proxy(store.graph, {
        get(target, property, receiver) {
          const value = Reflect.get(target, property, receiver) as unknown;
          if (property !== 'createEntities' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
          return async (...args: unknown[]) => {
            await gate;
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      });
      return new Proxy(store, {
        get: (target, property, receiver) => (property === 'graph' ? graph : (Reflect.get(target, property, receiver) as unknown)),
      });
    };
    const s = await startTestServer({}, undefined, held);
    const { token } = await s.token('default');
    const clients = await Promise.all(Array.from({ length: 8 }, () => connect(s.url, token, era)));
    const names = clients.flatMap((_, i) => [0, 1, 2].map((round) => `w${round}-${i}`));
    const calls = names.map((name, k) =>
      clients[k % clients.length]!.call('create_entities', { entities: [{ name, entityType: 'write', observations: ['x'.repeat(2000)] }] }),
    );
    await expect.poll(() => s.server.inFlightCount(), { timeout: 10_000 }).toBe(names.length);
    const closing = s.server.close();
    let closed = false;
    void closing.then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(closed).toBe(false); // still waiting for the held writes
    release();
    const results = await Promise.all(calls);
    await closing;
    expect(results.every((r) => r.isError !== true)).toBe(true);
    await expect(connect(s.url, token, era)).rejects.toThrow();
    const store = openSqliteStore({ path: s.dbPath });
    const stored = (await store.graph.openNodes(names)).entities.map((e) => e.name);
    await store.close();
    expect(stored.sort()).toEqual([...names].sort());
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await s.close();
  });
});
