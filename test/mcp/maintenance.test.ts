/**
 * The seed system's maintenance tools through a real MCP client (issue 16, part 3): supersedes and
 * include_superseded, end_relation, find_duplicate_observations without a model, the consolidation
 * report, entity splitting by keywords, and backpressure. Meaning does not matter here (the fake
 * embedder or none); maintenance-semantic.test.ts runs the real model where it does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../src/core/limits.js';
import { FakeEmbedder, harness, textOf, type Harness } from '../helpers/fixtures.js';

const DAY = 86_400_000;

/** A harness whose client has listed the tools, so it checks every answer against its outputSchema as real clients do. */
async function validating(options: Parameters<typeof harness>[0]): Promise<Harness> {
  const h = await harness(options);
  await h.client.listTools();
  return h;
}

interface Graph {
  entities: { name: string; entityType: string; observations: string[]; superseded_observations?: Record<string, string>[] }[];
  relations: { from: string; to: string; relationType: string; ended_at?: string }[];
}
interface Hybrid {
  results: { name: string; scores: { graph_boost: number } }[];
}

const names = (g: { entities: { name: string }[] } | { results: { name: string }[] }): string[] =>
  'entities' in g ? g.entities.map((e) => e.name) : g.results.map((r) => r.name);

describe('supersedes and include_superseded', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await validating({ embedder: 'fake' });
    await h.ok('create_entities', {
      entities: [{ name: 'Alice', entityType: 'person', observations: ['lives in Lisbon', 'works as a pilot'] }],
    });
  });
  afterAll(() => h.close());

  it('replaces an observation: the old one leaves read_graph, search_nodes and keyword search', async () => {
    const r = await h.ok<{ results: Record<string, unknown>[] }>('add_observations', {
      observations: [{ entityName: 'Alice', contents: ['lives in Oslo'], supersedes: 'lives in Lisbon' }],
    });
    expect(r.results).toEqual([{ entityName: 'Alice', addedObservations: ['lives in Oslo'], superseded: 'lives in Lisbon' }]);
    const graph = await h.ok<Graph>('read_graph');
    expect(graph.entities[0]?.observations).toEqual(['works as a pilot', 'lives in Oslo']);
    expect(names(await h.ok<Graph>('search_nodes', { query: 'Lisbon' }))).toEqual([]);
    expect(names(await h.ok<Graph>('search_nodes', { query: 'Oslo' }))).toEqual(['Alice']);
    expect(names(await h.ok<Hybrid>('hybrid_search', { query: 'Lisbon', search_modes: ['fts'] }))).toEqual([]);
    expect(names(await h.ok<Hybrid>('hybrid_search', { query: 'Oslo', search_modes: ['fts'] }))).toEqual(['Alice']);
  });

  it('open_nodes shows the history only when asked, with what replaced it', async () => {
    const plain = await h.ok<Graph>('open_nodes', { names: ['Alice'] });
    expect(plain.entities[0]).toEqual({ name: 'Alice', entityType: 'person', observations: ['works as a pilot', 'lives in Oslo'] });
    const full = await h.ok<Graph>('open_nodes', { names: ['Alice'], include_superseded: true });
    const history = full.entities[0]?.superseded_observations ?? [];
    expect(history).toHaveLength(1);
    expect(history[0]).toMatchObject({ content: 'lives in Lisbon', kind: 'generic', superseded_by: 'lives in Oslo' });
    expect(Date.parse(history[0]?.superseded_at ?? '')).not.toBeNaN();
  });

  it('refuses a supersedes that is not a current observation, saving nothing of the call', async () => {
    for (const supersedes of ['lives in Lisbon' /* already superseded */, 'never said this']) {
      const r = await h.call('add_observations', {
        observations: [
          { entityName: 'Alice', contents: ['likes chess'] },
          { entityName: 'Alice', contents: ['lives in Rome'], supersedes },
        ],
      });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toMatch(/observations\[1\]\.supersedes.*not a current observation of Alice.*open_nodes/);
    }
    const self = await h.call('add_observations', {
      observations: [{ entityName: 'Alice', contents: ['works as a pilot'], supersedes: 'works as a pilot' }],
    });
    expect(textOf(self)).toMatch(/cannot replace itself/);
    const missing = await h.call('add_observations', { observations: [{ entityName: 'Nobody', contents: ['x'], supersedes: 'y' }] });
    expect(textOf(missing)).toMatch(/Entity with name Nobody not found/);
    expect((await h.ok<Graph>('read_graph')).entities[0]?.observations).toEqual(['works as a pilot', 'lives in Oslo']);
  });

  it('deletes the replacing observation without a foreign-key error, and takes back an old text as new', async () => {
    // The seed system failed here with "FOREIGN KEY constraint failed".
    await h.ok('delete_observations', { deletions: [{ entityName: 'Alice', observations: ['lives in Oslo'] }] });
    const again = await h.ok<{ results: { addedObservations: string[] }[] }>('add_observations', {
      observations: [{ entityName: 'Alice', contents: ['lives in Lisbon'] }],
    });
    expect(again.results[0]?.addedObservations).toEqual(['lives in Lisbon']);
    const full = await h.ok<Graph>('open_nodes', { names: ['Alice'], include_superseded: true });
    expect(full.entities[0]?.observations).toEqual(['works as a pilot', 'lives in Lisbon']);
    expect(full.entities[0]?.superseded_observations).toHaveLength(1);
  });

  it('adding a superseded text again makes it current beside its replacement, keeping the history (issue 25: decided)', async () => {
    await h.ok('create_entities', { entities: [{ name: 'Car', entityType: 'thing', observations: ['is red'] }] });
    await h.ok('add_observations', { observations: [{ entityName: 'Car', contents: ['is blue'], supersedes: 'is red' }] });
    // A fact may become true again, and a write is never dropped without a word (the seed system
    // inserted nothing here); to swap back, the agent supersedes the replacement instead.
    const again = await h.ok<{ results: { addedObservations: string[] }[] }>('add_observations', {
      observations: [{ entityName: 'Car', contents: ['is red'] }],
    });
    expect(again.results[0]?.addedObservations).toEqual(['is red']);
    const full = await h.ok<Graph>('open_nodes', { names: ['Car'], include_superseded: true });
    expect(full.entities[0]?.observations).toEqual(['is blue', 'is red']);
    expect(full.entities[0]?.superseded_observations?.map((o) => o.content)).toEqual(['is red']);
    await h.ok('add_observations', { observations: [{ entityName: 'Car', contents: ['is green'], supersedes: 'is blue' }] });
    expect((await h.ok<Graph>('open_nodes', { names: ['Car'] })).entities[0]?.observations).toEqual(['is red', 'is green']);
  });

  it('deleting the entity deletes its history', async () => {
    await h.ok('delete_entities', { entityNames: ['Alice'] });
    await h.ok('create_entities', { entities: [{ name: 'Alice', entityType: 'person', observations: [] }] });
    const full = await h.ok<Graph>('open_nodes', { names: ['Alice'], include_superseded: true });
    expect(full.entities[0]?.superseded_observations).toEqual([]);
  });
});

describe('end_relation', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await validating({ embedder: 'fake' });
    await h.ok('create_entities', {
      entities: [
        { name: 'Apollo', entityType: 'Project', observations: ['budget review'] },
        { name: 'Hera', entityType: 'Person', observations: ['leads the rocket team'] },
      ],
    });
    await h.ok('create_relations', { relations: [{ from: 'Hera', to: 'Apollo', relationType: 'leads' }] });
  });
  afterAll(() => h.close());

  const heraBoost = async (): Promise<number> => {
    const r = await h.ok<Hybrid>('hybrid_search', {
      query: 'budget review OR team',
      search_modes: ['fts'],
      limbic: false,
      weights: { graph: 1 },
    });
    return r.results.find((x) => x.name === 'Hera')?.scores.graph_boost ?? -1;
  };

  it('an ended relation stops boosting, is listed only when asked, and comes back when created again', async () => {
    expect(await heraBoost()).toBeGreaterThan(0);
    const ended = await h.ok<{ relation: Record<string, string>; notice?: string }>('end_relation', {
      from: 'Hera',
      to: 'Apollo',
      relationType: 'leads',
    });
    expect(ended.relation).toMatchObject({ from: 'Hera', to: 'Apollo', relationType: 'leads' });
    expect(ended.notice).toBeUndefined();
    expect(await heraBoost()).toBe(0);
    // No longer listed as current (issue 33); still a fact of the graph, with when it ended, when asked for.
    expect((await h.ok<Graph>('read_graph')).relations).toEqual([]);
    expect((await h.ok<Graph>('read_graph', { include_ended: true })).relations).toEqual([
      { from: 'Hera', to: 'Apollo', relationType: 'leads', ended_at: ended.relation.ended_at },
    ]);
    const full = await h.ok<Graph>('open_nodes', { names: ['Hera'], include_superseded: true });
    expect(full.relations[0]?.ended_at).toBe(ended.relation.ended_at);
    const again = await h.ok<{ notice?: string }>('end_relation', { from: 'Hera', to: 'Apollo', relationType: 'leads' });
    expect(again.notice).toMatch(/already ended/);
    const recreated = await h.ok<{ relations: unknown[] }>('create_relations', {
      relations: [{ from: 'Hera', to: 'Apollo', relationType: 'leads' }],
    });
    expect(recreated.relations).toHaveLength(1);
    expect(await heraBoost()).toBeGreaterThan(0);
  });

  it('an ended relation no longer counts toward importance (degree)', async () => {
    const once = async () => {
      const r = await h.ok<{ results: { name: string; scoring: { importance: number } }[] }>('search_semantic', { query: 'budget review' });
      return r.results.find((x) => x.name === 'Apollo')?.scoring.importance ?? -1;
    };
    // Each search's accesses are recorded after its answer, sooner on one backend than another: read
    // once they have landed, when two reads agree (both entities are then accessed alike).
    const importance = async () => {
      let last = await once();
      for (let i = 0; i < 50; i++) {
        await h.settle();
        const next = await once();
        if (next === last) return next;
        last = next;
      }
      return last;
    };
    const before = await importance();
    await h.ok('end_relation', { from: 'Hera', to: 'Apollo', relationType: 'leads' });
    expect(await importance()).toBeLessThan(before);
  });

  it('names what is wrong', async () => {
    const missing = await h.call('end_relation', { from: 'Hera', to: 'Apollo', relationType: 'funds' });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/Hera -\[funds\]-> Apollo not found.*open_nodes/);
    const unknown = await h.call('end_relation', { from: 'Hera', to: 'Apollo', relationType: 'leads', relation_id: 3 });
    expect(textOf(unknown)).toMatch(/unknown field "relation_id"/);
    const absent = await h.call('end_relation', { from: 'Hera', to: 'Apollo' });
    expect(textOf(absent)).toMatch(/relationType/);
  });
});

describe('find_duplicate_observations without a model', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await validating({ embedder: 'none' });
    await h.ok('create_entities', {
      entities: [
        {
          name: 'Bob',
          entityType: 'person',
          observations: [
            'likes green tea',
            'Bob likes green tea every single morning before work',
            'owns a red bicycle',
            'lives near the harbour',
          ],
        },
        { name: 'Solo', entityType: 'person', observations: ['only one'] },
      ],
    });
  });
  afterAll(() => h.close());

  it('finds containment duplicates by words and says that meaning was not checked', async () => {
    const r = await h.ok<{
      method: string;
      duplicates_found: number;
      clusters: { size: number; observations: { content: string }[] }[];
      pairs: Record<string, unknown>[];
    }>('find_duplicate_observations', { entity_name: 'Bob' });
    expect(r.method).toMatch(/^words/);
    expect(r.duplicates_found).toBe(1);
    expect(r.clusters).toEqual([
      {
        size: 2,
        observations: [
          { content: 'likes green tea', kind: 'generic' },
          { content: 'Bob likes green tea every single morning before work', kind: 'generic' },
        ],
      },
    ]);
    expect(r.pairs).toEqual([
      { a: 'likes green tea', b: 'Bob likes green tea every single morning before work', match_type: 'containment', similarity: 1 },
    ]);
    // A stricter containment than the pair's (3 of 3 words) still matches; none can match at 1.0 plus.
    const strict = await h.ok<{ duplicates_found: number }>('find_duplicate_observations', {
      entity_name: 'Bob',
      containment_threshold: 1,
    });
    expect(strict.duplicates_found).toBe(1);
  });

  it('answers an entity with one observation, and names bad input', async () => {
    const solo = await h.ok<{ total_observations: number; clusters: unknown[] }>('find_duplicate_observations', { entity_name: 'Solo' });
    expect(solo).toMatchObject({ total_observations: 1, clusters: [], method: 'none' });
    expect(textOf(await h.call('find_duplicate_observations', { entity_name: 'Nobody' }))).toMatch(/Entity with name Nobody not found/);
    expect(textOf(await h.call('find_duplicate_observations', { entity_name: 'Bob', threshold: 2 }))).toMatch(
      /threshold must be a number from 0 to 1/,
    );
    expect(textOf(await h.call('find_duplicate_observations', { entity_name: 'Bob', containment: 0.5 }))).toMatch(
      /unknown field "containment"/,
    );
  });
});

/** Thirty observations on two subjects, sharing the subject's word (keyword topics). */
const twoTopics = (): string[] => [
  ...Array.from({ length: 15 }, (_, i) => `garden chore number ${i}: watering tomatoes`),
  ...Array.from({ length: 15 }, (_, i) => `invoice item ${i}: accounting payment`),
];

describe('consolidation_report and entity splits (no model: keywords)', () => {
  let h: Harness;
  let now = Date.UTC(2026, 0, 1);
  beforeAll(async () => {
    h = await validating({ embedder: 'none', clock: () => now });
    await h.ok('create_entities', {
      entities: [
        { name: 'Big', entityType: 'Notes', observations: twoTopics() },
        { name: 'Nearly', entityType: 'Notes', observations: Array.from({ length: 17 }, (_, i) => `fact ${i}`) },
        { name: 'Forgotten', entityType: 'Thing', observations: ['an old note'] },
        { name: 'Shelved', entityType: 'Thing', observations: ['archived note'], status: 'archived' },
        { name: 'Used', entityType: 'Thing', observations: ['a useful note'] },
        { name: 'Dupes', entityType: 'Thing', observations: ['red car', 'a shiny red car parked outside'] },
      ],
    });
    now += 100 * DAY;
    await h.ok('open_nodes', { names: ['Used'] });
    await h.settle();
  });
  afterAll(() => h.close());

  interface Report {
    summary: Record<string, number>;
    split_candidates: { entity_name: string; recommendation: string }[];
    large_entities: { entity_name: string }[];
    stale_entities: { entity_name: string; recommendation: string }[];
    duplicate_clusters: unknown[];
    duplicates_scanned: unknown;
  }

  it('reports split candidates, near-threshold, stale entities and duplicate clusters', async () => {
    const r = await h.ok<Report>('consolidation_report', {});
    expect(r.summary).toMatchObject({
      total_entities: 6,
      total_observations: 52,
      split_candidates_count: 1,
      stale_entities_count: 4,
      large_entities_count: 1,
    });
    expect(r.split_candidates[0]).toMatchObject({ entity_name: 'Big', observation_count: 30, threshold: 20 });
    expect(r.split_candidates[0]?.recommendation).toMatch(/1\.5x the threshold of 20, in 2 topics/);
    expect(r.large_entities.map((e) => e.entity_name)).toEqual(['Nearly']);
    // Used was opened 0 days ago; Shelved is archived; the rest were never opened in 100 days.
    const stale = r.stale_entities.map((e) => e.entity_name);
    expect(stale.sort()).toEqual(['Big', 'Dupes', 'Forgotten', 'Nearly']);
    expect(r.stale_entities[0]).toMatchObject({ last_access: null, days_since_access: null });
    expect(r.stale_entities[0]?.recommendation).toMatch(/Never accessed in the 100 days since it was created/);
    expect(r.duplicate_clusters).toEqual([{ entity_name: 'Dupes', clusters: [['red car', 'a shiny red car parked outside']] }]);
    const fresh = await h.ok<Report>('consolidation_report', { stale_days: 365, max_duplicate_entities: 0 });
    expect(fresh.summary.stale_entities_count).toBe(0);
    expect(fresh.duplicates_scanned).toEqual({ entities: 0, of: 3 });
    expect(textOf(await h.call('consolidation_report', { stale_days: -1 }))).toMatch(/stale_days must be a number from 0 to 36500/);
  });

  it('analyzes and proposes a split by keywords; small entities need none', async () => {
    const small = await h.ok<{ analysis: Record<string, unknown> }>('analyze_entity_split', { entity_name: 'Nearly' });
    expect(small.analysis).toMatchObject({ needs_split: false, observation_count: 17, threshold: 20, topics: {}, method: 'none' });
    const big = await h.ok<{ analysis: { needs_split: boolean; topics: Record<string, string[]>; method: string } }>(
      'analyze_entity_split',
      { entity_name: 'Big' },
    );
    expect(big.analysis.needs_split).toBe(true);
    expect(big.analysis.method).toBe('keywords');
    expect(Object.values(big.analysis.topics).map((t) => t.length)).toEqual([15, 15]);
    const none = await h.ok<{ proposal: null; message: string }>('propose_entity_split', { entity_name: 'Nearly' });
    expect(none.proposal).toBeNull();
    expect(none.message).toMatch(/17 observations, threshold 20/);
    const candidates = await h.ok<{ candidates: { entity_name: string }[] }>('find_split_candidates');
    expect(candidates.candidates.map((c) => c.entity_name)).toEqual(['Big']);
    // The seed system answered "does not need splitting" for an entity that does not exist.
    for (const tool of ['analyze_entity_split', 'propose_entity_split']) {
      expect(textOf(await h.call(tool, { entity_name: 'Nobody' }))).toMatch(/Entity with name Nobody not found/);
    }
    expect(textOf(await h.call('find_split_candidates', { all: true }))).toMatch(/unknown field "all"/);
  });

  it('executes an approved split: children get the observations, relations link them, search finds them; the original stays their parent, never empty (issue 33)', async () => {
    const { proposal } = await h.ok<{
      proposal: { suggested_splits: { name: string; entity_type: string; observations: string[] }[]; relations_to_create: unknown[] };
    }>('propose_entity_split', { entity_name: 'Big' });
    expect(proposal.suggested_splits).toHaveLength(2);
    expect(proposal.relations_to_create).toHaveLength(4);
    const r = await h.ok<{ result: Record<string, unknown> }>('execute_entity_split', {
      entity_name: 'Big',
      approved_splits: proposal.suggested_splits,
    });
    const summary = `Split on ${new Date(now).toISOString().slice(0, 10)} into ${proposal.suggested_splits.map((s) => s.name).join(' and ')}, which hold its observations now (open_nodes reads them).`;
    expect(r.result).toEqual({
      new_entities: proposal.suggested_splits.map((s) => s.name),
      moved_observations: 30,
      relations_created: 4,
      original_observations_remaining: 0,
      original_summary: summary,
    });
    const child = proposal.suggested_splits.find((s) => s.observations[0]?.startsWith('invoice')) as { name: string };
    expect(names(await h.ok<Hybrid>('hybrid_search', { query: 'accounting', search_modes: ['fts'] }))).toEqual([child.name]);
    const big = await h.ok<Graph>('open_nodes', { names: ['Big'] });
    // Every observation moved: the original keeps one saying where they went, and is found by it.
    expect(big.entities[0]?.observations).toEqual([summary]);
    expect(names(await h.ok<Hybrid>('hybrid_search', { query: 'Big', search_modes: ['fts'] }))[0]).toBe('Big');
    expect(big.relations).toContainEqual({ from: 'Big', to: child.name, relationType: 'contains' });
    expect(big.relations).toContainEqual({ from: child.name, to: 'Big', relationType: 'part_of' });
    // The proposal names the relations the split then makes (it said contiene / parte_de before).
    for (const relation of proposal.relations_to_create) expect(big.relations).toContainEqual(relation);
  });

  it('refuses a bad split whole, naming what to fix', async () => {
    await h.ok('create_entities', { entities: [{ name: 'Mixed', entityType: 'Thing', observations: ['one', 'two', 'three'] }] });
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        { entity_name: 'Mixed', approved_splits: [{ name: 'M1', observations: ['four'] }] },
        /approved_splits\[0\]\.observations: "four" is not a current observation of Mixed/,
      ],
      [
        { entity_name: 'Mixed', approved_splits: [{ name: 'Used', observations: ['one'] }] },
        /approved_splits\[0\]\.name: an entity named "Used" exists already/,
      ],
      [
        {
          entity_name: 'Mixed',
          approved_splits: [
            { name: 'M1', observations: ['one'] },
            { name: 'M2', observations: ['one'] },
          ],
        },
        /"one" is given to both "M1" and "M2"/,
      ],
      [
        { entity_name: 'Mixed', approved_splits: [{ name: 'M1', observations: ['one'] }], parent_entity_name: 'Nobody' },
        /Entity with name Nobody not found/,
      ],
      [{ entity_name: 'Nobody', approved_splits: [{ name: 'M1', observations: ['one'] }] }, /Entity with name Nobody not found/],
      [{ entity_name: 'Mixed', approved_splits: [] }, /approved_splits must hold at least 1 split/],
      [{ entity_name: 'Mixed', approved_splits: [{ observations: ['one'] }] }, /approved_splits\.0\.name|name/],
    ];
    for (const [args, message] of cases) {
      const r = await h.call('execute_entity_split', args);
      expect(r.isError, JSON.stringify(args)).toBe(true);
      expect(textOf(r)).toMatch(message);
    }
    expect(names(await h.ok<Graph>('open_nodes', { names: ['M1', 'M2'] }))).toEqual([]);
    expect((await h.ok<Graph>('open_nodes', { names: ['Mixed'] })).entities[0]?.observations).toEqual(['one', 'two', 'three']);
  });

  it("links children to parent_entity_name when given, with the child's own type", async () => {
    const r = await h.ok<{ result: { relations_created: number } }>('execute_entity_split', {
      entity_name: 'Mixed',
      approved_splits: [{ name: 'Mixed - odd', entity_type: 'Subset', observations: ['one', 'three'] }],
      parent_entity_name: 'Used',
    });
    expect(r.result.relations_created).toBe(2);
    const child = await h.ok<Graph>('open_nodes', { names: ['Mixed - odd'] });
    expect(child.entities[0]).toEqual({ name: 'Mixed - odd', entityType: 'Subset', observations: ['one', 'three'] });
    expect(child.relations).toEqual([
      { from: 'Used', to: 'Mixed - odd', relationType: 'contains' },
      { from: 'Mixed - odd', to: 'Used', relationType: 'part_of' },
    ]);
    expect((await h.ok<Graph>('open_nodes', { names: ['Mixed'] })).entities[0]?.observations).toEqual(['two']);
  });
});

it('split children are embedded like any entity (the seed system left them without a vector)', async () => {
  const h = await validating({ embedder: 'fake' });
  try {
    await h.ok('create_entities', { entities: [{ name: 'Big', entityType: 'Notes', observations: twoTopics() }] });
    await h.service.drainEmbeddings();
    const { proposal } = await h.ok<{ proposal: { suggested_splits: unknown[] } }>('propose_entity_split', { entity_name: 'Big' });
    await h.ok('execute_entity_split', { entity_name: 'Big', approved_splits: proposal.suggested_splits });
    await h.service.drainEmbeddings();
    const stats = await h.ok<{ embeddings: { indexed: number; pending: number } }>('get_statistics');
    expect(stats.embeddings).toMatchObject({ indexed: 3, pending: 0 });
  } finally {
    await h.close();
  }
});

/** A fake embedder whose embed() waits while `gate` is set: a heavy call that holds its slot. */
class GatedEmbedder extends FakeEmbedder {
  gate: Promise<void> | undefined;
  override async embed(texts: readonly string[]): Promise<Float32Array[]> {
    if (this.gate !== undefined) await this.gate;
    return super.embed(texts);
  }
}

describe('backpressure for the heavy tools', () => {
  it('answers a retryable busy when the slot is taken, and serves the next call once it frees', async () => {
    const engine = new GatedEmbedder();
    const h = await validating({ embedder: engine, heavySlots: { slots: 1, waitMs: 0 } });
    try {
      await h.ok('create_entities', { entities: [{ name: 'Bob', entityType: 'person', observations: ['likes tea', 'likes green tea'] }] });
      await h.service.drainEmbeddings();
      let open: () => void = () => undefined;
      engine.gate = new Promise((resolve) => (open = resolve));
      const first = h.call('find_duplicate_observations', { entity_name: 'Bob' });
      await new Promise((r) => setTimeout(r, 50)); // the first call now waits inside the model, holding the slot
      for (const [tool, args] of [
        ['consolidation_report', {}],
        ['analyze_entity_split', { entity_name: 'Bob' }],
        ['find_split_candidates', {}],
      ] as const) {
        const busy = await h.call(tool, args);
        expect(busy.isError, tool).toBe(true);
        expect(busy.structuredContent).toMatchObject({ error: 'server_busy', code: 'heavy_tool_backpressure', retryable: true });
        expect(textOf(busy)).toMatch(/limit=1.*retry/);
      }
      // Light tools never wait for the slot.
      expect((await h.call('open_nodes', { names: ['Bob'] })).isError).toBeFalsy();
      engine.gate = undefined;
      open();
      expect((await first).isError).toBeFalsy();
      expect((await h.call('consolidation_report', {})).isError).toBeFalsy();
    } finally {
      await h.close();
    }
  });

  it('holds without a model too, where the running report keeps the thread (issue 25)', async () => {
    // A report over 200 entities takes about 0.1 s of the thread here: far past a 5 ms wait.
    const h = await validating({ heavySlots: { slots: 1, waitMs: 5 } });
    try {
      await h.ok('create_entities', {
        entities: Array.from({ length: 200 }, (_, i) => ({
          name: `E${i}`,
          entityType: 'note',
          observations: Array.from({ length: 30 }, (_, j) => `note ${i} says thing ${j} about topic ${(i * j) % 7}`),
        })),
      });
      const answers = await Promise.all([1, 2, 3, 4].map(() => h.call('consolidation_report', {})));
      const busy = answers.filter((a) => (a.structuredContent as { error?: string } | undefined)?.error === 'server_busy');
      expect(answers.length - busy.length).toBeGreaterThanOrEqual(1);
      expect(busy.length).toBeGreaterThanOrEqual(1);
    } finally {
      await h.close();
    }
  });
});

it('a read-only service refuses the maintenance writes, and still reads', async () => {
  const { readOnlyService } = await import('../../src/http/read-only.js');
  const h = await validating({ embedder: 'none' });
  try {
    await h.ok('create_entities', { entities: [{ name: 'A', entityType: 't', observations: ['one'] }] });
    await h.ok('create_relations', { relations: [{ from: 'A', to: 'A', relationType: 'self' }] });
    const ro = readOnlyService(h.service, 'default');
    await expect(ro.maintenance.supersede([{ entityName: 'A', contents: ['two'], supersedes: 'one' }])).rejects.toThrow(
      /read-only: add_observations/,
    );
    await expect(ro.maintenance.endRelation({ from: 'A', to: 'A', relationType: 'self' })).rejects.toThrow(/read-only: end_relation/);
    await expect(ro.maintenance.executeEntitySplit('A', [{ name: 'B', observations: ['one'] }], undefined)).rejects.toThrow(
      /read-only: execute_entity_split/,
    );
    await expect(ro.reflections.add({ content: 'x' })).rejects.toThrow(/read-only: add_reflection/);
    await expect(ro.reflections.consolidate()).rejects.toThrow(/read-only: run_consolidation/);
    expect((await ro.maintenance.findDuplicateObservations('A', {})).total_observations).toBe(1);
    expect((await h.ok<Graph>('read_graph')).entities[0]?.observations).toEqual(['one']);
  } finally {
    await h.close();
  }
});

describe('supersedes within the per-entity bound (issue 26)', () => {
  let h: Harness;
  const long = (tag: string, n: number = LIMITS.maxObservationChars): string => `${tag} `.padEnd(n, 'lorem ipsum ');
  beforeAll(async () => {
    h = await validating({ embedder: 'none' });
    await h.ok('create_entities', { entities: [{ name: 'Big', entityType: 'log', observations: ['short note'] }] });
    // 209 observations of 20,000 bytes and 'short note': 14,294 bytes under the 4 MiB an entity may hold;
    // replacing 'short note' by 20,000 bytes makes 4,200,000 (the 10 bytes it replaces leave).
    for (const part of [0, 1]) {
      const contents = Array.from({ length: part === 0 ? 105 : 104 }, (_, i) => long(`part ${part} note ${i}`));
      await h.ok('add_observations', { observations: [{ entityName: 'Big', contents }] });
    }
  });
  afterAll(() => h.close());

  it('refuses, whole, a replacement that would grow the entity past the bound', async () => {
    const over = await h.call('add_observations', {
      observations: [{ entityName: 'Big', contents: [long('a long replacement')], supersedes: 'short note' }],
    });
    expect(over.isError).toBe(true);
    expect(textOf(over)).toMatch(
      new RegExp(`Entity Big would hold 4200000 bytes of observations, over the ${LIMITS.maxEntityTextBytes} bytes.*Nothing was added`),
    );
    const big = await h.ok<Graph>('open_nodes', { names: ['Big'], observations_limit: 1 });
    expect(big.entities[0]?.observations).toEqual(['short note']);
  });

  it('counts the observation a replacement removes', async () => {
    const shorter = long('part 0 replaced', LIMITS.maxObservationChars - 1_000);
    const r = await h.ok<{ results: { superseded?: string }[] }>('add_observations', {
      observations: [{ entityName: 'Big', contents: [shorter], supersedes: long('part 0 note 0') }],
    });
    expect(r.results[0]?.superseded).toBe(long('part 0 note 0'));
  });

  it('pages the history by the same window as the observations', async () => {
    await h.ok('create_entities', { entities: [{ name: 'Hist', entityType: 't', observations: ['v0', 'a', 'b'] }] });
    for (let v = 1; v <= 4; v++)
      await h.ok('add_observations', { observations: [{ entityName: 'Hist', contents: [`v${v}`], supersedes: `v${v - 1}` }] });
    type Paged = Graph['entities'][number] & { observationCount?: number; supersededCount?: number; next_observations_offset?: number };
    const first = await h.ok<{ entities: Paged[] }>('open_nodes', { names: ['Hist'], include_superseded: true, observations_limit: 2 });
    expect(first.entities[0]).toMatchObject({
      observations: ['a', 'b'],
      observationCount: 3,
      supersededCount: 4,
      next_observations_offset: 2,
    });
    expect(first.entities[0]?.superseded_observations?.map((s) => s.content)).toEqual(['v0', 'v1']);
    const second = await h.ok<{ entities: Paged[] }>('open_nodes', {
      names: ['Hist'],
      include_superseded: true,
      observations_offset: 2,
      observations_limit: 2,
    });
    expect(second.entities[0]?.observations).toEqual(['v4']);
    expect(second.entities[0]?.superseded_observations?.map((s) => s.content)).toEqual(['v2', 'v3']);
    expect(second.entities[0]?.next_observations_offset).toBeUndefined();
  });
});
