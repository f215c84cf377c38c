/**
 * Usage signals on PostgreSQL: what the limbic re-ranker reads of a candidate set (facts, degree,
 * accesses, co-occurrences) and the accesses each answer records. Nothing is cached between
 * searches: every read sees the other processes' writes, and a candidate set costs three queries.
 */
import type { AccessFacts, CandidateSignals, CoOccurrencePair, EntityFacts } from '../../core/signals.js';
import { asEntityId, type EntityId } from '../../core/types.js';
import { toFacts, type FactsRow } from '../rows.js';
import { REFIND_PAIRS_MAX, REFIND_PAIRS_PER_ENTITY } from '../../core/rank/constants.js';
import type { RefindPair } from '../../core/rank/limbic.js';
import { bytesVector, coUsePairs, vectorBytes, type CoUse, type RefindingPair, type UsageStore } from '../usage-store.js';
import type { PgConnection } from './pg-connection.js';

const DAY_MS = 86_400_000;

interface PgFactsRow extends FactsRow {
  observations: number;
}

export class PgUsage implements UsageStore {
  /** A re-finding pair was seen: see holdsRefinding(). */
  private holding = false;

  constructor(private readonly conn: PgConnection) {}

  async signals(ids: readonly EntityId[]): Promise<CandidateSignals> {
    const facts = new Map<EntityId, EntityFacts>();
    const degree = new Map<EntityId, number>();
    const access = new Map<EntityId, AccessFacts>();
    if (ids.length === 0) return { facts, access, degree, coOccurrences: [] };
    const list = [...new Set(ids)];
    const [factRows, accessRows, pairRows] = await Promise.all([
      this.conn.query<PgFactsRow>(
        `SELECT e.id, e.name, e.entity_type, e.status, e.created_at, e.updated_at, e.project,
                (SELECT count(*) FROM relations WHERE from_name = e.name AND ended_at IS NULL) +
                (SELECT count(*) FROM relations WHERE to_name = e.name AND ended_at IS NULL) AS degree,
                (SELECT count(*) FROM observations m WHERE m.entity_id = e.id AND m.kind = 'metadata') AS metadata,
                (SELECT count(*) FROM observations o WHERE o.entity_id = e.id) AS observations
           FROM entities e WHERE e.id = ANY($1)`,
        [list],
      ),
      this.conn.query<{ id: number; access_count: number; last_access: number; days: number }>(
        `SELECT a.entity_id AS id, a.access_count, a.last_access,
                (SELECT count(*) FROM entity_access_days d WHERE d.entity_id = a.entity_id) AS days
           FROM entity_access a WHERE a.entity_id = ANY($1)`,
        [list],
      ),
      this.conn.query<{ a: number; b: number; co_count: number; last_co: number }>(
        'SELECT entity_a_id AS a, entity_b_id AS b, co_count, last_co FROM co_occurrences WHERE entity_a_id = ANY($1) AND entity_b_id = ANY($1)',
        [list],
      ),
    ]);
    for (const r of factRows) {
      const id = asEntityId(r.id);
      facts.set(id, toFacts(r, r.metadata, r.observations));
      degree.set(id, r.degree);
    }
    for (const r of accessRows)
      access.set(asEntityId(r.id), { accessCount: r.access_count, lastAccess: r.last_access, accessDays: r.days });
    const coOccurrences: CoOccurrencePair[] = pairRows.map((r) => ({
      a: asEntityId(r.a),
      b: asEntityId(r.b),
      count: r.co_count,
      lastCo: r.last_co,
    }));
    return { facts, access, degree, coOccurrences };
  }

  async recordAccess(ids: readonly EntityId[], now: number, coUse: CoUse = 'all'): Promise<void> {
    // Sorted, so concurrent writers take row locks in one order (fewer deadlocks to retry).
    const unique = [...new Set(ids)].sort((a, b) => a - b);
    if (unique.length === 0) return;
    const day = new Date(Math.floor(now / DAY_MS) * DAY_MS).toISOString().slice(0, 10);
    await this.conn.write(async (db) => {
      const live = (await db.query<{ id: number }>('SELECT id FROM entities WHERE id = ANY($1) ORDER BY id', [unique])).rows.map(
        (r) => r.id,
      );
      if (live.length === 0) return;
      await db.query(
        `INSERT INTO entity_access (entity_id, access_count, last_access) SELECT id, 1, $2 FROM unnest($1::int[]) AS x(id) ORDER BY id
         ON CONFLICT (entity_id) DO UPDATE SET access_count = entity_access.access_count + 1, last_access = excluded.last_access`,
        [live, now],
      );
      await db.query(
        'INSERT INTO entity_access_days (entity_id, day) SELECT id, $2::date FROM unnest($1::int[]) AS x(id) ON CONFLICT DO NOTHING',
        [live, day],
      );
      const alive = new Set(live);
      const pairs = coUsePairs(live.map(asEntityId), coUse).filter(([a, b]) => alive.has(a) && alive.has(b));
      if (pairs.length === 0) return;
      await db.query(
        `INSERT INTO co_occurrences (entity_a_id, entity_b_id, co_count, last_co)
         SELECT a, b, 1, $3 FROM unnest($1::int[], $2::int[]) AS p(a, b) ORDER BY a, b
         ON CONFLICT (entity_a_id, entity_b_id) DO UPDATE SET co_count = co_occurrences.co_count + 1, last_co = excluded.last_co`,
        [pairs.map((p) => p[0]), pairs.map((p) => p[1]), now],
      );
    });
  }

  async recordRefinding(pairs: readonly RefindingPair[]): Promise<void> {
    if (pairs.length === 0) return;
    await this.conn.write(async (db) => {
      await db.query(
        `INSERT INTO refind_pairs (entity_id, at, model, vector)
         SELECT p.id, p.at, p.model, p.vector FROM unnest($1::int[], $2::bigint[], $3::text[], $4::bytea[]) AS p(id, at, model, vector)
          WHERE EXISTS (SELECT 1 FROM entities e WHERE e.id = p.id)`,
        [pairs.map((p) => p.entityId), pairs.map((p) => p.at), pairs.map((p) => p.model), pairs.map((p) => vectorBytes(p.vector))],
      );
      await db.query(
        `DELETE FROM refind_pairs r USING (
           SELECT id, row_number() OVER (PARTITION BY entity_id ORDER BY at DESC, id DESC) AS n FROM refind_pairs WHERE entity_id = ANY($1)
         ) k WHERE r.id = k.id AND k.n > $2`,
        [[...new Set(pairs.map((p) => p.entityId))], REFIND_PAIRS_PER_ENTITY],
      );
      // Ids only grow, so at most REFIND_PAIRS_MAX rows hold the newest REFIND_PAIRS_MAX ids.
      await db.query('DELETE FROM refind_pairs WHERE id <= (SELECT max(id) FROM refind_pairs) - $1', [REFIND_PAIRS_MAX]);
    });
  }

  async holdsRefinding(): Promise<boolean> {
    // While none is held, one EXISTS takes the place of the candidates' read (and sees every
    // process's pairs); once one is, no question is asked again.
    this.holding ||= (await this.conn.query<{ e: boolean }>('SELECT EXISTS (SELECT 1 FROM refind_pairs) AS e'))[0]?.e === true;
    return this.holding;
  }

  async refinding(ids: readonly EntityId[], model: string): Promise<Map<EntityId, RefindPair[]>> {
    const out = new Map<EntityId, RefindPair[]>();
    if (ids.length === 0) return out;
    const rows = await this.conn.query<{ entity_id: number; at: number; vector: Buffer }>(
      'SELECT entity_id, at, vector FROM refind_pairs WHERE entity_id = ANY($1) AND model = $2 ORDER BY entity_id, at DESC, id DESC',
      [[...new Set(ids)], model],
    );
    for (const r of rows) {
      const id = asEntityId(r.entity_id);
      let list = out.get(id);
      if (list === undefined) out.set(id, (list = []));
      list.push({ at: r.at, vector: bytesVector(r.vector) });
    }
    return out;
  }
}
