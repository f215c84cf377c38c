/** Reciprocal Rank Fusion: Σ over the legs of 1 / (k + rank) (docs/ranking.md, "Fusion"). */
import type { KeywordHit, VectorHit } from '../signals.js';
import type { EntityId } from '../types.js';
import { RRF_K } from './constants.js';

/** Where the semantic leg placed a candidate. */
export interface SemanticFinding {
  /** 1-based position in the leg. */
  readonly rank: number;
  /** Cosine distance, 1 - cos. */
  readonly distance: number;
}

/** Where the keyword leg placed a candidate. */
export interface KeywordFinding {
  /** 1-based position in the leg. */
  readonly rank: number;
  /** BM25 as the index reports it: lower is better. */
  readonly bm25: number;
}

/**
 * What each leg found of one candidate, and their reciprocal-rank fusion: the one record every later
 * stage (ranking, explanation, output) reads whole.
 */
export interface FusedCandidate {
  readonly id: EntityId;
  readonly rrfScore: number;
  readonly semantic: SemanticFinding | undefined;
  readonly keyword: KeywordFinding | undefined;
}

/**
 * rrf(d) = Σ 1 / (k + rank_i(d)) over the rankings that contain d; sorted by score, ties by id.
 * A leg counts an entity once, at its first position.
 * @example reciprocalRankFusion([{id: a, distance: .1}], [{id: a, bm25: -3}]) // a: 1/61 + 1/61
 */
export function reciprocalRankFusion(semantic: readonly VectorHit[], keyword: readonly KeywordHit[], k: number = RRF_K): FusedCandidate[] {
  const fused = new Map<EntityId, { rrf: number; semantic?: SemanticFinding; keyword?: KeywordFinding }>();
  semantic.forEach((hit, i) => {
    const entry = fused.get(hit.id) ?? { rrf: 0 };
    if (entry.semantic !== undefined) return;
    entry.rrf += 1 / (k + i + 1);
    entry.semantic = { rank: i + 1, distance: hit.distance };
    fused.set(hit.id, entry);
  });
  keyword.forEach((hit, i) => {
    const entry = fused.get(hit.id) ?? { rrf: 0 };
    if (entry.keyword !== undefined) return;
    entry.rrf += 1 / (k + i + 1);
    entry.keyword = { rank: i + 1, bm25: hit.bm25 };
    fused.set(hit.id, entry);
  });
  return [...fused.entries()]
    .map(([id, e]) => ({ id, rrfScore: e.rrf, semantic: e.semantic, keyword: e.keyword }))
    .sort((a, b) => b.rrfScore - a.rrfScore || a.id - b.id);
}
