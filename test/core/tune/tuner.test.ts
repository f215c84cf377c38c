/**
 * The tuner's pure parts: NDCG@K and Lift@K on worked examples, the replay of a logged search
 * (it must rank exactly as the live re-ranker does, under any parameters), the grid search, the
 * minimum-events rule with the spec's message, and the smooth apply.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { BETA_SAL, GAMMA, RRF_K } from '../../../src/core/rank/constants.js';
import { reciprocalRankFusion } from '../../../src/core/rank/fuse-rrf.js';
import { rankByBase, rrfShareOfMaximum, type BaseCandidate } from '../../../src/core/rank/rank-candidates.js';
import type { RoutingStrategy } from '../../../src/core/rank/routing.js';
import type { CandidateSignals, RankFacts } from '../../../src/core/signals.js';
import { liftAtK, ndcgAtK } from '../../../src/core/tune/metrics.js';
import {
  baselineOrder,
  DEFAULT_PARAMETERS,
  replay,
  replayBase,
  type RankParameters,
  type ShadowEvent,
} from '../../../src/core/tune/shadow.js';
import { blendParameters, DEFAULT_GRID, evaluate, gridSearch, MIN_EVENTS, tune } from '../../../src/core/tune/tuner.js';
import { asEntityId, type EntityId, type EntityStatus } from '../../../src/core/types.js';
import { frequentVsRelevant } from '../../helpers/shadow-events.js';

const NOW = Date.UTC(2026, 10, 23);
const HOUR = 3_600_000;
const id = asEntityId;

describe('ndcgAtK (gain 2^rel − 1, discount log₂(i + 2))', () => {
  it('worked examples', () => {
    expect(ndcgAtK([1, 0, 0], 5)).toBe(1);
    expect(ndcgAtK([0, 1, 0], 3)).toBeCloseTo(1 / Math.log2(3), 12); // 0.6309
    expect(ndcgAtK([0, 0, 1], 3)).toBeCloseTo(0.5, 12);
    // Two relevant at positions 2 and 3: (1/log₂3 + 1/2) / (1 + 1/log₂3)
    expect(ndcgAtK([0, 1, 1], 3)).toBeCloseTo((1 / Math.log2(3) + 0.5) / (1 + 1 / Math.log2(3)), 12);
  });
  it('is 0 with nothing relevant, K = 0 or an empty list; K past the list is the whole list', () => {
    expect(ndcgAtK([0, 0, 0], 5)).toBe(0);
    expect(ndcgAtK([1, 0], 0)).toBe(0);
    expect(ndcgAtK([], 5)).toBe(0);
    expect(ndcgAtK([0, 1], 10)).toBeCloseTo(ndcgAtK([0, 1], 2), 12);
  });
  it('a relevant item past K scores 0 even though the ideal would place it first', () => {
    expect(ndcgAtK([0, 0, 0, 0, 0, 1], 5)).toBe(0);
  });
});

describe('liftAtK ((Σrel[:K] / min(K, n)) / (Σrel / n))', () => {
  it('worked examples', () => {
    expect(liftAtK([1, 0, 0, 0], 2)).toBe(2);
    expect(liftAtK([0, 0, 0, 1], 2)).toBe(0);
    expect(liftAtK([1, 1], 5)).toBe(1); // K past the list: the top is the list, no lift
    expect(liftAtK([1, 0, 0, 0, 0, 0, 0, 0, 0, 0], 5)).toBe(2);
  });
  it('is 0 with nothing relevant', () => {
    expect(liftAtK([0, 0], 1)).toBe(0);
    expect(liftAtK([], 1)).toBe(0);
  });
});

/** A random candidate set with signals, ranked live and logged as a shadow event. */
const candidateSet = fc.record({
  n: fc.integer({ min: 2, max: 12 }),
  seed: fc.array(
    fc.record({
      base: fc.double({ min: 0, max: 1, noNaN: true }),
      count: fc.integer({ min: 0, max: 40 }),
      hoursAgo: fc.integer({ min: 0, max: 20_000 }),
      degree: fc.integer({ min: 0, max: 20 }),
      status: fc.constantFrom<EntityStatus>('active', 'paused', 'completed', 'archived'),
      // Its re-finding score (issue 37): how much the query was one after which it was used.
      refind: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 1, noNaN: true })),
    }),
    { minLength: 12, maxLength: 12 },
  ),
  pairs: fc.array(fc.tuple(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 9 })), {
    maxLength: 10,
  }),
  strategy: fc.constantFrom<RoutingStrategy>('cosine_heavy', 'limbic_heavy', 'hybrid_balanced'),
});

type Set_ = typeof candidateSet extends fc.Arbitrary<infer T> ? T : never;

function live(s: Set_): { candidates: BaseCandidate[]; signals: CandidateSignals<RankFacts> } {
  const rows = s.seed.slice(0, s.n);
  const candidates = rows.map((r, i) => ({
    candidate: { id: id(i + 1), rrfScore: 0, semantic: undefined, keyword: undefined },
    base: r.base,
  }));
  const signals: CandidateSignals<RankFacts> = {
    facts: new Map(rows.map((r, i) => [id(i + 1), { status: r.status, createdAt: NOW - 30_000 * HOUR, metadataRatio: 0 }])),
    access: new Map(
      rows.flatMap((r, i) =>
        r.count === 0
          ? []
          : [[id(i + 1), { accessCount: r.count, lastAccess: NOW - r.hoursAgo * HOUR, accessDays: Math.ceil(r.count / 3) }] as const],
      ),
    ),
    degree: new Map(rows.map((r, i) => [id(i + 1), r.degree])),
    coOccurrences: s.pairs
      .filter(([a, b]) => a !== b && a <= s.n && b <= s.n)
      .map(([a, b, count]) => ({ a: id(Math.min(a, b)), b: id(Math.max(a, b)), count, lastCo: NOW - HOUR })),
  };
  return { candidates, signals };
}

/**
 * `boost`: hybrid_search's reflection_boost over the candidates `reflections` names, applied after
 * the limbic score exactly as the pipeline applies it (pipeline.ts: score × factor, then re-sort).
 */
function logged(
  s: Set_,
  p: RankParameters,
  boost: { factor: number; reflections: ReadonlySet<number> } = { factor: 1, reflections: new Set() },
): { event: ShadowEvent; order: EntityId[] } {
  const { candidates, signals } = live(s);
  const boosted = (r: { id: EntityId }): boolean => boost.factor !== 1 && boost.reflections.has(r.id);
  const ranked = rankByBase(candidates, signals, {
    limit: candidates.length,
    strategy: s.strategy,
    now: NOW,
    gamma: p.gamma,
    betaSal: p.betaSal,
    refinding: new Map(s.seed.slice(0, s.n).map((r, i) => [id(i + 1), r.refind])),
  })
    .map((r) => (boosted(r) ? { ...r, score: r.score * boost.factor } : r))
    .sort((a, b) => b.score - a.score || a.id - b.id);
  const event: ShadowEvent = {
    at: NOW,
    tool: 'search_semantic',
    queryHash: 'q',
    fusion: 'weighted',
    legs: 1,
    strategy: s.strategy,
    offset: 0,
    shown: 5,
    parameters: p,
    rrfKPinned: false,
    reflectionBoost: boost.factor,
    reflections: 'included',
    candidates: ranked.map((r) => ({
      id: r.id,
      base: r.base,
      semanticRank: undefined,
      keywordRank: undefined,
      graphPart: 0,
      importance: r.importance,
      temporal: r.temporalFactor,
      cooc: r.coocBoost,
      multiplier: r.multiplier,
      relevance: 0,
      boosted: boosted(r),
      refind: r.refindScore,
    })),
  };
  return { event, order: ranked.map((r) => r.id) };
}

describe('replay: a logged search re-ranked under other parameters', () => {
  const params = fc.record({
    gamma: fc.constantFrom(...DEFAULT_GRID.gamma),
    betaSal: fc.constantFrom(...DEFAULT_GRID.betaSal),
    rrfK: fc.constant(RRF_K),
  });

  it('property: replaying under the logged parameters gives the live order', () => {
    fc.assert(
      fc.property(candidateSet, params, (s, p) => {
        const { event, order } = logged(s, p);
        expect(replay(event, p).map((c) => c.id)).toEqual(order);
      }),
    );
  });

  it('property: replaying under other parameters gives the order the live ranker gives with them', () => {
    fc.assert(
      fc.property(candidateSet, params, params, (s, p, q) => {
        const { event } = logged(s, p);
        expect(replay(event, q).map((c) => c.id)).toEqual(logged(s, q).order);
      }),
    );
  });

  const reflectionBoost = fc.record({
    factor: fc.constantFrom(0.5, 1, 1.5, 3),
    reflections: fc.uniqueArray(fc.integer({ min: 1, max: 12 }), { maxLength: 6 }).map((ns) => new Set(ns.map(id))),
  });

  it('property: with a reflection_boost, replaying under the logged or other parameters gives the live order', () => {
    fc.assert(
      fc.property(candidateSet, params, params, reflectionBoost, (s, p, q, boost) => {
        const { event, order } = logged(s, p, boost);
        expect(replay(event, p).map((c) => c.id)).toEqual(order);
        expect(replay(event, q).map((c) => c.id)).toEqual(logged(s, q, boost).order);
      }),
    );
  });

  it('the baseline keeps the boost: a boosted reflection outranks a higher base, as with limbic off', () => {
    const event = { ...frequentVsRelevant(0), reflectionBoost: 2 };
    const candidates = event.candidates.map((c) => (c.id === id(3) ? { ...c, boosted: true } : c));
    // Bases 0.6, 0.7 and 0.2: boosted × 2 it stays last (0.4); × 4 it leads (0.8).
    expect(baselineOrder({ ...event, candidates }).map((c) => c.id)).toEqual([id(2), id(1), id(3)]);
    expect(baselineOrder({ ...event, reflectionBoost: 4, candidates }).map((c) => c.id)).toEqual([id(3), id(2), id(1)]);
  });

  it('an RRF base is recomputed for another k exactly as fusion with that k gives it', () => {
    const semantic = [5, 3, 8, 1].map((n, i) => ({ id: id(n), distance: 0.1 * (i + 1) }));
    const keyword = [3, 9, 5].map((n, i) => ({ id: id(n), bm25: -10 + i }));
    const at60 = reciprocalRankFusion(semantic, keyword, 60);
    const share60 = rrfShareOfMaximum(at60, 60);
    const event: ShadowEvent = {
      ...frequentVsRelevant(0),
      fusion: 'rrf',
      legs: 2,
      parameters: DEFAULT_PARAMETERS,
      candidates: at60.map((c, i) => ({
        id: c.id,
        base: share60[i] ?? 0,
        semanticRank: c.semantic?.rank,
        keywordRank: c.keyword?.rank,
        graphPart: 0,
        importance: 0,
        temporal: 1,
        cooc: 0,
        multiplier: 1,
        relevance: 0,
        boosted: false,
      })),
    };
    const at10 = reciprocalRankFusion(semantic, keyword, 10);
    const share10 = new Map(rrfShareOfMaximum(at10, 10).map((v, i) => [at10[i]!.id, v]));
    for (const c of event.candidates) expect(replayBase(event, c, 10)).toBeCloseTo(share10.get(c.id) ?? NaN, 12);
    // A pinned k (the caller chose rrf_k) is never replayed with another.
    const pinned = { ...event, rrfKPinned: true };
    for (const c of pinned.candidates) expect(replayBase(pinned, c, 10)).toBe(c.base);
  });
});

describe('tune', () => {
  it(`skips below ${MIN_EVENTS} events with the spec's message ("Only 23 events, minimum 50 required")`, () => {
    const events = Array.from({ length: 23 }, (_, i) => frequentVsRelevant(i));
    const unanswered = { ...frequentVsRelevant(99), candidates: frequentVsRelevant(99).candidates.map((c) => ({ ...c, relevance: 0 })) };
    const report = tune([...events, unanswered], DEFAULT_PARAMETERS);
    expect(report.status).toBe('skipped');
    expect(report.reason).toMatch(/^Only 23 events, minimum 50 required\./);
    expect(report.events).toEqual({ logged: 24, withFeedback: 23, rrfTunable: 0 });
    expect(report.optimal).toBeUndefined();
  });

  it('moves BETA_SAL down when the opened results are the rarely used ones, with a positive gain', () => {
    const events = Array.from({ length: MIN_EVENTS }, (_, i) => frequentVsRelevant(i));
    const report = tune(events, DEFAULT_PARAMETERS);
    expect(report.status).toBe('tuned');
    expect(report.optimal?.betaSal).toBeLessThan(BETA_SAL);
    expect(report.gain).toBeGreaterThan(0);
    expect(report.optimal?.['ndcg@5']).toBe(1);
    expect(report.current.metrics['ndcg@5']).toBeLessThan(1);
    // The base relevance alone already ranks the relevant one first: the baseline shadow mode compares with.
    expect(report.current.baseline['ndcg@5']).toBe(1);
    // k matters in none of these events (weighted fusion), so it stays.
    expect(report.optimal?.rrfK).toBe(RRF_K);
  });

  it('keeps the values in force when no cell does better (ties never move to the first grid cell)', () => {
    const indifferent = Array.from({ length: MIN_EVENTS }, (_, i) => ({
      ...frequentVsRelevant(i),
      candidates: frequentVsRelevant(i).candidates.map((c) => ({ ...c, importance: 0, relevance: c.id === id(2) ? 1 : 0 })),
    }));
    const report = tune(indifferent, DEFAULT_PARAMETERS);
    expect(report.status).toBe('kept');
    expect(report.optimal).toMatchObject({ gamma: GAMMA, betaSal: BETA_SAL, rrfK: RRF_K });
    expect(report.gain).toBe(0);
  });

  it('the grid includes the values in force even when they are off-grid, and scores every cell', () => {
    const current = { gamma: 0.02, betaSal: 0.6, rrfK: 60 };
    const cells = gridSearch([frequentVsRelevant(0)], DEFAULT_GRID, current);
    expect(cells).toHaveLength(6 * 6);
    expect(cells.some((c) => c.gamma === 0.02 && c.betaSal === 0.6)).toBe(true);
    expect(evaluate([frequentVsRelevant(0)], { ...current, betaSal: 0.1 })['ndcg@5']).toBe(1);
  });
});

describe('blendParameters (the seed system smooth apply)', () => {
  it('1 stores the target; 0.1 moves a tenth of the way; k stays whole', () => {
    const target = { gamma: 0.1, betaSal: 0.1, rrfK: 10 };
    expect(blendParameters(DEFAULT_PARAMETERS, target, 1)).toEqual(target);
    expect(blendParameters(DEFAULT_PARAMETERS, target, 0.1)).toEqual({ gamma: 0.019, betaSal: 0.46, rrfK: 55 });
  });
});
