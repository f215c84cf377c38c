/**
 * The shadow log's rows as both backends' schemas name them (SQLite schema.ts migrations 5 and 8,
 * Postgres migrations.ts migrations 2 and 4), the one way an event becomes a row and the one way
 * rows become ShadowEvents.
 */
import type { RoutingStrategy } from '../core/rank/routing.js';
import type { ShadowCandidate, ShadowEvent } from '../core/tune/shadow.js';
import { asEntityId } from '../core/types.js';

/** The log keeps this many searches, the newest; at most ~60 candidates each, a few MB in all. */
export const SHADOW_LOG_EVENTS = 2_000;

/** The columns an event is inserted with, in eventValues' order. */
export const EVENT_COLUMNS =
  'at, tool, query_hash, fusion, legs, strategy, page_offset, shown, gamma, beta_sal, rrf_k, rrf_k_pinned, reflection_boost, reflections';

/** An event's values in EVENT_COLUMNS order; `flag` writes a boolean as the backend stores one. */
export function eventValues<F>(e: ShadowEvent, flag: (b: boolean) => F): (string | number | F)[] {
  return [
    e.at,
    e.tool,
    e.queryHash,
    e.fusion,
    e.legs,
    e.strategy,
    e.offset,
    e.shown,
    e.parameters.gamma,
    e.parameters.betaSal,
    e.parameters.rrfK,
    flag(e.rrfKPinned),
    e.reflectionBoost,
    e.reflections,
  ];
}

export interface EventRow {
  id: number;
  at: number;
  tool: ShadowEvent['tool'];
  query_hash: string;
  fusion: ShadowEvent['fusion'];
  legs: number;
  strategy: RoutingStrategy;
  page_offset: number;
  shown: number;
  gamma: number;
  beta_sal: number;
  rrf_k: number;
  /** SQLite stores 0/1, Postgres a boolean. */
  rrf_k_pinned: number | boolean;
  /** 1 and 'included' for searches logged before these columns existed. */
  reflection_boost: number;
  reflections: ShadowEvent['reflections'];
}

export interface CandidateRow {
  event_id: number;
  entity_id: number;
  base: number;
  semantic_rank: number | null;
  keyword_rank: number | null;
  graph_part: number;
  importance: number;
  temporal: number;
  cooc: number;
  multiplier: number;
  relevance: number;
  /** SQLite stores 0/1, Postgres a boolean. */
  boosted: number | boolean;
  /** The re-finding score (SQLite schema 17, PostgreSQL 14; 0 for searches logged before). */
  refind: number;
}

/** Events in id order with their candidates, from both tables read whole (candidates by event, then position). */
export function toShadowEvents(events: readonly EventRow[], candidates: Iterable<CandidateRow>): ShadowEvent[] {
  const byEvent = new Map<number, ShadowCandidate[]>();
  for (const r of candidates) {
    let list = byEvent.get(r.event_id);
    if (list === undefined) byEvent.set(r.event_id, (list = []));
    list.push({
      id: asEntityId(r.entity_id),
      base: r.base,
      semanticRank: r.semantic_rank ?? undefined,
      keywordRank: r.keyword_rank ?? undefined,
      graphPart: r.graph_part,
      importance: r.importance,
      temporal: r.temporal,
      cooc: r.cooc,
      multiplier: r.multiplier,
      relevance: r.relevance,
      boosted: r.boosted === true || r.boosted === 1,
      refind: r.refind,
    });
  }
  return events.map((r) => ({
    id: r.id,
    at: r.at,
    tool: r.tool,
    queryHash: r.query_hash,
    fusion: r.fusion,
    legs: r.legs,
    strategy: r.strategy,
    offset: r.page_offset,
    shown: r.shown,
    parameters: { gamma: r.gamma, betaSal: r.beta_sal, rrfK: r.rrf_k },
    rrfKPinned: r.rrf_k_pinned === true || r.rrf_k_pinned === 1,
    reflectionBoost: r.reflection_boost,
    reflections: r.reflections,
    candidates: byEvent.get(r.id) ?? [],
  }));
}
