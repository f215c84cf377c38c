/** search_semantic through a real MCP client with the real model: the hybrid pipeline end to end. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, textOf, type Harness } from '../helpers/fixtures.js';

interface Result {
  name: string;
  entityType: string;
  observations: string[];
  limbic_score: number;
  scoring: { importance: number; temporal_factor: number; cooc_boost: number; usage_lift: number; usage_places: number };
  distance?: number;
  rrf_score?: number;
  routing_strategy: string;
}
interface Response {
  results: Result[];
  mode: string;
  warning?: string;
}

const GRAPH = [
  {
    name: 'Hybrid search',
    entityType: 'Concept',
    observations: ['Combines FTS5 keyword search with vector similarity', 'Uses reciprocal rank fusion'],
  },
  { name: 'dom-cachorroink', entityType: 'Skill', observations: ['A skill for drawing ink illustrations of dogs'] },
  { name: 'Commute', entityType: 'Habit', observations: ['Drives an automobile to the office every morning'] },
  { name: 'Baking', entityType: 'Hobby', observations: ['Bakes sourdough bread on weekends'] },
  { name: 'Garden', entityType: 'Place', observations: ['Tomatoes and basil grow in the backyard'] },
  { name: 'Team offsite', entityType: 'Event', observations: ['Planned a retreat in the mountains for the engineering team'] },
];

describe('search_semantic (real model)', () => {
  let h: Harness;
  const now = Date.UTC(2026, 10, 1);
  beforeAll(async () => {
    h = await harness({ embedder: 'real', clock: () => now });
    await h.ok('create_entities', { entities: GRAPH });
    await h.service.drainEmbeddings();
  });
  afterAll(async () => {
    await h.close();
  });

  const search = async (query: string, limit = 5): Promise<Response> => {
    const r = await h.ok<Response>('search_semantic', { query, limit });
    await h.settle();
    return r;
  };

  it('returns the spec fields, hybrid mode with rrf_score when keywords match', async () => {
    const r = await search('FTS5');
    expect(r.mode).toBe('hybrid');
    expect(r.results[0]?.name).toBe('Hybrid search');
    for (const result of r.results) {
      expect(Object.keys(result).sort()).toEqual(
        ['distance', 'entityType', 'limbic_score', 'name', 'observations', 'routing_strategy', 'rrf_score', 'scoring'].filter(
          (k) => k !== 'distance' || result.distance !== undefined,
        ),
      );
      expect(Object.keys(result.scoring).sort()).toEqual([
        'cooc_boost',
        'importance',
        'temporal_factor',
        'usage_lift',
        'usage_lift_base_level',
        'usage_lift_refinding',
        'usage_places',
      ]);
    }
  });

  it('finds an exact identifier through the keyword leg', async () => {
    const r = await search('dom-cachorroink');
    expect(r.results[0]?.name).toBe('dom-cachorroink');
    expect(r.results[0]?.rrf_score).toBeGreaterThan(0);
  });

  it('finds a paraphrase with no shared words through the vector leg (pure semantic mode)', async () => {
    const r = await search('car journeys');
    expect(r.mode).toBe('semantic');
    expect(r.results[0]?.name).toBe('Commute');
    expect(r.results[0]?.rrf_score).toBeUndefined();
    expect(r.results[0]?.distance).toBeLessThan(0.8);
  });

  it('orders results by limbic_score, descending', async () => {
    const r = await search('weekend hobbies like baking bread', 6);
    const scores = r.results.map((x) => x.limbic_score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(r.results[0]?.name).toBe('Baking');
  });

  it('re-embeds an entity when its observations change, and drops it when deleted', async () => {
    await h.ok('create_entities', { entities: [{ name: 'Mystery', entityType: 'Thing', observations: ['unrelated filler'] }] });
    await h.service.drainEmbeddings();
    const before = await search('volcano eruption lava', 3);
    const rankBefore = before.results.findIndex((x) => x.name === 'Mystery');
    await h.ok('add_observations', {
      observations: [{ entityName: 'Mystery', contents: ['A volcano erupted and lava flowed into the sea'] }],
    });
    const after = await search('volcano eruption lava', 3);
    // Re-embedded: now the nearest by meaning, found by both legs, and first, although the entities
    // earlier tests returned carry usage boosts. (Before e5's cosine was rescaled by its floor of
    // 0.74, a salience boost outweighed the gap between related and unrelated text.)
    expect(after.results[0]?.name).toBe('Mystery');
    const mystery = after.results.find((x) => x.name === 'Mystery');
    expect(mystery?.rrf_score).toBeDefined();
    expect(mystery?.distance).toBe(Math.min(...after.results.map((x) => x.distance ?? 1)));
    expect(rankBefore === -1 || (before.results[rankBefore]?.distance ?? 0) > (mystery?.distance ?? 1)).toBe(true);
    await h.ok('delete_entities', { entityNames: ['Mystery'] });
    const gone = await search('volcano eruption lava', 10);
    expect(gone.results.map((x) => x.name)).not.toContain('Mystery');
    expect((await h.service.statistics()).embeddings).toMatchObject({ indexed: GRAPH.length, pending: 0 });
  });

  it('records no access for what it returned: being listed is not being used (issue 24)', async () => {
    const r = await search('sourdough', 2);
    await h.settle();
    const ids = await h.store.graph.idsByName(r.results.map((x) => x.name));
    expect(ids.length).toBeGreaterThan(0);
    const signals = await h.store.usage.signals(ids);
    expect(signals.access.size).toBe(0);
    expect(signals.coOccurrences).toEqual([]);
  });
});

describe('limbic ranking through MCP (real model)', () => {
  let h: Harness;
  let now = Date.UTC(2026, 10, 1);
  const twins = (a: string, b: string) => [
    { name: a, entityType: 'Note', observations: ['Notes about the quarterly budget review meeting'] },
    { name: b, entityType: 'Note', observations: ['Notes about the quarterly budget review meeting'] },
  ];
  beforeAll(async () => {
    h = await harness({ embedder: 'real', clock: () => now });
  });
  afterAll(async () => {
    await h.close();
  });

  it('ranks an archived entity below an identical active one', async () => {
    await h.ok('create_entities', { entities: twins('Budget A', 'Budget B') });
    await h.ok('set_entity_status', { name: 'Budget A', status: 'archived' });
    await h.service.drainEmbeddings();
    const r = await h.ok<Response>('search_semantic', { query: 'quarterly budget review', limit: 2 });
    expect(r.results.map((x) => x.name)).toEqual(['Budget B', 'Budget A']);
  });

  it('raises an entity used day after day above its near-twin, and says usage moved it', async () => {
    await h.ok('create_entities', { entities: twins('Review X', 'Review Y') });
    await h.service.drainEmbeddings();
    // An exploratory question (limbic_heavy: the widest usage band, 0.028).
    const ask = async () =>
      (
        await h.ok<Response>('search_semantic', { query: 'tell me everything about the quarterly budget review meeting notes', limit: 6 })
      ).results.filter((x) => x.name.startsWith('Review'));
    const before = await ask();
    const loser = before[1]?.name ?? 'Review Y';
    // The twins differ only by their names: a gap well inside the band.
    expect((before[0]?.limbic_score ?? 0) - (before[1]?.limbic_score ?? 0)).toBeLessThan(0.02);
    for (let day = 0; day < 30; day++) {
      now += 86_400_000;
      await h.ok('open_nodes', { names: [loser] });
      await h.settle();
    }
    const after = await ask();
    expect(after[0]?.name).toBe(loser);
    expect(after[0]?.scoring.usage_lift).toBeGreaterThan(0);
    expect(after[0]?.scoring.usage_places).toBeGreaterThan(0);
  });

  it('ranks an entity found by both legs above ones found by either alone', async () => {
    await h.ok('create_entities', {
      entities: [
        { name: 'Both', entityType: 'Doc', observations: ['The zebrafish genome was sequenced in the lab'] },
        { name: 'KeywordOnly', entityType: 'Doc', observations: ['zebrafish'] },
        { name: 'MeaningOnly', entityType: 'Doc', observations: ['Scientists decoded the DNA of a small striped aquarium fish'] },
      ],
    });
    await h.service.drainEmbeddings();
    const r = await h.ok<Response>('search_semantic', { query: 'zebrafish genome sequencing', limit: 5 });
    expect(r.mode).toBe('hybrid');
    expect(r.results[0]?.name).toBe('Both');
  });
});

describe('search_semantic without a model', () => {
  it('answers keyword matches, ranked on the RRF base, and says semantic search is off', async () => {
    const h = await harness({ embedder: 'none' });
    await h.ok('create_entities', { entities: GRAPH });
    const r = await h.ok<Response>('search_semantic', { query: 'FTS5 fusion', limit: 5 });
    expect(r.mode).toBe('keyword');
    expect(r.warning).toMatch(/limbic model install/);
    expect(r.results[0]?.name).toBe('Hybrid search');
    expect(r.results[0]?.distance).toBeUndefined();
    expect(r.results[0]?.rrf_score).toBeGreaterThan(0);
    const none = await h.call('search_semantic', { query: 'car journeys', limit: 5 });
    expect(none.isError).toBe(true);
    expect(textOf(none)).toMatch(/limbic model install/);
    // Every other tool keeps working.
    expect((await h.ok<{ entities: unknown[] }>('search_nodes', { query: 'automobile' })).entities).toHaveLength(1);
    await h.close();
  });

  it('folds accents and never lets user text break the keyword query', async () => {
    const h = await harness({ embedder: 'none' });
    await h.ok('create_entities', { entities: [{ name: 'Sesión 2026-03-28', entityType: 'Sesión', observations: ['Revisión del plan'] }] });
    const r = await h.ok<Response>('search_semantic', { query: 'sesion', limit: 3 });
    expect(r.results[0]?.name).toBe('Sesión 2026-03-28');
    for (const hostile of ['"', 'AND', 'NOT OR', '*', 'name:x', '(((', '🧠', "'; DROP TABLE entities; --", 'x'.repeat(10_000)]) {
      const res = await h.call('search_semantic', { query: hostile, limit: 3 });
      expect(textOf(res)).not.toMatch(/Internal error|fts5|syntax/i);
    }
    await h.close();
  });
});

describe('search_semantic in a small memory (issue 18, real model)', () => {
  it('ranks the entity that answers by meaning above one that shares only common words', async () => {
    const h = await harness({ embedder: 'real' });
    await h.ok('create_entities', {
      entities: [
        { name: 'Ada', entityType: 'Person', observations: ['escribió el primer programa para la máquina analítica'] },
        { name: 'Kettle', entityType: 'Object', observations: ['the kettle is blue'] },
      ],
    });
    await h.service.drainEmbeddings();
    const r = await h.ok<Response>('search_semantic', { query: 'who wrote the first computer program', limit: 2 });
    expect(r.results.map((x) => x.name)).toEqual(['Ada', 'Kettle']);
    // Spanish memory, English question: none of the query's words are in the memory, so meaning decides.
    const cross = await h.ok<Response>('search_semantic', { query: 'the first program for the analytical engine', limit: 2 });
    expect(cross.results[0]?.name).toBe('Ada');
    await h.close();
  });
});
