/** spec/limbic-system.md "Scoring Formula" and its sub-formulas, as pure functions. */
import type { CoOccurrencePair } from '../signals.js';
import type { EntityId } from '../types.js';
import { ALPHA_CONS, BETA_DEG, BETA_SAL, COOC_TEMPORAL_FLOOR, D_MAX, GAMMA, HOUR_MS, LAMBDA_HOURLY, TEMPORAL_FLOOR } from './constants.js';

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

/**
 * cosine_sim = max(0, 1 - distance), rescaled so that the model's similarity of unrelated texts
 * (`floor`) counts as 0 and identity as 1. With floor 0 (the spec's MiniLM scale) it is the spec's
 * formula; e5 gives unrelated texts about 0.74, which unrescaled made every hit look alike.
 * @example cosineSimilarity(0.12, 0.74) // (0.88 - 0.74) / 0.26 ≈ 0.538
 */
export function cosineSimilarity(distance: number, floor = 0): number {
  return Math.max(0, (1 - distance - floor) / (1 - floor));
}
