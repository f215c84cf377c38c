/**
 * Issue 25, the seed system's behaviours that were missing (items 9, 18, 19, 21, 22), through a real
 * MCP client. on-postgres.test.ts runs this file again on PostgreSQL.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { harness, tempDir, textOf, type Harness } from '../helpers/fixtures.js';

interface Graph {
  entities: { name: string; entityType: string; observations: string[]; observation_kinds?: string[] }[];
  relations: { from: string; to: string; relationType: string; context?: string }[];
}
interface Hybrid {
  results: { name: string; status: string }[];
}

let open: Harness[] = [];
async function start(options: Parameters<typeof harness>[0] = {}): Promise<Harness> {
  const h = await harness(options);
  await h.client.listTools(); // the client then checks every answer against its outputSchema
  open.push(h);
  return h;
}
afterEach(async () => {
  await Promise.all(open.map((h) => h.close()));
  open = [];
});

const keywordSearch = (h: Harness, query: string, filters?: Record<string, unknown>) =>
  h.ok<Hybrid>('hybrid_search', { query, search_modes: ['fts'], ...(filters === undefined ? {} : { filters }) });

describe('issue 25 item 9: statuses in English, Spanish accepted', () => {
  it('answers give English statuses, and filters take either language', async () => {
    let now = Date.UTC(2026, 10, 1);
    const h = await start({ clock: () => now });
    await h.ok('create_entities', {
      entities: [
        { name: 'Apollo', entityType: 'project', observations: ['rocket launch'], status: 'pausado' },
        { name: 'Zeus', entityType: 'project', observations: ['rocket fuel'], status: 'archived' },
        { name: 'Hera', entityType: 'project', observations: ['rocket parts'] },
      ],
    });
    const all = await keywordSearch(h, 'rocket');
    expect(Object.fromEntries(all.results.map((r) => [r.name, r.status]))).toEqual({ Apollo: 'paused', Zeus: 'archived', Hera: 'active' });
    expect((await keywordSearch(h, 'rocket', { status: ['archivado'] })).results.map((r) => r.name)).toEqual(['Zeus']);
    expect((await keywordSearch(h, 'rocket', { status: ['paused'] })).results.map((r) => r.name)).toEqual(['Apollo']);
    expect(textOf(await h.call('set_entity_status', { entity_name: 'Hera', status: 'completado' }))).toBe(
      'Status of Hera set to completed',
    );
    now += 2 * 86_400_000;
    const report = await h.ok<{ stale_entities: { entity_name: string; status: string }[] }>('consolidation_report', { stale_days: 1 });
    expect(Object.fromEntries(report.stale_entities.map((e) => [e.entity_name, e.status]))).toEqual({
      Apollo: 'paused',
      Hera: 'completed',
    });
  });

  it('a memory keeps the stored words an older Limbic reads, and reads them back in English', async () => {
    const tmp = tempDir();
    try {
      const path = join(tmp.dir, 'memory.db');
      const first = await harness({ path });
      await first.ok('create_entities', { entities: [{ name: 'Old', entityType: 't', observations: ['kept word'], status: 'paused' }] });
      await first.close();
      // What every Limbic so far wrote and reads: the seed's Spanish word.
      const db = new Database(path);
      expect(db.prepare('SELECT status FROM entities').pluck().get()).toBe('pausado');
      db.prepare("UPDATE entities SET status = 'archivado'").run(); // as an older Limbic's set_entity_status leaves it
      db.close();
      const again = await harness({ path });
      try {
        expect((await keywordSearch(again, 'kept')).results).toMatchObject([{ name: 'Old', status: 'archived' }]);
      } finally {
        await again.close();
      }
    } finally {
      tmp.cleanup();
    }
  });
});

describe('issue 25 item 18: open_nodes by observation kind', () => {
  async function seeded(): Promise<Harness> {
    const h = await start();
    await h.ok('create_entities', { entities: [{ name: 'Ana', entityType: 'person', observations: ['lives in Madrid'] }] });
    await h.ok('add_observations', { observations: [{ entityName: 'Ana', contents: ['prefers tea'], kind: 'preference' }] });
    await h.ok('add_observations', { observations: [{ entityName: 'Ana', contents: ['chose Rust', 'dropped Go'], kind: 'decision' }] });
    return h;
  }

  it('kinds keeps only observations of those kinds; include_kinds shows each kind in order', async () => {
    const h = await seeded();
    const decisions = await h.ok<Graph>('open_nodes', { names: ['Ana'], kinds: ['decision'] });
    expect(decisions.entities).toEqual([{ name: 'Ana', entityType: 'person', observations: ['chose Rust', 'dropped Go'] }]);
    const shown = await h.ok<Graph>('open_nodes', { names: ['Ana'], include_kinds: true });
    expect(shown.entities).toEqual([
      {
        name: 'Ana',
        entityType: 'person',
        observations: ['lives in Madrid', 'prefers tea', 'chose Rust', 'dropped Go'],
        observation_kinds: ['generic', 'preference', 'decision', 'decision'],
      },
    ]);
    const both = await h.ok<Graph>('open_nodes', { names: ['Ana'], kinds: ['generic', 'preference'], include_kinds: true });
    expect(both.entities[0]).toMatchObject({
      observations: ['lives in Madrid', 'prefers tea'],
      observation_kinds: ['generic', 'preference'],
    });
    // An entity none of whose observations is of the kind is still opened, with none.
    expect((await h.ok<Graph>('open_nodes', { names: ['Ana'], kinds: ['metadata'] })).entities[0]?.observations).toEqual([]);
  });

  it('a page of observations carries the kinds of that page, after the kinds filter', async () => {
    const h = await seeded();
    const page = await h.ok<Graph>('open_nodes', { names: ['Ana'], include_kinds: true, observations_offset: 1, observations_limit: 2 });
    expect(page.entities[0]).toMatchObject({
      observations: ['prefers tea', 'chose Rust'],
      observation_kinds: ['preference', 'decision'],
      observationCount: 4,
      next_observations_offset: 3,
    });
    const decisions = await h.ok<Graph>('open_nodes', { names: ['Ana'], kinds: ['decision'], include_kinds: true, observations_limit: 1 });
    expect(decisions.entities[0]).toMatchObject({ observations: ['chose Rust'], observation_kinds: ['decision'], observationCount: 2 });
  });

  it('without the options the answer is exactly the official one', async () => {
    const h = await seeded();
    const plain = await h.call('open_nodes', { names: ['Ana'] });
    expect(plain.structuredContent).toEqual({
      entities: [{ name: 'Ana', entityType: 'person', observations: ['lives in Madrid', 'prefers tea', 'chose Rust', 'dropped Go'] }],
      relations: [],
    });
  });
});

describe('issue 25 item 19: a relation keeps its context', () => {
  it('create_relations stores it, and every answer listing the relation shows it; others keep the official shape', async () => {
    const h = await start();
    await h.ok('create_entities', {
      entities: [
        { name: 'Ana', entityType: 'person', observations: ['engineer'] },
        { name: 'Acme', entityType: 'company', observations: [] },
      ],
    });
    const created = await h.ok<{ relations: unknown[] }>('create_relations', {
      relations: [
        { from: 'Ana', to: 'Acme', relationType: 'works_at', context: 'since the 2024 merger' },
        { from: 'Acme', to: 'Ana', relationType: 'employs' },
      ],
    });
    const withContext = { from: 'Ana', to: 'Acme', relationType: 'works_at', context: 'since the 2024 merger' };
    const plain = { from: 'Acme', to: 'Ana', relationType: 'employs' };
    expect(created.relations).toEqual([withContext, plain]);
    expect((await h.ok<Graph>('read_graph')).relations).toEqual([withContext, plain]);
    expect((await h.ok<Graph>('read_graph', { limit: 1 })).relations).toEqual([withContext]);
    expect((await h.ok<Graph>('open_nodes', { names: ['Ana'] })).relations).toEqual([withContext, plain]);
    expect((await h.ok<Graph>('search_nodes', { query: 'engineer' })).relations).toEqual([withContext, plain]);
    expect((await h.ok<Graph>('search_nodes', { query: 'engineer', limit: 5 })).relations).toEqual([withContext, plain]);
    // Creating it again keeps the first context; delete_relations matches without it.
    expect(
      (await h.ok<{ relations: unknown[] }>('create_relations', { relations: [{ ...withContext, context: 'other' }] })).relations,
    ).toEqual([]);
    // Made current again after end_relation, it shows the context it had.
    await h.ok('end_relation', { from: 'Ana', to: 'Acme', relationType: 'works_at' });
    const revived = await h.ok<{ relations: unknown[] }>('create_relations', {
      relations: [{ from: 'Ana', to: 'Acme', relationType: 'works_at' }],
    });
    expect(revived.relations).toEqual([withContext]);
    await h.ok('delete_relations', { relations: [{ from: 'Ana', to: 'Acme', relationType: 'works_at' }] });
    expect((await h.ok<Graph>('read_graph')).relations).toEqual([plain]);
  });
});

describe('issue 25 item 21: observation kinds are found by keyword', () => {
  it('a kind word finds the observations of that kind; search_nodes keeps the official substring test', async () => {
    const h = await start();
    await h.ok('create_entities', {
      entities: [
        { name: 'Ana', entityType: 'person', observations: ['drinks coffee'] },
        { name: 'Bo', entityType: 'person', observations: ['drinks tea'] },
      ],
    });
    await h.ok('add_observations', { observations: [{ entityName: 'Ana', contents: ['dark roast only'], kind: 'preference' }] });
    await h.ok('add_observations', { observations: [{ entityName: 'Bo', contents: ['moved to Lisbon'], kind: 'decision' }] });
    expect((await keywordSearch(h, 'preference')).results.map((r) => r.name)).toEqual(['Ana']);
    expect((await keywordSearch(h, 'decision')).results.map((r) => r.name)).toEqual(['Bo']);
    expect((await keywordSearch(h, 'preference roast')).results.map((r) => r.name)).toEqual(['Ana']);
    // Replaced observations take their kind with them.
    await h.ok('delete_observations', { deletions: [{ entityName: 'Bo', observations: ['moved to Lisbon'] }] });
    expect((await keywordSearch(h, 'decision')).results).toEqual([]);
    // The official substring contract knows nothing of kinds.
    expect((await h.ok<Graph>('search_nodes', { query: 'preference' })).entities).toEqual([]);
  });
});

describe('issue 25 item 22: hierarchical relations in pairs, when asked', () => {
  it('off by default: create_relations creates exactly what it was given', async () => {
    const h = await start();
    await h.ok('create_relations', { relations: [{ from: 'Car', to: 'Wheel', relationType: 'contains' }] });
    expect((await h.ok<Graph>('read_graph')).relations).toEqual([{ from: 'Car', to: 'Wheel', relationType: 'contains' }]);
  });

  it('on: contains makes part_of and back (contiene / parte_de too); deleting one deletes the pair', async () => {
    const h = await start({ inverseRelations: true });
    const created = await h.ok<Graph>('create_relations', {
      relations: [
        { from: 'Car', to: 'Wheel', relationType: 'contains', context: 'four of them' },
        { from: 'Piston', to: 'Engine', relationType: 'part_of' },
        { from: 'Casa', to: 'Cocina', relationType: 'contiene' },
        { from: 'Car', to: 'Ana', relationType: 'owned_by' },
      ],
    });
    expect(created.relations).toEqual([
      { from: 'Car', to: 'Wheel', relationType: 'contains', context: 'four of them' },
      { from: 'Wheel', to: 'Car', relationType: 'part_of', context: 'automatic inverse of contains' },
      { from: 'Piston', to: 'Engine', relationType: 'part_of' },
      { from: 'Engine', to: 'Piston', relationType: 'contains', context: 'automatic inverse of part_of' },
      { from: 'Casa', to: 'Cocina', relationType: 'contiene' },
      { from: 'Cocina', to: 'Casa', relationType: 'parte_de', context: 'automatic inverse of contiene' },
      { from: 'Car', to: 'Ana', relationType: 'owned_by' },
    ]);
    // An inverse that exists already is left as it is.
    expect(
      (await h.ok<Graph>('create_relations', { relations: [{ from: 'Wheel', to: 'Car', relationType: 'part_of' }] })).relations,
    ).toEqual([]);
    await h.ok('delete_relations', {
      relations: [
        { from: 'Wheel', to: 'Car', relationType: 'part_of' },
        { from: 'Casa', to: 'Cocina', relationType: 'contiene' },
      ],
    });
    expect((await h.ok<Graph>('read_graph')).relations).toEqual([
      { from: 'Piston', to: 'Engine', relationType: 'part_of' },
      { from: 'Engine', to: 'Piston', relationType: 'contains', context: 'automatic inverse of part_of' },
      { from: 'Car', to: 'Ana', relationType: 'owned_by' },
    ]);
  });
});
