/** The vector capability: KNN over entity embeddings, and the queue of entities to embed. A backend may lack it. */
import type { VectorHit } from '../core/signals.js';
import type { Entity, EntityId, Relation } from '../core/types.js';

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
  /**
   * One vector per observation (core/text/entity-text.ts observationText), made when the entity's
   * whole text does not fit one vector and the index keeps them; absent, the entity has none (any
   * it had go).
   */
  readonly observations?: readonly Float32Array[];
  /**
   * One vector per aside (core/text/entity-text.ts splitAsides: an observation in another language
   * than the entity's, left out of its vector), where the index keeps observation vectors; search
   * answers the entity at an aside's distance plus ASIDE_DISTANCE. Absent: none (any it had go).
   */
  readonly asides?: readonly Float32Array[];
  /**
   * Each aside vector's key, in the order of `asides`: a hash of the model and the text it was made
   * from (embedding-indexer.ts asideKey). A later write to the entity reuses the vector of an aside
   * whose key is unchanged (asideVectors) instead of embedding it again.
   */
  readonly asideKeys?: readonly string[];
}

export interface VectorStatus {
  readonly model: string | undefined;
  readonly dims: number | undefined;
  readonly indexed: number;
  readonly pending: number;
}

export interface VectorIndex {
  /**
   * Whether put keeps observation vectors, and search answers an entity at the nearest of its own
   * vector and its observations' (a fact left out of a long entity's text is still found).
   */
  readonly keepsObservationVectors?: boolean;
  /** Binds the index to a model; a different model or size drops old vectors and re-queues all. */
  configure(model: string, dims: number): Promise<{ readonly reset: boolean }>;
  status(): Promise<VectorStatus>;
  /** KNN by cosine distance, nearest first. */
  search(query: Float32Array, limit: number): Promise<VectorHit[]>;
  /**
   * The observation vectors of these entities (where keepsObservationVectors), each entity's in the
   * order of the observations they were made from; an entity that has none is absent. A search
   * shows the observations nearest the query first (src/service/search/shown.ts).
   */
  observationVectors?(ids: readonly EntityId[]): Promise<Map<EntityId, Float32Array[]>>;
  /**
   * The aside vectors these entities have, each by the key it was put with (EmbeddingResult.asideKeys);
   * an entity with none is absent, and so is an aside stored without a key.
   */
  asideVectors?(ids: readonly EntityId[]): Promise<Map<EntityId, Map<string, Float32Array>>>;
  /** Gets the index ready (loads any in-memory copy) so the first search does not pay for it. */
  warm(): Promise<void>;

  /** Queued jobs, counted up to `upTo` (cheap: the search path asks on every call). */
  countPending(upTo: number): Promise<number>;
  /**
   * Oldest queued jobs first, claimed: another process sharing the store does not take them until
   * they are put or their lease runs out (the process died).
   */
  takeJobs(limit: number): Promise<EmbeddingJob[]>;
  /** Stores vectors; a job whose entity changed again since it was taken stays queued. */
  put(results: readonly EmbeddingResult[]): Promise<void>;
  /**
   * Gives back jobs taken here and not put (a closing process abandoned them): they stay queued,
   * free at once for any process, instead of held until their lease runs out.
   */
  releaseJobs(ids: readonly EntityId[]): Promise<void>;
  /** Queues every entity for re-embedding; returns how many. */
  requeueAll(): Promise<number>;
}
