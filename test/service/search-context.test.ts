/**
 * The context stage (src/service/search/context.ts) on a real SQLite store: stored dates against
 * the query's time expression, relations to strong candidates, candidates written next to a strong
 * one. Then search_semantic end to end
 * with the real model on the behaviour the stage is for. Note: these two end-to-end cases also
 * pass with the stage off, because the model reads the dates and relations in an entity's embedded
 * text too; what the stage adds is measured on LoCoMo (bench/quality/context.ts), and its arithmetic
 * is checked on the store above.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FusedCandidate } from '../../src/core/rank/fuse-rrf.js';
import { METADATA_KIND, type EntityId } from '../../src/core/types.js';
import { contextStage, DATE_TEXT_LIMITS } from '../../src/service/search/context.js';
import type { Fused } from '../../src/service/search/fuse.js';
import { harness, type Harness } from '../helpers/fixtures.js';

const NOW = Date.UTC(2026, 10, 23);
const weights = { timeWeight: 0.5, lateShare: 0.5, graphWeight: 0.25 };
const logistic = (s: number): number => 1 / (1 + Math.exp(-s));

describe('contextStage on a real store', () => {
  let h: Harness;
  let ids: Map<string, EntityId>;
  beforeAll(async () => {
    h = await harness({ clock: () => NOW });
    const names = ['June trip', 'July note', 'October trip', 'Undated', 'Neighbour', 'Last week'];
    await h.store.graph.createEntities(
      [{ name: 'Last week', entityType: 'Event', observations: ['written a week before the others'] }],
      NOW - 7 * 86_400_000,
    );
    await h.store.graph.createEntities(
      names.slice(0, -1).map((name) => ({ name, entityType: 'Event', observations: [`${name} happened`] })),
      NOW,
    );
    await h.store.graph.addObservations(
      [
        { entityName: 'June trip', contents: ['date: 1:56 pm on 8 June, 2023'], kind: METADATA_KIND },
        // A date in an ordinary observation is the entity's content, not when it was recorded.
        { entityName: 'Undated', contents: ['date: 9 June, 2023'] },
        { entityName: 'July note', contents: ['date: 2 July, 2023'], kind: METADATA_KIND },
        { entityName: 'October trip', contents: ['date: 9 October, 2023'], kind: METADATA_KIND },
      ],
      NOW,
    );
    await h.store.graph.createRelations([{ from: 'October trip', to: 'Neighbour', relationType: 'followed_by' }], NOW);
    const found = await h.store.graph.idsByName(names);
    ids = new Map(names.map((n, i) => [n, found[i] as EntityId]));
  });
  afterAll(async () => {
    await h.close();
  });

  const fusedWith = (strengths: Record<string, number>): Fused => ({
    candidates: Object.entries(strengths).map(([name, s]) => ({
      candidate: { id: ids.get(name) as EntityId, rrfScore: 0 } as FusedCandidate,
      base: logistic(s),
    })),
    weights: undefined,
    parts: new Map(),
    graph: undefined,
  });
  const base = (fused: Fused, name: string): number => fused.candidates.find((c) => c.candidate.id === ids.get(name))?.base ?? NaN;

  it('lifts the candidate whose metadata date is in the month asked, half as much the month after', async () => {
    const fused = fusedWith({ 'June trip': 0, 'July note': 0, 'October trip': 0, Undated: 0 });
    const out = await contextStage(h.store.graph, 'where did we go in June?', fused, { ...weights, graphWeight: 0 });
    expect(base(out.fused, 'June trip')).toBeCloseTo(logistic(0.5), 12);
    expect(base(out.fused, 'July note')).toBeCloseTo(logistic(0.25), 12);
    expect(base(out.fused, 'October trip')).toBeCloseTo(logistic(0), 12);
    expect(base(out.fused, 'Undated')).toBeCloseTo(logistic(0), 12);
  });

  it('reads no dates when the query names no time, and changes nothing', async () => {
    const fused = fusedWith({ 'June trip': 1, 'October trip': -1 });
    const out = await contextStage(h.store.graph, 'where did we go camping?', fused, { ...weights, graphWeight: 0 });
    expect(out.fused).toBe(fused);
    expect(out.boosts.size).toBe(0);
  });

  it('lifts a candidate related to a strong one by a share of its strength, and not the strong one by a weak one', async () => {
    const fused = fusedWith({ 'October trip': 2, Neighbour: -1, 'June trip': 1 });
    const out = await contextStage(h.store.graph, 'what happened next?', fused, weights);
    expect(base(out.fused, 'Neighbour')).toBeCloseTo(logistic(-1 + 0.25 * 2), 9);
    expect(base(out.fused, 'October trip')).toBeCloseTo(logistic(2), 9);
    expect(base(out.fused, 'June trip')).toBeCloseTo(logistic(1), 9);
  });

  it('reads only the relations between candidates, not every relation touching one (1M entities: most of the stage)', async () => {
    const asked: string[] = [];
    const graph = new Proxy(h.store.graph, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          asked.push(String(key));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const fused = fusedWith({ 'October trip': 2, Neighbour: -1, 'June trip': 1 });
    const out = await contextStage(graph, 'what happened next?', fused, weights);
    expect(asked).toEqual(['edgesAmong']);
    expect(base(out.fused, 'Neighbour')).toBeCloseTo(logistic(-1 + 0.25 * 2), 9);
  });

  it('moves a candidate written right after a strong one part of the way up, with the facts the store gives', async () => {
    // Written in one batch in this order: June trip, July note, October trip, Undated, Neighbour;
    // a week after Last week (a memory written in one sitting has no write-order lifts: context-boost.ts).
    const fused = fusedWith({ 'October trip': 2, Undated: -1, 'June trip': -1, 'Last week': -1 });
    const { facts } = await h.store.usage.signals([...ids.values()]);
    const near = { timeWeight: 0, lateShare: 0, graphWeight: 0, neighbourWeight: 0.5, neighbourSpan: 1, neighbourMode: 'gap' as const };
    const out = await contextStage(h.store.graph, 'what happened next?', fused, near, facts);
    expect(base(out.fused, 'Undated')).toBeCloseTo(logistic(-1 + 0.5 * (2 - -1)), 9); // the next write
    expect(base(out.fused, 'June trip')).toBeCloseTo(logistic(-1), 9); // two writes before: outside span 1
    expect(base(out.fused, 'October trip')).toBeCloseTo(logistic(2), 9);
    const wider = await contextStage(h.store.graph, 'what happened next?', fused, { ...near, neighbourSpan: 2 }, facts);
    expect(base(wider.fused, 'June trip')).toBeCloseTo(logistic(-1 + 0.5 * 3), 9);
    // Without the week-old candidate, all were written in one sitting: nothing is lifted by write order.
    const sitting = fusedWith({ 'October trip': 2, Undated: -1, 'June trip': -1 });
    const none = await contextStage(h.store.graph, 'what happened next?', sitting, near, facts);
    expect(base(none.fused, 'Undated')).toBeCloseTo(logistic(-1), 9);
  });
});

describe('contextStage on long metadata (issue 35)', () => {
  let h: Harness;
  let ids: EntityId[];
  beforeAll(async () => {
    h = await harness({ clock: () => NOW });
    const pad = ' '.repeat(DATE_TEXT_LIMITS.perObservation);
    await h.store.graph.createEntities(
      ['Head', 'Tail', 'Past budget'].map((name) => ({ name, entityType: 'Event', observations: [`${name} happened`] })),
      NOW,
    );
    const filler = Array.from({ length: DATE_TEXT_LIMITS.perEntity / DATE_TEXT_LIMITS.perObservation }, (_, i) => `${pad}${i}`);
    await h.store.graph.addObservations(
      [
        { entityName: 'Head', contents: [`date: 8 June, 2023${pad}`], kind: METADATA_KIND },
        { entityName: 'Tail', contents: [`${pad}date: 8 June, 2023`], kind: METADATA_KIND },
        { entityName: 'Past budget', contents: [...filler, 'date: 8 June, 2023'], kind: METADATA_KIND },
      ],
      NOW,
    );
    ids = (await h.store.graph.idsByName(['Head', 'Tail', 'Past budget'])) as EntityId[];
  });
  afterAll(async () => {
    await h.close();
  });

  it('reads dates from the head of each metadata observation, within a budget per entity', async () => {
    const fused: Fused = {
      candidates: ids.map((id) => ({ candidate: { id, rrfScore: 0 } as FusedCandidate, base: 0.5 })),
      weights: undefined,
      parts: new Map(),
      graph: undefined,
    };
    const out = await contextStage(h.store.graph, 'what happened in June?', fused, { ...weights, graphWeight: 0 });
    expect(ids.map((id) => out.boosts.get(id)?.time ?? 0)).toEqual([0.5, 0, 0]);
  });
});

describe('search_semantic with stored dates (real model)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ embedder: 'real', clock: () => NOW });
    // B says it closer to the questions' words; only A's stored date can put it first.
    await h.ok('create_entities', {
      entities: [
        { name: 'Camping A', entityType: 'Trip', observations: ['We went camping by the lake with the children'] },
        { name: 'Camping B', entityType: 'Trip', observations: ['We went camping by the lake with the kids'] },
        { name: 'Kettle', entityType: 'Thing', observations: ['the kettle is blue'] },
        { name: 'Dentist', entityType: 'Event', observations: ['appointment on Tuesday at ten'] },
      ],
    });
    await h.store.graph.addObservations(
      [
        { entityName: 'Camping A', contents: ['date: 2023-06-10'], kind: METADATA_KIND },
        { entityName: 'Camping B', contents: ['date: 2023-10-14'], kind: METADATA_KIND },
      ],
      NOW,
    );
    await h.service.drainEmbeddings();
  });
  afterAll(async () => {
    await h.close();
  });

  const top = async (query: string): Promise<string | undefined> =>
    (await h.ok<{ results: { name: string }[] }>('search_semantic', { query, limit: 5 })).results[0]?.name;

  it('ranks first the trip whose stored date is in the month the question names', async () => {
    expect(await top('when did we go camping by the lake in June?')).toBe('Camping A');
    expect(await top('when did we go camping by the lake in October?')).toBe('Camping B');
    expect(await top('¿cuándo fuimos de acampada al lago en junio?')).toBe('Camping A');
  });
});

describe('search_semantic with related entities (real model)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ embedder: 'real', clock: () => NOW });
    await h.ok('create_entities', {
      entities: [
        { name: 'Paris trip', entityType: 'Trip', observations: ['Our trip to Paris in spring: the Louvre and the Seine'] },
        // Nothing in its own words is about Paris or a trip; only its relation says where it belongs.
        { name: 'Room 12', entityType: 'Booking', observations: ['three nights, breakfast included, paid by card'] },
        { name: 'Gym', entityType: 'Habit', observations: ['three sessions a week, paid monthly by card'] },
        { name: 'Bakery', entityType: 'Place', observations: ['fresh bread every morning, paid in cash'] },
        { name: 'Printer', entityType: 'Thing', observations: ['out of toner since Monday'] },
        { name: 'Kettle', entityType: 'Thing', observations: ['the kettle is blue'] },
      ],
    });
    await h.ok('create_relations', { relations: [{ from: 'Paris trip', to: 'Room 12', relationType: 'includes' }] });
    await h.service.drainEmbeddings();
  });
  afterAll(async () => {
    await h.close();
  });

  it('puts the entity related to the best match right behind it', async () => {
    const r = await h.ok<{ results: { name: string }[] }>('search_semantic', { query: 'our trip to Paris', limit: 5 });
    expect(r.results.slice(0, 2).map((x) => x.name)).toEqual(['Paris trip', 'Room 12']);
  });
});
