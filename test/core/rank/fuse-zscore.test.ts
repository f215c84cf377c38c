import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { reciprocalRankFusion } from '../../../src/core/rank/fuse-rrf.js';
import { zScoreFusion, zScores } from '../../../src/core/rank/fuse-zscore.js';
import { asEntityId } from '../../../src/core/types.js';

describe('zScores', () => {
  it('standardises the values present and gives a missing one the lowest z (never above 0)', () => {
    expect(zScores([1, 3, undefined])).toEqual([-1, 1, -1]);
    expect(zScores([5, 5, undefined])).toEqual([0, 0, 0]);
    expect(zScores([undefined, undefined])).toEqual([0, 0]);
    const [a, b, c, miss] = zScores([2, 4, 6, undefined]);
    expect(a).toBeCloseTo(-Math.sqrt(1.5), 12);
    expect(b).toBeCloseTo(0, 12);
    expect(c).toBeCloseTo(Math.sqrt(1.5), 12);
    expect(miss).toBeCloseTo(a ?? 0, 12);
  });

  it('with a relative floor, a small gap among few values stays small; a real spread is unchanged', () => {
    const [near, far] = zScores([0.84, 0.85], 0.02);
    expect(far).toBeCloseTo(0.005 / (0.02 * 0.845), 12);
    expect(near).toBeCloseTo(-(far ?? 0), 12);
    expect(zScores([0.7, 0.9], 0.02)).toEqual(zScores([0.7, 0.9])); // σ 0.1 is above the floor
    expect(zScores([0.8, 0.8, undefined], 0.02)).toEqual([0, 0, 0]); // all alike: still 0
  });
});

describe('zScoreFusion', () => {
  it('keeps every score in (0, 1) and each leg alone keeps its own order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 2, noNaN: true }), { minLength: 1, maxLength: 30 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (distances, coverage) => {
          const fused = reciprocalRankFusion(
            distances.map((distance, i) => ({ id: asEntityId(i + 1), distance })),
            [],
          );
          const scores = zScoreFusion(fused, coverage);
          for (const s of scores) {
            expect(s).toBeGreaterThan(0);
            expect(s).toBeLessThan(1);
          }
          // Closer in meaning never scores lower.
          fused.forEach((a, i) =>
            fused.forEach((b, j) => {
              if ((a.semantic?.distance ?? 0) < (b.semantic?.distance ?? 0)) expect(scores[i]).toBeGreaterThanOrEqual(scores[j] ?? 0);
            }),
          );
        },
      ),
      { numRuns: 200 },
    );
  });
});
