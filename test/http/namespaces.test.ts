/**
 * Two namespaces on one server never see each other: every tool is tried from one across the
 * boundary, with the real embedding model so vectors are in play, and the other is checked unchanged.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { namespaceDbPath, parseNamespace, tokenFilePath } from '../../src/http/namespaces.js';
import { realEmbedder } from '../helpers/fixtures.js';
import { connect, rawRequest, startTestServer, textOf, type HttpClient, type TestServer } from './http-helpers.js';

interface Stats {
  entities: number;
  observations: number;
  relations: number;
  embeddings: { indexed: number; pending: number };
}

describe('namespaces over HTTP', () => {
  let s: TestServer;
  let alpha: HttpClient;
  let beta: HttpClient;
  let alphaToken: string;
  let betaToken: string;
  const snapshot = async (c: HttpClient) => ({
    graph: await c.ok('read_graph'),
    stats: await c.ok<Stats>('get_statistics'),
  });

  beforeAll(async () => {
    s = await startTestServer({}, realEmbedder);
    alphaToken = s.token('alpha').token;
    betaToken = s.token('beta').token;
    alpha = await connect(s.url, alphaToken);
    beta = await connect(s.url, betaToken);
    await alpha.ok('create_entities', {
      entities: [
        { name: 'Secret Project', entityType: 'project', observations: ['codename nightingale', 'launch in spring'] },
        { name: 'Alice', entityType: 'person', observations: ['leads the secret project'] },
      ],
    });
    await alpha.ok('create_relations', { relations: [{ from: 'Alice', to: 'Secret Project', relationType: 'leads' }] });
    // Usage signals: alpha's searches count accesses in alpha only.
    await alpha.ok('hybrid_search', { query: 'nightingale' });
    for (let tries = 0; (await alpha.ok<Stats>('get_statistics')).embeddings.indexed < 2; tries++) {
      if (tries > 600) throw new Error('alpha was never embedded');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
  afterAll(async () => {
    await alpha.close();
    await beta.close();
    await s.close();
  });

  it('keeps each namespace in its own file beside the default one', () => {
    expect(existsSync(join(s.dir, 'memory.namespaces', 'alpha.db'))).toBe(true);
    expect(existsSync(join(s.dir, 'memory.namespaces', 'beta.db'))).toBe(true);
    expect(namespaceDbPath('/d/memory.db', 'default')).toBe('/d/memory.db');
    expect(tokenFilePath('/d/memory.db')).toBe('/d/memory.tokens.db');
    for (const bad of ['', '../x', 'A', 'a/b', 'x'.repeat(64), 'ü']) expect(() => parseNamespace(bad), bad).toThrow(/not a namespace name/);
    expect(() => namespaceDbPath('postgres://h/db', 'work')).toThrow(/SQLite --db/);
  });

  it('every reading tool in beta finds nothing of alpha', async () => {
    expect(await beta.ok('read_graph')).toEqual({ entities: [], relations: [] });
    expect(await beta.ok('read_graph', { compact: true, limit: 10 })).toMatchObject({ entities: [], total: 0 });
    expect(await beta.ok('search_nodes', { query: 'nightingale' })).toEqual({ entities: [], relations: [] });
    expect(await beta.ok('open_nodes', { names: ['Secret Project', 'Alice'] })).toEqual({ entities: [], relations: [] });
    expect((await beta.ok<{ results: unknown[] }>('search_semantic', { query: 'nightingale codename' })).results).toEqual([]);
    expect((await beta.ok<{ results: unknown[] }>('hybrid_search', { query: 'secret project launch' })).results).toEqual([]);
    expect(
      (await beta.ok<{ results: unknown[] }>('hybrid_search', { query: 'a bird that sings at night', search_modes: ['semantic'] })).results,
    ).toEqual([]);
    const stats = await beta.ok<Stats>('get_statistics');
    expect(stats).toMatchObject({ entities: 0, observations: 0, relations: 0 });
    expect(stats.embeddings.indexed).toBe(0);
    const resource = await beta.client.readResource({ uri: 'memory://knowledge-graph' });
    expect(JSON.parse((resource.contents[0] as { text: string }).text)).toEqual({ entities: [], relations: [] });
    const page = await rawRequest(s.url, {
      method: 'GET',
      path: '/api/entity?name=Alice',
      headers: { authorization: `Bearer ${betaToken}` },
    });
    expect(JSON.parse(page.body)).toMatchObject({ found: false });
  });

  it('every writing tool in beta leaves alpha exactly as it was', async () => {
    const before = await snapshot(alpha);
    const alphaUsage = JSON.parse(
      (
        await rawRequest(s.url, {
          method: 'GET',
          path: '/api/entity?name=Secret%20Project',
          headers: { authorization: `Bearer ${alphaToken}` },
        })
      ).body,
    ) as { usage: unknown };
    const notFound = await beta.call('add_observations', { observations: [{ entityName: 'Alice', contents: ['moved to beta?'] }] });
    expect(notFound.isError).toBe(true);
    expect(textOf(notFound)).toMatch(/Alice not found/);
    const status = await beta.call('set_entity_status', { name: 'Secret Project', status: 'archived' });
    expect(status.isError).toBe(true);
    await beta.ok('delete_observations', { deletions: [{ entityName: 'Alice', observations: ['leads the secret project'] }] });
    await beta.ok('delete_relations', { relations: [{ from: 'Alice', to: 'Secret Project', relationType: 'leads' }] });
    await beta.ok('delete_entities', { entityNames: ['Alice', 'Secret Project'] });
    // Same names in beta are beta's own.
    await beta.ok('create_entities', { entities: [{ name: 'Alice', entityType: 'robot', observations: ['lives in beta'] }] });
    await beta.ok('create_relations', { relations: [{ from: 'Alice', to: 'Secret Project', relationType: 'guards' }] });
    await beta.ok('open_nodes', { names: ['Alice'] });
    await beta.ok('search_semantic', { query: 'robot' });
    const after = await snapshot(alpha);
    expect(after.graph).toEqual(before.graph);
    expect(after.stats).toMatchObject({ entities: 2, observations: 3, relations: 1 });
    const alphaUsageAfter = JSON.parse(
      (
        await rawRequest(s.url, {
          method: 'GET',
          path: '/api/entity?name=Secret%20Project',
          headers: { authorization: `Bearer ${alphaToken}` },
        })
      ).body,
    ) as { usage: unknown };
    expect(alphaUsageAfter.usage).toEqual(alphaUsage.usage);
    const betaAlice = await beta.ok<{ entities: { entityType: string }[] }>('open_nodes', { names: ['Alice'] });
    expect(betaAlice.entities.map((e) => e.entityType)).toEqual(['robot']);
    const alphaAlice = await alpha.ok<{ entities: { entityType: string }[] }>('open_nodes', { names: ['Alice'] });
    expect(alphaAlice.entities.map((e) => e.entityType)).toEqual(['person']);
    // And alpha's searches never surface beta's entity.
    const fromAlpha = await alpha.ok<{ results: { name: string; entityType: string }[] }>('hybrid_search', {
      query: 'robot lives in beta',
    });
    expect(fromAlpha.results.every((r) => r.entityType !== 'robot')).toBe(true);
  });

  it('the default namespace is separate too', async () => {
    const dflt = await connect(s.url, s.token('default').token);
    expect(await dflt.ok('read_graph')).toEqual({ entities: [], relations: [] });
    await dflt.close();
  });
});
