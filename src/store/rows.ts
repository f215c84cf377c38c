/**
 * Rows as both backends' schemas name their columns (SQLite's schema.ts and Postgres's
 * migrations.ts keep the same names), so each backend maps them to core types the same way.
 */
import type { EntityStatus, Relation } from '../core/types.js';

export interface EntityRow {
  id: number;
  name: string;
  entity_type: string;
  status: EntityStatus;
  created_at: number;
  updated_at: number;
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
}

export function toRelation(r: RelationRow): Relation {
  return { from: r.from_name, to: r.to_name, relationType: r.relation_type };
}
