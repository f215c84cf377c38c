/**
 * The limbic re-ranker: spec/limbic-system.md `rank_candidates` and spec/hybrid-search.md
 * `rank_hybrid_candidates`. Where the spec's reference surprises users, this does what it intends:
 * - routing blends over the whole candidate set before the cut to `limit`;
 * - status and metadata multipliers apply before the final sort, so a result's position always
 *   follows its final score.
 */
import type { EntityId, EntityStatus } from '../types.js';
import {
  FTS_BASE_FLOOR,
  FTS_BASE_SPAN,
  METADATA_PENALTY,
  METADATA_THRESHOLD,
  RRF_K,
  STATUS_DEBOOST,
} from './constants.js';
import type { FusedCandidate } from './fuse-rrf.js';
import { DEFAULT_SIGNAL_WEIGHTS, normalizeBm25, redistributeWeights } from './fuse-weighted.js';
import { minMaxNormalize } from './normalize.js';

export { minMaxNormalize };
import {
  computeCoocBoost,
  computeImportance,
  computeLimbicScore,
  computeTemporalFactor,
  cosineSimilarity,
  type CoOccurrencePair,
} from './limbic.js';
import { ROUTING_WEIGHTS, type RoutingStrategy } from './routing.js';

/** What the re-ranker knows of one candidate entity. */
export interface CandidateFacts {
  readonly status: EntityStatus;
  readonly createdAt: number;
  readonly metadataRatio: number;
}

export interface AccessFacts {
  readonly accessCount: number;
  readonly lastAccess: number;
  readonly accessDays: number;
}

export interface RankingSignals {
  readonly facts: ReadonlyMap<EntityId, CandidateFacts>;
  readonly access: ReadonlyMap<EntityId, AccessFacts>;
  readonly degree: ReadonlyMap<EntityId, number>;
  readonly coOccurrences: readonly CoOccurrencePair[];
}

/**
 * How rankHybridCandidates sets base relevance.
 * - `spec`: spec/hybrid-search.md's table: max(0, 1 - distance) for every KNN hit, normalised RRF
 *   for FTS-only hits. Being found by the keyword leg too adds nothing to a KNN hit.
 * - `fused`: 0.2 + 0.6 × (RRF as a share of its maximum) for every candidate, so agreement between
 *   the two legs counts, by rank only.
 * - `scores`: engrava's two retrieval signals, by score: (0.30 × min-max normalised BM25 +
 *   0.55 × cosine similarity) / 0.85, over the legs that answered. The pipeline uses this one.
 * bench/quality on LoCoMo (recall@5): `spec` 0.401 (ranks exactly like semantic-only search),
 * `fused` 0.509, `scores` 0.541; see the README.
 */
export type HybridBase = 'spec' | 'fused' | 'scores';

export interface RankOptions {
  readonly limit: number;
  readonly strategy: RoutingStrategy;
  readonly now: number;
  /** Only read by rankHybridCandidates. @default 'spec' */
  readonly hybridBase?: HybridBase;
  /** The k the candidates were fused with, for the `fused` base. @default RRF_K */
  readonly rrfK?: number;
  /** BM25 of the keyword hits as FTS5 reports it (lower is better), for the `scores` base. */
  readonly keywordBm25?: ReadonlyMap<EntityId, number>;
  /** The model's cosine of unrelated texts, counted as 0 similarity (cosineSimilarity). @default 0 */
  readonly similarityFloor?: number;
}

export interface RankedCandidate {
  readonly id: EntityId;
  /** The final score; results are sorted by it, descending. */
  readonly score: number;
  /** Base relevance: cosine similarity, or the normalised RRF for FTS-only hits. */
  readonly base: number;
  /** The raw composite limbic score before routing and multipliers. */
  readonly limbic: number;
  readonly importance: number;
  readonly temporalFactor: number;
  readonly coocBoost: number;
  /** Status × metadata multiplier that was applied (1 when none). */
  readonly multiplier: number;
  readonly distance: number | undefined;
  readonly rrfScore: number | undefined;
  readonly semanticRank: number | undefined;
  readonly ftsRank: number | undefined;
}

/** A candidate with its base relevance already decided, for rankByBase. */
export interface BaseCandidate {
  readonly id: EntityId;
  readonly base: number;
  readonly distance: number | undefined;
  readonly rrfScore: number | undefined;
  readonly semanticRank: number | undefined;
  readonly ftsRank: number | undefined;
}

/** Status deboost × metadata penalty for one entity. */
export function statusMultiplier(facts: CandidateFacts | undefined): number {
  if (facts === undefined) return 1;
  const status = STATUS_DEBOOST[facts.status];
  const metadata = facts.metadataRatio > METADATA_THRESHOLD ? METADATA_PENALTY : 1;
  return status * metadata;
}


/**
 * The limbic re-rank over candidates whose base relevance the caller decided (a cosine, a fused
 * RRF share, a weighted-fusion score): importance, forgetting, co-occurrence, routing blend,
 * status and metadata multipliers, sort, cut to limit.
 */
export function rankByBase(candidates: readonly BaseCandidate[], signals: RankingSignals, options: RankOptions): RankedCandidate[] {
  if (candidates.length === 0 || options.limit <= 0) return [];
  const ids = new Set(candidates.map((c) => c.id));
  let maxAccess = 0;
  let maxDays = 0;
  for (const c of candidates) {
    const a = signals.access.get(c.id);
    if (a === undefined) continue;
    maxAccess = Math.max(maxAccess, a.accessCount);
    maxDays = Math.max(maxDays, a.accessDays);
  }
  const partial = candidates.map((c) => {
    const access = signals.access.get(c.id);
    const facts = signals.facts.get(c.id);
    const importance = computeImportance({
      accessCount: access?.accessCount ?? 0,
      maxAccess,
      degree: signals.degree.get(c.id) ?? 0,
      accessDays: access?.accessDays ?? 0,
      maxAccessDays: maxDays,
    });
    const temporalFactor = computeTemporalFactor(access?.lastAccess, facts?.createdAt ?? options.now, options.now);
    const coocBoost = computeCoocBoost(c.id, signals.coOccurrences, ids, options.now);
    const limbic = computeLimbicScore(c.base, importance, temporalFactor, coocBoost);
    return { c, facts, importance, temporalFactor, coocBoost, limbic };
  });
  const weights = ROUTING_WEIGHTS[options.strategy];
  // Status and metadata multipliers apply to the limbic score before it is min-max normalised, and
  // to the blend: min-max turns a hair's difference between two near-identical candidates into 0
  // versus 1, which a multiplier applied only after the blend could never overturn.
  const multipliers = partial.map((p) => statusMultiplier(p.facts));
  const limbicNorm = minMaxNormalize(partial.map((p, i) => p.limbic * (multipliers[i] ?? 1)));
  const ranked = partial.map((p, i): RankedCandidate => {
    const multiplier = multipliers[i] ?? 1;
    const blended = weights.cosine * p.c.base + weights.limbic * (limbicNorm[i] ?? 0);
    return {
      id: p.c.id,
      score: blended * multiplier,
      base: p.c.base,
      limbic: p.limbic,
      importance: p.importance,
      temporalFactor: p.temporalFactor,
      coocBoost: p.coocBoost,
      multiplier,
      distance: p.c.distance,
      rrfScore: p.c.rrfScore,
      semanticRank: p.c.semanticRank,
      ftsRank: p.c.ftsRank,
    };
  });
  ranked.sort((a, b) => b.score - a.score || a.id - b.id);
  return ranked.slice(0, options.limit);
}

/**
 * Each candidate's RRF score as a share of the best score possible with the legs that answered
 * (first place in every leg): stable however many candidates there are, unlike min-max, which
 * would spread two near-identical candidates to 0 and 1.
 */
export function rrfShareOfMaximum(candidates: readonly FusedCandidate[], k: number): number[] {
  const legs = (candidates.some((c) => c.semanticRank !== undefined) ? 1 : 0) + (candidates.some((c) => c.ftsRank !== undefined) ? 1 : 0);
  const max = legs / (k + 1);
  return candidates.map((c) => (max > 0 ? Math.min(1, c.rrfScore / max) : 0));
}

/**
 * The `scores` base: engrava's keyword and vector weights over the legs that answered; a candidate
 * missing from a leg gets 0 for it. BM25 is min-max normalised over the keyword hits.
 */
export function scoreBase(candidates: readonly FusedCandidate[], bm25: ReadonlyMap<EntityId, number>, similarityFloor = 0): number[] {
  const hits = candidates.filter((c) => bm25.has(c.id));
  const values = normalizeBm25(hits.map((h) => bm25.get(h.id) ?? 0));
  const normalized = new Map(hits.map((c, i) => [c.id, values[i] ?? 0]));
  const weights = redistributeWeights(DEFAULT_SIGNAL_WEIGHTS, {
    fts: hits.length > 0,
    vector: candidates.some((c) => c.distance !== undefined),
    recency: false,
    priority: false,
    graph: false,
  });
  return candidates.map(
    (c) => weights.fts * (normalized.get(c.id) ?? 0) + weights.vector * (c.distance === undefined ? 0 : cosineSimilarity(c.distance, similarityFloor)),
  );
}

/** Pure semantic mode: base relevance is always max(0, 1 - distance). */
export function rankCandidates(
  candidates: readonly { readonly id: EntityId; readonly distance: number }[],
  signals: RankingSignals,
  options: RankOptions,
): RankedCandidate[] {
  return rankByBase(
    candidates.map((c, i) => ({
      id: c.id,
      base: cosineSimilarity(c.distance, options.similarityFloor),
      distance: c.distance,
      rrfScore: undefined,
      semanticRank: i + 1,
      ftsRank: undefined,
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
  signals: RankingSignals,
  options: RankOptions,
): RankedCandidate[] {
  const mode = options.hybridBase ?? 'spec';
  const norm = mode === 'fused' ? rrfShareOfMaximum(candidates, options.rrfK ?? RRF_K) : minMaxNormalize(candidates.map((c) => c.rrfScore));
  const scores = mode === 'scores' ? scoreBase(candidates, options.keywordBm25 ?? new Map(), options.similarityFloor) : undefined;
  return rankByBase(
    candidates.map((c, i) => ({
      id: c.id,
      base:
        scores !== undefined
          ? (scores[i] ?? 0)
          : c.distance === undefined || mode === 'fused'
            ? FTS_BASE_FLOOR + FTS_BASE_SPAN * (norm[i] ?? 0)
            : cosineSimilarity(c.distance, options.similarityFloor),
      distance: c.distance,
      rrfScore: c.rrfScore,
      semanticRank: c.semanticRank,
      ftsRank: c.ftsRank,
    })),
    signals,
    options,
  );
}
