/**
 * The transfer capability (optional): a whole memory read out and merged in with nothing lost, for
 * `limbic migrate` between backends. Records carry what the graph API leaves out: statuses, times
 * and kinds of observations, superseded observations, relations' end, usage signals by name,
 * vectors. (The tuner's log and parameters go through the tuning capability.) Reads page by a cursor; writes merge
 * idempotently (what exists stays, counts take the larger value), so running a migration twice adds
 * nothing.
 */

export interface ObservationRecord {
  readonly content: string;
  readonly kind: string;
  readonly createdAt: number;
}

/** An observation replaced by `supersedes` (maintenance-store.ts), as its history keeps it. */
export interface SupersededRecord extends ObservationRecord {
  readonly supersededAt: number;
  readonly supersededBy: string;
}

export interface EntityRecord {
  readonly name: string;
  readonly entityType: string;
  readonly status: string;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** The project it belongs to (capture-store.ts); undefined for a global entity. */
  readonly project?: string | undefined;
  /** In creation order. */
  readonly observations: readonly ObservationRecord[];
  /** Its superseded observations, oldest first; empty on a backend without maintenance. */
  readonly superseded: readonly SupersededRecord[];
  readonly access: { readonly count: number; readonly lastAccess: number; readonly days: readonly string[] } | undefined;
  /** The stored vector, when one is indexed (for the model `vectorModel()` names). */
  readonly vector: Float32Array | undefined;
}

export interface RelationRecord {
  readonly from: string;
  readonly to: string;
  readonly relationType: string;
  /** Its context, when it was created with one. */
  readonly context?: string | undefined;
  readonly createdAt: number;
  /** When end_relation ended it; undefined while current. */
  readonly endedAt: number | undefined;
}

export interface CoOccurrenceRecord {
  readonly a: string;
  readonly b: string;
  readonly count: number;
  readonly lastCo: number;
}

export interface TransferPage<T> {
  readonly records: T[];
  /** Pass back for the next page; undefined after the last. */
  readonly next: number | undefined;
}

export interface TransferWriteCounts {
  readonly entities: number;
  readonly observations: number;
  readonly superseded: number;
  readonly vectors: number;
}

/** How many rows a memory holds, per table (what limbic migrate's check compares). */
export interface TransferCounts {
  readonly entities: number;
  readonly observations: number;
  readonly superseded: number;
  readonly relations: number;
  readonly coOccurrences: number;
}

/** A relation's identity: at most one relation per triple. */
export interface RelationKey {
  readonly from: string;
  readonly to: string;
  readonly relationType: string;
}

export interface TransferStore {
  /** The model and size the stored vectors were made with, if any. */
  vectorModel(): Promise<{ readonly model: string; readonly dims: number } | undefined>;
  readEntities(cursor: number, limit: number): Promise<TransferPage<EntityRecord>>;
  readRelations(cursor: number, limit: number): Promise<TransferPage<RelationRecord>>;
  /** The entities of these names that exist, as readEntities gives them (any order). */
  readEntitiesNamed(names: readonly string[]): Promise<EntityRecord[]>;
  /** The relations of these triples that exist (any order). */
  readRelationsKeyed(keys: readonly RelationKey[]): Promise<RelationRecord[]>;
  counts(): Promise<TransferCounts>;
  readCoOccurrences(cursor: number, limit: number): Promise<TransferPage<CoOccurrenceRecord>>;
  /**
   * Merges entities: new ones with their times and status, new observations with their kind and
   * time, superseded observations the target lacks, access counts raised to the record's. Vectors are stored only when `vectors` is true (the
   * caller checked both sides use the same model); an entity whose text changed is queued instead.
   */
  writeEntities(records: readonly EntityRecord[], vectors: boolean): Promise<TransferWriteCounts>;
  /** Merges relations (a new one keeps its end; an existing one its own state); returns how many were new. */
  writeRelations(records: readonly RelationRecord[]): Promise<number>;
  /** Raises co-occurrence counts to the records' (pairs of names that are both entities). */
  writeCoOccurrences(records: readonly CoOccurrenceRecord[]): Promise<number>;
}
