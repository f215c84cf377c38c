/**
 * The maintenance capability (optional): versioned observations (supersedes), relation validity
 * (end_relation), and the reads and writes the seed system's tidying tools need (duplicate
 * observations, consolidation report, entity split). A backend without it answers those tools with
 * a message saying so; every other tool works the same.
 */
import type { EntityStatus, Relation } from '../core/types.js';

/** add_observations with `supersedes`: the new contents replace one current observation. */
export interface Supersession {
  readonly entityName: string;
  readonly contents: readonly string[];
  readonly kind?: string | undefined;
  /** The exact text of the current observation these contents replace; undefined adds only. */
  readonly supersedes?: string | undefined;
}

export interface SupersessionResult {
  readonly entityName: string;
  readonly addedObservations: string[];
  /** The observation replaced, when the item had `supersedes`. */
  readonly superseded?: string;
}

export interface SupersededObservation {
  readonly content: string;
  readonly kind: string;
  readonly createdAt: number;
  readonly supersededAt: number;
  /** The observations that replaced it, joined by " | " as the call gave them. */
  readonly supersededBy: string;
}

export interface EndedRelation extends Relation {
  readonly endedAt: number;
}

export interface History {
  /** By entity name: its superseded observations, oldest first. */
  readonly superseded: ReadonlyMap<string, readonly SupersededObservation[]>;
  /** Ended relations touching the names. */
  readonly endedRelations: readonly EndedRelation[];
}

export type EndRelationOutcome =
  | { readonly state: 'ended'; readonly endedAt: number }
  | { readonly state: 'already-ended'; readonly endedAt: number }
  | { readonly state: 'missing' };

export interface CurrentObservation {
  readonly content: string;
  readonly kind: string;
}

export interface EntityObservations {
  readonly name: string;
  readonly entityType: string;
  readonly status: EntityStatus;
  /** Current (not superseded) observations, oldest first. */
  readonly observations: readonly CurrentObservation[];
}

/** One entity as the consolidation report sees it. */
export interface EntityOverview {
  readonly name: string;
  readonly entityType: string;
  readonly status: EntityStatus;
  readonly observationCount: number;
  readonly supersededCount: number;
  readonly createdAt: number;
  /** Epoch ms of the last access, undefined when never accessed. */
  readonly lastAccess: number | undefined;
  readonly accessCount: number;
}

export interface SplitChild {
  readonly name: string;
  readonly entityType: string;
  readonly observations: readonly string[];
}

export interface SplitPlan {
  readonly original: string;
  /** The entity the children are linked to (contains / part_of); the original unless given. */
  readonly parent: string;
  readonly children: readonly SplitChild[];
  /**
   * The observation the original gets, in the same transaction, when the split moves every current
   * one out (core/maintenance/split.ts, splitSummary), so no split leaves an empty entity; none when undefined.
   */
  readonly summary?: string | undefined;
}

export interface SplitOutcome {
  readonly newEntities: string[];
  readonly movedObservations: number;
  readonly relationsCreated: number;
  /** The original's own observations left after the split (the summary not counted). */
  readonly originalObservationsRemaining: number;
  /** The summary the original was given, when the split emptied it. */
  readonly summaryAdded?: string;
}

export interface MaintenanceStore {
  /**
   * All or nothing: a missing entity throws ENTITY_NOT_FOUND, a `supersedes` that is not a current
   * observation of its entity throws INVALID_INPUT, and nothing is saved.
   */
  supersede(items: readonly Supersession[], now: number): Promise<SupersessionResult[]>;
  /** Superseded observations of these entities and ended relations touching them. */
  history(names: readonly string[]): Promise<History>;
  /** Ends the relation with this exact triple; it stays listed, and stops counting for ranking. */
  endRelation(relation: Relation, now: number): Promise<EndRelationOutcome>;
  /** An entity's current observations, or undefined when it does not exist. */
  observationsOf(name: string): Promise<EntityObservations | undefined>;
  /** Every entity with its counts and access, for the consolidation report. */
  overview(): Promise<EntityOverview[]>;
  /**
   * Moves observations of the original into new child entities linked to the parent, in one
   * transaction. Throws INVALID_INPUT (nothing saved) when a child exists already, an observation
   * is not a current observation of the original, or one is given to two children.
   */
  executeSplit(plan: SplitPlan, now: number): Promise<SplitOutcome>;
}
