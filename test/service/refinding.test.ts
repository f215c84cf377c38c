/**
 * Re-finding (issue 37; docs/ranking.md, "Re-finding"), end to end over MCP with the real model: a
 * use after a search pairs that search's query vector with the entity used; a later query like it
 * lifts the entity, an unrelated one does not, and every answer says which part of the lift is which.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EntityId } from '../../src/core/types.js';
import { harness, realEmbedder, type Harness } from '../helpers/fixtures.js';

interface Scoring {
  usage_lift: number;
  usage_lift_base_level: number;
  usage_lift_refinding: number;
  usage_places: number;
}
interface Semantic {
  results: { name: string; scoring: Scoring }[];
}
interface Hybrid {
  results: { name: string; scores: { limbic: Scoring | null } }[];
}

const GRAPH = [
  { name: 'Garden', entityType: 'Place', observations: ['Tomatoes and basil grow in the backyard', 'Watered by a drip line at dawn'] },
  { name: 'Balcony', entityType: 'Place', observations: ['Pots of herbs and a small lemon tree on the balcony'] },
  { name: 'Commute', entityType: 'Habit', observations: ['Drives an automobile to the office every morning'] },
  { name: 'Baking', entityType: 'Hobby', observations: ['Bakes sourdough bread on weekends'] },
  { name: 'Team offsite', entityType: 'Event', observations: ['Planned a retreat in the mountains for the engineering team'] },
  { name: 'Dentist', entityType: 'Appointment', observations: ['Check-up with Dr. Martin every six months'] },
];

describe('re-finding (real model)', () => {
  let h: Harness;
  let now = Date.UTC(2026, 10, 1, 9);
  beforeAll(async () => {
    h = await harness({ embedder: 'real', clock: () => now });
    await h.ok('create_entities', { entities: GRAPH });
    await h.service.drainEmbeddings();
  });
  afterAll(async () => {
    await h.close();
  });

  const semantic = async (query: string): Promise<Semantic> => {
    now += 60_000;
    const r = await h.ok<Semantic>('search_semantic', { query, limit: 6 });
    await h.settle();
    return r;
  };
  const pairsOf = async (name: string): Promise<number> => {
    const [id] = await h.store.graph.idsByName([name]);
    const model = (await realEmbedder()).id;
    return (await h.store.usage.refinding([id as EntityId], model)).get(id as EntityId)?.length ?? 0;
  };
  const scoringOf = (answer: Semantic, name: string): Scoring => {
    const hit = answer.results.find((r) => r.name === name);
    if (hit === undefined) throw new Error(`${name} not listed`);
    return hit.scoring;
  };

  it('lifts what was opened after a query when a paraphrase of it is asked, and not for an unrelated query', async () => {
    const before = await semantic('How should I water the tomatoes in my garden?');
    expect(scoringOf(before, 'Garden').usage_lift_refinding).toBe(0);
    now += 60_000;
    await h.ok('open_nodes', { names: ['Garden'] });
    await h.settle();
    expect(await pairsOf('Garden')).toBe(1);

    const again = await semantic('what is the right way to water my tomato plants in the garden');
    const garden = scoringOf(again, 'Garden');
    expect(garden.usage_lift_refinding).toBeGreaterThan(0);
    expect(garden.usage_lift_base_level).toBeGreaterThan(0);
    expect(garden.usage_lift).toBeCloseTo(garden.usage_lift_base_level + garden.usage_lift_refinding, 5);
    // Only Garden was used: nothing else is re-found.
    expect(again.results.filter((r) => r.name !== 'Garden').every((r) => r.scoring.usage_lift_refinding === 0)).toBe(true);

    const unrelated = await semantic('Who planned the engineering team retreat?');
    expect(unrelated.results.map((r) => r.scoring.usage_lift_refinding)).toEqual(unrelated.results.map(() => 0));
    // Its base level still counts: Garden was used.
    expect(scoringOf(unrelated, 'Garden').usage_lift_base_level).toBeGreaterThan(0);

    now += 60_000;
    const hybrid = await h.ok<Hybrid>('hybrid_search', {
      query: 'what is the right way to water my tomato plants in the garden',
      limit: 6,
    });
    const limbic = hybrid.results.find((r) => r.name === 'Garden')?.scores.limbic;
    expect(limbic?.usage_lift_refinding).toBeGreaterThan(0);
    expect(limbic?.usage_lift).toBeCloseTo((limbic?.usage_lift_base_level ?? 0) + (limbic?.usage_lift_refinding ?? 0), 5);
    // The answers carry no query vector: it stays in the server.
    for (const answer of [before, again, unrelated, hybrid]) expect(JSON.stringify(answer)).not.toMatch(/refind(Query)?"|vector/);
  });

  it('pairs a write or a relation after a search with it, once per search; a use no recent search listed, or one after the hour, pairs nothing', async () => {
    await semantic('When do I bake bread?');
    now += 2 * 3_600_000; // past the hour: the search no longer counts
    await h.ok('open_nodes', { names: ['Baking'] });
    await h.settle();
    expect(await pairsOf('Baking')).toBe(0);

    await semantic('How do I get to the office?');
    now += 60_000;
    await h.ok('add_observations', { observations: [{ entityName: 'Commute', contents: ['Leaves at 7:30'] }] });
    await h.ok('open_nodes', { names: ['Commute'] });
    await h.settle();
    expect(await pairsOf('Commute')).toBe(1); // the same search and entity pair once

    await semantic('When is my next check-up?');
    now += 60_000;
    await h.ok('create_relations', { relations: [{ from: 'Dentist', to: 'Balcony', relationType: 'near' }] });
    await h.settle();
    expect(await pairsOf('Dentist')).toBe(1);
    expect(await pairsOf('Balcony')).toBe(1); // listed by the same search (all six are)

    // An entity opened by name, no search having listed it since the hour passed, pairs nothing.
    now += 2 * 3_600_000;
    await h.ok('open_nodes', { names: ['Team offsite'] });
    await h.settle();
    expect(await pairsOf('Team offsite')).toBe(0);
  });
});
