/**
 * The one storage interface. Every backend lives in its own folder under src/store/ and passes
 * test/store/conformance.ts. Methods are async so a networked backend fits the same shape.
 */
import type {
  Entity,
  EntityId,
  EntityStatus,
  KnowledgeGraph,
  NewEntity,
  ObservationAddition,
  ObservationAdditionResult,
  ObservationDeletion,
  Relation,
} from '../core/types.js';
import type { CoOccurrencePair } from '../core/rank/limbic.js';
import type { AccessFacts, CandidateFacts } from '../core/rank/rank-candidates.js';

/** What a backend can do; the search pipeline degrades by these instead of catching "not implemented". */
export interface StoreCapabilities {
  /** Keyword (BM25) search over names, types and observations. */
  readonly fts: boolean;
  /** Vector KNN over entity embeddings. */
  readonly vector: boolean;
}

export interface StoreStats {
  readonly entities: number;
  readonly observations: number;
  readonly relations: number;
  /** Bytes on disk, or undefined where a backend cannot tell. */
  readonly databaseBytes: number | undefined;
  readonly location: string;
}

export interface ImportBatch {
  readonly entities: readonly NewEntity[];
  readonly relations: readonly Relation[];
}

export interface ImportCounts {
  readonly entitiesAdded: number;
  readonly observationsAdded: number;
  readonly relationsAdded: number;
}

/** An entity whose text changed and whose vector must be (re)made. */
export interface EmbeddingJob {
  readonly id: EntityId;
  /** Queue version taken; a later change re-queues with a newer version and is not lost. */
  readonly version: number;
  readonly entity: Entity;
  /** Relations leaving this entity, for the `Rel:` part of its text. */
  readonly relations: readonly Relation[];
}

export interface EmbeddingResult {
  readonly id: EntityId;
  readonly version: number;
  readonly vector: Float32Array;
}

/** How far an index compaction has got, reported after each step. */
export interface CompactionProgress {
  /** Work done and in all, in index pages (a backend's own unit; only their ratio matters). */
  readonly done: number;
  readonly total: number;
  /** How long the step just finished held the write lock, in ms (0 in the first and last reports). */
  readonly lockMs: number;
}

export type CompactionListener = (progress: CompactionProgress) => void;

export interface VectorStatus {
  readonly model: string | undefined;
  readonly dims: number | undefined;
  readonly indexed: number;
  readonly pending: number;
}

export interface KeywordHit {
  readonly id: EntityId;
  /** BM25 as FTS5 reports it: lower (more negative) is better. */
  readonly bm25: number;
}

export interface VectorHit {
  readonly id: EntityId;
  /** Cosine distance, 1 - cos, in [0, 2]. */
  readonly distance: number;
}

export interface StoredEntity extends Entity {
  readonly id: EntityId;
  readonly status: EntityStatus;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** Kind of each observation, in the same order. */
  readonly kinds: readonly string[];
  /** Share of observations whose kind is `metadata`, 0 when there are none. */
  readonly metadataRatio: number;
}

/** Access counts of one entity: the re-ranker's own type, so nothing is copied between them. */
export type AccessSignal = AccessFacts;

/** A pair seen together, in canonical order (a < b). */
export type CoOccurrence = CoOccurrencePair;

/** What ranking and filtering read of a candidate, without its observations. */
export interface EntityFacts extends CandidateFacts {
  readonly id: EntityId;
  readonly name: string;
  readonly entityType: string;
  readonly updatedAt: number;
}

/** Usage signals and facts of a candidate set, everything the limbic re-ranker reads. */
export interface RankSignals {
  /** Candidates that exist; a deleted id is absent. */
  readonly facts: ReadonlyMap<EntityId, EntityFacts>;
  readonly access: ReadonlyMap<EntityId, AccessSignal>;
  readonly degree: ReadonlyMap<EntityId, number>;
  /** Pairs within the candidate set only. */
  readonly coOccurrences: readonly CoOccurrence[];
}

export interface Store {
  readonly capabilities: StoreCapabilities;

  /** Adds entities whose names are new; returns the ones added (the official contract). */
  createEntities(entities: readonly NewEntity[], now: number): Promise<Entity[]>;
  /** Adds relations whose exact triple is new; endpoints need not exist. Returns the ones added. */
  createRelations(relations: readonly Relation[], now: number): Promise<Relation[]>;
  /** All or nothing: a missing entity throws ENTITY_NOT_FOUND and nothing is saved. */
  addObservations(items: readonly ObservationAddition[], now: number): Promise<ObservationAdditionResult[]>;
  /** Deletes entities with their observations, relations, vectors and signals; unknown names are ignored. */
  deleteEntities(names: readonly string[]): Promise<void>;
  deleteObservations(deletions: readonly ObservationDeletion[], now: number): Promise<void>;
  deleteRelations(relations: readonly Relation[], now: number): Promise<void>;
  /** Sets an entity's status; false when the entity does not exist. */
  setStatus(name: string, status: EntityStatus, now: number): Promise<boolean>;
  /** Merges a batch of a memory.jsonl file: new entities, new observations, new relations. Idempotent. */
  importBatch(batch: ImportBatch, now: number): Promise<ImportCounts>;

  /**
   * Merges each keyword index into one segment after a bulk load: keyword queries then read one
   * doclist per term instead of one per segment (a third faster at 100k entities). Works in short
   * steps, so other writers, in this process or another, keep going meanwhile.
   */
  optimizeIndexes(progress?: CompactionListener): Promise<void>;

  readGraph(): Promise<KnowledgeGraph>;
  /** The official substring contract, ranked best first; relations with at least one endpoint in the set. */
  searchNodes(query: string): Promise<KnowledgeGraph>;
  /** Exact names; relations with at least one endpoint in the set. */
  openNodes(names: readonly string[]): Promise<KnowledgeGraph>;
  /** Ids of the named entities that exist, in the order given. */
  idsByName(names: readonly string[]): Promise<EntityId[]>;
  /** Full entities with status and kinds, for hydrating search results. */
  entitiesById(ids: readonly EntityId[]): Promise<Map<EntityId, StoredEntity>>;
  stats(): Promise<StoreStats>;

  /**
   * Keyword leg: an FTS5 MATCH expression (built by core/text), best first. An expression the index
   * cannot parse throws INVALID_QUERY.
   */
  searchKeywords(match: string, limit: number): Promise<KeywordHit[]>;
  /**
   * How many entities each word's keyword term appears in (after the index's own tokenizing),
   * and how many entities there are; for pruning terms that carry no BM25 weight.
   */
  keywordTermStats(words: readonly string[]): Promise<{ readonly total: number; readonly terms: readonly { readonly word: string; readonly df: number }[] }>;
  /** Relations touching these entities whose both endpoints exist, as id pairs (graph-aware ranking). */
  edgesTouching(ids: readonly EntityId[]): Promise<{ readonly from: EntityId; readonly to: EntityId }[]>;

  /** Binds the vector table to a model; a different model or size drops old vectors and re-queues all. */
  configureVectors(model: string, dims: number): Promise<{ readonly reset: boolean }>;
  vectorStatus(): Promise<VectorStatus>;
  /** Queued embedding jobs, counted up to `upTo` (cheap: the search path asks on every call). */
  countPendingEmbeddings(upTo: number): Promise<number>;
  /** Oldest queued embedding jobs first. */
  takeEmbeddingJobs(limit: number): Promise<EmbeddingJob[]>;
  /** Stores vectors; a job whose entity changed again since it was taken stays queued. */
  putEmbeddings(results: readonly EmbeddingResult[]): Promise<void>;
  /** Queues every entity for re-embedding; returns how many. */
  requeueAllEmbeddings(): Promise<number>;
  searchVectors(query: Float32Array, limit: number): Promise<VectorHit[]>;
  /** Gets the vector leg ready (loads any in-memory index) so the first search does not pay for it. */
  warmVectors(): Promise<void>;

  rankSignals(ids: readonly EntityId[]): Promise<RankSignals>;
  /** Counts an access for each id (once per call) and a co-occurrence for each pair. */
  recordAccess(ids: readonly EntityId[], now: number): Promise<void>;

  close(): Promise<void>;
}
