/**
 * The tuning capability on PostgreSQL: the shadow log (tuning_events, tuning_candidates; migrations 2 and 4)
 * and the applied parameters (meta keys tuning_*), as sqlite-tuning.ts keeps them. Parameters are
 * read on every search; they are four meta rows, read in one query, so another process's apply is
 * seen by the next search.
 */
import type { ParametersInForce, RankParameters, ShadowEvent } from '../../core/tune/shadow.js';
import type { EntityId } from '../../core/types.js';
import { EVENT_COLUMNS, SHADOW_LOG_EVENTS, eventValues, toShadowEvents, type CandidateRow, type EventRow } from '../tuning-rows.js';
import type { TuningStore } from '../tuning-store.js';
import type { PgConnection } from './pg-connection.js';

const KEYS = ['tuning_gamma', 'tuning_beta_sal', 'tuning_rrf_k', 'tuning_at'] as const;

export class PgTuning implements TuningStore {
  constructor(
    private readonly conn: PgConnection,
    private readonly keep = SHADOW_LOG_EVENTS,
  ) {}

  async parameters(): Promise<ParametersInForce | undefined> {
    const rows = await this.conn.query<{ key: string; value: string }>('SELECT key, value FROM meta WHERE key = ANY($1)', [KEYS]);
    const get = (key: string): string | undefined => rows.find((r) => r.key === key)?.value;
    const [gamma, betaSal, rrfK, at] = KEYS.map(get);
    if (gamma === undefined || betaSal === undefined || rrfK === undefined) return undefined;
    return {
      gamma: Number(gamma),
      betaSal: Number(betaSal),
      rrfK: Number(rrfK),
      source: 'tuned',
      tunedAt: at === undefined ? undefined : Number(at),
    };
  }

  async setParameters(p: RankParameters, at: number): Promise<void> {
    await this.conn.query(
      `INSERT INTO meta (key, value) SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      [[...KEYS], [String(p.gamma), String(p.betaSal), String(p.rrfK), String(at)]],
    );
  }

  async resetParameters(): Promise<void> {
    await this.conn.query('DELETE FROM meta WHERE key = ANY($1)', [KEYS]);
  }

  async appendShadow(e: ShadowEvent): Promise<void> {
    await this.conn.write(async (db) => {
      const [row] = (
        await db.query<{ id: number }>(
          `INSERT INTO tuning_events (${EVENT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id`,
          eventValues(e, (b) => b),
        )
      ).rows;
      const id = row?.id ?? 0;
      const c = e.candidates;
      await db.query(
        `INSERT INTO tuning_candidates (event_id, position, entity_id, base, semantic_rank, keyword_rank, graph_part, importance, temporal, cooc, multiplier, relevance, boosted, refind)
         SELECT $1, i - 1, entity_id, base, semantic_rank, keyword_rank, graph_part, importance, temporal, cooc, multiplier, relevance, boosted, refind FROM unnest($2::int[], $3::float8[], $4::int[], $5::int[], $6::float8[], $7::float8[], $8::float8[], $9::float8[], $10::float8[], $11::int[], $12::boolean[], $13::float8[])
           WITH ORDINALITY AS x(entity_id, base, semantic_rank, keyword_rank, graph_part, importance, temporal, cooc, multiplier, relevance, boosted, refind, i)`,
        [
          id,
          c.map((x) => x.id),
          c.map((x) => x.base),
          c.map((x) => x.semanticRank ?? null),
          c.map((x) => x.keywordRank ?? null),
          c.map((x) => x.graphPart),
          c.map((x) => x.importance),
          c.map((x) => x.temporal),
          c.map((x) => x.cooc),
          c.map((x) => x.multiplier),
          c.map((x) => x.relevance),
          c.map((x) => x.boosted),
          c.map((x) => x.refind ?? 0),
        ],
      );
      // Bounded: ids only grow, so everything this far behind the newest is the oldest.
      await db.query('DELETE FROM tuning_events WHERE id <= $1', [id - this.keep]);
    });
  }

  async recordFeedback(ids: readonly EntityId[], now: number, windowMs: number): Promise<number> {
    const unique = [...new Set(ids)].sort((a, b) => a - b);
    if (unique.length === 0) return 0;
    // Each entity credits the latest search in the window that listed it.
    const rows = await this.conn.query<{ n: number }>(
      `WITH latest AS (
         SELECT x.id AS entity_id,
                -- By the (entity_id, event_id) index (migration 7), not every search of the window.
                (SELECT max(c.event_id) FROM tuning_candidates c JOIN tuning_events e ON e.id = c.event_id
                  WHERE c.entity_id = x.id AND e.at BETWEEN $2 AND $3) AS event_id
           FROM unnest($1::int[]) AS x(id)),
       credited AS (
         UPDATE tuning_candidates t SET relevance = 1 FROM latest l
          WHERE t.entity_id = l.entity_id AND t.event_id = l.event_id RETURNING t.entity_id)
       SELECT count(DISTINCT entity_id) AS n FROM credited`,
      [unique, now - windowMs, now],
    );
    return rows[0]?.n ?? 0;
  }

  async shadowEvents(): Promise<ShadowEvent[]> {
    const candidates = await this.conn.query<CandidateRow>('SELECT * FROM tuning_candidates ORDER BY event_id, position');
    return toShadowEvents(await this.conn.query<EventRow>('SELECT * FROM tuning_events ORDER BY id'), candidates);
  }

  async pruneShadow(keep: number): Promise<number> {
    const rows = await this.conn.query<{ id: number }>(
      'DELETE FROM tuning_events WHERE id <= (SELECT coalesce(max(id), 0) FROM tuning_events) - $1 RETURNING id',
      [keep],
    );
    return rows.length;
  }
}
