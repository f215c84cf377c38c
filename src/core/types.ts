/** Plain data types shared by every layer. No I/O here. */

/** A row id of `entities`. Branded so a rowid never mixes with a name or a count. */
export type EntityId = number & { readonly __brand: 'EntityId' };

export const asEntityId = (n: number): EntityId => n as EntityId;

/** The official server's entity shape: what clients send and receive. */
export interface Entity {
  readonly name: string;
  readonly entityType: string;
  readonly observations: readonly string[];
}

/**
 * The official server's relation shape, with Limbic's optional `context` (issue 25 item 19: the
 * seed system's free text on why the relation holds) and `ended_at`. Each is absent when it does not
 * apply, so a current relation without a context has exactly the official shape.
 */
export interface Relation {
  readonly from: string;
  readonly to: string;
  readonly relationType: string;
  readonly context?: string | undefined;
  /**
   * When end_relation ended it (ISO 8601), as stores read it; absent on a current relation and on
   * every relation a client sends. The official tools leave ended relations out unless asked
   * (issue 33: listed without a marker, one reads as current).
   */
  readonly ended_at?: string | undefined;
}

/** Whether a relation still holds (end_relation has not ended it). */
export const isCurrent = (r: Relation): boolean => r.ended_at === undefined;

export interface KnowledgeGraph {
  readonly entities: readonly Entity[];
  readonly relations: readonly Relation[];
}

/**
 * Lifecycle of an entity (its search factor: docs/ranking.md), in English in every answer. The
 * seed system's Spanish words are accepted on input as synonyms.
 */
export const ENTITY_STATUSES = ['active', 'paused', 'completed', 'archived'] as const;
export type EntityStatus = (typeof ENTITY_STATUSES)[number];

/**
 * The word each status is stored as: the seed's Spanish, as every database written so far holds it
 * and as both schemas' CHECK constraints require (issue 25: the stores translate at their boundary
 * rather than rewrite rows, so a database stays readable by the Limbic that wrote it).
 */
export const STORED_STATUS: Readonly<Record<EntityStatus, string>> = {
  active: 'activo',
  paused: 'pausado',
  completed: 'completado',
  archived: 'archivado',
};

const STATUS_ALIASES: Readonly<Record<string, EntityStatus>> = {
  active: 'active',
  activo: 'active',
  paused: 'paused',
  pausado: 'paused',
  completed: 'completed',
  completado: 'completed',
  archived: 'archived',
  archivado: 'archived',
};

/** Maps a user's status word (English or Spanish, any case) to the status, or undefined. */
export function parseStatus(word: string): EntityStatus | undefined {
  return Object.hasOwn(STATUS_ALIASES, word.trim().toLowerCase()) ? STATUS_ALIASES[word.trim().toLowerCase()] : undefined;
}

/** A stored status word as the status it names; a word no Limbic writes reads as active. */
export const statusFromStored = (word: string): EntityStatus => parseStatus(word) ?? 'active';

/**
 * Hierarchical relation types, in English; the seed system's Spanish names (contiene / parte_de)
 * are their synonyms. Relation types stay free-form: these are the ones Limbic writes itself
 * (execute_entity_split) and the ones the opt-in inverse knows (LIMBIC_INVERSE_RELATIONS).
 */
export const CONTAINS = 'contains';
export const PART_OF = 'part_of';

const INVERSE_RELATION: Readonly<Record<string, string>> = {
  [CONTAINS]: PART_OF,
  [PART_OF]: CONTAINS,
  contiene: 'parte_de',
  parte_de: 'contiene',
};

/**
 * The inverse of a hierarchical relation type, in the same language, or undefined for any other type.
 * @example inverseRelationType('contains') // 'part_of'
 */
export function inverseRelationType(type: string): string | undefined {
  return Object.hasOwn(INVERSE_RELATION, type) ? INVERSE_RELATION[type] : undefined;
}

/** Observation kinds: free-form, `generic` by default; `metadata` counts toward the penalty. */
export const DEFAULT_OBSERVATION_KIND = 'generic';
export const METADATA_KIND = 'metadata';

/** An entity as a client creates it, with Limbic's optional extras. */
export interface NewEntity extends Entity {
  readonly status?: EntityStatus | undefined;
}

/** One `add_observations` item, with Limbic's optional kind. */
export interface ObservationAddition {
  readonly entityName: string;
  readonly contents: readonly string[];
  readonly kind?: string | undefined;
}

export interface ObservationAdditionResult {
  readonly entityName: string;
  readonly addedObservations: string[];
}

export interface ObservationDeletion {
  readonly entityName: string;
  readonly observations: readonly string[];
}
