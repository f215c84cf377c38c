/**
 * Rows as both backends' schemas name their columns (SQLite's schema.ts and Postgres's
 * migrations.ts keep the same names), so each backend maps them to core types the same way.
 */
import type { EntityFacts } from '../core/signals.js';
import { asEntityId, isCurrent, METADATA_KIND, statusFromStored, type Entity, type Relation } from '../core/types.js';
import type { Page, RelationWindow, StoredEntity } from './graph-store.js';
import type { CoOccurrenceRecord, RelationRecord } from './transfer-store.js';

export interface EntityRow {
  id: number;
  name: string;
  entity_type: string;
  /** The stored word (core/types.ts STORED_STATUS). */
  status: string;
  created_at: number;
  updated_at: number;
  /** The project key (capture-store.ts); NULL for a global entity. */
  project: string | null;
}

/** An entity row with what ranking reads besides: its relation count and metadata observations. */
export interface FactsRow extends EntityRow {
  degree: number;
  metadata: number;
}

export interface RelationRow {
  from_name: string;
  to_name: string;
  relation_type: string;
  /** Read where answers show it; undefined where a query leaves it out (embedding text). */
  context?: string | null;
  /** When end_relation ended it (epoch ms); read where answers list relations. */
  ended_at?: number | null;
}

/**
 * A relation as answers show it: `context` only when it has one and `ended_at` only when it ended,
 * so a current one without a context keeps the official shape.
 */
export function toRelation(r: RelationRow): Relation {
  return withContext(r.from_name, r.to_name, r.relation_type, r.context, r.ended_at);
}

export function withContext(
  from: string,
  to: string,
  relationType: string,
  context: string | null | undefined,
  endedAt?: number | null,
): Relation {
  return {
    from,
    to,
    relationType,
    ...(context === null || context === undefined ? {} : { context }),
    ...(endedAt === null || endedAt === undefined ? {} : { ended_at: new Date(endedAt).toISOString() }),
  };
}

/** A relation row as limbic migrate reads it: with its id (the cursor), times and end. */
export interface RelationRecordRow extends RelationRow {
  id: number;
  created_at: number;
  ended_at: number | null;
}

export function toRelationRecord(r: RelationRecordRow): RelationRecord {
  return { ...withContext(r.from_name, r.to_name, r.relation_type, r.context), createdAt: r.created_at, endedAt: r.ended_at ?? undefined };
}

/** A co-occurrence as limbic migrate reads it: the two entities by name. */
export interface CoOccurrenceRecordRow {
  a: string;
  b: string;
  co_count: number;
  last_co: number;
}

export function toCoOccurrenceRecord(r: CoOccurrenceRecordRow): CoOccurrenceRecord {
  return { a: r.a, b: r.b, count: r.co_count, lastCo: r.last_co };
}

/** What ranking reads of an entity row, given its count of observations and of `metadata` ones. */
export function toFacts(r: EntityRow, metadata: number, observations: number): EntityFacts {
  return {
    id: asEntityId(r.id),
    name: r.name,
    entityType: r.entity_type,
    status: statusFromStored(r.status),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    metadataRatio: observations === 0 ? 0 : metadata / observations,
    ...(r.project === null || r.project === undefined ? {} : { project: r.project }),
  };
}

/** A full entity from its row and its observations' text and kinds, in order. */
export function toStoredEntity(r: EntityRow, contents: readonly string[], kinds: readonly string[]): StoredEntity {
  const metadata = kinds.filter((k) => k === METADATA_KIND).length;
  return { ...toFacts(r, metadata, kinds.length), observations: contents, kinds };
}

/** The official shape of an entity, with an observations array of its own. */
export function publicEntity(e: Entity): Entity {
  return { name: e.name, entityType: e.entityType, observations: [...e.observations] };
}

/** Whole numbers, never negative (SQLite reads a negative LIMIT as "no limit"). */
export function cleanPage(page: Page): Page {
  return { limit: Math.max(0, Math.floor(page.limit)), offset: Math.max(0, Math.floor(page.offset)) };
}

/**
 * A window of relations already held in memory (SQLite's search index holds them all), counted
 * as a query would: ended ones left out unless the window includes them.
 */
export function pagedRelations(all: readonly Relation[], window: RelationWindow): { relations: Relation[]; relationCount: number } {
  const listed = window.includeEnded ? all : all.filter(isCurrent);
  return { relations: listed.slice(window.offset, window.offset + window.limit), relationCount: listed.length };
}
