/**
 * The capture capability (optional): what storing conversations needs beyond the graph's tool
 * writes (docs/capture.md). A captured turn keeps its own kind and the time it happened, an entity
 * belongs to a project (entities.project), a turn held already is skipped in one statement, and an
 * entity stops growing at its bounds so the caller continues it in a next part. Plus the reads of
 * the brief and of `limbic projects`.
 */
import type { EntityFacts } from '../core/signals.js';
import type { EntityId, EntityStatus } from '../core/types.js';

/** One observation with its own kind and time (a captured turn). */
export interface DatedObservation {
  readonly content: string;
  readonly kind: string;
  /** When it happened, epoch ms. */
  readonly createdAt: number;
}

export interface AppendRequest {
  readonly name: string;
  /** The type an entity created by this append gets (an existing entity keeps its own). */
  readonly entityType: string;
  /** The project key an entity created by this append gets; undefined: global (an existing entity keeps its own). */
  readonly project: string | undefined;
  /** In order; each is added unless the entity, or one of `heldBy`, holds the same text. */
  readonly observations: readonly DatedObservation[];
  /** Other entities whose observations count as held already (a session's earlier parts). */
  readonly heldBy?: readonly string[] | undefined;
  /** The entity holds at most this many observations and UTF-8 bytes of them; what does not fit is returned. */
  readonly maxObservations: number;
  readonly maxBytes: number;
}

export interface AppendResult {
  /** The entity did not exist and was created. */
  readonly created: boolean;
  readonly added: readonly DatedObservation[];
  /** How many were held already (by the entity, by `heldBy`, or given twice): not stored again. */
  readonly held: number;
  /** What did not fit in the entity's bounds, in order (none held already): for the next part. */
  readonly overflow: readonly DatedObservation[];
}

/** An entity of a project as the brief reads it: its facts, its size, and the first and last observations of some kinds. */
export interface ProjectEntity extends EntityFacts {
  readonly observationCount: number;
  /** The first and last of its observations whose kind is one asked for; undefined when it has none. */
  readonly first: DatedObservation | undefined;
  readonly last: DatedObservation | undefined;
}

export interface ProjectSummary {
  readonly project: string;
  readonly entities: number;
  readonly observations: number;
  /** The newest updated_at of its entities, epoch ms. */
  readonly lastUpdated: number;
}

/** Where the brief's open decisions are read: the entities of `project` or among `ids`, of `status` when given. */
export interface KindsScope {
  readonly project: string | undefined;
  readonly ids: readonly EntityId[];
  readonly status: EntityStatus | undefined;
  readonly limit: number;
}

/** An observation of one of the asked kinds, with its entity's facts. */
export interface KindObservation {
  readonly entity: EntityFacts;
  readonly observation: DatedObservation;
}

export interface CaptureStore {
  /**
   * Creates the entity when missing (with its type and project) and appends the observations that
   * are new and fit, each with its kind and time, in one transaction; keyword rows and the
   * embedding queue follow as for any write, and an entity that gained nothing is left untouched.
   */
  append(request: AppendRequest, now: number): Promise<AppendResult>;
  /** Names starting with `prefix` and holding `containing`, in name order, at most `limit`. */
  namesStartingWith(prefix: string, containing: string, limit: number): Promise<string[]>;
  /**
   * Entities of one project (and type, when given), most recently updated first, each with its first
   * and last observation of one of `kinds` (none asked: no observations read).
   */
  projectEntities(
    project: string,
    options: { readonly entityType?: string | undefined; readonly kinds?: readonly string[] | undefined; readonly limit: number },
  ): Promise<ProjectEntity[]>;
  /**
   * Observations of one of `kinds` in the entities of `project` or among `ids`, of `status` when
   * given, newest first: the brief's open decisions.
   */
  observationsOfKinds(kinds: readonly string[], options: KindsScope): Promise<KindObservation[]>;
  /** Whether any entity belongs to a project other than `project` (cheap: a search from inside a project asks). */
  holdsOtherProjects(project: string): Promise<boolean>;
  /** Every project with how much it holds, most recently updated first. */
  projects(): Promise<ProjectSummary[]>;
  /** Gives every entity of project `from` the project `to`; returns how many moved. */
  moveProject(from: string, to: string): Promise<number>;
}
