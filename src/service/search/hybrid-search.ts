/**
 * hybrid_search: every option of two peer designs of hybrid search (docs/tools.md lists them)
 * over Limbic's graph. Legs run at a fixed depth and routing reads
 * the query's words only, so one query has one ordering and its pages never repeat or skip a row;
 * every result explains its score.
 */
import { DEFAULT_CONTEXT_WEIGHTS } from '../../core/rank/context-boost.js';
import { DEFAULT_SIGNAL_WEIGHTS, type Signal, type SignalWeights } from '../../core/rank/fuse-weighted.js';
import type { ObservationBound } from '../../core/rank/shown-observations.js';
import type { RoutingStrategy } from '../../core/rank/routing.js';
import type { ShadowEvent } from '../../core/tune/shadow.js';
import type { EntityId, EntityStatus } from '../../core/types.js';
import { runSearch, type SearchDeps, type SearchOutcome } from './pipeline.js';
import { countFilters, type FusionMethod, type SearchFilters, type SearchMode, type SearchRequest } from './request.js';
import { speakerLift } from './search-semantic.js';
import { shadowEvent } from './shadow-log.js';
import { moreObservationsHint, shownOf } from './shown.js';

export type { FusionMethod, SearchMode } from './request.js';
export type HybridFilters = SearchFilters;

/** Candidates each leg keeps for hybrid_search; fixed so every page of a query ranks the same set. */
export const HYBRID_DEPTH = 150;

/**
 * The fusion hybrid_search runs when none is asked for: search_semantic's (z-scores, the keyword
 * leg weighted by coverage, then the context stage), so a caller who leaves the options alone
 * ranks as well as search_semantic. RRF was the default until issue 37: on held-out questions it
 * gave hit@1 0.813 vs 0.900 (XQuAD) and LoCoMo recall@5 0.559 vs 0.658
 * (bench/results/quality-2026-11-28-hybrid-defaults.md). `rrf` and `weighted` stay selectable.
 */
export const HYBRID_DEFAULT_FUSION: FusionMethod = 'zscore';

export interface HybridSearchOptions {
  readonly query: string;
  readonly limit: number;
  readonly offset: number;
  /** Undefined means "both, whichever are available"; a list is a request, and a missing mode is an error. */
  readonly searchModes: readonly SearchMode[] | undefined;
  readonly fusionMethod: FusionMethod;
  /** Undefined takes the value in force (tuned, or the spec's RRF_K). */
  readonly rrfK: number | undefined;
  /** Weighted fusion weights (and the graph weight for either method); missing keys take the defaults. */
  readonly weights: Partial<SignalWeights>;
  readonly limbic: boolean;
  readonly rerank: boolean;
  readonly filters: HybridFilters;
  readonly explainQuery: boolean;
  /**
   * How many observations each result shows, those matching the query first; undefined shows
   * every one in stored order. The tools pass DEFAULT_OBSERVATION_BOUND unless asked for another.
   */
  readonly observations?: ObservationBound | undefined;
  /**
   * Reflections (entities of type REFLECTION_TYPE, docs/tools.md): left out when
   * `include` is false, their final score times `boost`, or nothing else when `only`.
   * @default { include: true, boost: 1, only: false }
   */
  readonly reflections?: { readonly include: boolean; readonly boost: number; readonly only: boolean } | undefined;
  /** The project the search runs in: other projects' entities left out, its own preferred (request.ts). Undefined: nothing hidden. */
  readonly project?: string | undefined;
}

/** The entity type add_reflection and the consolidation run write. */
export const REFLECTION_TYPE = 'Reflection';

function reflectionFilters(o: HybridSearchOptions): HybridFilters {
  const r = o.reflections;
  if (r?.only === true) return { ...o.filters, entityTypes: [REFLECTION_TYPE] };
  if (r?.include === false) return { ...o.filters, excludeEntityTypes: [...(o.filters.excludeEntityTypes ?? []), REFLECTION_TYPE] };
  return o.filters;
}

export interface HybridScores {
  readonly rrf: number | null;
  readonly fts_rank: number | null;
  readonly semantic_rank: number | null;
  /** BM25 as a positive number, higher is better (FTS5 reports it negated). */
  readonly fts_score: number | null;
  readonly semantic_distance: number | null;
  /** weight × value per signal, with fusion_method "weighted". */
  readonly weighted: Readonly<Record<Signal, number>> | null;
  readonly graph_boost: number | null;
  readonly limbic: {
    readonly importance: number;
    readonly temporal_factor: number;
    readonly cooc_boost: number;
    /** What usage added to the base relevance: usage_lift_base_level + usage_lift_refinding (at most the route's band). */
    readonly usage_lift: number;
    /** The part from the entity's uses (importance, forgetting, co-use). */
    readonly usage_lift_base_level: number;
    /** The part from past queries like this one after which it was used (re-finding). */
    readonly usage_lift_refinding: number;
    /** Places usage moved this result: > 0 up, < 0 down (others lifted past it), 0 none. */
    readonly usage_places: number;
    readonly multiplier: number;
    readonly routing_strategy: RoutingStrategy;
  } | null;
  readonly rerank_score: number | null;
  /** The entity is named what the query says: it comes before every result that is not, whatever the scores. */
  readonly name_match: boolean;
  /** Added to its fused strength (z-score units) because the query names its speaker (context-boost.ts); absent when 0. */
  readonly speaker_lift?: number;
  /** The score results are ordered by (after name_match). */
  readonly final: number;
}

export interface HybridResult {
  readonly name: string;
  readonly entityType: string;
  /** What the result shows of its observations: all, or the bound's, matching the query first (shown.ts). */
  readonly observations: readonly string[];
  /** Observations the bound left out; absent when none were. */
  readonly observations_omitted?: number;
  readonly status: EntityStatus;
  readonly scores: HybridScores;
}

export interface HybridResponse {
  readonly query: string;
  readonly results: HybridResult[];
  /** Ranked candidates after filters: the most any page can reach. */
  readonly count: number;
  readonly offset: number;
  readonly limit: number;
  readonly fusion_method: FusionMethod;
  readonly search_modes_used: SearchMode[];
  /** How the query was routed for the limbic re-rank (absent with limbic: false); one per answer. */
  readonly routing_strategy?: RoutingStrategy;
  readonly fts_count: number;
  readonly semantic_count: number;
  /** What the meaning leg searched when the query names a speaker of a conversation (search-semantic.ts); absent otherwise. */
  readonly searched_without_names?: string;
  readonly weights?: SignalWeights;
  readonly warnings?: string[];
  readonly hint?: string;
  /** When a result left observations out: how to read them (moreObservationsHint). */
  readonly more_observations?: string;
  readonly stats?: unknown;
  /** Ids of the returned results, for signal recording. */
  readonly ids: readonly EntityId[];
  /** What the shadow log records of this search, after the answer; undefined when nothing. */
  readonly shadow: ShadowEvent | undefined;
  /** The query's vector and model, for re-finding pairs; never part of the answer. */
  readonly refindQuery?: SearchOutcome['query'];
}

const round = (x: number): number => Math.round(x * 1e6) / 1e6;

export async function hybridSearch(deps: SearchDeps, o: HybridSearchOptions, now: number): Promise<HybridResponse> {
  const started = performance.now();
  const weights: SignalWeights = { ...DEFAULT_SIGNAL_WEIGHTS, ...o.weights };
  const request: SearchRequest = {
    query: o.query,
    limit: o.limit,
    offset: o.offset,
    modes: o.searchModes,
    depth: HYBRID_DEPTH,
    keywordSyntax: 'expert',
    fusion: o.fusionMethod,
    rrfK: o.rrfK,
    weights,
    limbic: o.limbic,
    routingLimit: undefined,
    rerank: o.rerank,
    filters: reflectionFilters(o),
    typeBoost:
      o.reflections === undefined || o.reflections.boost === 1 ? undefined : { entityType: REFLECTION_TYPE, factor: o.reflections.boost },
    observations: o.observations,
    project: o.project,
    // z-score fusion is search_semantic's base, context stage included (stored dates, relations,
    // turns written next to a strong match); it reads only the candidate set, so pages stay stable.
    context: o.fusionMethod === 'zscore' ? DEFAULT_CONTEXT_WEIGHTS : undefined,
  };
  const outcome = await runSearch(deps, request, now);
  const { fused } = outcome;
  const results: HybridResult[] = outcome.page.map(({ ranked: r, entity: e }) => {
    const { semantic, keyword, rrfScore } = r.candidate;
    return {
      name: e.name,
      entityType: e.entityType,
      ...shownOf(outcome, e),
      status: e.status,
      scores: {
        rrf: round(rrfScore),
        fts_rank: keyword?.rank ?? null,
        semantic_rank: semantic?.rank ?? null,
        fts_score: keyword === undefined ? null : round(-keyword.bm25),
        semantic_distance: semantic === undefined ? null : round(semantic.distance),
        weighted: fused.parts.get(r.id) ?? null,
        graph_boost: fused.graph === undefined ? null : round(fused.graph.get(r.id) ?? 0),
        limbic: o.limbic
          ? {
              importance: round(r.importance),
              temporal_factor: round(r.temporalFactor),
              cooc_boost: round(r.coocBoost),
              usage_lift: round(r.usageLift),
              usage_lift_base_level: round(r.baseLevelLift),
              usage_lift_refinding: round(r.refindLift),
              usage_places: r.usagePlaces,
              multiplier: round(r.multiplier),
              routing_strategy: outcome.strategy,
            }
          : null,
        rerank_score: outcome.rerankScores.has(r.id) ? round(outcome.rerankScores.get(r.id) ?? 0) : null,
        name_match: outcome.named.has(r.id),
        ...speakerLift(outcome, r.id),
        final: round(r.score),
      },
    };
  });

  const hint =
    o.offset + o.limit > outcome.count && outcome.count >= HYBRID_DEPTH
      ? `This page reaches past the ${outcome.count} ranked candidates (each leg fetches ${HYBRID_DEPTH}); refine the query or add filters to see other entities.`
      : undefined;
  return {
    query: o.query,
    results,
    count: outcome.count,
    offset: o.offset,
    limit: o.limit,
    fusion_method: o.fusionMethod,
    search_modes_used: outcome.modesUsed,
    ...(o.limbic ? { routing_strategy: outcome.strategy } : {}),
    fts_count: outcome.keywordHits.length,
    semantic_count: outcome.semanticHits.length,
    ...(outcome.searched === undefined ? {} : { searched_without_names: outcome.searched }),
    ...(fused.weights === undefined ? {} : { weights: fused.weights }),
    ...(outcome.warnings.length === 0 ? {} : { warnings: outcome.warnings }),
    ...(hint === undefined ? {} : { hint }),
    ...(o.observations !== undefined && results.some((r) => r.observations_omitted !== undefined)
      ? { more_observations: moreObservationsHint(o.observations) }
      : {}),
    ...(o.explainQuery ? { stats: explain(outcome, o, round(performance.now() - started)) } : {}),
    ids: outcome.page.map((p) => p.ranked.id),
    refindQuery: outcome.query,
    shadow: shadowEvent(
      'hybrid_search',
      request,
      outcome,
      now,
      o.reflections?.only === true ? 'only' : o.reflections?.include === false ? 'excluded' : 'included',
    ),
  };
}

/** explain_query's stats, read from the pipeline's stages. */
function explain(outcome: SearchOutcome, o: HybridSearchOptions, totalMs: number): unknown {
  const t = outcome.timings;
  const candidates = outcome.fused.candidates.map((c) => c.candidate);
  const semanticMs = (t.catchUp ?? 0) + (t.encode ?? 0) + (t.vector ?? 0);
  return {
    execution_time_ms: totalMs,
    stages_ms: t,
    fts_stats:
      outcome.keyword === undefined
        ? null
        : {
            execution_time_ms: t.keyword ?? 0,
            rows_returned: outcome.keywordHits.length,
            filters_applied: countFilters(o.filters),
            query_mode: outcome.keyword.mode,
            match: outcome.keyword.match ?? null,
          },
    semantic_stats:
      outcome.model === undefined
        ? null
        : {
            execution_time_ms: round(semanticMs),
            embedding_generation_ms: round((t.catchUp ?? 0) + (t.encode ?? 0)),
            rows_returned: outcome.semanticHits.length,
            filters_applied: countFilters(o.filters),
            model: outcome.model,
          },
    fusion_stats: {
      method: o.fusionMethod,
      rrf_k: outcome.parameters.rrfK,
      total_unique_documents: candidates.length,
      documents_in_both: candidates.filter((c) => c.keyword !== undefined && c.semantic !== undefined).length,
      documents_fts_only: candidates.filter((c) => c.keyword !== undefined && c.semantic === undefined).length,
      documents_semantic_only: candidates.filter((c) => c.semantic !== undefined && c.keyword === undefined).length,
    },
  };
}
