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

/** The official server's relation shape. */
export interface Relation {
  readonly from: string;
  readonly to: string;
  readonly relationType: string;
}

export interface KnowledgeGraph {
  readonly entities: readonly Entity[];
  readonly relations: readonly Relation[];
}

/**
 * Lifecycle of an entity (its search factor: docs/ranking.md). Stored in the spec's Spanish
 * names; the English names map to the same values.
 */
export const ENTITY_STATUSES = ['activo', 'pausado', 'completado', 'archivado'] as const;
export type EntityStatus = (typeof ENTITY_STATUSES)[number];

const STATUS_ALIASES: Readonly<Record<string, EntityStatus>> = {
  activo: 'activo',
  active: 'activo',
  pausado: 'pausado',
  paused: 'pausado',
  completado: 'completado',
  completed: 'completado',
  archivado: 'archivado',
  archived: 'archivado',
};

/** Maps a user's status word (Spanish or English, any case) to the stored value, or undefined. */
export function parseStatus(word: string): EntityStatus | undefined {
  return STATUS_ALIASES[word.trim().toLowerCase()];
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
