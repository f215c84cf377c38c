import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  HOUR_MS,
  LIFT_BAND,
  METADATA_PENALTY,
  PROJECT_BOOST,
  REFIND_BAND,
  STATUS_DEBOOST,
  USAGE_BAND,
  USE_PIVOT,
} from '../../../src/core/rank/constants.js';
import { computeLimbicScore } from '../../../src/core/rank/limbic.js';
import { reciprocalRankFusion, type FusedCandidate } from '../../../src/core/rank/fuse-rrf.js';
import {
  minMaxNormalize,
  rankByBase,
  rankCandidates,
  USAGE_BOUND,
  LIFT_BOUND,
  combinedLift,
  routedBand,
  rrfShareOfMaximum,
  rankHybridCandidates,
  statusMultiplier,
  type RankedCandidate,
  type RankOptions,
} from '../../../src/core/rank/rank-candidates.js';
import type { AccessFacts, CandidateSignals, CoOccurrencePair, RankFacts } from '../../../src/core/signals.js';
import type { RoutingStrategy } from '../../../src/core/rank/routing.js';
import { asEntityId, ENTITY_STATUSES, type EntityId, type EntityStatus } from '../../../src/core/types.js';

const NOW = Date.UTC(2026, 2, 28, 12, 0, 0);
const id = asEntityId;

const NO_SIGNALS: CandidateSignals<RankFacts> = { facts: new Map(), access: new Map(), degree: new Map(), coOccurrences: [] };
const opts = (limit: number, strategy: RoutingStrategy = 'hybrid_balanced'): RankOptions => ({ limit, strategy, now: NOW });

function facts(entries: readonly (readonly [number, Partial<RankFacts>])[]): Map<EntityId, RankFacts> {
  return new Map(entries.map(([n, f]) => [id(n), { status: 'active', createdAt: NOW, metadataRatio: 0, ...f }]));
}

function fused(entity: number, rrfScore: number, distance: number | undefined): FusedCandidate {
  return { id: id(entity), rrfScore, semantic: distance === undefined ? undefined : { rank: 1, distance }, keyword: { rank: 1, bm25: -1 } };
}

function byId(ranked: readonly RankedCandidate[], n: number): RankedCandidate {
  const hit = ranked.find((r) => r.id === id(n));
  if (hit === undefined) throw new Error(`entity ${n} missing from the ranking`);
  return hit;
}

function expectSortedByScore(ranked: readonly RankedCandidate[]): void {
  for (let i = 1; i < ranked.length; i++) {
    expect(ranked[i - 1]!.score).toBeGreaterThanOrEqual(ranked[i]!.score);
  }
}

describe('statusMultiplier (spec/limbic-system.md "Status Deboosts", "Metadata Penalty")', () => {
  it.each([
    ['active', 1.0],
    ['paused', 0.85],
    ['completed', 0.7],
    ['archived', 0.5],
  ] as const)('%s → %f', (status, expected) => {
    expect(statusMultiplier({ status, createdAt: NOW, metadataRatio: 0 })).toBeCloseTo(expected, 12);
    expect(STATUS_DEBOOST[status]).toBe(expected);
  });

  it('metadata penalty 0.7 applies above 50% only', () => {
    expect(METADATA_PENALTY).toBe(0.7);
    expect(statusMultiplier({ status: 'active', createdAt: NOW, metadataRatio: 0.5 })).toBe(1);
    expect(statusMultiplier({ status: 'active', createdAt: NOW, metadataRatio: 0.51 })).toBeCloseTo(0.7, 12);
    expect(statusMultiplier({ status: 'active', createdAt: NOW, metadataRatio: 1 })).toBeCloseTo(0.7, 12);
  });

  it('status and metadata multiply', () => {
    expect(statusMultiplier({ status: 'archived', createdAt: NOW, metadataRatio: 0.9 })).toBeCloseTo(0.35, 12);
  });

  it('unknown facts → no multiplier', () => {
    expect(statusMultiplier(undefined)).toBe(1);
    expect(statusMultiplier(undefined, 'github.com/acme/a')).toBe(1);
  });

  it("lifts the search's own project by PROJECT_BOOST, after status; global and other entities keep 1 (issue 34)", () => {
    const own = { status: 'paused', createdAt: NOW, metadataRatio: 0, project: 'github.com/acme/a' } as const;
    expect(PROJECT_BOOST).toBe(1.15);
    expect(statusMultiplier(own, 'github.com/acme/a')).toBeCloseTo(0.85 * PROJECT_BOOST, 12);
    expect(statusMultiplier(own)).toBeCloseTo(0.85, 12);
    expect(statusMultiplier({ ...own, project: 'github.com/acme/b' }, 'github.com/acme/a')).toBeCloseTo(0.85, 12);
    expect(statusMultiplier({ status: 'active', createdAt: NOW, metadataRatio: 0 }, 'github.com/acme/a')).toBe(1);
  });

  it('ranks an own-project candidate above an equally relevant global one, never above a clearly better one', () => {
    const signals: CandidateSignals<RankFacts> = {
      ...NO_SIGNALS,
      facts: facts([
        [1, {}],
        [2, { project: 'p' }],
        [3, {}],
      ]),
    };
    const ranked = rankByBase(
      [
        { candidate: fused(1, 0.03, 0.2), base: 0.6 },
        { candidate: fused(2, 0.03, 0.2), base: 0.6 },
        { candidate: fused(3, 0.03, 0.2), base: 0.9 },
      ],
      signals,
      { ...opts(3), project: 'p' },
    );
    expect(ranked.map((r) => r.id)).toEqual([id(3), id(2), id(1)]);
  });
});

describe('minMaxNormalize', () => {
  it('maps min → 0 and max → 1', () => {
    expect(minMaxNormalize([2, 4, 3])).toEqual([0, 1, 0.5]);
  });

  it('empty → []', () => {
    expect(minMaxNormalize([])).toEqual([]);
  });

  it('all-equal values all map to 0.5 (no NaN from a zero range)', () => {
    expect(minMaxNormalize([7, 7, 7])).toEqual([0.5, 0.5, 0.5]);
    expect(minMaxNormalize([3])).toEqual([0.5]);
  });
});

describe('rankHybridCandidates: base relevance (spec/hybrid-search.md "Hybrid Scoring")', () => {
  it('FTS-only hits get 0.2 + 0.6 × normalised RRF, spanning [0.2, 0.8]', () => {
    const candidates = reciprocalRankFusion(
      [],
      [
        { id: id(1), bm25: -1 },
        { id: id(2), bm25: -1 },
        { id: id(3), bm25: -1 },
      ],
    );
    const ranked = rankHybridCandidates(candidates, NO_SIGNALS, opts(10));
    const norm2 = (1 / 62 - 1 / 63) / (1 / 61 - 1 / 63);
    expect(byId(ranked, 1).base).toBeCloseTo(0.8, 12);
    expect(byId(ranked, 2).base).toBeCloseTo(0.2 + 0.6 * norm2, 12);
    expect(byId(ranked, 3).base).toBeCloseTo(0.2, 12);
  });

  it('KNN hits (with or without FTS) get max(0, 1 - distance)', () => {
    const candidates = [fused(1, 0.03, 0.35), fused(2, 0.016, 0.1), fused(3, 0.015, 1.4), fused(4, 0.02, undefined)];
    const ranked = rankHybridCandidates(candidates, NO_SIGNALS, opts(10));
    expect(byId(ranked, 1).base).toBeCloseTo(0.65, 12);
    expect(byId(ranked, 2).base).toBeCloseTo(0.9, 12);
    expect(byId(ranked, 3).base).toBe(0);
    const ftsOnly = byId(ranked, 4).base;
    expect(ftsOnly).toBeGreaterThanOrEqual(0.2);
    expect(ftsOnly).toBeLessThanOrEqual(0.8);
  });

  it('an FTS-only hit never exceeds 0.8 nor falls below 0.2, even with an extreme RRF', () => {
    const candidates = [fused(1, 10, undefined), fused(2, 0, undefined), fused(3, 0.5, 0.9)];
    const ranked = rankHybridCandidates(candidates, NO_SIGNALS, opts(10));
    expect(byId(ranked, 1).base).toBeCloseTo(0.8, 12);
    expect(byId(ranked, 2).base).toBeCloseTo(0.2, 12);
  });

  it('carries distance and rrfScore through to the output', () => {
    const ranked = rankHybridCandidates([fused(1, 0.03, 0.35), fused(2, 0.02, undefined)], NO_SIGNALS, opts(10));
    expect(byId(ranked, 1).candidate).toMatchObject({ semantic: { distance: 0.35 }, rrfScore: 0.03 });
    expect(byId(ranked, 2).candidate).toMatchObject({ semantic: undefined, rrfScore: 0.02 });
  });
});

describe('rankCandidates (pure semantic mode)', () => {
  it('base is max(0, 1 - distance) and rrfScore is absent', () => {
    const ranked = rankCandidates(
      [
        { id: id(1), distance: 0.35 },
        { id: id(2), distance: 1.2 },
      ],
      NO_SIGNALS,
      opts(10),
    );
    expect(byId(ranked, 1).base).toBeCloseTo(0.65, 12);
    expect(byId(ranked, 2).base).toBe(0);
    expect(ranked.every((r) => r.candidate.keyword === undefined)).toBe(true);
  });

  it("exposes the limbic components for the worked example's entity, importance on the global scale", () => {
    const e = id(1);
    const others = [id(2), id(3), id(4)];
    const access = new Map<EntityId, AccessFacts>([
      [e, { accessCount: 10, lastAccess: NOW - 720 * HOUR_MS, accessDays: 0 }],
      [id(2), { accessCount: 20, lastAccess: NOW, accessDays: 0 }],
    ]);
    const coOccurrences: CoOccurrencePair[] = [5, 2, 1].map((count, i) => ({ a: e, b: others[i]!, count, lastCo: NOW }));
    const signals: CandidateSignals<RankFacts> = { facts: new Map(), access, degree: new Map([[e, 8]]), coOccurrences };
    const ranked = rankCandidates(
      [e, ...others].map((x, i) => ({ id: x, distance: i === 0 ? 0.35 : 0.5 })),
      signals,
      opts(10),
    );
    const fastmcp = byId(ranked, 1);
    // 10 uses: 10 / (10 + USE_PIVOT), not the spec's log ratio to the candidates' maximum (20).
    expect(fastmcp.importance).toBeCloseTo((10 / (10 + USE_PIVOT)) * 1.08, 9);
    expect(fastmcp.temporalFactor).toBeCloseTo(Math.exp(-0.072), 9);
    expect(fastmcp.coocBoost).toBeCloseTo(Math.log2(6) + Math.log2(3) + 1, 9);
    expect(fastmcp.limbic).toBeCloseTo(computeLimbicScore(0.65, (10 / (10 + USE_PIVOT)) * 1.08, Math.exp(-0.072), fastmcp.coocBoost), 9);
    // Its factor (1.457) is above the 1.5 of importance 1 only with co-use: ln 1.457 / ln 1.5 of the band.
    const factor = computeLimbicScore(1, (10 / (10 + USE_PIVOT)) * 1.08, Math.exp(-0.072), fastmcp.coocBoost);
    expect(fastmcp.usageLift).toBeCloseTo(Math.min(USAGE_BAND, (USAGE_BAND * Math.log(factor)) / Math.log(1.5)), 12);
    expect(fastmcp.score).toBeCloseTo(0.65 + fastmcp.usageLift, 12);
  });
});

describe('status deboosts and metadata penalty apply before the sort', () => {
  it('an archived entity with identical signals ranks below an active one (even with the lower id)', () => {
    const signals: CandidateSignals<RankFacts> = {
      ...NO_SIGNALS,
      facts: facts([
        [1, { status: 'archived' }],
        [2, {}],
      ]),
    };
    const candidates = [
      { id: id(1), distance: 0.3 },
      { id: id(2), distance: 0.3 },
    ];
    const ranked = rankCandidates(candidates, signals, opts(10));
    expect(ranked.map((r) => r.id)).toEqual([id(2), id(1)]);
    expect(byId(ranked, 1).multiplier).toBe(0.5);
    // The multiplier applies to the limbic part before normalisation and to the blend: at most 0.5×.
    expect(byId(ranked, 1).score).toBeLessThanOrEqual(byId(ranked, 2).score * 0.5 + 1e-12);
  });

  it.each(['paused', 'completed', 'archived'] as const)('%s ranks below an identical active entity', (status) => {
    const signals: CandidateSignals<RankFacts> = {
      ...NO_SIGNALS,
      facts: facts([
        [1, { status }],
        [2, {}],
      ]),
    };
    const ranked = rankHybridCandidates([fused(1, 0.02, 0.3), fused(2, 0.02, 0.3)], signals, opts(10));
    expect(ranked.map((r) => r.id)).toEqual([id(2), id(1)]);
    expect(byId(ranked, 1).score / byId(ranked, 2).score).toBeLessThanOrEqual(STATUS_DEBOOST[status] + 1e-12);
  });

  it('the metadata penalty (>50% metadata) ranks an entity below an identical normal one', () => {
    const signals: CandidateSignals<RankFacts> = {
      ...NO_SIGNALS,
      facts: facts([
        [1, { metadataRatio: 0.75 }],
        [2, { metadataRatio: 0.5 }],
      ]),
    };
    const ranked = rankCandidates(
      [
        { id: id(1), distance: 0.3 },
        { id: id(2), distance: 0.3 },
      ],
      signals,
      opts(10),
    );
    expect(ranked.map((r) => r.id)).toEqual([id(2), id(1)]);
    expect(byId(ranked, 1).multiplier).toBeCloseTo(0.7, 12);
    expect(byId(ranked, 2).multiplier).toBe(1);
  });

  it('a deboosted entity that was first by similarity moves down; order follows score', () => {
    const signals: CandidateSignals<RankFacts> = {
      ...NO_SIGNALS,
      facts: facts([
        [1, { status: 'archived' }],
        [2, {}],
        [3, {}],
      ]),
    };
    const ranked = rankCandidates(
      [
        { id: id(1), distance: 0.1 },
        { id: id(2), distance: 0.2 },
        { id: id(3), distance: 0.4 },
      ],
      signals,
      opts(10, 'cosine_heavy'),
    );
    expect(ranked[0]?.id).toBe(id(2));
    expectSortedByScore(ranked);
  });

  it('cuts to the limit after ranking: the best final score wins even when it came last', () => {
    // Entity 3 is last by similarity but the most used; 1 and 2 are also deboosted.
    const signals: CandidateSignals<RankFacts> = {
      ...NO_SIGNALS,
      facts: facts([
        [1, { status: 'archived' }],
        [2, { status: 'completed' }],
        [3, {}],
      ]),
      access: new Map([[id(3), { accessCount: 10, lastAccess: NOW, accessDays: 1 }]]),
    };
    const candidates = [
      { id: id(1), distance: 0.2 },
      { id: id(2), distance: 0.25 },
      { id: id(3), distance: 0.3 },
    ];
    const top = rankCandidates(candidates, signals, opts(1));
    expect(top.map((r) => r.id)).toEqual([id(3)]);
    expect(top[0]?.score).toBe(rankCandidates(candidates, signals, opts(3))[0]?.score);
  });
});

describe('limits and empty inputs', () => {
  const candidates = [1, 2, 3, 4, 5].map((n) => ({ id: id(n), distance: n / 10 }));

  it('limit 0 → []', () => {
    expect(rankCandidates(candidates, NO_SIGNALS, opts(0))).toEqual([]);
    expect(rankHybridCandidates([fused(1, 0.1, 0.2)], NO_SIGNALS, opts(0))).toEqual([]);
  });

  it('no candidates → []', () => {
    expect(rankCandidates([], NO_SIGNALS, opts(10))).toEqual([]);
    expect(rankHybridCandidates([], NO_SIGNALS, opts(10))).toEqual([]);
  });

  it('returns exactly min(limit, candidates) results', () => {
    expect(rankCandidates(candidates, NO_SIGNALS, opts(3))).toHaveLength(3);
    expect(rankCandidates(candidates, NO_SIGNALS, opts(50))).toHaveLength(5);
  });

  it('ties in score break by ascending id', () => {
    const ranked = rankCandidates(
      [
        { id: id(9), distance: 0.3 },
        { id: id(4), distance: 0.3 },
        { id: id(6), distance: 0.3 },
      ],
      NO_SIGNALS,
      opts(10),
    );
    expect(ranked.map((r) => r.id)).toEqual([id(4), id(6), id(9)]);
  });

  it('does not mutate its inputs', () => {
    const input = reciprocalRankFusion(
      [
        { id: id(1), distance: 0.5 },
        { id: id(2), distance: 0.1 },
      ],
      [{ id: id(3), bm25: -1 }],
    );
    const before = JSON.stringify(input);
    rankHybridCandidates(input, NO_SIGNALS, opts(1));
    expect(JSON.stringify(input)).toBe(before);
  });
});

// ---------------------------------------------------------------------------------------------
// Property tests

interface Scenario {
  readonly candidates: FusedCandidate[];
  readonly signals: CandidateSignals<RankFacts>;
  readonly strategy: RoutingStrategy;
  readonly limit: number;
}

const statusArb = fc.constantFrom<EntityStatus>(...ENTITY_STATUSES);
const offsetArb = fc.double({ min: -30 * 24 * HOUR_MS, max: 20 * 365 * 24 * HOUR_MS, noNaN: true });

const scenarioArb: fc.Arbitrary<Scenario> = fc
  .record({
    semantic: fc.uniqueArray(fc.record({ n: fc.integer({ min: 1, max: 30 }), distance: fc.double({ min: 0, max: 2, noNaN: true }) }), {
      selector: (h) => h.n,
      maxLength: 12,
    }),
    keyword: fc.uniqueArray(fc.integer({ min: 1, max: 30 }), { maxLength: 12 }),
    strategy: fc.constantFrom<RoutingStrategy>('cosine_heavy', 'limbic_heavy', 'hybrid_balanced'),
    limit: fc.integer({ min: 0, max: 40 }),
    perEntity: fc.array(
      fc.record({
        status: statusArb,
        created: offsetArb,
        metadataRatio: fc.double({ min: 0, max: 1, noNaN: true }),
        access: fc.option(
          fc.record({ accessCount: fc.integer({ min: 0, max: 5000 }), last: offsetArb, accessDays: fc.integer({ min: 0, max: 400 }) }),
          { nil: undefined },
        ),
        degree: fc.option(fc.integer({ min: 0, max: 200 }), { nil: undefined }),
      }),
      { minLength: 31, maxLength: 31 },
    ),
    pairs: fc.array(
      fc.record({
        a: fc.integer({ min: 1, max: 30 }),
        b: fc.integer({ min: 1, max: 30 }),
        count: fc.integer({ min: 0, max: 1000 }),
        lastCo: offsetArb,
      }),
      { maxLength: 40 },
    ),
  })
  .map(({ semantic, keyword, strategy, limit, perEntity, pairs }) => {
    const candidates = reciprocalRankFusion(
      semantic.map((h) => ({ id: id(h.n), distance: h.distance })),
      keyword.map((n) => ({ id: id(n), bm25: -1 })),
    );
    const factsMap = new Map<EntityId, RankFacts>();
    const access = new Map<EntityId, AccessFacts>();
    const degree = new Map<EntityId, number>();
    perEntity.forEach((p, n) => {
      factsMap.set(id(n), { status: p.status, createdAt: NOW - p.created, metadataRatio: p.metadataRatio });
      if (p.access !== undefined) {
        access.set(id(n), { accessCount: p.access.accessCount, lastAccess: NOW - p.access.last, accessDays: p.access.accessDays });
      }
      if (p.degree !== undefined) degree.set(id(n), p.degree);
    });
    const coOccurrences: CoOccurrencePair[] = pairs.map((p) => ({
      a: id(Math.min(p.a, p.b)),
      b: id(Math.max(p.a, p.b)),
      count: p.count,
      lastCo: NOW - p.lastCo,
    }));
    return { candidates, signals: { facts: factsMap, access, degree, coOccurrences }, strategy, limit };
  });

describe('properties of rankHybridCandidates over random candidates and signals', () => {
  it('every score is finite and ≥ 0; output sorted by score desc; length = min(limit, candidates)', () => {
    fc.assert(
      fc.property(scenarioArb, ({ candidates, signals, strategy, limit }) => {
        const ranked = rankHybridCandidates(candidates, signals, { limit, strategy, now: NOW });
        expect(ranked.length).toBeLessThanOrEqual(limit);
        expect(ranked.length).toBe(Math.min(limit, candidates.length));
        for (const r of ranked) {
          expect(Number.isFinite(r.score)).toBe(true);
          expect(r.score).toBeGreaterThanOrEqual(0);
          expect(Number.isFinite(r.limbic)).toBe(true);
        }
        expectSortedByScore(ranked);
        expect(new Set(ranked.map((r) => r.id)).size).toBe(ranked.length);
      }),
      { numRuns: 300 },
    );
  });

  it('the top results are the highest-scoring of the whole set (cut after ranking)', () => {
    fc.assert(
      fc.property(scenarioArb, ({ candidates, signals, strategy, limit }) => {
        const all = rankHybridCandidates(candidates, signals, { limit: candidates.length, strategy, now: NOW });
        const top = rankHybridCandidates(candidates, signals, { limit, strategy, now: NOW });
        expect(top).toEqual(all.slice(0, limit));
      }),
      { numRuns: 200 },
    );
  });

  it('changing an entity from activo to any other status never raises its score', () => {
    fc.assert(
      fc.property(
        scenarioArb.filter((s) => s.candidates.length > 0),
        fc.nat(),
        fc.constantFrom<EntityStatus>('paused', 'completed', 'archived'),
        ({ candidates, signals, strategy }, pick, status) => {
          const target = candidates[pick % candidates.length]!.id;
          const base = signals.facts.get(target)!;
          const withStatus = (s: EntityStatus): CandidateSignals<RankFacts> => ({
            ...signals,
            facts: new Map([...signals.facts, [target, { ...base, status: s }]]),
          });
          const options = { limit: candidates.length, strategy, now: NOW };
          const active = byId(rankHybridCandidates(candidates, withStatus('active'), options), target);
          const deboosted = byId(rankHybridCandidates(candidates, withStatus(status), options), target);
          expect(deboosted.score).toBeLessThanOrEqual(active.score);
          expect(deboosted.score).toBeLessThanOrEqual(active.score * STATUS_DEBOOST[status] + 1e-12);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('rankCandidates (semantic mode) keeps the same invariants', () => {
    fc.assert(
      fc.property(scenarioArb, ({ candidates, signals, strategy, limit }) => {
        const semantic = candidates.map((c) => ({ id: c.id, distance: c.semantic?.distance ?? 1 }));
        const ranked = rankCandidates(semantic, signals, { limit, strategy, now: NOW });
        expect(ranked.length).toBe(Math.min(limit, semantic.length));
        for (const r of ranked) {
          expect(Number.isFinite(r.score)).toBe(true);
          expect(r.score).toBeGreaterThanOrEqual(0);
        }
        expectSortedByScore(ranked);
      }),
      { numRuns: 200 },
    );
  });
});

describe("rankHybridCandidates with hybridBase 'fused'", () => {
  it('lets agreement between the legs count: a hit in both ranks above a closer KNN-only hit', () => {
    // 1: found by both legs, farther in meaning; 2: KNN only, closer; 3: FTS only.
    const candidates = reciprocalRankFusion(
      [
        { id: id(2), distance: 0.2 },
        { id: id(1), distance: 0.4 },
      ],
      [
        { id: id(1), bm25: -1 },
        { id: id(3), bm25: -1 },
      ],
    );
    const spec = rankHybridCandidates(candidates, NO_SIGNALS, { ...opts(3), hybridBase: 'spec' });
    const fusedRank = rankHybridCandidates(candidates, NO_SIGNALS, { ...opts(3), hybridBase: 'fused' });
    expect(spec[0]?.id).toBe(id(2));
    expect(fusedRank.map((r) => r.id)).toEqual([id(1), id(2), id(3)]);
    // Every base sits in [0.2, 0.8]; the distance is still reported.
    for (const r of fusedRank) {
      expect(r.base).toBeGreaterThanOrEqual(0.2);
      expect(r.base).toBeLessThanOrEqual(0.8);
    }
    expect(byId(fusedRank, 2).candidate.semantic?.distance).toBe(0.2);
  });

  it('defaults to the spec base', () => {
    const candidates = [fused(1, 0.03, 0.1), fused(2, 0.01, undefined)];
    expect(byId(rankHybridCandidates(candidates, NO_SIGNALS, opts(2)), 1).base).toBeCloseTo(0.9, 12);
  });
});

describe('rrfShareOfMaximum', () => {
  it('is 1 for first place in every leg that answered, and keeps near-identical candidates near each other', () => {
    const both = reciprocalRankFusion(
      [
        { id: id(1), distance: 0.1 },
        { id: id(2), distance: 0.11 },
      ],
      [
        { id: id(1), bm25: -1 },
        { id: id(2), bm25: -1 },
      ],
    );
    const [first, second] = rrfShareOfMaximum(both, 60);
    expect(first).toBeCloseTo(1, 12);
    expect(second).toBeCloseTo(61 / 62, 12);
  });

  it('uses only the legs that answered', () => {
    const keywordOnly = reciprocalRankFusion(
      [],
      [
        { id: id(1), bm25: -1 },
        { id: id(2), bm25: -1 },
      ],
    );
    expect(rrfShareOfMaximum(keywordOnly, 60)[0]).toBeCloseTo(1, 12);
    expect(rrfShareOfMaximum([], 60)).toEqual([]);
  });
});

describe('the usage bound (issue 24): usage reorders only near-ties', () => {
  const baseArb = fc.double({ min: 0, max: 1, noNaN: true });
  /** Candidates with bases of their own, random usage, random tuned weights, one status for all. */
  const boundArb = scenarioArb.chain((s) =>
    fc.record({
      s: fc.constant(s),
      bases: fc.array(baseArb, { minLength: s.candidates.length, maxLength: s.candidates.length }),
      gamma: fc.double({ min: 0, max: 10, noNaN: true }),
      betaSal: fc.double({ min: 0, max: 10, noNaN: true }),
      // Re-finding scores (any value a caller might pass, out of range too) and any re-finding weight.
      refind: fc.array(fc.double({ min: -1, max: 2, noNaN: true }), { minLength: s.candidates.length, maxLength: s.candidates.length }),
      refindBand: fc.double({ min: 0, max: 1, noNaN: true }),
    }),
  );
  const sameStatus = (signals: CandidateSignals<RankFacts>): CandidateSignals<RankFacts> => ({
    ...signals,
    facts: new Map([...signals.facts].map(([k, f]) => [k, { ...f, status: 'active', metadataRatio: 0 }])),
  });

  it('never puts a candidate ahead of one whose base is more than LIFT_BOUND higher, whatever its usage, the queries that led to it and the weights', () => {
    fc.assert(
      fc.property(boundArb, ({ s, bases, gamma, betaSal, refind, refindBand }) => {
        const candidates = s.candidates.map((candidate, i) => ({ candidate, base: bases[i] ?? 0 }));
        const signals = sameStatus(s.signals);
        const refinding = new Map(candidates.map((c, i) => [c.candidate.id, refind[i] ?? 0]));
        const ranked = rankByBase(candidates, signals, {
          limit: candidates.length,
          strategy: s.strategy,
          now: NOW,
          gamma,
          betaSal,
          refinding,
          refindBand,
        });
        const base = new Map(candidates.map((c) => [c.candidate.id, c.base]));
        for (let i = 0; i < ranked.length; i++)
          for (let j = i + 1; j < ranked.length; j++) {
            const ahead = base.get(ranked[i]!.id)!;
            const behind = base.get(ranked[j]!.id)!;
            expect(behind - ahead).toBeLessThanOrEqual(LIFT_BOUND + 1e-12);
          }
        for (const r of ranked) {
          // Both lifts together within the route's total band, each part within its own.
          expect(r.usageLift).toBeGreaterThanOrEqual(0);
          expect(r.usageLift).toBeLessThanOrEqual(LIFT_BOUND);
          expect(r.baseLevelLift).toBeGreaterThanOrEqual(0);
          expect(r.baseLevelLift).toBeLessThanOrEqual(USAGE_BOUND);
          expect(r.refindLift).toBeGreaterThanOrEqual(0);
          expect(r.usageLift).toBeCloseTo(r.baseLevelLift + r.refindLift, 12);
          expect(r.usageLift).toBeLessThanOrEqual(routedBand(s.strategy, LIFT_BAND) + 1e-15);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('a re-found candidate passes near-ties (not one a band ahead); its re-finding lift gives way so that both stay within LIFT_BAND', () => {
    const candidates = [1, 2, 3].map((n) => ({ candidate: fused(n, 0, 0.2), base: 0.5 - n * 0.01 }));
    // Entity 2 was used after a query exactly like this one; entity 3 after one far less like it.
    const refinding = new Map([
      [id(2), 1],
      [id(3), 0.1],
    ]);
    const ranked = rankByBase(candidates, NO_SIGNALS, { ...opts(3), refinding });
    expect(ranked.map((r) => r.id)).toEqual([id(2), id(1), id(3)]);
    expect(byId(ranked, 2).refindLift).toBeCloseTo(REFIND_BAND, 12);
    expect(byId(ranked, 2).baseLevelLift).toBe(0);
    expect(byId(ranked, 2).usagePlaces).toBe(1);
    expect(byId(ranked, 3).refindLift).toBeCloseTo(0.1 * REFIND_BAND, 12);
    // One more than the band ahead keeps its place.
    const far = [
      { candidate: fused(1, 0, 0.2), base: 0.5 },
      { candidate: fused(2, 0, 0.2), base: 0.5 - REFIND_BAND - 0.001 },
    ];
    expect(rankByBase(far, NO_SIGNALS, { ...opts(2), refinding }).map((r) => r.id)).toEqual([id(1), id(2)]);
    // The base level fills USAGE_BAND; the re-finding part takes what is left of LIFT_BAND.
    expect(combinedLift(USAGE_BAND, 1, 'hybrid_balanced', 1)).toEqual({ lift: LIFT_BAND, refind: LIFT_BAND - USAGE_BAND });
    expect(combinedLift(0, 1, 'cosine_heavy').lift).toBeCloseTo(routedBand('cosine_heavy', REFIND_BAND), 12);
    // Without re-finding scores every existing caller ranks as before.
    const plain = rankByBase(candidates, NO_SIGNALS, opts(3));
    expect(plain.map((r) => r.id)).toEqual([id(1), id(2), id(3)]);
    expect(plain.every((r) => r.refindLift === 0 && r.refindScore === 0)).toBe(true);
  });

  it('without usage the order is the relevance order, and usage moves a used entity past an equal one', () => {
    const candidates = [1, 2, 3].map((n) => ({ candidate: fused(n, 0, 0.2), base: 0.5 - n * 0.001 }));
    const fresh = rankByBase(candidates, NO_SIGNALS, opts(3));
    expect(fresh.map((r) => r.id)).toEqual([id(1), id(2), id(3)]);
    expect(fresh.every((r) => r.usageLift === 0 && r.usagePlaces === 0)).toBe(true);
    // Entity 3, used three times today, rises past both (0.002 behind, well inside the band).
    const access = new Map<EntityId, AccessFacts>([[id(3), { accessCount: 3, lastAccess: NOW, accessDays: 1 }]]);
    const used = rankByBase(candidates, { ...NO_SIGNALS, access }, opts(3));
    expect(used.map((r) => r.id)).toEqual([id(3), id(1), id(2)]);
    expect(byId(used, 3).usagePlaces).toBe(2);
    expect(byId(used, 1).usagePlaces).toBe(-1);
    // One access is no longer a full boost: a small share of the band (the spec's scale made it 1.5×).
    const once = rankByBase(
      candidates,
      { ...NO_SIGNALS, access: new Map([[id(3), { accessCount: 1, lastAccess: NOW, accessDays: 1 }]]) },
      opts(3),
    );
    expect(byId(once, 3).usageLift).toBeLessThan(USAGE_BAND / 2);
  });

  it('forgetting: of two equally relevant entities used alike, the one used yesterday ranks above the one used months ago', () => {
    const candidates = [1, 2].map((n) => ({ candidate: fused(n, 0, 0.2), base: 0.6 }));
    const access = new Map<EntityId, AccessFacts>([
      [id(1), { accessCount: 4, lastAccess: NOW - 200 * 24 * HOUR_MS, accessDays: 2 }],
      [id(2), { accessCount: 4, lastAccess: NOW - 24 * HOUR_MS, accessDays: 2 }],
    ]);
    const ranked = rankByBase(candidates, { ...NO_SIGNALS, access }, opts(2));
    expect(ranked.map((r) => r.id)).toEqual([id(2), id(1)]);
    expect(byId(ranked, 1).usageLift).toBeLessThan(byId(ranked, 2).usageLift);
  });
});
