/**
 * What a search asks of the pipeline. hybrid_search passes its caller's options; search_semantic
 * is a preset of the same request (search-semantic.ts).
 */
import type { ContextWeights } from '../../core/rank/context-boost.js';
import { DEFAULT_SIGNAL_WEIGHTS, type SignalWeights } from '../../core/rank/fuse-weighted.js';
import type { ObservationBound } from '../../core/rank/shown-observations.js';
import type { EntityStatus } from '../../core/types.js';

export type SearchMode = 'fts' | 'semantic';
export type FusionMethod = 'rrf' | 'weighted' | 'zscore';

export interface SearchFilters {
  readonly entityTypes?: readonly string[] | undefined;
  readonly status?: readonly EntityStatus[] | undefined;
  /** Entities with at least one observation of one of these kinds. */
  readonly observationKinds?: readonly string[] | undefined;
  readonly createdAfter?: number | undefined;
  readonly createdBefore?: number | undefined;
  readonly updatedAfter?: number | undefined;
  readonly updatedBefore?: number | undefined;
  readonly names?: readonly string[] | undefined;
  /** Entities of none of these types (include_reflections false leaves out reflections). */
  readonly excludeEntityTypes?: readonly string[] | undefined;
}

export interface SearchRequest {
  readonly query: string;
  readonly limit: number;
  readonly offset: number;
  /** Undefined means "both, whichever are available"; a list is a request, and a missing mode is an error. */
  readonly modes: readonly SearchMode[] | undefined;
  /** Candidates each leg keeps; fixed per query so every page of it ranks the same set. */
  readonly depth: number;
  /** `expert` reads phrases, NOT, prefixes and column filters; `plain` OR-matches the words. */
  readonly keywordSyntax: 'expert' | 'plain';
  readonly fusion: FusionMethod;
  /** RRF's k; undefined takes the value in force (tuned, or the spec's RRF_K). */
  readonly rrfK: number | undefined;
  /** Weighted fusion's weights (and the graph weight for either method), before redistribution. */
  readonly weights: SignalWeights;
  readonly limbic: boolean;
  /** The K the spec's query routing reads; undefined routes on the query's words alone. */
  readonly routingLimit: number | undefined;
  readonly rerank: boolean;
  readonly filters: SearchFilters;
  /** Multiplies the final score of entities of one type, then re-sorts (reflection_boost). */
  readonly typeBoost?: { readonly entityType: string; readonly factor: number } | undefined;
  /** The context stage's weights (stored dates, related candidates: context.ts); undefined skips it. */
  readonly context?: ContextWeights | undefined;
  /**
   * How many observations each result shows, those matching the query first (shown.ts); undefined
   * shows every one, in stored order (search_reflections reads a reflection's first).
   */
  readonly observations?: ObservationBound | undefined;
  /**
   * The project the search runs in (docs/capture.md, "Projects"): another project's entities are
   * left out, its own are preferred (PROJECT_BOOST); global entities stay. Undefined: nothing hidden.
   */
  readonly project?: string | undefined;
  /**
   * The re-finding lift's threshold, band and forgetting (docs/ranking.md, "Re-finding");
   * undefined takes the constants (REFIND_THRESHOLD, REFIND_BAND, REFIND_HALF_LIFE_DAYS). The
   * benches sweep them through this.
   */
  readonly refind?: RefindParameters | undefined;
}

export interface RefindParameters {
  readonly threshold?: number;
  readonly band?: number;
  readonly halfLifeDays?: number;
}

/** How long each stage took, in ms; a stage that did not run is absent. */
export type StageTimings = Partial<
  Record<
    'keyword' | 'catchUp' | 'encode' | 'vector' | 'filter' | 'fuse' | 'context' | 'limbic' | 'rerank' | 'page' | 'observations',
    number
  >
>;

/** Runs one stage and records its time under `name`. */
export async function timed<T>(timings: StageTimings, name: keyof StageTimings, stage: () => Promise<T> | T): Promise<T> {
  const t0 = performance.now();
  try {
    return await stage();
  } finally {
    timings[name] = Math.round((performance.now() - t0) * 1000) / 1000;
  }
}

export const countFilters = (f: SearchFilters): number => Object.values(f).filter((v) => v !== undefined).length;

/**
 * A keyword-only search of plain words at a depth, ranked with the limbic re-rank and hydrating
 * nothing (limit 0: the caller reads `ranked`): what the brief runs to find what is about a project.
 */
export function keywordRequest(query: string, depth: number): SearchRequest {
  return {
    query,
    limit: 0,
    offset: 0,
    modes: ['fts'],
    depth,
    keywordSyntax: 'plain',
    fusion: 'rrf',
    rrfK: undefined,
    weights: DEFAULT_SIGNAL_WEIGHTS,
    limbic: true,
    routingLimit: undefined,
    rerank: false,
    filters: {},
  };
}
