/**
 * What shadow mode logs of a search (docs/ranking.md, "Tuning"): the candidates as the
 * live ranking saw them, with every factor the final score is made of, so the tuner can replay the
 * search under other parameters; and later re-accesses as implicit relevance. Pure types and the
 * replay; storing them is the TuningStore's work (src/store/tuning-store.ts).
 */
import { BETA_SAL, GAMMA, RRF_K } from '../rank/constants.js';
import { usageLift } from '../rank/limbic.js';
import { combinedLift, limbicScores, routedBand } from '../rank/rank-candidates.js';
import type { RoutingStrategy } from '../rank/routing.js';
import type { EntityId } from '../types.js';

/** The ranking parameters the tuner may change. */
export interface RankParameters {
  readonly gamma: number;
  readonly betaSal: number;
  readonly rrfK: number;
}

export const DEFAULT_PARAMETERS: RankParameters = Object.freeze({ gamma: GAMMA, betaSal: BETA_SAL, rrfK: RRF_K });

/** The parameters in force and where they come from, as get_statistics reports them. */
export interface ParametersInForce extends RankParameters {
  readonly source: 'default' | 'tuned';
  /** Epoch ms of `limbic tune --apply`; undefined for the defaults. */
  readonly tunedAt: number | undefined;
}

export interface ShadowCandidate {
  readonly id: EntityId;
  /** Base relevance as the live ranking used it (for RRF fusion: share of maximum + graph part). */
  readonly base: number;
  /** 1-based positions in the legs, for replaying RRF fusion with another k. */
  readonly semanticRank: number | undefined;
  readonly keywordRank: number | undefined;
  /** The graph signal's part of an RRF base (weight × boost), kept apart from the k-dependent share. */
  readonly graphPart: number;
  readonly importance: number;
  readonly temporal: number;
  readonly cooc: number;
  readonly multiplier: number;
  /** Implicit relevance: 1 once the entity was opened after this search showed it, else 0. */
  readonly relevance: number;
  /** A reflection whose final score the search multiplied by the event's reflectionBoost. */
  readonly boosted: boolean;
  /** Its re-finding score in [0, 1] (rankByBase's refinding); absent in searches logged before re-finding: 0. */
  readonly refind?: number;
}

export interface ShadowEvent {
  /** Assigned by the store. */
  readonly id?: number;
  readonly at: number;
  readonly tool: 'search_semantic' | 'hybrid_search';
  /** A hash of the query, not its text: the log needs to tell queries apart, not to read them. */
  readonly queryHash: string;
  readonly fusion: 'rrf' | 'weighted' | 'zscore';
  /** Retrieval legs that answered (the denominator of RRF's share of maximum). */
  readonly legs: number;
  readonly strategy: RoutingStrategy;
  /** The page that was shown: candidates [offset, offset + shown) in live order. */
  readonly offset: number;
  readonly shown: number;
  /** Parameters in force for this search. */
  readonly parameters: RankParameters;
  /** The caller chose rrf_k, so replays keep it whatever k is tried. */
  readonly rrfKPinned: boolean;
  /** hybrid_search's reflection_boost (1 for search_semantic): boosted candidates' final score times it. */
  readonly reflectionBoost: number;
  /** hybrid_search's include_reflections / reflections_only, as filters already applied to the candidates. */
  readonly reflections: 'included' | 'excluded' | 'only';
  /** The logged candidates, in live ranking order. */
  readonly candidates: readonly ShadowCandidate[];
}

/** A candidate's base relevance under another RRF k (unchanged for weighted fusion or a pinned k). */
export function replayBase(event: ShadowEvent, c: ShadowCandidate, k: number): number {
  if (event.fusion !== 'rrf' || event.rrfKPinned || k === event.parameters.rrfK) return c.base;
  const rrf = (c.semanticRank === undefined ? 0 : 1 / (k + c.semanticRank)) + (c.keywordRank === undefined ? 0 : 1 / (k + c.keywordRank));
  const max = event.legs / (k + 1);
  return (max > 0 ? Math.min(1, rrf / max) : 0) + c.graphPart;
}

/**
 * The event's candidates re-ranked under `p`, best first: the same formula and bounded lift as the
 * live ranking (rankByBase), ties by id as there.
 */
export function replay(event: ShadowEvent, p: RankParameters): ShadowCandidate[] {
  const items = event.candidates.map((c) => {
    const base = replayBase(event, c, p.rrfK);
    const baseLevel = usageLift(c.importance, c.temporal, c.cooc, { band: routedBand(event.strategy), gamma: p.gamma, betaSal: p.betaSal });
    // The re-finding part as the search added it (REFIND_BAND; the tuner does not change it).
    const { lift } = combinedLift(baseLevel, c.refind ?? 0, event.strategy);
    return { base, lift, multiplier: c.multiplier };
  });
  const scores = limbicScores(items);
  // reflection_boost after the re-rank, as the pipeline applies it (pipeline.ts).
  return event.candidates
    .map((c, i) => ({ c, s: (scores[i] ?? 0) * boostOf(event, c) }))
    .sort((a, b) => b.s - a.s || a.c.id - b.c.id)
    .map((x) => x.c);
}

const boostOf = (event: ShadowEvent, c: ShadowCandidate): number => (c.boosted ? event.reflectionBoost : 1);

/**
 * The baseline shadow mode compares against: base relevance alone, no limbic factors; the
 * caller's reflection_boost still applies, as it does to a search with limbic false.
 */
export function baselineOrder(event: ShadowEvent): ShadowCandidate[] {
  return event.candidates
    .map((c) => ({ c, s: c.base * boostOf(event, c) }))
    .sort((a, b) => b.s - a.s || a.c.id - b.c.id)
    .map((x) => x.c);
}
