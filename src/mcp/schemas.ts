/**
 * Tool schemas at the MCP boundary. The nine official tools keep the official field names and
 * types; Limbic's extras are optional, and limits are stated in the message a client sees.
 *
 * Over 400 lines on purpose: every tool's input in one file, so a limit, a refusal and its message
 * read the same across all twenty-odd tools.
 */
import { z } from 'zod';
import { LIMITS } from '../core/limits.js';
import { toNfc } from '../core/text/fold.js';
import { int } from './output-schemas.js';

/**
 * Text must be well-formed Unicode: a lone UTF-16 surrogate (valid in a JS string and in JSON's
 * \u escapes) reaches SQLite as bytes that are not UTF-8, is stored as such, and reads back as
 * three U+FFFD, so the name a client sent no longer matches the one it reads.
 */
const LONE_SURROGATE = /\p{Cs}/u;
const wellFormed = (what: string) => (value: string, ctx: z.RefinementCtx) => {
  const at = LONE_SURROGATE.exec(value)?.index;
  if (at === undefined) return;
  const unit = value.charCodeAt(at).toString(16).toUpperCase();
  ctx.addIssue({
    code: 'custom',
    message: `${what} is not well-formed Unicode: a lone UTF-16 surrogate (\\u${unit}) at index ${at}; send valid UTF-8 text, with surrogates only in pairs`,
  });
};

/**
 * A text field: bounded, well-formed, and put in NFC (fold.ts), so a name, a relation type or an
 * observation is one value however the client composed its accents (issue 26). Every text a tool
 * takes passes here: this is the one place text is normalised.
 */
const chars = (max: number, what: string) =>
  z
    .string()
    .max(max, { message: `${what} is longer than the limit of ${max} characters; shorten or split it` })
    .superRefine(wellFormed(what))
    .overwrite(toNfc);
const items = <T extends z.ZodTypeAny>(schema: T, max: number, what: string) =>
  z.array(schema).max(max, { message: `too many ${what} in one call: the limit is ${max}; split the call` });

/**
 * Every string of a call, summed in UTF-8 bytes. A stack, not recursion: a call refused for a
 * wrong-typed field may still hold deeply nested junk there.
 */
function textBytes(value: unknown): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') total += Buffer.byteLength(v, 'utf8');
    else if (typeof v === 'object' && v !== null) for (const child of Object.values(v)) stack.push(child);
  }
  return total;
}

/**
 * Bounds the text of a whole call (LIMITS.maxCallTextBytes): the per-field limits alone let one
 * create_entities carry gigabytes, over what the stdio transport reads and what clients accept back.
 */
const withinCallText = <T extends z.ZodObject>(schema: T): T =>
  schema.superRefine((value, ctx) => {
    const bytes = textBytes(value);
    if (bytes <= LIMITS.maxCallTextBytes) return;
    ctx.addIssue({
      code: 'custom',
      message: `the text of this call is ${bytes} bytes (UTF-8, every string summed): the limit is ${LIMITS.maxCallTextBytes} bytes (${LIMITS.maxCallTextBytes / 2 ** 20} MiB) per call, so that the answer fits what MCP clients accept; split it into smaller calls with fewer entities or observations each`,
    });
  });
/** An official tool's input: extra fields are ignored, as the official server does. */
const official = <T extends z.ZodRawShape>(shape: T) => withinCallText(z.object(shape));

/**
 * Limbic's own tools refuse fields they do not know, naming them and the fields they take: a
 * misspelt option (`filter` for `filters`) would otherwise be dropped without a word and change the
 * answer. The nine official tools keep the official server's tolerance: extra fields are ignored.
 */
const strict = <T extends z.ZodRawShape>(shape: T) =>
  z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}: ${
            Object.keys(shape).length === 0 ? 'expected no arguments' : `expected only ${Object.keys(shape).join(', ')}`
          }`
        : undefined,
  });

/**
 * A whole number in [min, max], with one message that states the range. Without a max (an offset),
 * any whole number from min: the tool list then states no maximum, which only cost its bytes.
 */
const wholeNumber = (field: string, min: number, max?: number) => {
  const message = `${field} must be a whole number from ${min}${max === undefined ? ' up' : ` to ${max}`}`;
  const from = z.number().int({ message }).min(min, { message });
  return max === undefined ? from : from.max(max, { message });
};

const name = chars(LIMITS.maxNameChars, 'the name');
const observation = chars(LIMITS.maxObservationChars, 'an observation');

/** Status words accepted on input, English or the seed system's Spanish; parseStatus maps them to the status. */
export const statusSchema = z.enum(['active', 'paused', 'completed', 'archived', 'activo', 'pausado', 'completado', 'archivado'], {
  message: 'status must be one of active, paused, completed, archived (or the Spanish activo, pausado, completado, archivado)',
});

export const EntitySchema = z.object({
  name: name.describe('The name of the entity'),
  entityType: chars(LIMITS.maxNameChars, 'the entity type').describe('The type of the entity'),
  observations: items(observation, LIMITS.maxObservationsPerItem, 'observations').describe(
    'An array of observation contents associated with the entity',
  ),
});

/** create_entities accepts an optional status (Limbic extra). */
export const NewEntitySchema = EntitySchema.extend({
  status: statusSchema.optional().describe('Limbic: lifecycle status, active by default (see set_entity_status)'),
});

export const RelationSchema = z.object({
  from: name.describe('The name of the entity where the relation starts'),
  to: name.describe('The name of the entity where the relation ends'),
  relationType: chars(LIMITS.maxNameChars, 'the relation type').describe('The type of the relation'),
  context: chars(LIMITS.maxObservationChars, 'the context')
    .optional()
    .describe('Limbic: free text on why the relation holds, shown with it'),
});

/**
 * Output entity shape: the official one, plus, only when the caller asked for a page of
 * observations (observations_offset or observations_limit), how many it holds and where the next
 * page starts.
 */
export const EntityOutputSchema = z.object({
  name: z.string(),
  entityType: z.string(),
  observations: z.array(z.string()),
  observationCount: int.optional().describe('Limbic, with an observations page: how many observations the entity holds'),
  next_observations_offset: int
    .optional()
    .describe('Limbic, with an observations page: the observations_offset of the next page; absent on the last'),
});
export const EntityOutlineSchema = z.object({ name: z.string(), entityType: z.string(), observationCount: int });
/** The official relation, plus `context` on a relation created with one and `ended_at` on an ended one (listed when asked). */
export const RelationOutputSchema = z.object({
  from: z.string(),
  to: z.string(),
  relationType: z.string(),
  context: z.string().optional(),
  ended_at: z.string().optional(),
});
/** The official graph, plus the page fields when the caller asked for a page (or read_graph's compact form). */
export const GraphOutput = {
  entities: z.array(z.union([EntityOutputSchema, EntityOutlineSchema])),
  relations: z.array(RelationOutputSchema),
  total: int.optional(),
  offset: int.optional(),
  limit: int.optional(),
  next_offset: int.optional(),
  relationCount: int
    .optional()
    .describe(
      'Limbic, when the relations are paged (relations_offset or relations_limit, or more than fit in one answer): how many the answer holds',
    ),
  next_relations_offset: int
    .optional()
    .describe('Limbic, with a page of relations: the relations_offset of the next page; absent on the last'),
};
/**
 * search_nodes: full entities only (read_graph's compact outlines never come back from it), so each
 * answer is checked against one shape instead of a union: the official server's, plus the page fields.
 */
export const SearchNodesOutput = { ...GraphOutput, entities: z.array(EntityOutputSchema) };
export const SuccessOutput = { success: z.boolean(), message: z.string() };
/** open_nodes: the graph; with include_superseded each entity's history, with include_kinds each observation's kind. */
export const OpenNodesOutput = {
  ...GraphOutput,
  entities: z.array(
    EntityOutputSchema.extend({
      observation_kinds: z.array(z.string()).optional(),
      superseded_observations: z
        .array(
          z.object({ content: z.string(), kind: z.string(), created_at: z.string(), superseded_at: z.string(), superseded_by: z.string() }),
        )
        .optional(),
      supersededCount: int
        .optional()
        .describe('With an observations page: how many superseded observations the entity holds (they are paged by the same window)'),
    }),
  ),
};

export const createEntitiesInput = official({ entities: items(NewEntitySchema, LIMITS.maxItemsPerCall, 'entities') });
export const createRelationsInput = official({ relations: items(RelationSchema, LIMITS.maxItemsPerCall, 'relations') });
export const addObservationsInput = official({
  observations: items(
    z.object({
      entityName: name.describe('The name of the entity to add the observations to'),
      contents: items(observation, LIMITS.maxObservationsPerItem, 'observations').describe('An array of observation contents to add'),
      kind: chars(100, 'the kind').optional().describe('Limbic: kind of these observations (default "generic"; "metadata" ranks lower)'),
      supersedes: observation
        .optional()
        .describe('Limbic: exact text of a current observation these contents replace; it becomes history (open_nodes include_superseded)'),
    }),
    LIMITS.maxItemsPerCall,
    'observation groups',
  ),
});
export const deleteEntitiesInput = official({
  entityNames: items(name, LIMITS.maxItemsPerCall, 'names').describe('An array of entity names to delete'),
});
export const deleteObservationsInput = official({
  deletions: items(
    z.object({
      entityName: name.describe('The name of the entity containing the observations'),
      observations: items(observation, LIMITS.maxObservationsPerItem, 'observations').describe('An array of observations to delete'),
    }),
    LIMITS.maxItemsPerCall,
    'deletions',
  ),
});
export const deleteRelationsInput = official({
  relations: items(RelationSchema, LIMITS.maxItemsPerCall, 'relations').describe('An array of relations to delete'),
});
/** Limbic's paging of read_graph and search_nodes: a client that sends neither gets the whole answer. */
const pageFields = {
  limit: wholeNumber('limit', 1, LIMITS.maxGraphPage)
    .optional()
    .describe(`Limbic: entities per page (1-${LIMITS.maxGraphPage}); the page adds total and next_offset`),
  offset: wholeNumber('offset', 0).optional().describe('Limbic: entities to skip'),
};

/**
 * Limbic's paging of each entity's observations (issue 26): an entity too large for one answer is
 * read a page at a time. Neither field: every observation, as the official server answers.
 */
const observationPageFields = {
  observations_offset: wholeNumber('observations_offset', 0)
    .optional()
    .describe('Limbic: observations to skip per entity; each entity then adds observationCount and next_observations_offset'),
  observations_limit: wholeNumber('observations_limit', 1, LIMITS.maxObservationsPerEntity)
    .optional()
    .describe(`Limbic: observations per entity (1-${LIMITS.maxObservationsPerEntity}), to page a large one`),
};

/**
 * Limbic's paging of an answer's relations (issue 35): a hub's relations are read a page at a time.
 * Neither field: every relation when they fit in one page (the official answer), else the first
 * page with relationCount and next_relations_offset.
 */
const relationPageFields = {
  relations_offset: wholeNumber('relations_offset', 0)
    .optional()
    .describe(
      "Limbic: relations to skip (of the answer's, in creation order); the answer then adds relationCount and next_relations_offset",
    ),
  relations_limit: wholeNumber('relations_limit', 0, LIMITS.maxRelationsPerPage)
    .optional()
    .describe(`Limbic: relations per answer (0-${LIMITS.maxRelationsPerPage}, the default), to page a hub's`),
};

/**
 * Relations end_relation ended are left out of the official tools' answers (a relation listed
 * without a marker reads as current to a client of the official server); asked, they come with
 * ended_at (docs/graph-extras.md#ended-relations).
 */
const includeEnded = z.boolean().optional().describe('Limbic: also list relations end_relation ended, each with ended_at');

export const readGraphInput = official({
  include_ended: includeEnded,
  ...pageFields,
  ...observationPageFields,
  ...relationPageFields,
  compact: z.boolean().optional().describe('Limbic: name, entityType and observationCount per entity, no observations'),
});
export const searchNodesInput = official({
  query: chars(LIMITS.maxQueryChars, 'the query').describe(
    'The search query to match against entity names, types, and observation content',
  ),
  include_ended: includeEnded,
  ...pageFields,
  ...observationPageFields,
  ...relationPageFields,
});
export const openNodesInput = official({
  names: items(name, LIMITS.maxItemsPerCall, 'names').describe('An array of entity names to retrieve'),
  include_superseded: z
    .boolean()
    .optional()
    .describe("Limbic: add each entity's superseded_observations, and the ended relations (include_ended)"),
  include_ended: includeEnded,
  kinds: items(chars(100, 'a kind'), LIMITS.maxItemsPerCall, 'kinds').optional().describe('Limbic: only observations of these kinds'),
  include_kinds: z.boolean().optional().describe("Limbic: add observation_kinds, each observation's kind in order"),
  ...observationPageFields,
  ...relationPageFields,
});

/** How many observations a search result shows (issue 33); absent: DEFAULT_OBSERVATION_BOUND. */
const searchObservationsLimit = wholeNumber('observations_limit', 0, LIMITS.maxObservationsPerEntity)
  .optional()
  .describe(
    `Observations per result, matching ones first (0-${LIMITS.maxObservationsPerEntity}, ${LIMITS.maxObservationsPerEntity} for all; default 10, about 2,000 characters); observations_omitted counts the rest`,
  );

/** A search's project (docs/capture.md, "Projects"). */
const projectOption = chars(LIMITS.maxNameChars, 'the project')
  .min(1, { message: 'the project is empty: give a project key, or "*" for all projects' })
  .optional()
  .describe(
    'Project to search from: a key as "limbic projects" lists it, or "*" for all. Default: the server\'s own (other projects\' captured sessions hidden, its own first)',
  );

export const searchSemanticInput = withinCallText(
  strict({
    query: chars(LIMITS.maxQueryChars, 'the query')
      .min(1, { message: 'the query is empty: it must have at least 1 character; say what to look for' })
      .describe('What to recall, in words: exact terms, names or a paraphrase'),
    limit: wholeNumber('limit', 1, LIMITS.maxSearchLimit).optional().describe('How many results (1-100, default 10)'),
    observations_limit: searchObservationsLimit,
    project: projectOption,
  }),
);

/** set_entity_status: `entity_name`, as Limbic's other tools name an entity; `name` still accepted (issue 25). */
export const setStatusInput = withinCallText(
  strict({
    entity_name: name.optional().describe('The entity whose status to set'),
    name: name.optional().describe('Same as entity_name (its older name)'),
    status: statusSchema.describe('The status (the Spanish words mean the same)'),
  }).superRefine((input, ctx) => {
    if (input.entity_name === undefined && input.name === undefined)
      ctx.addIssue({ code: 'custom', path: ['entity_name'], message: 'entity_name is required: the entity whose status to set' });
    else if (input.entity_name !== undefined && input.name !== undefined && input.entity_name !== input.name)
      ctx.addIssue({
        code: 'custom',
        path: ['entity_name'],
        message: 'entity_name and name name two different entities: give one (they are the same field; entity_name is the one to use)',
      });
  }),
);

/** get_statistics takes no arguments, and says so when it is given some. */
export const statisticsInput = strict({});

/**
 * An ISO 8601 calendar date (2026, 2026-03 or 2026-03-28), optionally with a time and an offset.
 * Date.parse alone is not enough: it takes "0" (the year 2000), "March 7" and "2026-02-30" (rolled
 * over to March 2) without a word.
 */
const ISO_DATE = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?)?)?$/;
function isIsoDate(s: string): boolean {
  const m = ISO_DATE.exec(s);
  if (m === null || Number.isNaN(Date.parse(s))) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2] ?? 1), Number(m[3] ?? 1)];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth;
}
const isoDate = (field: string) =>
  z
    .string()
    .refine(isIsoDate, { message: `${field} must be an ISO 8601 date or date-time, e.g. 2026-03-28 or 2026-03-28T10:00:00Z` })
    .optional();
const weight = (signal: string) =>
  z
    .number()
    .min(0, { message: `the ${signal} weight must be 0 or more` })
    .max(1000, { message: `the ${signal} weight is at most 1000` })
    .optional();

export const hybridSearchInput = withinCallText(
  strict({
    query: chars(LIMITS.maxQueryChars, 'the query')
      .min(1, { message: 'the query is empty: it must have at least 1 character; say what to look for' })
      .describe('Bare words are OR-matched; "phrases", AND/OR/NOT, prefix* and name:/type:/obs: are keyword syntax'),
    limit: wholeNumber('limit', 1, LIMITS.maxSearchLimit).optional().describe('Results per page (1-100, default 10)'),
    offset: wholeNumber('offset', 0, 10_000).optional().describe('Results to skip (stable pages)'),
    search_modes: z
      .array(z.enum(['fts', 'semantic']))
      .min(1, { message: 'search_modes needs at least one of "fts", "semantic"' })
      .optional()
      .describe('Legs to run (default: those available)'),
    fusion_method: z
      .enum(['rrf', 'weighted', 'zscore'])
      .optional()
      .describe("zscore (default: search_semantic's fusion and context stage), rrf, or weighted (by weights)"),
    rrf_k: wholeNumber('rrf_k', 1, 1000).optional().describe('RRF constant (default 60, or as tuned: get_statistics.ranking)'),
    weights: strict({
      fts: weight('fts'),
      vector: weight('vector'),
      recency: weight('recency'),
      priority: weight('priority'),
      graph: weight('graph'),
    })
      .optional()
      .describe(
        'Weighted fusion (defaults fts 0.30, vector 0.55, recency 0.10, priority 0.05, graph 0); graph > 0 boosts 1-hop neighbours in any fusion',
      ),
    limbic: z.boolean().optional().describe('Limbic re-rank by importance, recency, co-occurrence and status (default true)'),
    rerank: z.boolean().optional().describe('Cross-encoder re-rank, when installed (get_statistics.reranking)'),
    filters: strict({
      entity_types: items(chars(LIMITS.maxNameChars, 'an entity type'), LIMITS.maxItemsPerCall, 'entity types').optional(),
      status: items(statusSchema, LIMITS.maxItemsPerCall, 'statuses').optional(),
      observation_kinds: items(chars(100, 'a kind'), LIMITS.maxItemsPerCall, 'kinds').optional(),
      created_after: isoDate('created_after'),
      created_before: isoDate('created_before'),
      updated_after: isoDate('updated_after'),
      updated_before: isoDate('updated_before'),
      names: items(name, LIMITS.maxItemsPerCall, 'names').optional(),
    })
      .optional()
      .describe('Only entities matching every filter given (dates ISO 8601)'),
    explain_query: z.boolean().optional().describe('Add stats: timings and counts per leg and stage'),
    include_reflections: z.boolean().optional().describe('Include reflections (add_reflection); default true'),
    reflection_boost: z
      .number({ message: 'reflection_boost must be a number from 0 to 100' })
      .min(0, { message: 'reflection_boost must be a number from 0 to 100' })
      .max(100, { message: 'reflection_boost must be a number from 0 to 100' })
      .optional()
      .describe("Multiplies reflections' scores (default 1)"),
    reflections_only: z.boolean().optional().describe('Search reflections only'),
    observations_limit: searchObservationsLimit,
    project: projectOption,
  }),
);

// ---------- maintenance (docs/tools.md) ----------

const share = (field: string) => {
  const message = `${field} must be a number from 0 to 1`;
  return z.number({ message }).min(0, { message }).max(1, { message });
};

export const endRelationInput = withinCallText(
  strict({
    from: name.describe('The name of the entity where the relation starts'),
    to: name.describe('The name of the entity where the relation ends'),
    relationType: chars(LIMITS.maxNameChars, 'the relation type').describe('The type of the relation'),
  }),
);

export const entityNameInput = withinCallText(strict({ entity_name: name.describe('The entity to examine') }));

export const findDuplicateObservationsInput = withinCallText(
  strict({
    entity_name: name.describe('The entity whose observations to compare'),
    threshold: share('threshold').optional().describe('Similarity of meaning from which two are duplicates (default 0.85)'),
    containment_threshold: share('containment_threshold')
      .optional()
      .describe("Share of a short one's words in one twice as long (default 0.7)"),
  }),
);

export const consolidationReportInput = withinCallText(
  strict({
    stale_days: z
      .number({ message: 'stale_days must be a number from 0 to 36500' })
      .min(0, { message: 'stale_days must be a number from 0 to 36500' })
      .max(36_500, { message: 'stale_days must be a number from 0 to 36500' })
      .optional()
      .describe('Days without use after which a rarely used entity is stale (default 90)'),
    max_duplicate_entities: wholeNumber('max_duplicate_entities', 0, 100_000)
      .optional()
      .describe('Entities scanned for duplicates, largest first (default 100)'),
  }),
);

export const executeEntitySplitInput = withinCallText(
  strict({
    entity_name: name.describe('The entity to split'),
    approved_splits: items(
      strict({
        name: name.describe('Name of the new entity (must not exist yet)'),
        entity_type: chars(LIMITS.maxNameChars, 'the entity type').optional().describe("Its type (default: the original's)"),
        observations: items(observation, LIMITS.maxObservationsPerItem, 'observations')
          .min(1, { message: 'observations must list at least 1 observation of the original to move' })
          .describe("Exact texts of the original's observations to move"),
      }),
      LIMITS.maxItemsPerCall,
      'splits',
    )
      .min(1, { message: 'approved_splits must hold at least 1 split' })
      .describe("The new entities: propose_entity_split's suggested_splits, approved or edited"),
    parent_entity_name: name.optional().describe('Entity the new ones are linked to (default the original)'),
  }),
);

export const findSplitCandidatesInput = strict({});

// ---------- reflections (issue 16, part 2) ----------

export const addReflectionInput = withinCallText(
  strict({
    content: observation.min(1, { message: 'content is empty: it must have at least 1 character' }).describe('The reflection'),
    about: items(name, LIMITS.maxItemsPerCall, 'names').optional().describe('Entities it is about (each must exist)'),
    author: chars(100, 'the author').optional().describe('Who reflects'),
    mood: chars(100, 'the mood').optional().describe('e.g. insight, curiosity, doubt'),
  }),
);

export const searchReflectionsInput = withinCallText(
  strict({
    query: chars(LIMITS.maxQueryChars, 'the query')
      .min(1, { message: 'the query is empty: it must have at least 1 character; say what to look for' })
      .describe('What to find among reflections, in words'),
    limit: wholeNumber('limit', 1, LIMITS.maxSearchLimit).optional().describe('How many results (1-100, default 10)'),
  }),
);

export const runConsolidationInput = withinCallText(
  strict({
    max_entities: wholeNumber('max_entities', 2, 100_000).optional().describe('Entities read, newest first (default 500)'),
    min_size: wholeNumber('min_size', 2, 1_000).optional().describe('Entities a cluster needs to become a reflection (default 3)'),
    dry_run: z.boolean().optional().describe('Say what would be written, writing nothing'),
  }),
);
