/**
 * The pipeline's fusion stage on hand-made legs: search_semantic's preset weighs BM25 and cosine
 * (0.30 and 0.55 over the legs that answered), hybrid_search's rrf is a share of the best score.
 * No store is read unless the graph weight is on, so none is given.
 */
import { describe, expect, it } from 'vitest';
import type { CandidateSignals } from '../../src/core/signals.js';
import { asEntityId, type EntityId } from '../../src/core/types.js';
import { fuse } from '../../src/service/search/fuse.js';
import { SEMANTIC_WEIGHTS, semanticRequest } from '../../src/service/search/search-semantic.js';
import type { GraphStore } from '../../src/store/graph-store.js';

const id = asEntityId;
const NOW = Date.UTC(2026, 10, 23);
const NO_SIGNALS: CandidateSignals = { facts: new Map(), access: new Map(), degree: new Map(), coOccurrences: [] };
const NO_GRAPH = new Proxy({} as GraphStore, {
  get: (_target, prop) => {
    throw new Error(`the fusion stage read the graph store (${String(prop)}) with the graph weight off`);
  },
});
const baseOf = (fused: Awaited<ReturnType<typeof fuse>>, n: number): number | undefined =>
  fused.candidates.find((c) => c.candidate.id === (id(n) as EntityId))?.base;

describe('fuse, weighted relevance (BM25 0.30 and cosine 0.55 only)', () => {
  const request = semanticRequest('query', 10, { fusion: 'weighted', weights: SEMANTIC_WEIGHTS });

  it('blends min-max normalised BM25 and cosine similarity with weights 0.30 and 0.55 over 0.85', async () => {
    const legs = {
      semantic: [
        { id: id(1), distance: 0.2 },
        { id: id(2), distance: 0.6 },
      ],
      keyword: [
        { id: id(2), bm25: -8 },
        { id: id(3), bm25: -2 },
      ],
    };
    const fused = await fuse(NO_GRAPH, request, legs, NO_SIGNALS, 0, NOW);
    const w = { fts: 0.3 / 0.85, vector: 0.55 / 0.85 };
    expect(baseOf(fused, 1)).toBeCloseTo(w.vector * 0.8, 12);
    expect(baseOf(fused, 2)).toBeCloseTo(w.fts * 1 + w.vector * 0.4, 12);
    expect(baseOf(fused, 3)).toBeCloseTo(0, 12);
    expect(fused.weights?.recency).toBe(0);
    expect(fused.graph).toBeUndefined();
  });

  it('uses the keyword scores alone when no vector leg answered, and cosine alone when no keyword leg did', async () => {
    const keywordOnly = await fuse(
      NO_GRAPH,
      request,
      {
        semantic: [],
        keyword: [
          { id: id(1), bm25: -5 },
          { id: id(2), bm25: -1 },
        ],
      },
      NO_SIGNALS,
      0,
      NOW,
    );
    expect(baseOf(keywordOnly, 1)).toBeCloseTo(1, 12);
    expect(baseOf(keywordOnly, 2)).toBeCloseTo(0, 12);
    const semanticOnly = await fuse(NO_GRAPH, request, { semantic: [{ id: id(1), distance: 0.35 }], keyword: [] }, NO_SIGNALS, 0.3, NOW);
    // cosine 0.65 rescaled by the similarity floor 0.3: (0.65 - 0.3) / 0.7
    expect(baseOf(semanticOnly, 1)).toBeCloseTo(0.5, 12);
  });

  it('keeps what each leg found in one record per candidate, in RRF order', async () => {
    const fused = await fuse(
      NO_GRAPH,
      request,
      {
        semantic: [{ id: id(7), distance: 0.1 }],
        keyword: [
          { id: id(7), bm25: -3 },
          { id: id(8), bm25: -1 },
        ],
      },
      NO_SIGNALS,
      0,
      NOW,
    );
    expect(fused.candidates.map((c) => c.candidate)).toEqual([
      { id: id(7), rrfScore: 2 / 61, semantic: { rank: 1, distance: 0.1 }, keyword: { rank: 1, bm25: -3 } },
      { id: id(8), rrfScore: 1 / 62, semantic: undefined, keyword: { rank: 2, bm25: -1 } },
    ]);
  });
});

describe('fuse, rrf', () => {
  it('gives each candidate its RRF score as a share of first place in every leg that answered', async () => {
    const request = semanticRequest('query', 10, { fusion: 'rrf' });
    const fused = await fuse(
      NO_GRAPH,
      request,
      {
        semantic: [
          { id: id(1), distance: 0.1 },
          { id: id(2), distance: 0.2 },
        ],
        keyword: [{ id: id(2), bm25: -1 }],
      },
      NO_SIGNALS,
      0,
      NOW,
    );
    expect(baseOf(fused, 2)).toBeCloseTo((1 / 62 + 1 / 61) / (2 / 61), 12);
    expect(baseOf(fused, 1)).toBeCloseTo(1 / 61 / (2 / 61), 12);
    expect(fused.weights).toBeUndefined();
  });
});

describe('fuse, zscore (search_semantic preset)', () => {
  const request = semanticRequest('query', 10);
  const logistic = (x: number): number => 1 / (1 + Math.exp(-x));

  it('is the preset, and weighs z-scores of cosine and BM25 by the keyword coverage', async () => {
    expect(request.fusion).toBe('zscore');
    const legs = {
      semantic: [
        { id: id(1), distance: 0.1 },
        { id: id(2), distance: 0.3 },
      ],
      keyword: [
        { id: id(2), bm25: -6 },
        { id: id(3), bm25: -2 },
      ],
      coverage: 0.5,
    };
    const fused = await fuse(NO_GRAPH, request, legs, NO_SIGNALS, 0.74, NOW);
    // cosine 0.9 and 0.7: z +1 and -1; bm25 6 and 2: z +1 and -1; a miss takes the leg's lowest z (-1).
    const w = 0.6 * 0.5;
    expect(baseOf(fused, 1)).toBeCloseTo(logistic((1 - w) * 1 + w * -1), 12);
    expect(baseOf(fused, 2)).toBeCloseTo(logistic((1 - w) * -1 + w * 1), 12);
    expect(baseOf(fused, 3)).toBeCloseTo(logistic((1 - w) * -1 + w * -1), 12);
    expect(fused.weights).toBeUndefined();
  });

  it('follows meaning alone when none of the query words occur in the memory, and words alone without a model', async () => {
    const semantic = [
      { id: id(1), distance: 0.2 },
      { id: id(2), distance: 0.25 },
      { id: id(3), distance: 0.5 },
    ];
    const noCoverage = await fuse(
      NO_GRAPH,
      request,
      {
        semantic,
        keyword: [
          { id: id(3), bm25: -9 },
          { id: id(2), bm25: -1 },
        ],
        coverage: 0,
      },
      NO_SIGNALS,
      0,
      NOW,
    );
    const order = [...noCoverage.candidates].sort((a, b) => b.base - a.base).map((c) => c.candidate.id);
    expect(order).toEqual([id(1), id(2), id(3)]);
    const keywordOnly = await fuse(
      NO_GRAPH,
      request,
      {
        semantic: [],
        keyword: [
          { id: id(5), bm25: -4 },
          { id: id(6), bm25: -1 },
        ],
        coverage: 1,
      },
      NO_SIGNALS,
      0,
      NOW,
    );
    expect(baseOf(keywordOnly, 5)).toBeGreaterThan(baseOf(keywordOnly, 6) ?? 1);
  });
});
