/**
 * The tuning capability (optional): the shadow log of searches with their implicit relevance, and
 * the ranking parameters `limbic tune --apply` chose. A backend without it ranks with the spec's
 * constants and logs nothing.
 */
import type { ParametersInForce, RankParameters, ShadowEvent } from '../core/tune/shadow.js';
import type { EntityId } from '../core/types.js';

export interface TuningStore {
  /**
   * The stored parameters, or undefined when none were applied. Read before every search, so it
   * must be cheap, and must see another process's apply without a restart.
   */
  parameters(): Promise<ParametersInForce | undefined>;
  setParameters(parameters: RankParameters, at: number): Promise<void>;
  /** Back to the defaults: forgets the stored values. */
  resetParameters(): Promise<void>;
  /** Appends one search to the log, dropping the oldest beyond the log's bound. */
  appendShadow(event: ShadowEvent): Promise<void>;
  /**
   * These entities were opened at `now`: each one counts as relevant in the latest logged search
   * within `windowMs` before that listed it. Resolves to how many searches were credited.
   */
  recordFeedback(ids: readonly EntityId[], now: number, windowMs: number): Promise<number>;
  /** The logged searches, oldest first, with their relevance. */
  shadowEvents(): Promise<ShadowEvent[]>;
  /** Drops all but the newest `keep` logged searches; resolves to how many were dropped. */
  pruneShadow(keep: number): Promise<number>;
}
