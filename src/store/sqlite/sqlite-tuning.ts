/**
 * The tuning capability on SQLite: the shadow log (tables tuning_events and tuning_candidates,
 * schema.ts migrations 5 and 8) and the applied parameters (meta keys tuning_*). Every search reads the
 * parameters, so they are cached per process behind meta `tuning_version`, which every apply and
 * reset increments: one indexed read per search, and another process's apply is seen by the next
 * search without a restart.
 */
import type { ParametersInForce, RankParameters, ShadowEvent } from '../../core/tune/shadow.js';
import type { EntityId } from '../../core/types.js';
import { EVENT_COLUMNS, SHADOW_LOG_EVENTS, eventValues, toShadowEvents, type CandidateRow, type EventRow } from '../tuning-rows.js';
import type { TuningStore } from '../tuning-store.js';
import type { SqliteConnection } from './sqlite-connection.js';

const KEYS = {
  gamma: 'tuning_gamma',
  betaSal: 'tuning_beta_sal',
  rrfK: 'tuning_rrf_k',
  at: 'tuning_at',
  version: 'tuning_version',
} as const;

export class SqliteTuning implements TuningStore {
  private cached: { version: string | undefined; value: ParametersInForce | undefined } | undefined;

  constructor(
    private readonly conn: SqliteConnection,
    private readonly keep = SHADOW_LOG_EVENTS,
  ) {}

  async parameters(): Promise<ParametersInForce | undefined> {
    const version = this.conn.metaGet(KEYS.version);
    if (this.cached !== undefined && this.cached.version === version) return this.cached.value;
    const gamma = this.conn.metaGet(KEYS.gamma);
    const betaSal = this.conn.metaGet(KEYS.betaSal);
    const rrfK = this.conn.metaGet(KEYS.rrfK);
    const at = this.conn.metaGet(KEYS.at);
    const value =
      gamma === undefined || betaSal === undefined || rrfK === undefined
        ? undefined
        : {
            gamma: Number(gamma),
            betaSal: Number(betaSal),
            rrfK: Number(rrfK),
            source: 'tuned' as const,
            tunedAt: at === undefined ? undefined : Number(at),
          };
    this.cached = { version, value };
    return value;
  }

  async setParameters(p: RankParameters, at: number): Promise<void> {
    this.conn.write(() => {
      this.conn.metaSet(KEYS.gamma, String(p.gamma));
      this.conn.metaSet(KEYS.betaSal, String(p.betaSal));
      this.conn.metaSet(KEYS.rrfK, String(p.rrfK));
      this.conn.metaSet(KEYS.at, String(at));
      this.bumpVersion();
    }, false);
  }

  async resetParameters(): Promise<void> {
    this.conn.write(() => {
      this.conn.stmt('DELETE FROM meta WHERE key IN (?, ?, ?, ?)').run(KEYS.gamma, KEYS.betaSal, KEYS.rrfK, KEYS.at);
      this.bumpVersion();
    }, false);
  }

  async appendShadow(e: ShadowEvent): Promise<void> {
    this.conn.write(() => {
      const info = this.conn
        .stmt(`INSERT INTO tuning_events (${EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
        .run(...eventValues(e, (b) => (b ? 1 : 0)));
      const id = Number(info.lastInsertRowid);
      const insert = this.conn.stmt(
        `INSERT INTO tuning_candidates (event_id, position, entity_id, base, semantic_rank, keyword_rank, graph_part, importance, temporal, cooc, multiplier, relevance, boosted, refind)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      e.candidates.forEach((c, i) => {
        insert.run(
          id,
          i,
          c.id,
          c.base,
          c.semanticRank ?? null,
          c.keywordRank ?? null,
          c.graphPart,
          c.importance,
          c.temporal,
          c.cooc,
          c.multiplier,
          c.relevance,
          c.boosted ? 1 : 0,
          c.refind ?? 0,
        );
      });
      // Bounded: ids only grow (AUTOINCREMENT), so everything this far behind the newest is the oldest.
      this.conn.stmt('DELETE FROM tuning_events WHERE id <= ?').run(id - this.keep);
    }, false);
  }

  async recordFeedback(ids: readonly EntityId[], now: number, windowMs: number): Promise<number> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return 0;
    return this.conn.write(() => {
      const credit = this.conn.stmt(
        // The newest search in the window that listed the entity: its rows by the index on
        // (entity_id, event_id) (schema.ts migration 9), each one's time by the event's key.
        `UPDATE tuning_candidates SET relevance = 1
          WHERE entity_id = @id AND event_id = (
            SELECT max(c.event_id) FROM tuning_candidates c JOIN tuning_events e ON e.id = c.event_id
             WHERE c.entity_id = @id AND e.at BETWEEN @since AND @now)`,
      );
      let credited = 0;
      for (const id of unique) credited += credit.run({ id, now, since: now - windowMs }).changes > 0 ? 1 : 0;
      return credited;
    }, false);
  }

  async shadowEvents(): Promise<ShadowEvent[]> {
    const candidates = this.conn.stmt<[], CandidateRow>('SELECT * FROM tuning_candidates ORDER BY event_id, position').all();
    return toShadowEvents(this.conn.stmt<[], EventRow>('SELECT * FROM tuning_events ORDER BY id').all(), candidates);
  }

  async pruneShadow(keep: number): Promise<number> {
    return this.conn.write(() => {
      const newest = this.conn.stmt<[], { id: number | null }>('SELECT max(id) AS id FROM tuning_events').get()?.id ?? 0;
      return this.conn.stmt('DELETE FROM tuning_events WHERE id <= ?').run(newest - keep).changes;
    }, false);
  }

  private bumpVersion(): void {
    this.conn
      .stmt("INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1")
      .run(KEYS.version);
  }
}
