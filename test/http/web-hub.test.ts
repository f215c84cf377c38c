/**
 * The web page's entity view of a hub (issue 35, item 6): an entity with 150,000 relations is
 * shown with its count and a bounded neighbourhood, read from at most 1,000 of its relations.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { rawRequest, startTestServer, type TestServer } from './http-helpers.js';

const RELATIONS = 150_000;

describe("the web page's entity view of a hub", () => {
  let s: TestServer;
  let token: string;
  beforeAll(async () => {
    s = await startTestServer();
    token = (await s.token('default', true)).token;
    const store = openSqliteStore({ path: s.dbPath });
    const now = Date.now();
    await store.graph.createEntities([{ name: 'Hub', entityType: 'hub', observations: ['the hub'] }], now);
    const relations = Array.from({ length: RELATIONS }, (_, i) => ({ from: 'Hub', to: `Leaf ${i}`, relationType: 'links' }));
    await store.graph.importBatch({ entities: [], relations }, now);
    await store.close();
  }, 60_000);
  afterAll(async () => {
    await s.close();
  });

  it('counts every relation, lists those between the hub and the neighbours it draws, and says it left some out', async () => {
    const page = await rawRequest(s.url, { method: 'GET', path: '/api/entity?name=Hub', headers: { authorization: `Bearer ${token}` } });
    const view = JSON.parse(page.body) as { found: boolean; relationCount: number; relations: { to: string }[]; truncated: boolean };
    expect(view.found).toBe(true);
    expect(view.relationCount).toBe(RELATIONS);
    expect(view.truncated).toBe(true);
    expect(view.relations.length).toBeGreaterThan(0);
    expect(view.relations.length).toBeLessThanOrEqual(1_000);
    expect(view.relations[0]?.to).toBe('Leaf 0');
  });
});
