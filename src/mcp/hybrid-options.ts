/** hybrid_search's input (snake_case, as clients send it) → the service's options. Shared by MCP and CLI. */
import type { z } from 'zod';
import { DEFAULT_OBSERVATION_BOUND, type ObservationBound } from '../core/rank/shown-observations.js';
import { parseStatus, type EntityStatus } from '../core/types.js';
import { HYBRID_DEFAULT_FUSION, type HybridSearchOptions } from '../service/search/hybrid-search.js';
import { hybridSearchInput } from './schemas.js';

export const HybridSearchInputSchema = hybridSearchInput;
export type HybridSearchInput = z.infer<typeof HybridSearchInputSchema>;

const date = (s: string | undefined): number | undefined => (s === undefined ? undefined : Date.parse(s));

/**
 * The observations each search result shows: the default bound (count and characters), or the
 * number the caller asked for (the count alone).
 */
export const observationBound = (limit: number | undefined): ObservationBound =>
  limit === undefined ? DEFAULT_OBSERVATION_BOUND : { limit };

export function toHybridOptions(input: HybridSearchInput): HybridSearchOptions {
  const f = input.filters ?? {};
  return {
    query: input.query,
    limit: input.limit ?? 10,
    offset: input.offset ?? 0,
    searchModes: input.search_modes,
    // search_semantic's fusion unless another is asked for (HYBRID_DEFAULT_FUSION: hybrid-search.ts).
    fusionMethod: input.fusion_method ?? HYBRID_DEFAULT_FUSION,
    rrfK: input.rrf_k, // undefined: the value in force (tuned, or 60)
    weights: Object.fromEntries(Object.entries(input.weights ?? {}).filter(([, v]) => v !== undefined)),
    limbic: input.limbic ?? true,
    rerank: input.rerank ?? false,
    filters: {
      entityTypes: f.entity_types,
      status: f.status?.map((s) => parseStatus(s) as EntityStatus),
      observationKinds: f.observation_kinds,
      createdAfter: date(f.created_after),
      createdBefore: date(f.created_before),
      updatedAfter: date(f.updated_after),
      updatedBefore: date(f.updated_before),
      names: f.names,
    },
    explainQuery: input.explain_query ?? false,
    observations: observationBound(input.observations_limit),
    reflections: {
      include: input.include_reflections ?? true,
      boost: input.reflection_boost ?? 1,
      // Asking for reflections only while leaving them out finds nothing; "only" is the explicit ask.
      only: input.reflections_only ?? false,
    },
    project: input.project,
  };
}
