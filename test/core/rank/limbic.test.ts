import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  ALPHA_CONS,
  BETA_DEG,
  BETA_SAL,
  COOC_TEMPORAL_FLOOR,
  D_MAX,
  GAMMA,
  HOUR_MS,
  LAMBDA_HOURLY,
  TEMPORAL_FLOOR,
} from '../../../src/core/rank/constants.js';
import {
  computeCoocBoost,
  computeImportance,
  computeLimbicScore,
  computeTemporalFactor,
  cosineSimilarity,
  decay,
  refindScore,
} from '../../../src/core/rank/limbic.js';
import type { CoOccurrencePair } from '../../../src/core/signals.js';
import { asEntityId } from '../../../src/core/types.js';

const NOW = Date.UTC(2026, 2, 28, 12, 0, 0);
const DAY_MS = 24 * HOUR_MS;

/**
 * The spec prints its worked numbers rounded (often from already-rounded intermediates), so a
 * printed value can sit up to ~1.5e-3 from the exact formula. Each test checks the exact formula
 * tightly and the printed value within this tolerance.
 */
const SPEC_ROUNDING = 1.5e-3;

function expectSpecValue(actual: number, printed: number, tolerance: number = SPEC_ROUNDING): void {
  expect(Math.abs(actual - printed)).toBeLessThan(tolerance);
}

describe('constants (spec/limbic-system.md "Tuneable Constants")', () => {
  it('have the spec values', () => {
    expect({ BETA_SAL, BETA_DEG, D_MAX, ALPHA_CONS, LAMBDA_HOURLY, GAMMA, TEMPORAL_FLOOR, COOC_TEMPORAL_FLOOR }).toEqual({
      BETA_SAL: 0.5,
      BETA_DEG: 0.15,
      D_MAX: 15,
      ALPHA_CONS: 0.2,
      LAMBDA_HOURLY: 0.0001,
      GAMMA: 0.01,
      TEMPORAL_FLOOR: 0.1,
      COOC_TEMPORAL_FLOOR: 0.1,
    });
    expect(HOUR_MS).toBe(3_600_000);
  });
});

describe('computeImportance', () => {
  it('access_norm example: 10 accesses, max 20 → log₂(11)/log₂(21) ≈ 0.787', () => {
    const accessOnly = computeImportance({ accessCount: 10, maxAccess: 20, degree: 0, accessDays: 0, maxAccessDays: 0 });
    expect(accessOnly).toBeCloseTo(Math.log2(11) / Math.log2(21), 12);
    expectSpecValue(accessOnly, 0.787);
  });

  it('combined example: 10 accesses (max 20), degree 8, 5 days (max 10) → ≈ 0.977', () => {
    const importance = computeImportance({ accessCount: 10, maxAccess: 20, degree: 8, accessDays: 5, maxAccessDays: 10 });
    const exact = (Math.log2(11) / Math.log2(21)) * (1 + 0.15 * (8 / 15)) * (1 + 0.2 * (Math.log2(6) / Math.log2(11)));
    expect(importance).toBeCloseTo(exact, 12);
    expectSpecValue(importance, 0.977);
  });

  it('worked FastMCP example without consolidation (accessDays 0) → ≈ 0.850', () => {
    const importance = computeImportance({ accessCount: 10, maxAccess: 20, degree: 8, accessDays: 0, maxAccessDays: 10 });
    expect(importance).toBeCloseTo((Math.log2(11) / Math.log2(21)) * 1.08, 12);
    expectSpecValue(importance, 0.85);
  });

  it('caps the degree at D_MAX = 15', () => {
    const at = (degree: number): number => computeImportance({ accessCount: 5, maxAccess: 5, degree, accessDays: 0, maxAccessDays: 0 });
    expect(at(15)).toBeCloseTo(1 + BETA_DEG, 12);
    expect(at(16)).toBe(at(15));
    expect(at(1000)).toBe(at(15));
    expect(at(14)).toBeLessThan(at(15));
  });

  it('maxAccess 0 → importance 0 (no NaN from 0/0)', () => {
    expect(computeImportance({ accessCount: 0, maxAccess: 0, degree: 15, accessDays: 3, maxAccessDays: 3 })).toBe(0);
  });

  it('an entity never accessed has importance 0 whatever its degree', () => {
    expect(computeImportance({ accessCount: 0, maxAccess: 20, degree: 15, accessDays: 0, maxAccessDays: 10 })).toBe(0);
  });

  it('the most accessed entity with full degree and consolidation reaches 1 × 1.15 × 1.2', () => {
    const top = computeImportance({ accessCount: 20, maxAccess: 20, degree: 15, accessDays: 10, maxAccessDays: 10 });
    expect(top).toBeCloseTo(1.15 * 1.2, 12);
  });

  it('property: importance is finite, in [0, 1.38], and non-decreasing in access count and degree', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 0, max: 400 }),
        fc.integer({ min: 0, max: 400 }),
        (a, b, degree, d1, d2) => {
          const maxAccess = Math.max(a, b);
          const maxAccessDays = Math.max(d1, d2);
          const lo = computeImportance({ accessCount: Math.min(a, b), maxAccess, degree, accessDays: d1, maxAccessDays });
          const hi = computeImportance({ accessCount: maxAccess, maxAccess, degree, accessDays: d1, maxAccessDays });
          const moreDegree = computeImportance({ accessCount: maxAccess, maxAccess, degree: degree + 1, accessDays: d1, maxAccessDays });
          for (const v of [lo, hi, moreDegree]) {
            expect(Number.isFinite(v)).toBe(true);
            expect(v).toBeGreaterThanOrEqual(0);
            expect(v).toBeLessThanOrEqual(1.15 * 1.2 + 1e-12);
          }
          expect(lo).toBeLessThanOrEqual(hi);
          expect(moreDegree).toBeGreaterThanOrEqual(hi);
        },
      ),
    );
  });
});

describe('computeTemporalFactor', () => {
  // spec/limbic-system.md "Decay characteristics" → "Numerical examples".
  const table: readonly (readonly [string, number, number])[] = [
    ['1 hour', 1, 0.9999],
    ['1 day', 24, 0.9976],
    ['1 week', 168, 0.9833],
    ['30 days', 720, 0.9305],
    ['90 days', 2160, 0.8053],
    ['180 days', 4320, 0.6485],
    ['1 year', 8766, 0.4172],
    ['2 years', 17532, 0.174],
  ];

  it.each(table)('%s (%i h) → %f', (_label, hours, printed) => {
    const factor = computeTemporalFactor(NOW - hours * HOUR_MS, NOW - 1000 * DAY_MS, NOW);
    expect(factor).toBeCloseTo(Math.exp(-LAMBDA_HOURLY * hours), 12);
    expectSpecValue(factor, printed);
  });

  it.each([26_000, 30_000, 100_000, 1e7])('%i h → the 0.1 floor', (hours) => {
    expect(computeTemporalFactor(NOW - hours * HOUR_MS, NOW, NOW)).toBe(TEMPORAL_FLOOR);
  });

  it('30 days (worked example) ≈ 0.931', () => {
    expect(computeTemporalFactor(NOW - 30 * DAY_MS, NOW - 400 * DAY_MS, NOW)).toBeCloseTo(0.931, 3);
  });

  it('just accessed → 1', () => {
    expect(computeTemporalFactor(NOW, NOW - 400 * DAY_MS, NOW)).toBe(1);
  });

  it('has a half-life of ln 2 / λ ≈ 6931 hours', () => {
    expect(computeTemporalFactor(NOW - (Math.LN2 / LAMBDA_HOURLY) * HOUR_MS, NOW, NOW)).toBeCloseTo(0.5, 9);
  });

  it('never accessed: decays from createdAt', () => {
    const created = NOW - 90 * DAY_MS;
    expect(computeTemporalFactor(undefined, created, NOW)).toBeCloseTo(Math.exp(-LAMBDA_HOURLY * 2160), 12);
    expect(computeTemporalFactor(undefined, created, NOW)).toBeLessThan(computeTemporalFactor(NOW, created, NOW));
  });

  it('uses lastAccess, not createdAt, when the entity was accessed', () => {
    expect(computeTemporalFactor(NOW - DAY_MS, NOW - 3000 * DAY_MS, NOW)).toBeCloseTo(Math.exp(-LAMBDA_HOURLY * 24), 12);
  });

  it('a future timestamp counts as now (factor 1, never above 1)', () => {
    expect(computeTemporalFactor(NOW + 10 * DAY_MS, NOW, NOW)).toBe(1);
    expect(computeTemporalFactor(undefined, NOW + 10 * DAY_MS, NOW)).toBe(1);
  });

  it('property: always within [TEMPORAL_FLOOR, 1] and non-increasing with age', () => {
    fc.assert(
      fc.property(fc.double({ min: -1e12, max: 1e12, noNaN: true }), fc.double({ min: 0, max: 1e12, noNaN: true }), (offset, extra) => {
        const younger = computeTemporalFactor(NOW - offset, NOW, NOW);
        const older = computeTemporalFactor(NOW - offset - extra, NOW, NOW);
        for (const f of [younger, older]) {
          expect(f).toBeGreaterThanOrEqual(TEMPORAL_FLOOR);
          expect(f).toBeLessThanOrEqual(1);
        }
        expect(older).toBeLessThanOrEqual(younger);
      }),
    );
  });
});

describe('decay', () => {
  it('applies the floor it is given', () => {
    expect(decay(NOW - 1e6 * HOUR_MS, NOW, 0.25)).toBe(0.25);
    expect(decay(NOW - 720 * HOUR_MS, NOW, 0.25)).toBeCloseTo(Math.exp(-0.072), 12);
  });
});

describe('computeCoocBoost', () => {
  const e = asEntityId(1);
  const r1 = asEntityId(2);
  const r2 = asEntityId(3);
  const r3 = asEntityId(4);
  const outsider = asEntityId(99);
  const results = new Set([e, r1, r2, r3]);

  it('worked example: counts [5, 2, 1] seen just now → log₂6 + log₂3 + log₂2 ≈ 5.170', () => {
    const pairs: CoOccurrencePair[] = [
      { a: e, b: r1, count: 5, lastCo: NOW },
      { a: r2, b: e, count: 2, lastCo: NOW }, // e on either side of the pair
      { a: e, b: r3, count: 1, lastCo: NOW },
    ];
    const boost = computeCoocBoost(e, pairs, results, NOW);
    expect(boost).toBeCloseTo(Math.log2(6) + Math.log2(3) + Math.log2(2), 12);
    expect(boost).toBeCloseTo(5.17, 3);
  });

  it('log table: co_count 1, 5, 10, 50, 100 → 1.00, 2.58, 3.46, 5.67, 6.66', () => {
    const table: readonly (readonly [number, number])[] = [
      [1, 1.0],
      [5, 2.58],
      [10, 3.46],
      [50, 5.67],
      [100, 6.66],
    ];
    for (const [count, printed] of table) {
      expect(computeCoocBoost(e, [{ a: e, b: r1, count, lastCo: NOW }], results, NOW)).toBeCloseTo(printed, 2);
    }
  });

  it('ignores co-occurrences with entities outside the result set', () => {
    const pairs: CoOccurrencePair[] = [
      { a: e, b: r1, count: 1, lastCo: NOW },
      { a: e, b: outsider, count: 100, lastCo: NOW },
    ];
    expect(computeCoocBoost(e, pairs, results, NOW)).toBeCloseTo(1, 12);
  });

  it('ignores pairs that do not involve the entity, and self-pairs', () => {
    const pairs: CoOccurrencePair[] = [
      { a: r1, b: r2, count: 50, lastCo: NOW },
      { a: e, b: e, count: 50, lastCo: NOW },
    ];
    expect(computeCoocBoost(e, pairs, results, NOW)).toBe(0);
  });

  it('no pairs → 0', () => {
    expect(computeCoocBoost(e, [], results, NOW)).toBe(0);
  });

  it('decays with the time since the co-occurrence, like the temporal factor', () => {
    const pairs: CoOccurrencePair[] = [{ a: e, b: r1, count: 1, lastCo: NOW - 90 * DAY_MS }];
    expect(computeCoocBoost(e, pairs, results, NOW)).toBeCloseTo(Math.exp(-LAMBDA_HOURLY * 2160), 12);
  });

  it('cooc decay floors at 0.1 for very old co-occurrences', () => {
    const pairs: CoOccurrencePair[] = [{ a: e, b: r1, count: 3, lastCo: NOW - 5 * 365 * DAY_MS }];
    expect(computeCoocBoost(e, pairs, results, NOW)).toBeCloseTo(Math.log2(4) * COOC_TEMPORAL_FLOOR, 12);
  });

  it('a future co-occurrence time counts as now', () => {
    const pairs: CoOccurrencePair[] = [{ a: e, b: r1, count: 1, lastCo: NOW + DAY_MS }];
    expect(computeCoocBoost(e, pairs, results, NOW)).toBe(1);
  });
});

describe('computeLimbicScore and cosineSimilarity', () => {
  it('cosine_sim = max(0, 1 - distance)', () => {
    expect(cosineSimilarity(0.35)).toBeCloseTo(0.65, 12);
    expect(cosineSimilarity(0)).toBe(1);
    expect(cosineSimilarity(1)).toBe(0);
  });

  it("rescales cosine so a model's similarity of unrelated texts counts as 0 (e5: 0.74)", () => {
    expect(cosineSimilarity(0.12, 0.74)).toBeCloseTo((0.88 - 0.74) / 0.26, 12);
    expect(cosineSimilarity(0.26, 0.74)).toBeCloseTo(0, 12); // exactly as similar as unrelated text
    expect(cosineSimilarity(0.4, 0.74)).toBe(0); // less similar: still 0, never negative
    expect(cosineSimilarity(0, 0.74)).toBe(1);
    expect(cosineSimilarity(0.35, 0)).toBe(cosineSimilarity(0.35)); // floor 0 is the spec's formula
    // Order is kept: a nearer text never scores lower.
    expect(cosineSimilarity(0.1, 0.74)).toBeGreaterThan(cosineSimilarity(0.2, 0.74));
    expect(cosineSimilarity(1.7)).toBe(0);
  });

  it('worked FastMCP example: computeLimbicScore(0.65, 0.850, 0.931, 5.170) ≈ 0.908', () => {
    const score = computeLimbicScore(0.65, 0.85, 0.931, 5.17);
    expect(score).toBeCloseTo(0.65 * 1.425 * 0.931 * (1 + 0.01 * 5.17), 12);
    // The spec multiplies rounded factors (1.052) and prints 0.908; the product is 0.9069.
    expectSpecValue(score, 0.908);
  });

  it('worked FastMCP example end to end from raw signals ≈ 0.908', () => {
    const e = asEntityId(10);
    const others = [asEntityId(11), asEntityId(12), asEntityId(13)];
    const pairs: CoOccurrencePair[] = [5, 2, 1].map((count, i) => ({ a: e, b: others[i]!, count, lastCo: NOW }));
    const base = cosineSimilarity(0.35);
    const importance = computeImportance({ accessCount: 10, maxAccess: 20, degree: 8, accessDays: 0, maxAccessDays: 10 });
    const temporal = computeTemporalFactor(NOW - 30 * DAY_MS, NOW - 365 * DAY_MS, NOW);
    const cooc = computeCoocBoost(e, pairs, new Set([e, ...others]), NOW);
    const score = computeLimbicScore(base, importance, temporal, cooc);
    expect(score).toBeCloseTo(base * (1 + 0.5 * importance) * temporal * (1 + 0.01 * cooc), 12);
    expectSpecValue(score, 0.908, 2e-3);
    // "boosted from a raw similarity of 0.65 … a 40% increase"
    expect(score / 0.65).toBeGreaterThan(1.39);
  });

  it('salience gives at most 1.5× at importance 1, co-occurrence 1.05× at boost 5', () => {
    expect(computeLimbicScore(1, 1, 1, 0)).toBeCloseTo(1.5, 12);
    expect(computeLimbicScore(1, 0, 1, 5)).toBeCloseTo(1.05, 12);
    expect(computeLimbicScore(0.4, 0, 1, 0)).toBeCloseTo(0.4, 12);
  });

  it('a zero base stays zero whatever the limbic signals', () => {
    expect(computeLimbicScore(0, 1.38, 1, 50)).toBe(0);
  });
});

describe('refindScore (issue 37): how much the query is a past one after which the entity was used', () => {
  const NOW_MS = Date.UTC(2026, 5, 1);
  const unit = (...xs: number[]) => {
    const n = Math.hypot(...xs);
    return Float32Array.from(xs.map((x) => x / n));
  };
  const q = unit(1, 0, 0);
  const options = { similarityFloor: 0.74, threshold: 0.5, halfLifeDays: 30 };

  it('is 1 for the same query just now, 0 with no pairs or below the threshold, linear between', () => {
    expect(refindScore(q, [{ vector: q, at: NOW_MS }], NOW_MS, options)).toBeCloseTo(1, 6);
    expect(refindScore(q, [], NOW_MS, options)).toBe(0);
    // cos 0.80: rescaled (0.80 − 0.74) / 0.26 ≈ 0.23, below θ 0.5.
    const below = unit(0.8, Math.sqrt(1 - 0.64), 0);
    expect(refindScore(q, [{ vector: below, at: NOW_MS }], NOW_MS, options)).toBe(0);
    // cos 0.935: rescaled 0.75, halfway from θ to 1.
    const between = unit(0.935, Math.sqrt(1 - 0.935 ** 2), 0);
    expect(refindScore(q, [{ vector: between, at: NOW_MS }], NOW_MS, options)).toBeCloseTo(0.5, 4);
    // The best pair counts; vectors of another size, or of no direction, count as unrelated.
    expect(
      refindScore(
        q,
        [
          { vector: below, at: NOW_MS },
          { vector: q, at: NOW_MS },
        ],
        NOW_MS,
        options,
      ),
    ).toBeCloseTo(1, 6);
    expect(
      refindScore(
        q,
        [
          { vector: unit(1, 0), at: NOW_MS },
          { vector: new Float32Array(3), at: NOW_MS },
        ],
        NOW_MS,
        options,
      ),
    ).toBe(0);
  });

  it('forgets: half after the half-life, a pair from the future counts as now', () => {
    const day = 86_400_000;
    expect(refindScore(q, [{ vector: q, at: NOW_MS - 30 * day }], NOW_MS, options)).toBeCloseTo(0.5, 6);
    expect(refindScore(q, [{ vector: q, at: NOW_MS - 60 * day }], NOW_MS, options)).toBeCloseTo(0.25, 6);
    expect(refindScore(q, [{ vector: q, at: NOW_MS + day }], NOW_MS, options)).toBeCloseTo(1, 6);
  });
});
