/** The limbic re-rank's formulas (docs/ranking.md, "Limbic re-rank"), as pure functions. */
import type { CoOccurrencePair } from '../signals.js';
import type { EntityId } from '../types.js';
import {
  ALPHA_CONS,
  BETA_DEG,
  BETA_SAL,
  COOC_TEMPORAL_FLOOR,
  D_MAX,
  DAYS_PIVOT,
  GAMMA,
  HOUR_MS,
  LAMBDA_HOURLY,
  REFIND_HALF_LIFE_DAYS,
  REFIND_THRESHOLD,
  TEMPORAL_FLOOR,
  USE_PIVOT,
} from './constants.js';

export interface ImportanceInput {
  readonly accessCount: number;
  /** Highest access count in the candidate set. */
  readonly maxAccess: number;
  readonly degree: number;
  readonly accessDays: number;
  /** Highest number of distinct access days in the candidate set. */
  readonly maxAccessDays: number;
}

/** log₂(1 + x) / log₂(1 + max), 0 when max is 0. */
function logRatio(x: number, max: number): number {
  if (max <= 0 || x <= 0) return 0;
  return Math.log2(1 + x) / Math.log2(1 + max);
}

/**
 * importance = access_norm × (1 + β_deg × degree_norm) × (1 + α_cons × consolidation)
 * @example computeImportance({accessCount: 10, maxAccess: 20, degree: 8, accessDays: 5, maxAccessDays: 10}) // ≈ 0.977
 */
export function computeImportance(input: ImportanceInput): number {
  const accessNorm = logRatio(input.accessCount, input.maxAccess);
  const degreeNorm = Math.min(Math.max(input.degree, 0), D_MAX) / D_MAX;
  const consolidation = logRatio(input.accessDays, input.maxAccessDays);
  return accessNorm * (1 + BETA_DEG * degreeNorm) * (1 + ALPHA_CONS * consolidation);
}

/** exp(-λ·Δt_hours) with a floor; a reference time in the future counts as now. */
export function decay(referenceMs: number, nowMs: number, floor: number): number {
  const hours = Math.max(0, nowMs - referenceMs) / HOUR_MS;
  return Math.max(floor, Math.exp(-LAMBDA_HOURLY * hours));
}

/**
 * temporal_factor = max(TEMPORAL_FLOOR, exp(-LAMBDA_HOURLY × hours since last access)); an entity
 * never accessed decays from its creation time.
 */
export function computeTemporalFactor(lastAccessMs: number | undefined, createdAtMs: number, nowMs: number): number {
  return decay(lastAccessMs ?? createdAtMs, nowMs, TEMPORAL_FLOOR);
}

/**
 * cooc_boost(e, R) = Σ_{r ∈ R, r ≠ e} log₂(1 + co_count(e, r)) × decay(last_co(e, r))
 * @example three pairs of counts 5, 2, 1 seen just now // ≈ 5.170
 */
export function computeCoocBoost(
  id: EntityId,
  pairs: readonly CoOccurrencePair[],
  resultIds: ReadonlySet<EntityId>,
  nowMs: number,
): number {
  let boost = 0;
  for (const p of pairs) {
    const other = p.a === id ? p.b : p.b === id ? p.a : undefined;
    if (other === undefined || other === id || !resultIds.has(other)) continue;
    boost += Math.log2(1 + Math.max(0, p.count)) * decay(p.lastCo, nowMs, COOC_TEMPORAL_FLOOR);
  }
  return boost;
}

/**
 * limbic = base × (1 + β_sal × importance) × temporal × (1 + γ × cooc_boost). γ and β_sal default
 * to the spec's constants; `limbic tune --apply` stores others, which the search passes in.
 * @example computeLimbicScore(0.65, 0.850, 0.931, 5.170) // ≈ 0.908 (the worked FastMCP example)
 */
export function computeLimbicScore(
  base: number,
  importance: number,
  temporalFactor: number,
  coocBoost: number,
  gamma = GAMMA,
  betaSal = BETA_SAL,
): number {
  return base * (1 + betaSal * importance) * temporalFactor * (1 + gamma * coocBoost);
}

/** n / (n + pivot): 0 for none, one half at the pivot, never 1; the same for every candidate set. */
function saturate(n: number, pivot: number): number {
  return n > 0 ? n / (n + pivot) : 0;
}

export interface UseFacts {
  /** Times the entity was used: opened, extended, related (not listed by a search). */
  readonly useCount: number;
  /** Distinct days on which it was used. */
  readonly useDays: number;
  readonly degree: number;
}

/**
 * The spec's importance with its scale made global (issue 24): access_norm = n / (n + USE_PIVOT)
 * and consolidation = d / (d + DAYS_PIVOT) instead of log₂ ratios to the candidate set's maximum,
 * where one access among never-accessed candidates was a full 1.0. Degree and the two weights are
 * the spec's; an entity never used has importance 0, as in the spec.
 * @example usageImportance({ useCount: 10, useDays: 0, degree: 0 }) // 0.5
 */
export function usageImportance(facts: UseFacts): number {
  const accessNorm = saturate(facts.useCount, USE_PIVOT);
  const degreeNorm = Math.min(Math.max(facts.degree, 0), D_MAX) / D_MAX;
  const consolidation = saturate(facts.useDays, DAYS_PIVOT);
  return accessNorm * (1 + BETA_DEG * degreeNorm) * (1 + ALPHA_CONS * consolidation);
}

export interface LiftOptions {
  /** The most the lift can be (USAGE_BAND × the route's limbic share). */
  readonly band: number;
  readonly gamma?: number;
  readonly betaSal?: number;
}

/**
 * What usage adds to a candidate's base relevance: the spec's limbic multiplier
 * (1 + β_sal·importance) · temporal · (1 + γ·cooc_boost) on a log scale (ACT-R's base level is a log
 * prior that is added to the evidence, never multiplied into it), scaled so that importance 1 at the
 * spec's β_sal fills the band, and clamped to [0, band]: usage breaks near-ties and lifts a used
 * entity among comparably relevant ones; it never carries a candidate past one more than `band`
 * more relevant, and forgetting takes a lift away without pushing an entity below one never used.
 * @example usageLift(1, 1, 0, { band: 0.02 }) // 0.02: the whole band
 * @example usageLift(0.25, 1, 0, { band: 0.02 }) // ≈ 0.0058 (about three uses on one day)
 */
export function usageLift(importance: number, temporalFactor: number, coocBoost: number, options: LiftOptions): number {
  const factor = computeLimbicScore(1, importance, temporalFactor, coocBoost, options.gamma, options.betaSal);
  if (!(factor > 1) || !(options.band > 0)) return 0;
  return Math.min(options.band, (options.band * Math.log(factor)) / Math.log(1 + BETA_SAL));
}

/**
 * cosine_sim = max(0, 1 - distance), rescaled so that the model's similarity of unrelated texts
 * (`floor`) counts as 0 and identity as 1. With floor 0 (the spec's MiniLM scale) it is the spec's
 * formula; e5 gives unrelated texts about 0.74, which unrescaled made every hit look alike.
 * @example cosineSimilarity(0.12, 0.74) // (0.88 - 0.74) / 0.26 ≈ 0.538
 */
export function cosineSimilarity(distance: number, floor = 0): number {
  return Math.max(0, (1 - distance - floor) / (1 - floor));
}

/** A past query after which the agent used an entity: its vector and when the use was. */
export interface RefindPair {
  readonly vector: Float32Array;
  readonly at: number;
}

export interface RefindOptions {
  /** The model's cosine of unrelated texts (cosineSimilarity's floor). */
  readonly similarityFloor: number;
  /** @default REFIND_THRESHOLD */
  readonly threshold?: number | undefined;
  /** 0: no forgetting. @default REFIND_HALF_LIFE_DAYS */
  readonly halfLifeDays?: number | undefined;
}

/** Cosine of two vectors (0 when either has no direction or their sizes differ). */
function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    ab += x * y;
    aa += x * x;
    bb += y * y;
  }
  return aa > 0 && bb > 0 ? ab / Math.sqrt(aa * bb) : 0;
}

/**
 * How much the query is a past query that led to this entity, in [0, 1]: the best over its pairs of
 * the rescaled similarity s = cosineSimilarity(1 − cos(q, q_past), floor) above the threshold θ,
 * as (s − θ) / (1 − θ), times 2^(−age / half-life). Zero below θ: a neighbouring topic is not the
 * same need again. A pair made in the future counts as made now.
 * @example refindScore(q, [{ vector: q, at: now }], now, { similarityFloor: 0.74 }) // 1: the same query, just now
 */
export function refindScore(query: Float32Array, pairs: readonly RefindPair[], nowMs: number, options: RefindOptions): number {
  const theta = options.threshold ?? REFIND_THRESHOLD;
  const halfLifeMs = (options.halfLifeDays ?? REFIND_HALF_LIFE_DAYS) * 24 * HOUR_MS;
  let best = 0;
  for (const p of pairs) {
    const s = cosineSimilarity(1 - cosine(query, p.vector), options.similarityFloor);
    if (!(s > theta)) continue;
    const forget = halfLifeMs > 0 ? Math.pow(2, -Math.max(0, nowMs - p.at) / halfLifeMs) : 1;
    best = Math.max(best, Math.min(1, ((s - theta) / (1 - theta)) * forget));
  }
  return best;
}
