/**
 * search_semantic (docs/ranking.md) as a preset of the pipeline: legs at
 * limit × EXPANSION_FACTOR but never fewer than MIN_CANDIDATE_DEPTH, plain-text keyword leg,
 * fusion by score strength (z-scores of cosine and BM25, the keyword leg weighted by the query's
 * coverage: core/rank/fuse-zscore.ts), the context stage (stored dates, related candidates,
 * candidates written next to a strong one: context.ts), the limbic re-rank with the spec's routing (which reads the limit), shaped to the
 * spec's output fields. Hybrid when the keyword leg finds anything, pure semantic otherwise;
 * without a model the keyword hits still come back, so a query whose words match is never
 * answered with nothing.
 */
import { EXPANSION_FACTOR } from '../../core/rank/constants.js';
import { DEFAULT_CONTEXT_WEIGHTS } from '../../core/rank/context-boost.js';
import { DEFAULT_SIGNAL_WEIGHTS, type SignalWeights } from '../../core/rank/fuse-weighted.js';
import type { RoutingStrategy } from '../../core/rank/routing.js';
import type { ShadowEvent } from '../../core/tune/shadow.js';
import type { EntityId } from '../../core/types.js';
import { modelNeededError } from '../../embed/model-state.js';
import { runSearch, type SearchDeps, type SearchOutcome } from './pipeline.js';
import type { SearchRequest } from './request.js';
import { shadowEvent } from './shadow-log.js';
import { moreObservationsHint, shownOf } from './shown.js';

/**
 * Weighted relevance with BM25 and cosine only: the preset's fusion until z-score fusion measured
 * better on held-out questions (bench/results/quality-2026-11-23-fusion-study.md, at this
 * preset's depth: LoCoMo recall@5 0.558 both, XQuAD hit@1 0.899 vs 0.802, small memories hit@1
 * 0.942 vs 0.883). Kept for the quality bench's comparison (`fusion: 'weighted'` override).
 */
export const SEMANTIC_WEIGHTS: SignalWeights = Object.freeze({ ...DEFAULT_SIGNAL_WEIGHTS, recency: 0, priority: 0, graph: 0 });

/**
 * The least candidates each leg keeps before the final cut, whatever the limit. The spec fetches
 * limit × EXPANSION_FACTOR and calls the factor tuneable ("higher values improve recall at the
 * cost of computation"): this keeps that as the
 * rule for large limits and gives small ones a pool z-scores are stable on. Chosen on half A of
 * the fusion study (150 vs limit × 3: LoCoMo recall@5 0.551 vs 0.541), held out on half B (0.581
 * vs 0.558, XQuAD hit@1 0.901 vs 0.899); see bench/results/quality-2026-11-23-context.md.
 */
export const MIN_CANDIDATE_DEPTH = 150;

export interface SemanticResult {
  readonly name: string;
  readonly entityType: string;
  /** What the result shows of its observations: all, or the bound's, matching the query first (shown.ts). */
  readonly observations: readonly string[];
  /** Observations the bound left out; absent when none were. */
  readonly observations_omitted?: number;
  readonly limbic_score: number;
  readonly scoring: {
    readonly importance: number;
    readonly temporal_factor: number;
    readonly cooc_boost: number;
    /** What usage added to the base relevance (base level + re-finding), and the places that moved it (> 0 up). */
    readonly usage_lift: number;
    /** The part from the entity's uses (importance, forgetting, co-use). */
    readonly usage_lift_base_level: number;
    /** The part from past queries like this one after which it was used (re-finding). */
    readonly usage_lift_refinding: number;
    readonly usage_places: number;
    /**
     * Added to its fused strength (z-score units) because the query names its speaker: a turn of a
     * conversation whose entity type is the person asked about (context-boost.ts); absent when 0.
     */
    readonly speaker_lift?: number;
  };
  readonly distance?: number;
  /**
   * The reciprocal rank fusion of the two legs' ranks, kept for clients that read it: the order
   * follows limbic_score (z-score fusion, then the re-rank), not this (docs/answers.md).
   */
  readonly rrf_score?: number;
  /** The same for every result: the answer's routing_strategy. */
  readonly routing_strategy: RoutingStrategy;
}

export type SemanticMode = 'hybrid' | 'semantic' | 'keyword';

export interface SemanticResponse {
  readonly results: SemanticResult[];
  /** Which legs answered; absent results mean the candidates were empty. */
  readonly mode: SemanticMode;
  /** How the query was routed (docs/ranking.md): one per answer, as every result was ranked by it. */
  readonly routing_strategy: RoutingStrategy;
  /**
   * What the meaning leg searched when the query names a speaker of a conversation: the query
   * without the name, whose turns the speaker lift reads (docs/ranking.md); absent otherwise.
   */
  readonly searched_without_names?: string;
  readonly warning?: string;
  /** When a result left observations out: how to read them (moreObservationsHint). */
  readonly more_observations?: string;
  /** Ids of the returned entities, in order, for signal recording. */
  readonly ids: readonly EntityId[];
  /** What the shadow log records of this search, after the answer; undefined when nothing. */
  readonly shadow: ShadowEvent | undefined;
  /** The query's vector and model, for re-finding pairs; never part of the answer. */
  readonly refindQuery?: SearchOutcome['query'];
}

const round = (x: number): number => Math.round(x * 1e6) / 1e6;

/** `{ speaker_lift }` when the context stage lifted the result for the query naming its speaker, else nothing. */
export function speakerLift(outcome: Pick<SearchOutcome, 'contextBoosts'>, id: EntityId): { speaker_lift?: number } {
  const lift = outcome.contextBoosts.get(id)?.speaker ?? 0;
  return lift > 0 ? { speaker_lift: round(lift) } : {};
}

/** The pipeline request search_semantic runs; `overrides` lets the quality bench compare variants. */
export function semanticRequest(query: string, limit: number, overrides: Partial<SearchRequest> = {}): SearchRequest {
  return {
    query,
    limit,
    offset: 0,
    modes: undefined,
    depth: Math.max(limit * EXPANSION_FACTOR, MIN_CANDIDATE_DEPTH),
    keywordSyntax: 'plain',
    fusion: 'zscore',
    rrfK: undefined,
    weights: SEMANTIC_WEIGHTS,
    limbic: true,
    routingLimit: limit,
    rerank: false,
    filters: {},
    context: DEFAULT_CONTEXT_WEIGHTS,
    ...overrides,
  };
}

export async function searchSemantic(
  deps: SearchDeps,
  query: string,
  limit: number,
  now: number,
  overrides: Partial<SearchRequest> = {},
): Promise<SemanticResponse> {
  const request = semanticRequest(query, limit, overrides);
  const outcome = await runSearch(deps, request, now);
  const semantic = outcome.model !== undefined;
  const hybrid = outcome.keywordHits.length > 0;
  if (!semantic && !hybrid) {
    throw modelNeededError(
      deps.indexer.modelState(),
      'Semantic search needs the embedding model.',
      "No entity contains the query's words either, so there is nothing to answer by keywords; search_nodes works meanwhile.",
    );
  }
  const results = outcome.page.map(({ ranked: r, entity }): SemanticResult => ({
    name: entity.name,
    entityType: entity.entityType,
    ...shownOf(outcome, entity),
    limbic_score: round(r.score),
    scoring: {
      importance: round(r.importance),
      temporal_factor: round(r.temporalFactor),
      cooc_boost: round(r.coocBoost),
      usage_lift: round(r.usageLift),
      usage_lift_base_level: round(r.baseLevelLift),
      usage_lift_refinding: round(r.refindLift),
      usage_places: r.usagePlaces,
      ...speakerLift(outcome, r.id),
    },
    ...(r.candidate.semantic === undefined ? {} : { distance: round(r.candidate.semantic.distance) }),
    ...(hybrid ? { rrf_score: round(r.candidate.rrfScore) } : {}),
    routing_strategy: outcome.strategy,
  }));
  // Without a model the pipeline's warnings say why (model-state.ts), as hybrid_search's do.
  const warning = outcome.warnings.length === 0 ? undefined : outcome.warnings.join(' ');
  return {
    results,
    ids: outcome.page.map((p) => p.ranked.id),
    refindQuery: outcome.query,
    shadow: shadowEvent('search_semantic', request, outcome, now),
    mode: hybrid ? (semantic ? 'hybrid' : 'keyword') : 'semantic',
    routing_strategy: outcome.strategy,
    ...(outcome.searched === undefined ? {} : { searched_without_names: outcome.searched }),
    ...(warning === undefined ? {} : { warning }),
    ...(request.observations !== undefined && results.some((r) => r.observations_omitted !== undefined)
      ? { more_observations: moreObservationsHint(request.observations) }
      : {}),
  };
}
