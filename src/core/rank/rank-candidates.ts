/**
 * The limbic re-ranker (its formulas and constants: docs/ranking.md, "Limbic re-rank"). Where the
 * spec's reference surprises users, this does what it intends:
 * - usage is a bounded lift added to relevance, not a multiplier of it (issue 24): multiplied, a
 *   1.5× salience factor moved candidates past far more relevant ones, and since every search
 *   counted as an access, a few entities came to answer everything. The spec's own intent
 *   ("prevents entities that were accidentally accessed many times from permanently dominating")
 *   wins over its literal wiring; its formulas stay in limbic.ts with their worked examples;
 * - routing scales how far usage may reach (its limbic share), not a min-max blend;
 * - status and metadata multipliers apply before the final sort, so a result's position always
 *   follows its final score.
 */
import type { CandidateSignals, RankFacts, VectorHit } from '../signals.js';
import type { EntityId } from '../types.js';
import {
  FTS_BASE_FLOOR,
  FTS_BASE_SPAN,
  LIFT_BAND,
  METADATA_PENALTY,
  METADATA_THRESHOLD,
  PROJECT_BOOST,
  REFIND_BAND,
  RRF_K,
  STATUS_DEBOOST,
  USAGE_BAND,
} from './constants.js';
import { reciprocalRankFusion, type FusedCandidate } from './fuse-rrf.js';
import { computeCoocBoost, computeLimbicScore, computeTemporalFactor, cosineSimilarity, usageImportance, usageLift } from './limbic.js';
import { minMaxNormalize } from './normalize.js';
import { ROUTING_WEIGHTS, type RoutingStrategy } from './routing.js';

export { minMaxNormalize };

/**
 * How rankHybridCandidates sets base relevance: the spec's reference bases, which the quality bench
 * compares with the search pipeline (src/service/search). The pipeline itself fuses by weighted
 * signals: search_semantic's preset weighs BM25 0.30 and cosine 0.55 over the legs that answered.
 * - `spec`: the spec's bases: max(0, 1 - distance) for every KNN hit, normalised RRF
 *   for FTS-only hits. Being found by the keyword leg too adds nothing to a KNN hit.
 * - `fused`: 0.2 + 0.6 × (RRF as a share of its maximum) for every candidate, so agreement between
 *   the two legs counts, by rank only.
 * bench/quality on LoCoMo (recall@5, MiniLM): `spec` 0.401 (ranks exactly like semantic-only
 * search), `fused` 0.509, the pipeline's weighted relevance 0.541; see docs/benchmarks.md.
 */
export type HybridBase = 'spec' | 'fused';

export interface RankOptions {
  readonly limit: number;
  readonly strategy: RoutingStrategy;
  readonly now: number;
  /** Only read by rankHybridCandidates. @default 'spec' */
  readonly hybridBase?: HybridBase;
  /** The k the candidates were fused with, for the `fused` base. @default RRF_K */
  readonly rrfK?: number;
  /** The model's cosine of unrelated texts, counted as 0 similarity (cosineSimilarity). @default 0 */
  readonly similarityFloor?: number;
  /** Weight of the co-occurrence boost; the tuned value when one is in force. @default GAMMA */
  readonly gamma?: number;
  /** Weight of the salience boost; the tuned value when one is in force. @default BETA_SAL */
  readonly betaSal?: number;
  /** The project the search runs in: its entities' multiplier is times PROJECT_BOOST. @default none */
  readonly project?: string | undefined;
  /**
   * Each candidate's re-finding score in [0, 1] (limbic.ts refindScore: how much the query is one
   * after which the agent used it); a candidate absent scores 0. @default none
   */
  readonly refinding?: ReadonlyMap<EntityId, number> | undefined;
  /** The re-finding lift of score 1 at the balanced route. @default REFIND_BAND */
  readonly refindBand?: number | undefined;
}

export interface RankedCandidate {
  readonly id: EntityId;
  /** The final score; results are sorted by it, descending. */
  readonly score: number;
  /** Base relevance: cosine similarity, or the normalised RRF for FTS-only hits. */
  readonly base: number;
  /** The spec's composite limbic score (base × its factors), reported; the order follows `score`. */
  readonly limbic: number;
  readonly importance: number;
  readonly temporalFactor: number;
  readonly coocBoost: number;
  /** What usage of both kinds added to the base (baseLevelLift + refindLift), in [0, the route's LIFT_BAND]. */
  readonly usageLift: number;
  /** The part of usageLift from the entity's uses (importance, forgetting, co-use), in [0, the route's USAGE_BAND]. */
  readonly baseLevelLift: number;
  /** The part of usageLift from past queries like this one after which it was used (re-finding). */
  readonly refindLift: number;
  /** The candidate's re-finding score in [0, 1] (0 when none), for the shadow log's replay. */
  readonly refindScore: number;
  /** Places usage moved it: its place without any lift minus its place with them (> 0: up). */
  readonly usagePlaces: number;
  /** Status × metadata (× project) multiplier that was applied (1 when none). */
  readonly multiplier: number;
  /** What the legs found of it, as fusion received it. */
  readonly candidate: FusedCandidate;
}

/** A candidate with its base relevance already decided, for rankByBase. */
export interface BaseCandidate {
  readonly candidate: FusedCandidate;
  readonly base: number;
}

/**
 * Status deboost × metadata penalty for one entity, × PROJECT_BOOST when it belongs to the project
 * the search runs in.
 */
export function statusMultiplier(facts: RankFacts | undefined, project?: string): number {
  if (facts === undefined) return 1;
  const status = STATUS_DEBOOST[facts.status];
  const metadata = facts.metadataRatio > METADATA_THRESHOLD ? METADATA_PENALTY : 1;
  const own = project !== undefined && facts.project === project ? PROJECT_BOOST : 1;
  return status * metadata * own;
}

/**
 * The limbic re-rank over candidates whose base relevance the caller decided (a cosine, a fused
 * RRF share, a z-score strength): importance, forgetting and co-use become a bounded lift added to
 * the base (usageLift), status and metadata multipliers apply to the sum, then sort and cut to limit.
 * Importance is on a global scale (usageImportance), forgetting counts from the last use (an entity
 * never used is neutral, not old), and nothing here reads a candidate-set maximum, so one access
 * among never-used candidates is a small lift, not the spec's full 1.5×.
 */
export function rankByBase(
  candidates: readonly BaseCandidate[],
  signals: CandidateSignals<RankFacts>,
  options: RankOptions,
): RankedCandidate[] {
  if (candidates.length === 0 || options.limit <= 0) return [];
  const ids = new Set(candidates.map((c) => c.candidate.id));
  const band = routedBand(options.strategy);
  const partial = candidates.map((c) => {
    const { id } = c.candidate;
    const access = signals.access.get(id);
    const facts = signals.facts.get(id);
    const importance = usageImportance({
      useCount: access?.accessCount ?? 0,
      useDays: access?.accessDays ?? 0,
      degree: signals.degree.get(id) ?? 0,
    });
    // Never used: neutral (1), not decayed from its creation: age alone is no evidence it is not needed.
    const temporalFactor = access === undefined ? 1 : computeTemporalFactor(access.lastAccess, access.lastAccess, options.now);
    const coocBoost = computeCoocBoost(id, signals.coOccurrences, ids, options.now);
    const baseLevel = usageLift(importance, temporalFactor, coocBoost, { band, gamma: options.gamma, betaSal: options.betaSal });
    const refindScore = options.refinding?.get(id) ?? 0;
    const { lift, refind } = combinedLift(baseLevel, refindScore, options.strategy, options.refindBand);
    return {
      c,
      importance,
      temporalFactor,
      coocBoost,
      lift,
      baseLevel,
      refind,
      refindScore,
      multiplier: statusMultiplier(facts, options.project),
    };
  });
  const scores = limbicScores(partial.map((p) => ({ base: p.c.base, lift: p.lift, multiplier: p.multiplier })));
  const unlifted = placesBy(partial.map((p, i) => ({ id: p.c.candidate.id, score: p.c.base * p.multiplier, i })));
  const lifted = placesBy(partial.map((p, i) => ({ id: p.c.candidate.id, score: scores[i] ?? 0, i })));
  const ranked = partial.map((p, i): RankedCandidate => ({
    id: p.c.candidate.id,
    score: scores[i] ?? 0,
    base: p.c.base,
    limbic: computeLimbicScore(p.c.base, p.importance, p.temporalFactor, p.coocBoost, options.gamma, options.betaSal),
    importance: p.importance,
    temporalFactor: p.temporalFactor,
    coocBoost: p.coocBoost,
    usageLift: p.lift,
    baseLevelLift: p.baseLevel,
    refindLift: p.refind,
    refindScore: p.refindScore,
    usagePlaces: (unlifted[i] ?? 0) - (lifted[i] ?? 0),
    multiplier: p.multiplier,
    candidate: p.c.candidate,
  }));
  ranked.sort((a, b) => b.score - a.score || a.id - b.id);
  return ranked.slice(0, options.limit);
}

/** The usage band of a route: USAGE_BAND × its limbic share against the balanced route's. */
export function routedBand(strategy: RoutingStrategy, band = USAGE_BAND): number {
  return (band * ROUTING_WEIGHTS[strategy].limbic) / ROUTING_WEIGHTS.hybrid_balanced.limbic;
}

const WIDEST_ROUTE = Math.max(...Object.values(ROUTING_WEIGHTS).map((w) => w.limbic / ROUTING_WEIGHTS.hybrid_balanced.limbic));

/** The largest base-level lift any route allows. */
export const USAGE_BOUND = WIDEST_ROUTE * USAGE_BAND;

/**
 * The largest lift of both kinds together any route allows: two candidates further apart than this
 * keep their order whatever their use and whatever queries led to them.
 */
export const LIFT_BOUND = WIDEST_ROUTE * LIFT_BAND;

/**
 * The base-level lift (already within the route's USAGE_BAND) plus the re-finding lift (score × the
 * route's REFIND_BAND, or `refindBand`), their sum clamped to the route's LIFT_BAND: the re-finding
 * part gives way when the sum would pass it. Shared with the tuner's replay.
 * @example combinedLift(0.005, 1, 'hybrid_balanced') // { lift: 0.02, refind: 0.015 }: the sum reaches LIFT_BAND
 */
export function combinedLift(
  baseLevel: number,
  refindScore: number,
  strategy: RoutingStrategy,
  refindBand = REFIND_BAND,
): { lift: number; refind: number } {
  const score = Math.min(1, Math.max(0, Number.isFinite(refindScore) ? refindScore : 0));
  const wanted = score * routedBand(strategy, Math.max(0, Number.isFinite(refindBand) ? refindBand : 0));
  const lift = Math.min(routedBand(strategy, LIFT_BAND), baseLevel + wanted);
  return { lift, refind: Math.max(0, lift - baseLevel) };
}

/**
 * Final scores from base, usage lift and multiplier: (base + lift) × multiplier. Shared with the
 * tuner (src/core/tune), which replays logged searches with other parameters through this step.
 */
export function limbicScores(items: readonly { readonly base: number; readonly lift: number; readonly multiplier: number }[]): number[] {
  return items.map((p) => (p.base + p.lift) * p.multiplier);
}

/** Each item's 0-based place when sorted by score, best first, ties by id. */
function placesBy(items: readonly { readonly id: EntityId; readonly score: number; readonly i: number }[]): number[] {
  const places: number[] = Array(items.length);
  [...items].sort((a, b) => b.score - a.score || a.id - b.id).forEach((item, place) => (places[item.i] = place));
  return places;
}

/**
 * Each candidate's RRF score as a share of the best score possible with the legs that answered
 * (first place in every leg): stable however many candidates there are, unlike min-max, which
 * would spread two near-identical candidates to 0 and 1.
 */
export function rrfShareOfMaximum(candidates: readonly FusedCandidate[], k: number): number[] {
  const legs = (candidates.some((c) => c.semantic !== undefined) ? 1 : 0) + (candidates.some((c) => c.keyword !== undefined) ? 1 : 0);
  const max = legs / (k + 1);
  return candidates.map((c) => (max > 0 ? Math.min(1, c.rrfScore / max) : 0));
}

/** Pure semantic mode: base relevance is always the cosine similarity. */
export function rankCandidates(hits: readonly VectorHit[], signals: CandidateSignals<RankFacts>, options: RankOptions): RankedCandidate[] {
  return rankByBase(
    reciprocalRankFusion(hits, [], options.rrfK).map((candidate) => ({
      candidate,
      base: cosineSimilarity(candidate.semantic?.distance ?? 1, options.similarityFloor),
    })),
    signals,
    options,
  );
}

/**
 * Hybrid mode: KNN hits keep their cosine base; FTS-only hits get 0.2 + 0.6 × min-max normalised
 * RRF (over the whole fused set), so they are neither buried nor dominant.
 */
export function rankHybridCandidates(
  candidates: readonly FusedCandidate[],
  signals: CandidateSignals<RankFacts>,
  options: RankOptions,
): RankedCandidate[] {
  const mode = options.hybridBase ?? 'spec';
  const norm = mode === 'fused' ? rrfShareOfMaximum(candidates, options.rrfK ?? RRF_K) : minMaxNormalize(candidates.map((c) => c.rrfScore));
  return rankByBase(
    candidates.map((candidate, i) => ({
      candidate,
      base:
        candidate.semantic === undefined || mode === 'fused'
          ? FTS_BASE_FLOOR + FTS_BASE_SPAN * (norm[i] ?? 0)
          : cosineSimilarity(candidate.semantic.distance, options.similarityFloor),
    })),
    signals,
    options,
  );
}

/** The fusion order as it is, for a search that switches the limbic re-rank off: neutral factors. */
export function rankWithoutLimbic(candidates: readonly BaseCandidate[]): RankedCandidate[] {
  return candidates
    .map((c) => ({
      id: c.candidate.id,
      score: c.base,
      base: c.base,
      limbic: 0,
      importance: 0,
      temporalFactor: 1,
      coocBoost: 0,
      usageLift: 0,
      baseLevelLift: 0,
      refindLift: 0,
      refindScore: 0,
      usagePlaces: 0,
      multiplier: 1,
      candidate: c.candidate,
    }))
    .sort((a, b) => b.score - a.score || a.id - b.id);
}
