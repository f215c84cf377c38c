/**
 * Fusion: the legs' hits become one candidate list with a base relevance each, by reciprocal rank
 * (as a share of the best possible) or by weighted signals (docs/ranking.md, "Fusion"), plus the
 * optional graph signal. Every value a result later explains is kept here.
 */
import { RRF_K, STATUS_DEBOOST, TEMPORAL_FLOOR } from '../../core/rank/constants.js';
import { fuseWeighted, normalizeBm25, redistributeWeights, type Signal, type SignalWeights } from '../../core/rank/fuse-weighted.js';
import { reciprocalRankFusion, type FusedCandidate } from '../../core/rank/fuse-rrf.js';
import { graphBoost } from '../../core/rank/graph-boost.js';
import { zScoreFusion } from '../../core/rank/fuse-zscore.js';
import { cosineSimilarity, decay } from '../../core/rank/limbic.js';
import { rrfShareOfMaximum, type BaseCandidate } from '../../core/rank/rank-candidates.js';
import type { CandidateSignals, KeywordHit, VectorHit } from '../../core/signals.js';
import type { EntityId } from '../../core/types.js';
import type { GraphStore } from '../../store/graph-store.js';
import type { SearchRequest } from './request.js';

export interface Fused {
  /** In fusion order (RRF, ties by id), each with its base relevance. */
  readonly candidates: readonly BaseCandidate[];
  /** The weights in force after redistribution, for weighted fusion. */
  readonly weights: SignalWeights | undefined;
  /** weight × value per signal, for weighted fusion. */
  readonly parts: ReadonlyMap<EntityId, Readonly<Record<Signal, number>>>;
  /** Graph signal per candidate; undefined when the graph weight is 0. */
  readonly graph: ReadonlyMap<EntityId, number> | undefined;
}

export async function fuse(
  graphStore: GraphStore,
  request: SearchRequest,
  legs: { readonly keyword: readonly KeywordHit[]; readonly semantic: readonly VectorHit[]; readonly coverage?: number },
  signals: CandidateSignals,
  similarityFloor: number,
  now: number,
): Promise<Fused> {
  // The pipeline fills in the k in force; a request without one (a test of this stage) takes the spec's.
  const k = request.rrfK ?? RRF_K;
  const fused = reciprocalRankFusion(legs.semantic, legs.keyword, k);
  const bm25 = normalizeBm25(legs.keyword.map((h) => h.bm25));
  const ftsNorm = new Map(legs.keyword.map((h, i) => [h.id, bm25[i] ?? 0]));
  const similarity = (c: FusedCandidate): number | undefined =>
    c.semantic === undefined ? undefined : cosineSimilarity(c.semantic.distance, similarityFloor);

  let graph: Map<EntityId, number> | undefined;
  if (request.weights.graph > 0) {
    graph = new Map();
    if (fused.length > 0) {
      const ids = fused.map((c) => c.id);
      const base = new Map(fused.map((c) => [c.id, { fts: ftsNorm.get(c.id), vector: similarity(c) }]));
      graph = graphBoost(ids, await graphStore.edgesTouching(ids), base);
    }
  }

  if (request.fusion === 'rrf') {
    const share = rrfShareOfMaximum(fused, k);
    const candidates = fused.map((candidate, i) => ({
      candidate,
      base: (share[i] ?? 0) + request.weights.graph * (graph?.get(candidate.id) ?? 0),
    }));
    return { candidates, weights: undefined, parts: new Map(), graph };
  }

  if (request.fusion === 'zscore') {
    const strength = zScoreFusion(fused, legs.coverage ?? (legs.keyword.length > 0 ? 1 : 0));
    const candidates = fused.map((candidate, i) => ({
      candidate,
      base: (strength[i] ?? 0) + request.weights.graph * (graph?.get(candidate.id) ?? 0),
    }));
    return { candidates, weights: undefined, parts: new Map(), graph };
  }

  const weights = redistributeWeights(request.weights, {
    fts: legs.keyword.length > 0,
    vector: legs.semantic.length > 0,
    recency: true,
    priority: true,
    graph: graph !== undefined && graph.size > 0,
  });
  const results = fuseWeighted(
    fused.map((c) => {
      const facts = signals.facts.get(c.id);
      const lastUse = Math.max(facts?.updatedAt ?? 0, signals.access.get(c.id)?.lastAccess ?? 0);
      return {
        id: c.id,
        fts: ftsNorm.get(c.id),
        vector: similarity(c),
        recency: decay(lastUse, now, TEMPORAL_FLOOR),
        priority: facts === undefined ? 0 : STATUS_DEBOOST[facts.status],
        graph: graph?.get(c.id),
      };
    }),
    weights,
  );
  const base = new Map(results.map((r) => [r.id, r.score]));
  // Fusion order stays the RRF order: the limbic stage sorts by final score, and without it the
  // unranked path sorts by base.
  const candidates = fused.map((candidate) => ({ candidate, base: base.get(candidate.id) ?? 0 }));
  return { candidates, weights, parts: new Map(results.map((r) => [r.id, r.components])), graph };
}
