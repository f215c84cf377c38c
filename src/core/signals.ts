/**
 * What the store tells search about its candidates: the legs' hits and the facts and usage signals
 * the limbic re-ranker reads. Core owns these types; stores produce them, core/rank consumes them.
 */
import type { EntityId, EntityStatus } from './types.js';

/** One keyword-leg hit. BM25 as FTS5 reports it: lower (more negative) is better. */
export interface KeywordHit {
  readonly id: EntityId;
  readonly bm25: number;
}

/** One vector-leg hit. Cosine distance, 1 - cos, in [0, 2]. */
export interface VectorHit {
  readonly id: EntityId;
  readonly distance: number;
}

/** What the re-ranker reads of a candidate entity. */
export interface RankFacts {
  readonly status: EntityStatus;
  readonly createdAt: number;
  /** Share of observations whose kind is `metadata`, 0 when there are none. */
  readonly metadataRatio: number;
  /**
   * The project the entity belongs to (captured conversations and project entities, docs/capture.md);
   * undefined for a global one, as everything written through the tools is.
   */
  readonly project?: string | undefined;
}

/** A candidate's facts without its observations: what ranking and filtering read. */
export interface EntityFacts extends RankFacts {
  readonly id: EntityId;
  readonly name: string;
  readonly entityType: string;
  readonly updatedAt: number;
}

/** Access counts of one entity. */
export interface AccessFacts {
  readonly accessCount: number;
  readonly lastAccess: number;
  readonly accessDays: number;
}

/** Two entities returned together, in canonical order (a < b). */
export interface CoOccurrencePair {
  readonly a: EntityId;
  readonly b: EntityId;
  readonly count: number;
  readonly lastCo: number;
}

/**
 * Facts and usage signals of a candidate set: everything the limbic re-ranker reads. Stores return
 * it with full EntityFacts; the ranker needs only RankFacts.
 */
export interface CandidateSignals<F extends RankFacts = EntityFacts> {
  /** Candidates that exist; a deleted id is absent. */
  readonly facts: ReadonlyMap<EntityId, F>;
  readonly access: ReadonlyMap<EntityId, AccessFacts>;
  readonly degree: ReadonlyMap<EntityId, number>;
  /** Pairs within the candidate set only. */
  readonly coOccurrences: readonly CoOccurrencePair[];
}
