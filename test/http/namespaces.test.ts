/**
 * Two namespaces on one server never see each other: every tool is tried from one across the
 * boundary, with the real embedding model so vectors are in play, and the other is checked unchanged.
 * Twice: on SQLite (a file per namespace) and on a real PostgreSQL (a schema per namespace, the
 * default namespace in the database's default schema, embedded first so a namespace's statements
 * could fall through to its tables if the schema boundary leaked). Tokens and read-only on
 * PostgreSQL close the file.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { namespaceDbPath, namespaceSchema, parseNamespace, tokenFilePath } from '../../src/http/namespaces.js';
import { realEmbedder } from '../helpers/fixtures.js';
import { startPgServer, type PgServer } from '../helpers/pg-server.js';
import { ERAS } from '../helpers/mcp-eras.js';
import { connect, httpStatusOf, rawRequest, startTestServer, textOf, type HttpClient, type TestServer } from './http-helpers.js';

const started = await startPgServer();
const pgServer: PgServer | undefined = 'url' in started ? started : undefined;
afterAll(async () => {
  await pgServer?.stop();
});

interface Stats {
  entities: number;
  observations: number;
  relations: number;
  embeddings: { indexed: number; pending: number };
  database: { path: string; bytes: number | null };
}

describe('namespace names', () => {
  it('map to a file beside --db on SQLite and to a schema limbic_<name> on PostgreSQL', () => {
    expect(namespaceDbPath('/d/memory.db', 'default')).toBe('/d/memory.db');
    expect(namespaceDbPath('/d/memory.db', 'work')).toBe('/d/memory.namespaces/work.db');
    expect(tokenFilePath('/d/memory.db')).toBe('/d/memory.tokens.db');
    for (const bad of ['', '../x', 'A', 'a/b', 'x'.repeat(64), 'ü']) expect(() => parseNamespace(bad), bad).toThrow(/not a namespace name/);
    expect(namespaceDbPath('postgres://h/db', 'work')).toBe('postgres://h/db');
    expect(tokenFilePath('postgres://h/db')).toBe('postgres://h/db');
    expect(namespaceSchema('default')).toBeUndefined();
    expect(namespaceSchema('agent-1')).toBe('limbic_agent-1');
    expect(namespaceSchema('x'.repeat(56))).toBe(`limbic_${'x'.repeat(56)}`);
    // 57 would make a 64-byte schema name, which PostgreSQL would cut short (and two could meet).
    expect(() => namespaceDbPath('postgres://h/db', 'x'.repeat(57))).toThrow(/at most 56/);
  });
});

const backends: { name: string; url?: () => Promise<string> }[] = [{ name: 'SQLite' }];
if (pgServer !== undefined) backends.push({ name: 'PostgreSQL', url: () => pgServer.createDatabase() });
else
  describe('namespaces over HTTP on PostgreSQL', () => {
    it.skip(`skipped: ${'unavailable' in started ? started.unavailable : ''}`, () => undefined);
  });

const suites = backends.flatMap((b) => ERAS.map((e) => ({ ...b, era: e.era, client: e.name })));
describe.each(suites)('namespaces over HTTP on $name, $client', ({ name: backend, url, era }) => {
  let s: TestServer;
  let dflt: HttpClient;
  let pgUrl: string | undefined;
  let alpha: HttpClient;
  let beta: HttpClient;
  let alphaToken: string;
  let betaToken: string;
  const snapshot = async (c: HttpClient) => ({
    graph: await c.ok('read_graph'),
    stats: await c.ok<Stats>('get_statistics'),
  });

  const waitIndexed = async (c: HttpClient, n: number, what: string): Promise<void> => {
    for (let tries = 0; (await c.ok<Stats>('get_statistics')).embeddings.indexed < n; tries++) {
      if (tries > 600) throw new Error(`${what} was never embedded`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  beforeAll(async () => {
    pgUrl = await url?.();
    s = await startTestServer({}, realEmbedder, undefined, pgUrl);
    // The default namespace first, with its vectors: on PostgreSQL its tables are the ones a
    // namespace's unqualified statements would reach if its own schema lacked one.
    dflt = await connect(s.url, (await s.token('default')).token, era);
    await dflt.ok('create_entities', {
      entities: [{ name: 'Default Thing', entityType: 'note', observations: ['kept in the default namespace, about nightingales'] }],
    });
    await waitIndexed(dflt, 1, 'the default namespace');
    alphaToken = (await s.token('alpha')).token;
    betaToken = (await s.token('beta')).token;
    alpha = await connect(s.url, alphaToken, era);
    beta = await connect(s.url, betaToken, era);
    await alpha.ok('create_entities', {
      entities: [
        { name: 'Secret Project', entityType: 'project', observations: ['codename nightingale', 'launch in spring'] },
        { name: 'Alice', entityType: 'person', observations: ['leads the secret project'] },
      ],
    });
    await alpha.ok('create_relations', { relations: [{ from: 'Alice', to: 'Secret Project', relationType: 'leads' }] });
    // Usage signals: alpha's searches count accesses in alpha only.
    await alpha.ok('hybrid_search', { query: 'nightingale' });
    await waitIndexed(alpha, 2, 'alpha');
    // Beta's memory opens with its session, and its schema is made in the background: a first call
    // waits for it, so the tables below are counted once both namespaces exist (alpha's writes did that).
    await beta.ok('get_statistics');
  });
  afterAll(async () => {
    await alpha?.close();
    await beta?.close();
    await dflt?.close();
    await s?.close();
    if (pgUrl !== undefined) await pgServer?.dropDatabase(pgUrl);
  });

  it('keeps each namespace apart from the default one: its own file, or its own schema', async () => {
    if (pgUrl === undefined) {
      expect(existsSync(join(s.dir, 'memory.namespaces', 'alpha.db'))).toBe(true);
      expect(existsSync(join(s.dir, 'memory.namespaces', 'beta.db'))).toBe(true);
      return;
    }
    const client = new pg.Client({ connectionString: pgUrl });
    await client.connect();
    try {
      const tables = await client.query<{ schema: string; n: string }>(
        `SELECT table_schema AS schema, count(*) AS n FROM information_schema.tables
          WHERE table_name IN ('entities', 'observations', 'relations', 'entity_embeddings', 'observation_embeddings', 'entity_access', 'meta')
          GROUP BY 1 ORDER BY 1`,
      );
      expect(tables.rows).toEqual([
        { schema: 'limbic_alpha', n: '7' },
        { schema: 'limbic_beta', n: '7' },
        { schema: 'public', n: '7' },
      ]);
      const counts = await client.query<{ d: string; a: string }>(
        'SELECT (SELECT count(*) FROM public.entity_embeddings) AS d, (SELECT count(*) FROM limbic_alpha.entity_embeddings) AS a',
      );
      expect(counts.rows[0]).toEqual({ d: '1', a: '2' });
      // Each namespace's size is its own schema's, not the shared database's.
      const whole = Number((await client.query<{ b: string }>('SELECT pg_database_size(current_database()) AS b')).rows[0]?.b);
      const alphaBytes = (await alpha.ok<Stats>('get_statistics')).database.bytes ?? 0;
      const betaBytes = (await beta.ok<Stats>('get_statistics')).database.bytes ?? 0;
      expect(betaBytes).toBeGreaterThan(0);
      expect(alphaBytes).toBeGreaterThan(betaBytes);
      expect(alphaBytes).toBeLessThan(whole);
    } finally {
      await client.end();
    }
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

  it('the default namespace is separate too, its vectors kept', async () => {
    const graph = await dflt.ok<{ entities: { name: string }[]; relations: unknown[] }>('read_graph');
    expect(graph.entities.map((e) => e.name)).toEqual(['Default Thing']);
    expect(graph.relations).toEqual([]);
    expect((await dflt.ok<Stats>('get_statistics')).embeddings.indexed).toBe(1);
    const found = await dflt.ok<{ results: { name: string }[] }>('search_semantic', { query: 'nightingale codename' });
    expect(found.results.map((r) => r.name)).toEqual(['Default Thing']);
    const fromBeta = await beta.ok<{ results: { name: string }[] }>('search_semantic', { query: 'kept in the default namespace' });
    expect(fromBeta.results.map((r) => r.name)).not.toContain('Default Thing');
  });

  it.runIf(backend === 'PostgreSQL')('keeps only hashes of tokens in the database; read-only and revoked tokens hold', async () => {
    const reader = await s.token('alpha', true);
    const client = new pg.Client({ connectionString: pgUrl });
    await client.connect();
    try {
      const rows = (await client.query<Record<string, unknown>>('SELECT * FROM limbic_tokens')).rows;
      expect(rows).toHaveLength(4); // default, alpha, beta, and this test's
      expect(JSON.stringify(rows)).not.toContain(reader.token);
      const mine = rows.find((r) => r.id === reader.id);
      expect(mine).toMatchObject({ namespace: 'alpha', read_only: true, hash: createHash('sha256').update(reader.token).digest('hex') });
    } finally {
      await client.end();
    }
    const ro = await connect(s.url, reader.token, era);
    const refused = await ro.call('create_entities', { entities: [{ name: 'Intruder', entityType: 'x', observations: [] }] });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/read-only/);
    expect((await ro.ok<{ entities: { name: string }[] }>('open_nodes', { names: ['Alice'] })).entities.map((e) => e.name)).toEqual([
      'Alice',
    ]);
    await s.revoke(reader.id);
    const revoked = await ro.call('read_graph').then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(httpStatusOf(revoked)).toBe(401);
    await ro.close().catch(() => undefined);
  });
});
