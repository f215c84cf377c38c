/**
 * Weighted linear fusion of up to five signals, the weights of missing ones shared out among the
 * others (docs/ranking.md, "Fusion"). Every component arrives already in [0, 1]; this module only weighs them.
 */
import type { EntityId } from '../types.js';
import { minMaxNormalize } from './normalize.js';

/**
 * The five signals, in the spec's table order (which is also the order components are summed in).
 * @example SIGNALS.includes('graph') // true
 */
export const SIGNALS = ['fts', 'vector', 'recency', 'priority', 'graph'] as const;
/**
 * One of the five signals.
 * @example const s: Signal = 'vector';
 */
export type Signal = (typeof SIGNALS)[number];
/**
 * A non-negative, finite weight per signal; 0 switches a signal off.
 * @example const w: SignalWeights = { ...DEFAULT_SIGNAL_WEIGHTS, graph: 0.1 };
 */
export type SignalWeights = Readonly<Record<Signal, number>>;

/**
 * engrava's defaults: fts 0.30, vector 0.55, recency 0.10, priority 0.05, graph 0.0 (opt-in); sum 1.
 * @example DEFAULT_SIGNAL_WEIGHTS.vector // 0.55
 */
export const DEFAULT_SIGNAL_WEIGHTS: SignalWeights = Object.freeze({
  fts: 0.3,
  vector: 0.55,
  recency: 0.1,
  priority: 0.05,
  graph: 0,
});

/** Throws a RangeError naming the first signal whose weight is negative, NaN or infinite. */
function assertValidWeights(weights: SignalWeights): void {
  for (const s of SIGNALS) {
    const w = weights[s];
    if (!Number.isFinite(w) || w < 0) {
      throw new RangeError(`Weight of signal '${s}' is ${w}; weights must be finite and >= 0 (use 0 to switch a signal off).`);
    }
  }
}

/**
 * Rescales the active signals' weights to sum to 1 (inactive → 0); all zeros when nothing is active,
 * the spec's "All signals disabled" case, which the caller answers with its unranked fallback.
 *
 * A signal is active when `available[s]` is true AND its requested weight is > 0: a weight of 0 stays
 * 0 and is never replaced by a default (spec "Graceful Degradation": weight 0.0 → signal skipped).
 * Every weight is validated, even an unavailable signal's: a negative or non-finite weight is a
 * caller's bug whatever the backends can do, so it throws a RangeError naming the signal.
 * @example redistributeWeights({ fts: 0.3, vector: 0.55, recency: 0.1, priority: 0.05, graph: 0 },
 *   { fts: true, vector: false, recency: true, priority: true, graph: true }) // fts 0.30/0.45, recency 0.10/0.45, priority 0.05/0.45
 */
export function redistributeWeights(weights: SignalWeights, available: Readonly<Record<Signal, boolean>>): SignalWeights {
  assertValidWeights(weights);
  const active = SIGNALS.filter((s) => available[s] && weights[s] > 0);
  // Divide by the largest weight first, so weights near Number.MAX_VALUE cannot overflow the sum.
  const largest = Math.max(0, ...active.map((s) => weights[s]));
  let total = 0;
  for (const s of active) total += weights[s] / largest;
  const result: Record<Signal, number> = { fts: 0, vector: 0, recency: 0, priority: 0, graph: 0 };
  for (const s of active) result[s] = weights[s] / largest / total;
  return Object.freeze(result);
}

/**
 * Min-max normalises FTS5 `bm25()` scores, where lower (more negative) is better, into [0, 1] with
 * higher better; all-equal scores (a single one included) map to 0.5 each, an empty list to [].
 * @example normalizeBm25([-10, -5, 0]) // [1, 0.5, 0]
 */
export function normalizeBm25(bm25: readonly number[]): number[] {
  // Negating turns "lower is better" into "higher is better"; minMaxNormalize does the rest.
  return minMaxNormalize(bm25.map((score) => -score));
}

/**
 * One candidate's signal values, each already in [0, 1].
 * @example const input: WeightedInput = { id: asEntityId(7), fts: normalizeBm25(bm25)[0], vector: 0.82 };
 */
export interface WeightedInput {
  readonly id: EntityId;
  /** Each component already in [0, 1]; undefined when this candidate has no value for it (counts as 0). */
  readonly fts?: number;
  readonly vector?: number;
  readonly recency?: number;
  readonly priority?: number;
  readonly graph?: number;
}

/**
 * One fused candidate with the per-signal contributions that make up its score.
 * @example result.components.vector // the vector weight × the candidate's vector value
 */
export interface WeightedResult {
  readonly id: EntityId;
  /** Σ components; results are sorted by it, descending. */
  readonly score: number;
  /** weight × value for each signal (0 when the weight is 0 or the value is missing). */
  readonly components: Readonly<Record<Signal, number>>;
}

/**
 * score = Σ weight_s × value_s over the five signals (a missing value counts as 0); sorted by score
 * descending, ties by id ascending. Weights are used as given (pass them through redistributeWeights
 * first); a negative or non-finite weight, or a NaN/infinite value, throws a RangeError.
 * @example fuseWeighted([{ id: a, fts: 1, vector: 0.5 }], w) // [{ id: a, score: w.fts + 0.5 * w.vector, ... }]
 */
export function fuseWeighted(candidates: readonly WeightedInput[], weights: SignalWeights): WeightedResult[] {
  assertValidWeights(weights);
  const results = candidates.map((c): WeightedResult => {
    const components: Record<Signal, number> = { fts: 0, vector: 0, recency: 0, priority: 0, graph: 0 };
    let score = 0;
    for (const s of SIGNALS) {
      const value = c[s] ?? 0;
      if (!Number.isFinite(value)) {
        throw new RangeError(`Signal '${s}' of entity ${c.id} is ${value}; component values must be finite numbers in [0, 1].`);
      }
      components[s] = weights[s] * value;
      score += components[s];
    }
    return { id: c.id, score, components: Object.freeze(components) };
  });
  return results.sort((a, b) => b.score - a.score || a.id - b.id);
}
