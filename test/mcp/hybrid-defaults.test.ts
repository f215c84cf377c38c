/**
 * hybrid_search with no options ranks as search_semantic does (issue 37, item 3): z-score fusion
 * and the context stage by default, RRF and weighted fusion on request. Real model, real MCP
 * client: which entity comes first is the point.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from '../helpers/fixtures.js';

interface HybridAnswer {
  results: { name: string; scores: { final: number } }[];
  fusion_method: string;
}
interface SemanticAnswer {
  results: { name: string; limbic_score: number }[];
}

/** A small memory of the quality bench (bench/quality/small-memory.ts, "5 en #0"). */
const MEMORY = [
  { name: "Grandma's paella", entityType: 'Recipe', observations: ['needs saffron and cooks for twenty minutes'] },
  { name: 'Book club', entityType: 'Group', observations: ['meets the first Friday of every month at the library'] },
  { name: 'Tax return', entityType: 'Task', observations: ['it has to be filed before 30 June'] },
  { name: 'Everest', entityType: 'Place', observations: ['the highest mountain on Earth, 8,849 metres'] },
  { name: 'Amazon', entityType: 'Place', observations: ['the river that carries the most water in the world'] },
];

describe('hybrid_search defaults (real model)', () => {
  let h: Harness;
  const now = Date.UTC(2026, 10, 1);
  beforeAll(async () => {
    h = await harness({ embedder: 'real', clock: () => now });
    await h.ok('create_entities', { entities: MEMORY });
    await h.service.drainEmbeddings();
  });
  afterAll(async () => {
    await h.close();
  });

  it('answers a question whose one shared word is in the wrong entity by meaning, as search_semantic does', async () => {
    // "world" is only in Amazon's text: RRF gave the keyword leg's only hit rank 1 of both legs and
    // put the river above the mountain; z-score fusion weighs that hit by how far it stands out.
    const query = 'what is the tallest peak in the world?';
    const semantic = await h.ok<SemanticAnswer>('search_semantic', { query, limit: 5 });
    const hybrid = await h.ok<HybridAnswer>('hybrid_search', { query, limit: 5 });
    expect(semantic.results[0]?.name).toBe('Everest');
    expect(hybrid.results.map((r) => r.name)).toEqual(semantic.results.map((r) => r.name));
    expect(hybrid.fusion_method).toBe('zscore');
    expect(hybrid.results.map((r) => r.scores.final)).toEqual(semantic.results.map((r) => r.limbic_score));
  });

  it('still fuses by RRF or by weights when asked', async () => {
    const query = 'what is the tallest peak in the world?';
    const rrf = await h.ok<HybridAnswer>('hybrid_search', { query, limit: 5, fusion_method: 'rrf' });
    expect(rrf.fusion_method).toBe('rrf');
    expect(rrf.results[0]?.name).toBe('Amazon');
    const weighted = await h.ok<HybridAnswer>('hybrid_search', { query, limit: 5, fusion_method: 'weighted' });
    expect(weighted.fusion_method).toBe('weighted');
    expect(weighted.results).toHaveLength(5);
  });
});

describe('hybrid_search defaults: the context stage (real model)', () => {
  let h: Harness;
  const day = 86_400_000;
  let now = Date.UTC(2023, 4, 8);
  beforeAll(async () => {
    h = await harness({ embedder: 'real', clock: () => now });
    // Two sessions of a conversation, a month apart, each turn with its date as metadata (as LoCoMo's).
    const sessions = [
      {
        at: Date.UTC(2023, 4, 8),
        date: 'date: 8 May, 2023',
        turns: ['I went to a support group yesterday.', 'That sounds like it helped.'],
      },
      { at: Date.UTC(2023, 5, 9), date: 'date: 9 June, 2023', turns: ['I went to a pottery class last week.', 'Did you make a bowl?'] },
    ];
    for (const [s, session] of sessions.entries()) {
      now = session.at;
      const entities = session.turns.map((t, i) => ({ name: `S${s + 1}:${i + 1}`, entityType: 'Turn', observations: [t] }));
      await h.ok('create_entities', { entities });
      await h.ok('add_observations', {
        observations: entities.map((e) => ({ entityName: e.name, contents: [session.date], kind: 'metadata' })),
      });
    }
    now += 30 * day;
    await h.service.drainEmbeddings();
  });
  afterAll(async () => {
    await h.close();
  });

  it('reads stored dates and turns written together as search_semantic does', async () => {
    for (const query of ['What did I go to in June 2023?', 'Where did I go in May 2023?']) {
      const semantic = await h.ok<SemanticAnswer>('search_semantic', { query, limit: 4 });
      const hybrid = await h.ok<HybridAnswer>('hybrid_search', { query, limit: 4 });
      const rrf = await h.ok<HybridAnswer>('hybrid_search', { query, limit: 4, fusion_method: 'rrf' });
      expect(
        hybrid.results.map((r) => r.name),
        query,
      ).toEqual(semantic.results.map((r) => r.name));
      expect(
        hybrid.results.map((r) => r.scores.final),
        query,
      ).toEqual(semantic.results.map((r) => r.limbic_score));
      // The date asked for decides the session of the first result; RRF reads no dates.
      expect(hybrid.results[0]?.name.slice(0, 3), query).toBe(query.includes('June') ? 'S2:' : 'S1:');
      expect(rrf.results).toHaveLength(4);
    }
  });
});
