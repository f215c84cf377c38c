import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  DEFAULT_SIGNAL_WEIGHTS,
  SIGNALS,
  fuseWeighted,
  normalizeBm25,
  redistributeWeights,
  type Signal,
  type SignalWeights,
  type WeightedInput,
  type WeightedResult,
} from '../../../src/core/rank/fuse-weighted.js';
import { asEntityId } from '../../../src/core/types.js';

const id = asEntityId;
type Availability = Record<Signal, boolean>;

const ALL_ON: Availability = { fts: true, vector: true, recency: true, priority: true, graph: true };
const ALL_OFF: Availability = { fts: false, vector: false, recency: false, priority: false, graph: false };
const ZEROS: SignalWeights = { fts: 0, vector: 0, recency: 0, priority: 0, graph: 0 };

/** Bit i of the mask switches SIGNALS[i] on. */
function availabilityOf(mask: number): Availability {
  const available = { ...ALL_OFF };
  SIGNALS.forEach((s, i) => {
    available[s] = (mask & (1 << i)) !== 0;
  });
  return available;
}

const sum = (w: SignalWeights): number => SIGNALS.reduce((total, s) => total + w[s], 0);
const MASKS = Array.from({ length: 32 }, (_, mask) => mask);

function byId(results: readonly WeightedResult[], n: number): WeightedResult {
  const hit = results.find((r) => r.id === id(n));
  if (hit === undefined) throw new Error(`entity ${n} missing from the fused list`);
  return hit;
}

describe('DEFAULT_SIGNAL_WEIGHTS', () => {
  it("are engrava's defaults, graph opt-in at 0, summing to 1", () => {
    expect(DEFAULT_SIGNAL_WEIGHTS).toEqual({ fts: 0.3, vector: 0.55, recency: 0.1, priority: 0.05, graph: 0 });
    expect(sum(DEFAULT_SIGNAL_WEIGHTS)).toBeCloseTo(1, 12);
  });

  it('cannot be changed by a caller', () => {
    expect(Object.isFrozen(DEFAULT_SIGNAL_WEIGHTS)).toBe(true);
  });
});

describe('redistributeWeights', () => {
  describe('every on/off combination of the five signals with the default weights', () => {
    it.each(MASKS)('availability mask %i', (mask) => {
      const available = availabilityOf(mask);
      const active = SIGNALS.filter((s) => available[s] && DEFAULT_SIGNAL_WEIGHTS[s] > 0);
      const activeTotal = active.reduce((total, s) => total + DEFAULT_SIGNAL_WEIGHTS[s], 0);
      const result = redistributeWeights(DEFAULT_SIGNAL_WEIGHTS, available);

      if (active.length === 0) {
        // Nothing available (mask 0) or only graph, whose default weight is 0 (mask 16): the
        // documented all-zero result, on which the caller falls back to an unranked listing.
        expect([0, 16]).toContain(mask);
        expect(result).toEqual(ZEROS);
        return;
      }
      expect(Math.abs(sum(result) - 1)).toBeLessThanOrEqual(1e-12);
      for (const s of SIGNALS) {
        if (active.includes(s)) {
          expect(result[s]).toBeCloseTo(DEFAULT_SIGNAL_WEIGHTS[s] / activeTotal, 12);
        } else {
          expect(result[s]).toBe(0);
        }
      }
    });
  });

  it('sums to 1 in all 31 non-empty combinations when every weight is positive', () => {
    const weights: SignalWeights = { fts: 0.3, vector: 0.4, recency: 0.1, priority: 0.05, graph: 0.15 };
    for (const mask of MASKS.slice(1)) {
      const result = redistributeWeights(weights, availabilityOf(mask));
      expect(Math.abs(sum(result) - 1), `mask ${mask}`).toBeLessThanOrEqual(1e-12);
    }
    expect(redistributeWeights(weights, ALL_OFF)).toEqual(ZEROS);
  });

  it('spreads an unavailable signal proportionally: vector off → fts 0.30/0.45, recency 0.10/0.45, priority 0.05/0.45', () => {
    const result = redistributeWeights(DEFAULT_SIGNAL_WEIGHTS, { ...ALL_ON, vector: false });
    expect(result.fts).toBeCloseTo(0.3 / 0.45, 12);
    expect(result.recency).toBeCloseTo(0.1 / 0.45, 12);
    expect(result.priority).toBeCloseTo(0.05 / 0.45, 12);
    expect(result.vector).toBe(0);
    expect(result.graph).toBe(0);
    // Proportional: the ratios between active weights are unchanged.
    expect(result.fts / result.recency).toBeCloseTo(3, 12);
    expect(result.recency / result.priority).toBeCloseTo(2, 12);
  });

  it('leaves already-normalised weights unchanged when everything is available', () => {
    const result = redistributeWeights(DEFAULT_SIGNAL_WEIGHTS, ALL_ON);
    for (const s of SIGNALS) expect(result[s]).toBeCloseTo(DEFAULT_SIGNAL_WEIGHTS[s], 12);
  });

  it('rescales weights that do not sum to 1', () => {
    const result = redistributeWeights({ fts: 2, vector: 6, recency: 0, priority: 0, graph: 2 }, ALL_ON);
    expect(result.fts).toBeCloseTo(0.2, 12);
    expect(result.vector).toBeCloseTo(0.6, 12);
    expect(result.graph).toBeCloseTo(0.2, 12);
    expect(result.recency).toBe(0);
    expect(result.priority).toBe(0);
  });

  describe('a weight of 0 is a real value (the Orama counter-example in STYLE.md)', () => {
    it('stays 0 instead of falling back to the default', () => {
      const result = redistributeWeights({ fts: 0, vector: 0.5, recency: 0.5, priority: 0, graph: 0 }, ALL_ON);
      expect(result).toEqual({ fts: 0, vector: 0.5, recency: 0.5, priority: 0, graph: 0 });
    });

    it('takes no share of an unavailable signal’s weight', () => {
      const result = redistributeWeights({ fts: 0, vector: 0.6, recency: 0.3, priority: 0.1, graph: 0 }, { ...ALL_ON, vector: false });
      expect(result.fts).toBe(0);
      expect(result.graph).toBe(0);
      expect(result.recency).toBeCloseTo(0.75, 12);
      expect(result.priority).toBeCloseTo(0.25, 12);
    });

    it('switches an available signal off: all-zero weights give the all-zero fallback result', () => {
      expect(redistributeWeights(ZEROS, ALL_ON)).toEqual(ZEROS);
    });

    it('-0 counts as 0', () => {
      expect(redistributeWeights({ ...DEFAULT_SIGNAL_WEIGHTS, priority: -0 }, ALL_ON).priority).toBe(0);
    });
  });

  it('gives a single active signal all the weight', () => {
    expect(redistributeWeights(DEFAULT_SIGNAL_WEIGHTS, { ...ALL_OFF, recency: true })).toEqual({ ...ZEROS, recency: 1 });
  });

  it('does not overflow with huge weights, nor lose tiny ones', () => {
    const huge = redistributeWeights({ ...ZEROS, fts: Number.MAX_VALUE, vector: Number.MAX_VALUE }, ALL_ON);
    expect(huge).toEqual({ ...ZEROS, fts: 0.5, vector: 0.5 });
    const tiny = redistributeWeights({ ...ZEROS, fts: Number.MIN_VALUE, vector: 3 * Number.MIN_VALUE }, ALL_ON);
    expect(tiny.fts).toBeCloseTo(0.25, 12);
    expect(tiny.vector).toBeCloseTo(0.75, 12);
  });

  it('returns a new frozen object and leaves its input alone', () => {
    const weights = { ...DEFAULT_SIGNAL_WEIGHTS };
    const result = redistributeWeights(weights, { ...ALL_ON, fts: false });
    expect(weights).toEqual(DEFAULT_SIGNAL_WEIGHTS);
    expect(result).not.toBe(weights);
    expect(Object.isFrozen(result)).toBe(true);
  });

  describe('invalid weights throw a RangeError naming the signal', () => {
    it.each([
      ['recency', -0.1],
      ['vector', Number.NaN],
      ['fts', Infinity],
      ['priority', -Infinity],
    ] as const)('%s = %d', (signal, weight) => {
      expect(() => redistributeWeights({ ...DEFAULT_SIGNAL_WEIGHTS, [signal]: weight }, ALL_ON)).toThrow(RangeError);
      expect(() => redistributeWeights({ ...DEFAULT_SIGNAL_WEIGHTS, [signal]: weight }, ALL_ON)).toThrow(`'${signal}'`);
    });

    it('even when that signal is unavailable', () => {
      expect(() => redistributeWeights({ ...DEFAULT_SIGNAL_WEIGHTS, graph: -1 }, { ...ALL_ON, graph: false })).toThrow(/'graph'/);
    });
  });
});

describe('normalizeBm25', () => {
  it('reverses the order: the most negative (best) score maps to 1, the highest to 0', () => {
    expect(normalizeBm25([-10, -5, 0])).toEqual([1, 0.5, 0]);
    expect(normalizeBm25([-1.5, -7.5, -3])).toEqual([0, 1, 0.25]);
  });

  it('maps all-equal scores to 0.5 each', () => {
    expect(normalizeBm25([-3.2, -3.2, -3.2])).toEqual([0.5, 0.5, 0.5]);
  });

  it('maps a single score to 0.5', () => {
    expect(normalizeBm25([-7])).toEqual([0.5]);
  });

  it('maps an empty list to an empty list', () => {
    expect(normalizeBm25([])).toEqual([]);
  });

  it('returns a new array and leaves its input alone', () => {
    const bm25 = [-2, -1];
    const normalised = normalizeBm25(bm25);
    expect(normalised).toEqual([1, 0]);
    expect(bm25).toEqual([-2, -1]);
  });

  it('stays in [0, 1] and never lets a worse BM25 score rank above a better one', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -1e6, max: 0, noNaN: true }), { minLength: 1, maxLength: 30 }), (bm25) => {
        const normalised = normalizeBm25(bm25);
        expect(normalised).toHaveLength(bm25.length);
        for (let i = 0; i < bm25.length; i++) {
          const ni = normalised[i] ?? Number.NaN;
          expect(ni).toBeGreaterThanOrEqual(0);
          expect(ni).toBeLessThanOrEqual(1);
          for (let j = 0; j < bm25.length; j++) {
            if ((bm25[i] ?? 0) < (bm25[j] ?? 0)) expect(ni).toBeGreaterThanOrEqual(normalised[j] ?? Number.NaN);
          }
        }
      }),
    );
  });
});

describe('fuseWeighted', () => {
  const weights = DEFAULT_SIGNAL_WEIGHTS;

  it('scores Σ weight × value and sorts by score, descending', () => {
    const results = fuseWeighted(
      [
        { id: id(1), fts: 1 }, // 0.30
        { id: id(2), vector: 1 }, // 0.55
        { id: id(3), fts: 0.5, vector: 0.5, recency: 1, priority: 1 }, // 0.15 + 0.275 + 0.10 + 0.05 = 0.575
      ],
      weights,
    );
    expect(results.map((r) => r.id)).toEqual([id(3), id(2), id(1)]);
    expect(byId(results, 3).score).toBeCloseTo(0.575, 12);
    expect(byId(results, 2).score).toBeCloseTo(0.55, 12);
    expect(byId(results, 1).score).toBeCloseTo(0.3, 12);
  });

  it('breaks ties by id, ascending, whatever the input order', () => {
    const results = fuseWeighted(
      [
        { id: id(9), vector: 0.4 },
        { id: id(4), vector: 0.4 },
        { id: id(7), vector: 0.4 },
        { id: id(1), vector: 0.1 },
      ],
      weights,
    );
    expect(results.map((r) => r.id)).toEqual([id(4), id(7), id(9), id(1)]);
  });

  it('reports weight × value per signal, and the components sum to the score', () => {
    const [result] = fuseWeighted([{ id: id(1), fts: 0.5, vector: 0.8, recency: 0.2, priority: 1, graph: 0.9 }], {
      ...weights,
      graph: 0.1,
    });
    expect(result?.components.fts).toBeCloseTo(0.15, 12);
    expect(result?.components.vector).toBeCloseTo(0.44, 12);
    expect(result?.components.recency).toBeCloseTo(0.02, 12);
    expect(result?.components.priority).toBeCloseTo(0.05, 12);
    expect(result?.components.graph).toBeCloseTo(0.09, 12);
    expect(result?.score).toBeCloseTo(
      SIGNALS.reduce((total, s) => total + (result?.components[s] ?? 0), 0),
      12,
    );
  });

  it('counts a missing component as 0', () => {
    const [result] = fuseWeighted([{ id: id(1), vector: 0.5 }], weights);
    expect(result?.components).toEqual({ fts: 0, vector: 0.275, recency: 0, priority: 0, graph: 0 });
    expect(result?.score).toBe(0.275);
  });

  it('gives a signal with weight 0 no say, however high its value', () => {
    const results = fuseWeighted(
      [
        { id: id(1), vector: 0.5, graph: 1 },
        { id: id(2), vector: 0.6, graph: 0 },
      ],
      weights, // graph: 0
    );
    expect(results.map((r) => r.id)).toEqual([id(2), id(1)]);
    expect(byId(results, 1).components.graph).toBe(0);
  });

  it('ranks by nothing but id when every weight is 0', () => {
    const results = fuseWeighted(
      [
        { id: id(2), fts: 1 },
        { id: id(1), vector: 1 },
      ],
      { fts: 0, vector: 0, recency: 0, priority: 0, graph: 0 },
    );
    expect(results.map((r) => [r.id, r.score])).toEqual([
      [id(1), 0],
      [id(2), 0],
    ]);
  });

  it('returns [] for no candidates', () => {
    expect(fuseWeighted([], weights)).toEqual([]);
  });

  it('returns a new array and leaves its input alone', () => {
    const input: WeightedInput[] = [
      { id: id(1), fts: 0.1 },
      { id: id(2), fts: 0.9 },
    ];
    const results = fuseWeighted(input, weights);
    expect(results.map((r) => r.id)).toEqual([id(2), id(1)]);
    expect(input.map((c) => c.id)).toEqual([id(1), id(2)]);
  });

  it('throws a RangeError on an invalid weight or a non-finite value', () => {
    expect(() => fuseWeighted([{ id: id(1), fts: 1 }], { ...weights, recency: -0.5 })).toThrow(/'recency'/);
    expect(() => fuseWeighted([{ id: id(5), vector: Number.NaN }], weights)).toThrow(RangeError);
    expect(() => fuseWeighted([{ id: id(5), vector: Number.NaN }], weights)).toThrow(/'vector' of entity 5/);
  });

  it('property: scores are finite, non-negative and sorted descending for values in [0, 1]', () => {
    const unit = fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined });
    const candidate = fc.record({
      id: fc.integer({ min: 1, max: 1_000_000 }).map(asEntityId),
      fts: unit,
      vector: unit,
      recency: unit,
      priority: unit,
      graph: unit,
    });
    const weight = fc.double({ min: 0, max: 10, noNaN: true });
    const weightsArb = fc.record({ fts: weight, vector: weight, recency: weight, priority: weight, graph: weight });
    const availableArb = fc.record({
      fts: fc.boolean(),
      vector: fc.boolean(),
      recency: fc.boolean(),
      priority: fc.boolean(),
      graph: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(candidate, { maxLength: 40, selector: (c) => c.id }),
        weightsArb,
        availableArb,
        fc.boolean(),
        (candidates, raw, available, redistribute) => {
          const w = redistribute ? redistributeWeights(raw, available) : raw;
          const results = fuseWeighted(candidates, w);
          expect(results).toHaveLength(candidates.length);
          results.forEach((r, i) => {
            expect(Number.isFinite(r.score)).toBe(true);
            expect(r.score).toBeGreaterThanOrEqual(0);
            if (redistribute) expect(r.score).toBeLessThanOrEqual(1 + 1e-12);
            const next = results[i + 1];
            if (next !== undefined) {
              expect(r.score).toBeGreaterThanOrEqual(next.score);
              if (r.score === next.score) expect(r.id).toBeLessThan(next.id);
            }
          });
        },
      ),
    );
  });
});
