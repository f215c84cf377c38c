/** Shadow-log events the tuner's tests share (test/core/tune, test/service/auto-tune). */
import { DEFAULT_PARAMETERS, type ShadowCandidate, type ShadowEvent } from '../../src/core/tune/shadow.js';
import { asEntityId } from '../../src/core/types.js';

/** The time of event 0; event i is logged i ms later. */
export const SHADOW_T0 = Date.UTC(2026, 10, 23);

/**
 * A search whose opened result (2) has a base just above a much-used entity (1), within the usage
 * band (rankByBase), so use decides: the defaults rank 1 first, a smaller BETA_SAL ranks 2 first. `shown` is how many the answer listed.
 */
export function frequentVsRelevant(i: number, shown = 5): ShadowEvent {
  const c = (n: number, base: number, importance: number, relevance: number): ShadowCandidate => ({
    id: asEntityId(n),
    base,
    semanticRank: undefined,
    keywordRank: undefined,
    graphPart: 0,
    importance,
    temporal: 1,
    cooc: 0,
    multiplier: 1,
    relevance,
    boosted: false,
  });
  return {
    at: SHADOW_T0 + i,
    tool: 'search_semantic',
    queryHash: `q${i}`,
    fusion: 'weighted',
    legs: 2,
    strategy: 'hybrid_balanced',
    offset: 0,
    shown,
    parameters: DEFAULT_PARAMETERS,
    rrfKPinned: false,
    reflectionBoost: 1,
    reflections: 'included',
    candidates: [c(1, 0.69, 1, 0), c(2, 0.7, 0, 1), c(3, 0.2, 0.5, 0)],
  };
}
