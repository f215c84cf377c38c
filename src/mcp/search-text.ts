/**
 * What an agent reads of a search (issue 25): the answer without the fields that only repeat or
 * contradict it. routing_strategy is said once per answer, not per result; a score the order does
 * not follow (search_semantic's rrf_score under z-score fusion, hybrid_search's rrf under weighted
 * or z-score fusion) is left out, and so is a name_match that is false. structuredContent keeps every field.
 */
import type { HybridResponse } from '../service/search/hybrid-search.js';
import type { SemanticResponse } from '../service/search/search-semantic.js';

type Shown<T> = Omit<T, 'ids' | 'shadow'>;

/** search_semantic's text: each result without rrf_score and routing_strategy. */
export function semanticText(answer: Shown<SemanticResponse>): Record<string, unknown> {
  const { results, ...rest } = answer;
  return {
    ...rest,
    results: results.map(({ rrf_score: _rrf, routing_strategy: _routing, ...result }) => result),
  };
}

/** hybrid_search's text: scores.rrf only when RRF fused, name_match only when true, and no per-result routing_strategy. */
export function hybridText(answer: Shown<HybridResponse>): Record<string, unknown> {
  const { results, ...rest } = answer;
  const rrfOrders = answer.fusion_method === 'rrf';
  return {
    ...rest,
    results: results.map(({ scores, ...result }) => {
      const { rrf, limbic, name_match: named, ...others } = scores;
      const { routing_strategy: _routing, ...limbicShown } = limbic ?? {};
      return {
        ...result,
        scores: {
          ...(rrfOrders ? { rrf } : {}),
          ...(named ? { name_match: true } : {}),
          ...others,
          ...(limbic === null ? {} : { limbic: limbicShown }),
        },
      };
    }),
  };
}
