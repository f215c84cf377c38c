/**
 * The graph capability: the official memory server's contract (entities, observations, relations)
 * plus Limbic's statuses, bulk import and hydration of search results. Every backend has it.
 */
import type { EntityFacts } from '../core/signals.js';
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

export interface ImportBatch {
  readonly entities: readonly NewEntity[];
  readonly relations: readonly Relation[];
}

export interface ImportCounts {
  readonly entitiesAdded: number;
  readonly observationsAdded: number;
  readonly relationsAdded: number;
}

/** A window over an ordered answer. */
export interface Page {
  readonly limit: number;
  readonly offset: number;
}

/**
 * Which of an answer's relations it carries (relations_offset, relations_limit; issue 35): a hub's
 * relations are cut in the query, so one page never reads them all.
 */
export interface RelationWindow {
  readonly offset: number;
  readonly limit: number;
  /** Relations end_relation ended too; false: current ones only (they are counted the same way). */
  readonly includeEnded: boolean;
}

/** What a read with a RelationWindow adds: how many relations the whole answer holds, every page together. */
export interface RelationCount {
  readonly relationCount?: number;
}

/** One page of a graph answer, with how many entities the whole answer holds. */
export interface GraphPage extends KnowledgeGraph, RelationCount {
  /** Entities in the whole answer, every page together. */
  readonly total: number;
}

/** An entity without its observations' text: read_graph's compact form. */
export interface EntityOutline {
  readonly name: string;
  readonly entityType: string;
  readonly observationCount: number;
}

export interface GraphOutline extends RelationCount {
  readonly entities: readonly EntityOutline[];
  readonly relations: readonly Relation[];
  readonly total: number;
}

export interface StoredEntity extends Entity, EntityFacts {
  readonly id: EntityId;
  /** Kind of each observation, in the same order. */
  readonly kinds: readonly string[];
}

export interface GraphStore {
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
   * The whole graph, or one page of it: entities in creation order, with the relations whose `from`
   * is one of the page's entities; the last page also carries relations whose `from` names no
   * entity, so the pages together hold every relation exactly once. With `relations`, only that
   * window of them (in the same order) and relationCount; without, every one, ended ones included.
   */
  readGraph(page?: Page, relations?: RelationWindow): Promise<GraphPage>;
  /** read_graph's compact form: names, types and observation counts, paged like readGraph. */
  outline(page?: Page, relations?: RelationWindow): Promise<GraphOutline>;
  /**
   * The official substring contract, ranked best first (ties by id, so pages never repeat or skip);
   * relations with at least one endpoint in the page (with `relations`, that window of them).
   */
  searchNodes(query: string, page?: Page, relations?: RelationWindow): Promise<GraphPage>;
  /**
   * Starts building what makes searchNodes fast (in the background), where a store has such a
   * thing; resolves when that build is over.
   */
  warmSearch?(): Promise<void>;
  /** Exact names; relations with at least one endpoint in the set (with `relations`, that window of them). */
  openNodes(names: readonly string[], relations?: RelationWindow): Promise<KnowledgeGraph & RelationCount>;
  /** Ids of the named entities that exist, in the order given. */
  idsByName(names: readonly string[]): Promise<EntityId[]>;
  /** Full entities with status and kinds, for hydrating search results. */
  entitiesById(ids: readonly EntityId[]): Promise<Map<EntityId, StoredEntity>>;
  /** Relations touching these entities whose both endpoints exist, as id pairs (graph-aware ranking). */
  edgesTouching(ids: readonly EntityId[]): Promise<{ readonly from: EntityId; readonly to: EntityId }[]>;
  /**
   * Relations between two entities of the set (not ended), as id pairs in the order they were made:
   * edgesTouching without the relations to entities outside the set, which the context stage has no
   * use for and which cost a relation row and two name lookups each (most of that stage at 1M).
   */
  edgesAmong(ids: readonly EntityId[]): Promise<{ readonly from: EntityId; readonly to: EntityId }[]>;
}
