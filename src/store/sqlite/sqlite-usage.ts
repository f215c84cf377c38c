/**
 * Usage signals on SQLite: what the limbic re-ranker reads of a candidate set (facts, degree,
 * accesses, co-occurrences) and the accesses each answer records.
 */
import { asEntityId, type EntityId } from '../../core/types.js';
import type { AccessFacts, CandidateSignals, CoOccurrencePair, EntityFacts } from '../../core/signals.js';
import { toFacts, type FactsRow } from '../rows.js';
import type { RefindPair } from '../../core/rank/limbic.js';
import { REFIND_PAIRS_MAX, REFIND_PAIRS_PER_ENTITY } from '../../core/rank/constants.js';
import { bytesVector, coUsePairs, vectorBytes, type CoUse, type RefindingPair, type UsageStore } from '../usage-store.js';
import { json, type SqliteConnection } from './sqlite-connection.js';

const DAY_MS = 86_400_000;
/** Co-occurrence pairs written per transaction by recordAccess (about 20-50 ms of work on this machine). */
const PAIRS_PER_WRITE = 2_000;
/** Entities whose facts are kept between searches before the cache starts over. */
const FACTS_CACHE_SIZE = 200_000;

export class SqliteUsage implements UsageStore {
  /** See cachedFacts(). */
  private readonly facts = new Map<EntityId, { readonly facts: EntityFacts; readonly degree: number }>();
  private factsAt = -1;
  /** A re-finding pair was seen: see holdsRefinding(). */
  private holding = false;

  constructor(private readonly conn: SqliteConnection) {}

  async signals(ids: readonly EntityId[]): Promise<CandidateSignals> {
    const list = json(ids);
    const known = this.cachedFacts();
    const missing = ids.filter((id) => !known.has(id));
    if (missing.length > 0) {
      // Observations are not read: their metadata share comes from a partial index, usually empty.
      for (const r of this.conn
        .stmt<[string], FactsRow>(
          `SELECT e.id, e.name, e.entity_type, e.status, e.created_at, e.updated_at, e.project,
                  (SELECT count(*) FROM relations WHERE from_name = e.name AND ended_at IS NULL) +
                  (SELECT count(*) FROM relations WHERE to_name = e.name AND ended_at IS NULL) AS degree,
                  (SELECT count(*) FROM observations m WHERE m.entity_id = e.id AND m.kind = 'metadata') AS metadata
             FROM entities e WHERE e.id IN (SELECT value FROM json_each(?))`,
        )
        .all(json(missing))) {
        const id = asEntityId(r.id);
        const observations =
          r.metadata === 0
            ? 0
            : (this.conn.stmt<[number], { n: number }>('SELECT count(*) AS n FROM observations WHERE entity_id = ?').get(r.id)?.n ?? 0);
        if (known.size >= FACTS_CACHE_SIZE) known.clear();
        known.set(id, {
          facts: toFacts(r, r.metadata, observations),
          degree: r.degree,
        });
      }
    }
    const facts = new Map<EntityId, EntityFacts>();
    const degree = new Map<EntityId, number>();
    for (const id of ids) {
      const k = known.get(id);
      if (k === undefined) continue;
      facts.set(id, k.facts);
      degree.set(id, k.degree);
    }
    const access = new Map<EntityId, AccessFacts>();
    for (const r of this.conn
      .stmt<[string], { id: number; access_count: number; last_access: number; days: number }>(
        `SELECT a.entity_id AS id, a.access_count, a.last_access,
                (SELECT count(*) FROM entity_access_days d WHERE d.entity_id = a.entity_id) AS days
           FROM entity_access a WHERE a.entity_id IN (SELECT value FROM json_each(?))`,
      )
      .all(list)) {
      access.set(asEntityId(r.id), { accessCount: r.access_count, lastAccess: r.last_access, accessDays: r.days });
    }
    // Each candidate's partners by the primary key's prefix, kept when the partner is a candidate
    // too (the unary + keeps SQLite from probing every pair of candidates instead: with 200
    // candidates that was 40,000 probes a search, the largest cost of a search under load).
    const coOccurrences: CoOccurrencePair[] = this.conn
      .stmt<[string, string], { a: number; b: number; co_count: number; last_co: number }>(
        `SELECT c.entity_a_id AS a, c.entity_b_id AS b, c.co_count, c.last_co FROM co_occurrences c
          WHERE c.entity_a_id IN (SELECT value FROM json_each(?)) AND +c.entity_b_id IN (SELECT value FROM json_each(?))`,
      )
      .all(list, list)
      .map((r) => ({ a: asEntityId(r.a), b: asEntityId(r.b), count: r.co_count, lastCo: r.last_co }));
    return { facts, access, degree, coOccurrences };
  }

  async recordAccess(ids: readonly EntityId[], now: number, coUse: CoUse = 'all'): Promise<void> {
    const unique = [...new Set(ids)].sort((a, b) => a - b);
    if (unique.length === 0) return;
    const day = new Date(Math.floor(now / DAY_MS) * DAY_MS).toISOString().slice(0, 10);
    this.conn.write(() => {
      const access = this.conn.stmt(
        `INSERT INTO entity_access (entity_id, access_count, last_access) SELECT @id, 1, @now WHERE EXISTS (SELECT 1 FROM entities WHERE id = @id)
         ON CONFLICT(entity_id) DO UPDATE SET access_count = access_count + 1, last_access = excluded.last_access`,
      );
      const days = this.conn.stmt(
        'INSERT INTO entity_access_days (entity_id, day) SELECT @id, @day WHERE EXISTS (SELECT 1 FROM entities WHERE id = @id) ON CONFLICT DO NOTHING',
      );
      for (const id of unique) {
        access.run({ id, now });
        days.run({ id, day });
      }
    }, false);
    // Every pair, as the spec has it, but a bounded number per transaction with the event loop free
    // between them: an open_nodes of 500 names is 124,750 pairs, which in one transaction held every
    // other tool for about 10 s (bench:http's lost-write check). Recording is best-effort anyway.
    const pair = this.conn.stmt(
      `INSERT INTO co_occurrences (entity_a_id, entity_b_id, co_count, last_co)
       SELECT @a, @b, 1, @now WHERE EXISTS (SELECT 1 FROM entities WHERE id = @a) AND EXISTS (SELECT 1 FROM entities WHERE id = @b)
       ON CONFLICT(entity_a_id, entity_b_id) DO UPDATE SET co_count = co_count + 1, last_co = excluded.last_co`,
    );
    const pairs = coUsePairs(unique, coUse);
    for (let i = 0; i < pairs.length; i += PAIRS_PER_WRITE) {
      const rows = pairs.slice(i, i + PAIRS_PER_WRITE);
      this.conn.write(() => {
        for (const [a, b] of rows) pair.run({ a, b, now });
      }, false);
      if (i + PAIRS_PER_WRITE < pairs.length) await new Promise((resolve) => setImmediate(resolve));
    }
  }

  async recordRefinding(pairs: readonly RefindingPair[]): Promise<void> {
    if (pairs.length === 0) return;
    this.conn.write(() => {
      const insert = this.conn.stmt(
        `INSERT INTO refind_pairs (entity_id, at, model, vector) SELECT @id, @at, @model, @vector WHERE EXISTS (SELECT 1 FROM entities WHERE id = @id)`,
      );
      const keep = this.conn.stmt(
        `DELETE FROM refind_pairs WHERE entity_id = @id AND id NOT IN
           (SELECT id FROM refind_pairs WHERE entity_id = @id ORDER BY at DESC, id DESC LIMIT @per)`,
      );
      for (const p of pairs) insert.run({ id: p.entityId, at: p.at, model: p.model, vector: vectorBytes(p.vector) });
      for (const id of new Set(pairs.map((p) => p.entityId))) keep.run({ id, per: REFIND_PAIRS_PER_ENTITY });
      // Ids only grow, so at most REFIND_PAIRS_MAX rows hold the newest REFIND_PAIRS_MAX ids.
      this.conn.stmt('DELETE FROM refind_pairs WHERE id <= (SELECT max(id) FROM refind_pairs) - ?').run(REFIND_PAIRS_MAX);
    }, false);
  }

  async refinding(ids: readonly EntityId[], model: string): Promise<Map<EntityId, RefindPair[]>> {
    const out = new Map<EntityId, RefindPair[]>();
    if (ids.length === 0) return out;
    for (const r of this.conn
      .stmt<[string, string], { entity_id: number; at: number; vector: Buffer }>(
        `SELECT entity_id, at, vector FROM refind_pairs WHERE entity_id IN (SELECT value FROM json_each(?)) AND model = ?
          ORDER BY entity_id, at DESC, id DESC`,
      )
      .all(json(ids), model)) {
      const id = asEntityId(r.entity_id);
      let list = out.get(id);
      if (list === undefined) out.set(id, (list = []));
      list.push({ at: r.at, vector: bytesVector(r.vector) });
    }
    return out;
  }

  async holdsRefinding(): Promise<boolean> {
    // One row's lookup, and the answer of every process sharing the file (no cached "none").
    this.holding ||= this.conn.stmt('SELECT 1 FROM refind_pairs LIMIT 1').get() !== undefined;
    return this.holding;
  }

  /**
   * Facts and degree of entities read by earlier searches. They change only when the graph does:
   * every graph write, in any process, adds to meta `graph_changes` (SqliteConnection.write), and a
   * different count empties the cache (usage signals are not cached; they change with every search).
   */
  private cachedFacts(): Map<EntityId, { readonly facts: EntityFacts; readonly degree: number }> {
    const changes = Number(this.conn.metaGet('graph_changes') ?? 0);
    if (changes !== this.factsAt) {
      this.facts.clear();
      this.factsAt = changes;
    }
    return this.facts;
  }
}
