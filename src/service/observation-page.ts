/** Pages of an entity's observations, for answers that could not carry them all (issue 26). */
import type { Entity } from '../core/types.js';

/**
 * Which of each entity's observations an answer carries (observations_offset, observations_limit):
 * an entity too large for one answer is read a page at a time (issue 26).
 */
export interface ObservationWindow {
  readonly offset: number;
  readonly limit: number;
}

/** An entity with one page of its observations, how many it holds, and where the next page starts. */
export interface EntityPage extends Entity {
  readonly observationCount: number;
  readonly next_observations_offset?: number;
}

/**
 * One page of an entity's observations (in stored order); the entity unchanged without a window.
 * @example observationPage({ name: 'a', entityType: 't', observations: ['x', 'y', 'z'] }, { offset: 0, limit: 2 })
 * // { name: 'a', entityType: 't', observations: ['x', 'y'], observationCount: 3, next_observations_offset: 2 }
 */
export function observationPage(entity: Entity, window: ObservationWindow | undefined): Entity | EntityPage {
  if (window === undefined) return entity;
  const observations = entity.observations.slice(window.offset, window.offset + window.limit);
  const next = window.offset + observations.length;
  // open_nodes' include_kinds: the kinds run beside the observations and are paged with them.
  const kinds = (entity as { observation_kinds?: unknown }).observation_kinds;
  return {
    ...entity,
    observations,
    ...(Array.isArray(kinds) ? { observation_kinds: kinds.slice(window.offset, window.offset + window.limit) } : {}),
    observationCount: entity.observations.length,
    ...(next < entity.observations.length && observations.length > 0 ? { next_observations_offset: next } : {}),
  };
}
