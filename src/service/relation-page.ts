/**
 * Pages of an answer's relations (relations_offset, relations_limit; issue 35): an entity with
 * 150,000 relations is read a page at a time. The store cuts the page in its query and counts
 * the rest; this module chooses the window and shapes the answer's fields.
 */
import { LIMITS } from '../core/limits.js';
import { isCurrent, type Relation } from '../core/types.js';
import type { RelationWindow } from '../store/graph-store.js';

/** relations_offset and relations_limit as the caller gave them (either may be absent). */
export interface RelationsAsked {
  readonly offset?: number | undefined;
  readonly limit?: number | undefined;
}

/** What an answer with a page of relations adds to the official shape. */
export interface RelationPageFields {
  /** Relations the whole answer holds, every page together. */
  readonly relationCount?: number;
  /** The relations_offset of the next page; absent on the last. */
  readonly next_relations_offset?: number;
}

/**
 * The window a read asks the store for: the caller's, or the first LIMITS.maxRelationsPerPage.
 * @example relationWindow(undefined, false) // { offset: 0, limit: 10000, includeEnded: false }
 */
export function relationWindow(asked: RelationsAsked | undefined, includeEnded: boolean | undefined): RelationWindow {
  return { offset: asked?.offset ?? 0, limit: asked?.limit ?? LIMITS.maxRelationsPerPage, includeEnded: includeEnded === true };
}

/**
 * The answer's relations and their fields: the page the store read, shortened to
 * LIMITS.maxRelationBytesPerPage (never below one relation). A caller that asked for no page and
 * got every relation gets the official shape, without the fields.
 * @example relationPage([r1, r2], 2, { offset: 0, limit: 10000, includeEnded: false }, undefined) // { relations: [r1, r2] }
 */
export function relationPage(
  relations: readonly Relation[],
  relationCount: number,
  window: RelationWindow,
  asked: RelationsAsked | undefined,
): { relations: readonly Relation[] } & RelationPageFields {
  const shown = withinBytes(relations);
  const next = window.offset + shown.length;
  const whole = window.offset === 0 && shown.length === relationCount;
  if (whole && asked?.offset === undefined && asked?.limit === undefined) return { relations: shown };
  return { relations: shown, relationCount, ...(next < relationCount && shown.length > 0 ? { next_relations_offset: next } : {}) };
}

/**
 * A window of relations already read whole (search_nodes from inside a project, whose hidden
 * entities are left out after the read), counted as the store counts them.
 */
export function windowOfRead(all: readonly Relation[], window: RelationWindow): { relations: Relation[]; relationCount: number } {
  const listed = window.includeEnded ? all : all.filter(isCurrent);
  return { relations: listed.slice(window.offset, window.offset + window.limit), relationCount: listed.length };
}

/** The first relations whose JSON fits in LIMITS.maxRelationBytesPerPage, at least one. */
function withinBytes(relations: readonly Relation[]): readonly Relation[] {
  // Under this many characters per relation (names, type and context at most 1,000 + 1,000 + 1,000
  // + 20,000, 3 UTF-8 bytes each, plus keys) no page can pass the bound: most answers skip the sum.
  if (relations.length * 70_000 <= LIMITS.maxRelationBytesPerPage) return relations;
  let bytes = 0;
  for (let i = 0; i < relations.length; i++) {
    bytes += Buffer.byteLength(JSON.stringify(relations[i]));
    if (bytes > LIMITS.maxRelationBytesPerPage && i > 0) return relations.slice(0, i);
  }
  return relations;
}
