/**
 * Shadow mode (docs/ranking.md, "Tuning"): what one search showed, with the parameters
 * and every factor of each candidate's score, for the tuner to replay. The baseline ranking the
 * spec compares against is replayed from the logged base relevance, so no caller is ever served a
 * worse ranking to measure it (the seed system served 10% of searches without the re-rank).
 */
import { createHash } from 'node:crypto';
import type { ShadowEvent } from '../../core/tune/shadow.js';
import type { SearchOutcome } from './pipeline.js';
import type { SearchRequest } from './request.js';

/** Candidates logged per search, best first: the limbic order only moves candidates this far. */
export const SHADOW_CANDIDATES = 50;
/** An open_nodes this soon after a search that listed the entity counts as relevance for that search. */
export const FEEDBACK_WINDOW_MS = 60 * 60 * 1000;

/**
 * The event to log, or undefined when there is nothing the parameters could have changed: the
 * limbic stage off, a cross-encoder deciding the order, or fewer than two candidates.
 */
export function shadowEvent(
  tool: ShadowEvent['tool'],
  request: SearchRequest,
  outcome: SearchOutcome,
  now: number,
  reflections: ShadowEvent['reflections'] = 'included',
): ShadowEvent | undefined {
  if (!request.limbic || request.rerank || outcome.ranked.length < 2) return undefined;
  const { fused } = outcome;
  const all = fused.candidates.map((c) => c.candidate);
  const legs = (all.some((c) => c.semantic !== undefined) ? 1 : 0) + (all.some((c) => c.keyword !== undefined) ? 1 : 0);
  const graphWeight = request.fusion === 'weighted' ? 0 : request.weights.graph;
  return {
    at: now,
    tool,
    queryHash: createHash('sha256').update(request.query).digest('hex').slice(0, 16),
    fusion: request.fusion,
    legs,
    strategy: outcome.strategy,
    offset: request.offset,
    shown: outcome.page.length,
    parameters: { gamma: outcome.parameters.gamma, betaSal: outcome.parameters.betaSal, rrfK: outcome.parameters.rrfK },
    rrfKPinned: request.rrfK !== undefined,
    // Only hybrid_search's reflection_boost sets a type boost.
    reflectionBoost: request.typeBoost?.factor ?? 1,
    reflections,
    candidates: outcome.ranked.slice(0, Math.max(SHADOW_CANDIDATES, request.offset + request.limit)).map((r) => ({
      id: r.id,
      base: r.base,
      semanticRank: r.candidate.semantic?.rank,
      keywordRank: r.candidate.keyword?.rank,
      graphPart: graphWeight * (fused.graph?.get(r.id) ?? 0),
      importance: r.importance,
      temporal: r.temporalFactor,
      cooc: r.coocBoost,
      multiplier: r.multiplier,
      relevance: 0,
      boosted: outcome.boosted.has(r.id),
      refind: r.refindScore,
    })),
  };
}
