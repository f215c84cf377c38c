/** spec/hybrid-search.md "Reciprocal Rank Fusion". */
import type { EntityId } from '../types.js';
import { RRF_K } from './constants.js';

export interface SemanticHit {
  readonly id: EntityId;
  readonly distance: number;
}

export interface KeywordRank {
  readonly id: EntityId;
}

export interface FusedCandidate {
  readonly id: EntityId;
  readonly rrfScore: number;
  /** Cosine distance when the semantic leg found it. */
  readonly distance: number | undefined;
  /** 1-based positions in each leg, when present. */
  readonly semanticRank: number | undefined;
  readonly ftsRank: number | undefined;
}

/**
 * rrf(d) = Σ 1 / (k + rank_i(d)) over the rankings that contain d; sorted by score, ties by id.
 * @example reciprocalRankFusion([{id: a, distance: .1}], [{id: a}]) // a: 1/61 + 1/61
 */
export function reciprocalRankFusion(
  semantic: readonly SemanticHit[],
  keyword: readonly KeywordRank[],
  k: number = RRF_K,
): FusedCandidate[] {
  const fused = new Map<EntityId, { rrf: number; distance?: number; semanticRank?: number; ftsRank?: number }>();
  semantic.forEach((hit, i) => {
    const entry = fused.get(hit.id) ?? { rrf: 0 };
    if (entry.semanticRank !== undefined) return; // a leg counts an entity once
    entry.rrf += 1 / (k + i + 1);
    entry.distance = hit.distance;
    entry.semanticRank = i + 1;
    fused.set(hit.id, entry);
  });
  keyword.forEach((hit, i) => {
    const entry = fused.get(hit.id) ?? { rrf: 0 };
    if (entry.ftsRank !== undefined) return;
    entry.rrf += 1 / (k + i + 1);
    entry.ftsRank = i + 1;
    fused.set(hit.id, entry);
  });
  return [...fused.entries()]
    .map(([id, e]) => ({ id, rrfScore: e.rrf, distance: e.distance, semanticRank: e.semanticRank, ftsRank: e.ftsRank }))
    .sort((a, b) => b.rrfScore - a.rrfScore || a.id - b.id);
}
