/**
 * `serve --http` keeps its 2025-era server instances per namespace and kind of caller (issue 38,
 * src/http/legacy-json.ts). What a request may do is still decided by its own token, each time:
 * a read-only token on a namespace whose writers' instances are warm still only reads, a revoked
 * token is refused on its very next request, and the instances of one namespace never answer
 * another's. Both protocol generations, many requests interleaved and at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERAS } from '../helpers/mcp-eras.js';
import { connect, httpStatusOf, INITIALIZE, rawRequest, startTestServer, textOf, type TestServer } from './http-helpers.js';

describe.each(ERAS)('serve --http: kept instances answer each request as its own token allows, $name', ({ era }) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => {
    await s.close();
  });

  it('a read-only token cannot write on a namespace whose writers were just served, and a writer still writes after readers', async () => {
    const writer = await connect(s.url, (await s.token('kept-ro')).token, era);
    const reader = await connect(s.url, (await s.token('kept-ro', true)).token, era);
    for (let round = 0; round < 4; round++) {
      // Writers' and readers' requests at once and one after another, so each kind's instances are warm.
      const [written, refused] = await Promise.all([
        Promise.all(
          Array.from({ length: 4 }, (_, i) =>
            writer.call('create_entities', { entities: [{ name: `w${round}-${i}`, entityType: 't', observations: ['by the writer'] }] }),
          ),
        ),
        Promise.all(
          Array.from({ length: 4 }, (_, i) =>
            reader.call('create_entities', { entities: [{ name: `r${round}-${i}`, entityType: 't', observations: ['by the reader'] }] }),
          ),
        ),
      ]);
      for (const result of written) expect(result.isError, textOf(result)).not.toBe(true);
      for (const result of refused) {
        expect(result.isError).toBe(true);
        expect(textOf(result)).toContain('read-only: create_entities');
      }
      const deleted = await reader.call('delete_entities', { entityNames: [`w${round}-0`] });
      expect(deleted.isError).toBe(true);
    }
    const graph = await reader.ok<{ entities: { name: string }[] }>('read_graph');
    const names = graph.entities.map((e) => e.name).sort();
    expect(names).toHaveLength(16);
    expect(names.every((name) => name.startsWith('w'))).toBe(true);
    await reader.close();
    await writer.close();
  });

  it('a revoked token is refused on its very next request, its namespace instances warm', async () => {
    const kept = await s.token('kept-revoke');
    const revoked = await s.token('kept-revoke');
    const other = await connect(s.url, kept.token, era);
    const doomed = await connect(s.url, revoked.token, era);
    for (let i = 0; i < 5; i++) {
      await other.ok('get_statistics');
      await doomed.ok('get_statistics');
    }
    await s.revoke(revoked.id);
    const refused = await doomed.call('get_statistics').then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(httpStatusOf(refused)).toBe(401);
    expect(refused?.message).toMatch(/revoked/);
    // The namespace's other token is served as before.
    await other.ok('get_statistics');
    await doomed.close().catch(() => undefined);
    await other.close();
  });

  it("two namespaces' requests, interleaved and at once, each see their own memory alone", async () => {
    const a = await connect(s.url, (await s.token('kept-a')).token, era);
    const b = await connect(s.url, (await s.token('kept-b')).token, era);
    await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        await a.ok('create_entities', { entities: [{ name: `Alpha ${i}`, entityType: 'a', observations: ['shared word lantern'] }] });
        await b.ok('create_entities', { entities: [{ name: `Beta ${i}`, entityType: 'b', observations: ['shared word lantern'] }] });
      }),
    );
    const found = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const client = i % 2 === 0 ? a : b;
        const graph = await client.ok<{ entities: { name: string }[] }>('search_nodes', { query: 'lantern' });
        return { mine: i % 2 === 0 ? 'Alpha' : 'Beta', names: graph.entities.map((e) => e.name) };
      }),
    );
    for (const { mine, names } of found) {
      expect(names).toHaveLength(6);
      expect(names.every((name) => name.startsWith(mine))).toBe(true);
    }
    const opened = await a.ok<{ entities: unknown[] }>('open_nodes', { names: ['Beta 0', 'Alpha 0'] });
    expect(opened.entities).toHaveLength(1);
    await a.close();
    await b.close();
  });
});

describe('serve --http: a 2025-era answer is one body written whole', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => {
    await s.close();
  });

  it('comes with its Content-Length (written as it was measured, not streamed in chunks), initialize and tools/call alike', async () => {
    const { token } = await s.token('whole');
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` };
    const call = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'get_statistics', arguments: {} } });
    for (const body of [INITIALIZE, call]) {
      const answer = await rawRequest(s.url, { headers, body });
      expect(answer.status).toBe(200);
      expect(answer.headers['transfer-encoding']).toBeUndefined();
      expect(answer.headers['content-length']).toBe(String(Buffer.byteLength(answer.body)));
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(answer.body)).toMatchObject({ jsonrpc: '2.0', id: JSON.parse(body).id });
    }
  });
});
