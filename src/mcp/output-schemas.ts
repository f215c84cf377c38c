/**
 * The output schemas of Limbic's own tools (the nine official tools' are in schemas.ts, as the
 * official server declares them). Each states the answer's `structuredContent` exactly, as
 * docs/answers.md documents it: a client's SDK checks every answer against it, so a field the
 * service adds and the schema lacks fails the tests that call the tool.
 *
 * Field descriptions are left to docs/answers.md: every tool list an agent loads carries these
 * schemas, and the names say what the fields are.
 */
import { z } from 'zod';
import { ENTITY_STATUSES } from '../core/types.js';

/**
 * A count. Declared `integer` in the JSON Schema without zod's `.int()`, whose safe-integer bounds
 * add about 50 bytes to every count in every tool list.
 */
export const int = z.number().meta({ type: 'integer' });
const strings = z.array(z.string());
const routing = z.enum(['cosine_heavy', 'limbic_heavy', 'hybrid_balanced']);

/** The answer a heavy tool gives, as an isError, when every slot stays taken (maintenance-tools.ts). */
const BUSY = {
  error: z.literal('server_busy'),
  code: z.literal('heavy_tool_backpressure'),
  message: z.string(),
  retryable: z.boolean(),
};

/**
 * A heavy tool's answer, or its busy answer. MCP wants an object schema, so rather than a union the
 * object holds both shapes' fields and its JSON Schema says which set must be present (`anyOf` of
 * `required`): clients built on the 1.x SDK check even an isError's structuredContent against it.
 */
function orBusy<S extends z.ZodRawShape>(shape: S) {
  const required = Object.keys(shape).filter((key) => !(shape[key] as z.ZodType).safeParse(undefined).success);
  return z
    .object({ ...shape, ...BUSY })
    .partial()
    .meta({ anyOf: [{ required }, { required: Object.keys(BUSY) }] });
}

export const SearchSemanticOutput = z.object({
  results: z.array(
    z.object({
      name: z.string(),
      entityType: z.string(),
      observations: strings,
      observations_omitted: int.optional(),
      limbic_score: z.number(),
      scoring: z.object({
        importance: z.number(),
        temporal_factor: z.number(),
        cooc_boost: z.number(),
        usage_lift: z.number(),
        usage_lift_base_level: z.number(),
        usage_lift_refinding: z.number(),
        usage_places: z.number(),
        speaker_lift: z.number().optional(),
      }),
      distance: z.number().optional(),
      rrf_score: z.number().optional(),
      routing_strategy: routing,
    }),
  ),
  mode: z.enum(['hybrid', 'semantic', 'keyword']),
  routing_strategy: routing,
  searched_without_names: z.string().optional(),
  warning: z.string().optional(),
  more_observations: z.string().optional(),
});

const signals = z.object({ fts: z.number(), vector: z.number(), recency: z.number(), priority: z.number(), graph: z.number() });
const searchMode = z.enum(['fts', 'semantic']);

export const HybridSearchOutput = z.object({
  query: z.string(),
  results: z.array(
    z.object({
      name: z.string(),
      entityType: z.string(),
      observations: strings,
      observations_omitted: int.optional(),
      status: z.enum(ENTITY_STATUSES),
      scores: z.object({
        rrf: z.number().nullable(),
        fts_rank: int.nullable(),
        semantic_rank: int.nullable(),
        fts_score: z.number().nullable(),
        semantic_distance: z.number().nullable(),
        weighted: signals.nullable(),
        graph_boost: z.number().nullable(),
        limbic: z
          .object({
            importance: z.number(),
            temporal_factor: z.number(),
            cooc_boost: z.number(),
            usage_lift: z.number(),
            usage_lift_base_level: z.number(),
            usage_lift_refinding: z.number(),
            usage_places: z.number(),
            multiplier: z.number(),
            routing_strategy: routing,
          })
          .nullable(),
        rerank_score: z.number().nullable(),
        name_match: z.boolean(),
        speaker_lift: z.number().optional(),
        final: z.number(),
      }),
    }),
  ),
  count: int,
  offset: int,
  limit: int,
  fusion_method: z.enum(['rrf', 'weighted', 'zscore']),
  search_modes_used: z.array(searchMode),
  routing_strategy: routing.optional(),
  fts_count: int,
  semantic_count: int,
  searched_without_names: z.string().optional(),
  weights: signals.optional(),
  warnings: strings.optional(),
  hint: z.string().optional(),
  more_observations: z.string().optional(),
  /** explain_query's timings and counts per stage: for people reading them, so not spelt out here. */
  stats: z.record(z.string(), z.unknown()).optional(),
});

const nullableModel = z.string().nullable();

export const StatisticsOutput = z.object({
  entities: int,
  observations: int,
  relations: int,
  database: z.object({ path: z.string(), bytes: int.nullable() }),
  fts: z.object({ available: z.boolean(), indexed: int }),
  semantic: z.object({ available: z.boolean(), indexed: int, pending: int, model: nullableModel }),
  reranking: z.object({ available: z.boolean(), model: nullableModel }),
  embeddings: z.object({
    available: z.boolean(),
    state: z.string(),
    model: nullableModel,
    dims: int.nullable(),
    indexed: int,
    pending: int,
    reason: z.string().optional(),
    progress: z.string().optional(),
  }),
  ranking: z.object({
    gamma: z.number(),
    beta_sal: z.number(),
    rrf_k: z.number(),
    source: z.enum(['default', 'tuned']),
    tuned_at: z.string().nullable(),
  }),
});

export const EndRelationOutput = z.object({
  relation: z.object({ from: z.string(), to: z.string(), relationType: z.string(), ended_at: z.string() }),
  notice: z.string().optional(),
});

export const FindDuplicatesOutput = orBusy({
  entity: z.string(),
  total_observations: int,
  method: z.string(),
  duplicates_found: int,
  clusters: z.array(z.object({ size: int, observations: z.array(z.object({ content: z.string(), kind: z.string() })) })),
  pairs: z.array(z.object({ a: z.string(), b: z.string(), match_type: z.enum(['cosine', 'containment']), similarity: z.number() })),
});

const entityAt = { entity_name: z.string(), entity_type: z.string(), observation_count: int };

export const ConsolidationReportOutput = orBusy({
  summary: z.object({
    total_entities: int,
    total_observations: int,
    superseded_observations: int,
    split_candidates_count: int,
    duplicate_clusters_count: int,
    stale_entities_count: int,
    large_entities_count: int,
  }),
  split_candidates: z.array(z.object({ ...entityAt, threshold: int, topic_diversity: z.number(), recommendation: z.string() })),
  duplicate_clusters: z.array(z.object({ entity_name: z.string(), clusters: z.array(strings) })),
  duplicates_scanned: z.object({ entities: int, of: int }),
  stale_entities: z.array(
    z.object({
      ...entityAt,
      status: z.enum(ENTITY_STATUSES),
      last_access: z.string().nullable(),
      access_count: int,
      days_since_access: int.nullable(),
      recommendation: z.string(),
    }),
  ),
  large_entities: z.array(z.object({ ...entityAt, threshold: int, recommendation: z.string() })),
});

const SplitAnalysis = z.object({
  ...entityAt,
  threshold: int,
  needs_split: z.boolean(),
  topics: z.record(z.string(), strings),
  split_score: z.number(),
  method: z.enum(['semantic', 'keywords', 'none']),
});

export const AnalyzeSplitOutput = orBusy({ analysis: SplitAnalysis });

const relation = z.object({ from: z.string(), to: z.string(), relationType: z.string() });

export const ProposeSplitOutput = orBusy({
  proposal: z
    .object({
      original_entity: z.object({ name: z.string(), entity_type: z.string() }),
      suggested_splits: z.array(z.object({ name: z.string(), entity_type: z.string(), observations: strings })),
      relations_to_create: z.array(relation),
      analysis: z.object({
        observation_count: int,
        threshold: int,
        split_score: z.number(),
        num_topics: int,
        method: z.enum(['semantic', 'keywords', 'none']),
      }),
    })
    .nullable(),
  /** Only when no split is needed (proposal is null): why. */
  message: z.string().optional(),
});

export const ExecuteSplitOutput = orBusy({
  result: z.object({
    new_entities: strings,
    moved_observations: int,
    relations_created: int,
    original_observations_remaining: int,
    original_summary: z.string().nullable(),
  }),
});

export const FindSplitCandidatesOutput = orBusy({ candidates: z.array(SplitAnalysis) });

export const AddReflectionOutput = z.object({
  reflection: z.object({
    name: z.string(),
    content: z.string(),
    about: strings,
    author: z.string().optional(),
    mood: z.string().optional(),
  }),
});

export const SearchReflectionsOutput = z.object({
  results: z.array(
    z.object({
      name: z.string(),
      content: z.string(),
      observations: strings,
      about: strings,
      created_at: z.string().optional(),
      score: z.number(),
    }),
  ),
  warnings: strings.optional(),
});

const reflectionToWrite = z.object({ name: z.string(), content: z.string(), sources: strings });

export const RunConsolidationOutput = orBusy({
  /** One of the two: reflections_created, or with dry_run reflections_to_create (and dry_run: true). */
  reflections_created: z.array(reflectionToWrite).optional(),
  dry_run: z.literal(true).optional(),
  reflections_to_create: z.array(reflectionToWrite).optional(),
  clusters_found: int,
  existing_kept: int,
  broad_skipped: int,
  entities_scanned: int,
  method: z.string(),
  note: z.string().optional(),
});
