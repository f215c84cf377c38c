/** hybrid_search's input (snake_case, as clients send it) → the service's options. Shared by MCP and CLI. */
import type { z } from 'zod';
import { parseStatus, type EntityStatus } from '../core/types.js';
import type { HybridSearchOptions } from '../service/search/hybrid-search.js';
import { hybridSearchInput } from './schemas.js';

export const HybridSearchInputSchema = hybridSearchInput;
export type HybridSearchInput = z.infer<typeof HybridSearchInputSchema>;

const date = (s: string | undefined): number | undefined => (s === undefined ? undefined : Date.parse(s));

export function toHybridOptions(input: HybridSearchInput): HybridSearchOptions {
  const f = input.filters ?? {};
  return {
    query: input.query,
    limit: input.limit ?? 10,
    offset: input.offset ?? 0,
    searchModes: input.search_modes,
    fusionMethod: input.fusion_method ?? 'rrf',
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
    reflections: {
      include: input.include_reflections ?? true,
      boost: input.reflection_boost ?? 1,
      // Asking for reflections only while leaving them out finds nothing; "only" is the explicit ask.
      only: input.reflections_only ?? false,
    },
    project: input.project,
  };
}
