/**
 * The graph on PostgreSQL: writes, and the index rows kept in step with them in the same
 * transaction (keyword and substring rows, collection totals, the embedding queue). Reads:
 * pg-graph-reads.ts. Each write is a few statements over arrays (unnest), not one per row, so a
 * bulk import costs round trips per batch rather than per entity.
 */
import { randomInt } from 'node:crypto';
import { foldAccents } from '../../core/text/fold.js';
import { entityNotFound } from '../../core/errors.js';
import {
  asEntityId,
  DEFAULT_OBSERVATION_KIND,
  type Entity,
  type EntityId,
  type EntityStatus,
  type NewEntity,
  type ObservationAddition,
  type ObservationAdditionResult,
  type ObservationDeletion,
  type Relation,
  STORED_STATUS,
} from '../../core/types.js';
import type { GraphStore, ImportBatch, ImportCounts } from '../graph-store.js';
import type { Queryable } from './pg-connection.js';
import { PgGraphReads } from './pg-graph-reads.js';
import { foldWords } from './pg-text.js';
import { keywordObservation } from '../../core/text/entity-text.js';
import { toRelation, type RelationRow } from '../rows.js';

const newQueueVersion = (): number => randomInt(1, 2 ** 47);

/**
 * Words of one entity's observations put in its tsvector: a tsvector holds at most 1 MB and
 * positions up to 16,383, and an entity may gather observations without bound. FTS5 has no such
 * cap; past it, later words of a huge entity are found by search_nodes but not by keyword search.
 */
const MAX_INDEXED_WORDS = 60_000;

export class PgGraph extends PgGraphReads implements GraphStore {
  async createEntities(entities: readonly NewEntity[], now: number): Promise<Entity[]> {
    return this.conn.write(async (db) => {
      const ids = await insertEntities(db, entities, now);
      const added = entities.filter((e, i) => ids[i] !== undefined);
      const obs = added.flatMap((e) => e.observations.map((content) => ({ id: ids[entities.indexOf(e)] as EntityId, content })));
      await insertObservations(db, obs, DEFAULT_OBSERVATION_KIND, now);
      await syncEntities(
        db,
        ids.filter((id): id is EntityId => id !== undefined),
      );
      return added.map((e) => ({ name: e.name, entityType: e.entityType, observations: [...e.observations] }));
    });
  }

  async createRelations(relations: readonly Relation[], now: number): Promise<Relation[]> {
    return this.conn.write(async (db) => {
      const added = await insertRelations(db, relations, now);
      await touchNames(
        db,
        added.flatMap((r) => [r.from, r.to]),
        now,
      );
      return added;
    });
  }

  async addObservations(items: readonly ObservationAddition[], now: number): Promise<ObservationAdditionResult[]> {
    return this.conn.write(async (db) => {
      const idOf = await idsOf(
        db,
        items.map((i) => i.entityName),
      );
      const missing = items.find((i) => !idOf.has(i.entityName));
      if (missing !== undefined) throw entityNotFound(missing.entityName);
      const results: ObservationAdditionResult[] = [];
      const changed = new Set<EntityId>();
      for (const item of items) {
        const id = idOf.get(item.entityName) as EntityId;
        const added = await insertObservations(
          db,
          item.contents.map((content) => ({ id, content })),
          item.kind ?? DEFAULT_OBSERVATION_KIND,
          now,
        );
        if (added.length > 0) changed.add(id);
        results.push({ entityName: item.entityName, addedObservations: added.map((a) => a.content) });
      }
      await touch(db, [...changed], now);
      return results;
    });
  }

  async deleteEntities(names: readonly string[]): Promise<void> {
    await this.conn.write(async (db) => {
      const unique = [...new Set(names)];
      const neighbours = await db.query<{ name: string }>(
        `DELETE FROM relations WHERE from_name = ANY($1) OR to_name = ANY($1)
         RETURNING CASE WHEN from_name = ANY($1) THEN to_name ELSE from_name END AS name`,
        [unique],
      );
      // Vectors, keyword rows, signals and the queue go with the entity (ON DELETE CASCADE).
      const gone = await db.query<{ doc_len: number | null }>(
        `WITH d AS (DELETE FROM entities WHERE name = ANY($1) RETURNING id)
         SELECT k.doc_len FROM d LEFT JOIN entity_keywords k ON k.entity_id = d.id`,
        [unique],
      );
      const others = neighbours.rows.map((r) => r.name).filter((n) => !unique.includes(n));
      await touchNames(db, others, undefined);
      if (gone.rows.length > 0) {
        const tokens = gone.rows.reduce((sum, r) => sum + (r.doc_len ?? 0), 0);
        const docs = gone.rows.filter((r) => r.doc_len !== null).length;
        await addToTotals(db, -docs, -tokens);
      }
    });
  }

  async deleteObservations(deletions: readonly ObservationDeletion[], now: number): Promise<void> {
    await this.conn.write(async (db) => {
      const idOf = await idsOf(
        db,
        deletions.map((d) => d.entityName),
      );
      const changed = new Set<EntityId>();
      for (const d of deletions) {
        const id = idOf.get(d.entityName);
        if (id === undefined || d.observations.length === 0) continue;
        const removed = await db.query('DELETE FROM observations WHERE entity_id = $1 AND content = ANY($2)', [id, d.observations]);
        if ((removed.rowCount ?? 0) > 0) changed.add(id);
      }
      await touch(db, [...changed], now);
    });
  }

  async deleteRelations(relations: readonly Relation[], now: number): Promise<void> {
    await this.conn.write(async (db) => {
      if (relations.length === 0) return;
      const removed = await db.query<{ from_name: string; to_name: string }>(
        `DELETE FROM relations r USING unnest($1::text[], $2::text[], $3::text[]) AS x(f, t, ty)
          WHERE r.from_name = x.f AND r.to_name = x.t AND r.relation_type = x.ty RETURNING r.from_name, r.to_name`,
        [relations.map((r) => r.from), relations.map((r) => r.to), relations.map((r) => r.relationType)],
      );
      await touchNames(
        db,
        removed.rows.flatMap((r) => [r.from_name, r.to_name]),
        now,
      );
    });
  }

  async setStatus(name: string, status: EntityStatus, now: number): Promise<boolean> {
    return this.conn.write(
      async (db) =>
        ((await db.query('UPDATE entities SET status = $1, updated_at = $2 WHERE name = $3', [STORED_STATUS[status], now, name]))
          .rowCount ?? 0) > 0,
    );
  }

  async importBatch(batch: ImportBatch, now: number): Promise<ImportCounts> {
    return this.conn.write(async (db) => {
      const inserted = await insertEntities(db, batch.entities, now);
      const idOf = await idsOf(
        db,
        batch.entities.map((e) => e.name),
      );
      const obs = batch.entities.flatMap((e) => {
        const id = idOf.get(e.name);
        return id === undefined ? [] : e.observations.map((content) => ({ id, content }));
      });
      const added = await insertObservations(db, obs, DEFAULT_OBSERVATION_KIND, now);
      const fresh = new Set(inserted.filter((id): id is EntityId => id !== undefined));
      const grown = [...new Set(added.map((a) => a.id))].filter((id) => !fresh.has(id));
      await syncEntities(db, [...fresh]);
      await touch(db, grown, now);
      const relations = await insertRelations(db, batch.relations, now, false);
      await touchNames(
        db,
        relations.flatMap((r) => [r.from, r.to]),
        now,
      );
      return { entitiesAdded: fresh.size, observationsAdded: added.length, relationsAdded: relations.length };
    });
  }
}

/** Ids of new entities, in the order given (undefined where the name existed or came earlier in the list). */
async function insertEntities(db: Queryable, entities: readonly NewEntity[], now: number): Promise<(EntityId | undefined)[]> {
  if (entities.length === 0) return [];
  const rows = await db.query<{ id: number; name: string }>(
    `INSERT INTO entities (name, entity_type, status, created_at, updated_at)
     SELECT n, t, s, $4, $4 FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS x(n, t, s, i) ORDER BY i
     ON CONFLICT (name) DO NOTHING RETURNING id, name`,
    [entities.map((e) => e.name), entities.map((e) => e.entityType), entities.map((e) => STORED_STATUS[e.status ?? 'active']), now],
  );
  const idOf = new Map(rows.rows.map((r) => [r.name, asEntityId(r.id)]));
  return entities.map((e) => {
    const id = idOf.get(e.name);
    idOf.delete(e.name); // a name repeated in the list is added once, for its first appearance
    return id;
  });
}

/** Observations that were new, in the order given. */
async function insertObservations(
  db: Queryable,
  items: readonly { id: EntityId; content: string }[],
  kind: string,
  now: number,
): Promise<{ id: EntityId; content: string }[]> {
  if (items.length === 0) return [];
  const rows = await db.query<{ entity_id: number; content: string }>(
    `INSERT INTO observations (entity_id, content, kind, created_at)
     SELECT e, c, $3, $4 FROM unnest($1::int[], $2::text[]) WITH ORDINALITY AS x(e, c, i) ORDER BY i
     ON CONFLICT (entity_id, md5(content)) DO NOTHING RETURNING entity_id, content`,
    [items.map((o) => o.id), items.map((o) => o.content), kind, now],
  );
  return rows.rows.map((r) => ({ id: asEntityId(r.entity_id), content: r.content }));
}

/**
 * Adds relations whose triple is new. `revive`: one that end_relation ended is made current again
 * (create_relations), or left ended (an import: a file's plain line is no news that it holds again,
 * and running an import twice changes nothing, as on SQLite).
 */
async function insertRelations(db: Queryable, given: readonly Relation[], now: number, revive = true): Promise<Relation[]> {
  if (given.length === 0) return [];
  // Once each: ON CONFLICT DO UPDATE (which makes an ended relation current again) refuses to meet
  // a row the same statement inserted.
  const seen = new Set<string>();
  const relations = given.filter((r) => {
    const key = JSON.stringify([r.from, r.to, r.relationType]);
    return !seen.has(key) && seen.add(key);
  });
  // A relation that exists keeps its context; one that end_relation ended takes the new one, if given.
  // One given ended (an imported file's ended_at) is added ended, and revives none.
  const rows = await db.query<RelationRow>(
    `INSERT INTO relations (from_name, to_name, relation_type, created_at, context, ended_at)
     SELECT f, t, ty, $4, c, e FROM unnest($1::text[], $2::text[], $3::text[], $5::text[], $6::bigint[]) WITH ORDINALITY AS x(f, t, ty, c, e, i) ORDER BY i
     ON CONFLICT (md5(from_name), md5(to_name), md5(relation_type))
       DO UPDATE SET ended_at = NULL, context = coalesce(excluded.context, relations.context)
       WHERE relations.ended_at IS NOT NULL AND excluded.ended_at IS NULL AND $7
     RETURNING from_name, to_name, relation_type, context, ended_at`,
    [
      relations.map((r) => r.from),
      relations.map((r) => r.to),
      relations.map((r) => r.relationType),
      now,
      relations.map((r) => r.context ?? null),
      relations.map((r) => (r.ended_at === undefined ? null : Date.parse(r.ended_at))),
      revive,
    ],
  );
  return rows.rows.map(toRelation);
}

async function idsOf(db: Queryable, names: readonly string[]): Promise<Map<string, EntityId>> {
  if (names.length === 0) return new Map();
  const rows = await db.query<{ id: number; name: string }>('SELECT id, name FROM entities WHERE name = ANY($1)', [[...new Set(names)]]);
  return new Map(rows.rows.map((r) => [r.name, asEntityId(r.id)]));
}

/** Entities whose text changed: new updated_at, fresh keyword rows, vector queued. */
async function touch(db: Queryable, ids: readonly EntityId[], now: number): Promise<void> {
  if (ids.length === 0) return;
  await db.query('UPDATE entities SET updated_at = $1 WHERE id = ANY($2)', [now, ids]);
  await syncEntities(db, ids);
}

/** Relations changed: keyword rows are unaffected, the text made for embedding is not. */
async function touchNames(db: Queryable, names: readonly string[], now: number | undefined): Promise<void> {
  if (names.length === 0) return;
  const rows = await db.query<{ id: number }>(
    now === undefined
      ? 'SELECT id FROM entities WHERE name = ANY($1)'
      : 'UPDATE entities SET updated_at = $2 WHERE name = ANY($1) RETURNING id',
    now === undefined ? [[...new Set(names)]] : [[...new Set(names)], now],
  );
  await queueEmbedding(
    db,
    rows.rows.map((r) => asEntityId(r.id)),
  );
}

/**
 * Queued even when no process has a model: another process sharing the database may, and it
 * embeds the backlog. A new version clears any claim, so the change is embedded again.
 */
export async function queueEmbedding(db: Queryable, ids: readonly EntityId[]): Promise<void> {
  if (ids.length === 0) return;
  const sorted = [...new Set(ids)].sort((a, b) => a - b); // one lock order for every writer
  await db.query(
    `INSERT INTO embedding_queue (entity_id, version, queued_at)
     SELECT id, v, (extract(epoch from clock_timestamp()) * 1000)::bigint FROM unnest($1::int[], $2::bigint[]) AS x(id, v)
     ON CONFLICT (entity_id) DO UPDATE SET version = excluded.version, claimed_until = NULL`,
    [sorted, sorted.map(() => newQueueVersion())],
  );
}

/**
 * Keyword sync: rebuilds the keyword and substring rows of these entities from
 * their current state, keeps the collection totals BM25 reads in step, and queues their vectors.
 */
export async function syncEntities(db: Queryable, ids: readonly EntityId[], queueVectors = true): Promise<void> {
  if (ids.length === 0) return;
  const sorted = [...new Set(ids)].sort((a, b) => a - b);
  const rows = await db.query<{ id: number; name: string; entity_type: string; obs: string[] | null; kinds: string[] | null }>(
    `SELECT e.id, e.name, e.entity_type, o.obs, o.kinds
       FROM entities e LEFT JOIN LATERAL (SELECT array_agg(content ORDER BY id) AS obs, array_agg(kind ORDER BY id) AS kinds
                                          FROM observations WHERE entity_id = e.id) o ON true
      WHERE e.id = ANY($1) ORDER BY e.id`,
    [sorted],
  );
  const columns = {
    id: [] as number[],
    name: [] as string[],
    type: [] as string[],
    obs: [] as string[],
    len: [] as number[],
    lname: [] as string[],
    ltype: [] as string[],
    lobs: [] as string[],
  };
  for (const r of rows.rows) {
    const obs = r.obs ?? [];
    // Keywords find an observation by its kind too; the substring text of search_nodes (lobs) does not.
    const keywordObs = obs.map((content, i) => keywordObservation(content, r.kinds?.[i] ?? DEFAULT_OBSERVATION_KIND));
    const words = [foldWords(r.name), foldWords(r.entity_type), keywordObs.flatMap(foldWords).slice(0, MAX_INDEXED_WORDS)];
    columns.id.push(r.id);
    columns.name.push(words[0]?.join(' ') ?? '');
    columns.type.push(words[1]?.join(' ') ?? '');
    columns.obs.push(words[2]?.join(' ') ?? '');
    columns.len.push(words.reduce((n, w) => n + w.length, 0));
    // Folded (fold.ts) as search_nodes compares: lower-cased, accents removed.
    columns.lname.push(foldAccents(r.name));
    columns.ltype.push(foldAccents(r.entity_type));
    columns.lobs.push(obs.map(foldAccents).join('\n'));
  }
  // The CTE reads the rows as they were before the upsert, so the totals move by the difference.
  const [change] = (
    await db.query<{ docs: number; tokens: number }>(
      `WITH x AS (SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::text[], $8::text[])
                    AS x(id, name, type, obs, len, lname, ltype, lobs)),
            old AS (SELECT k.entity_id, k.doc_len FROM entity_keywords k WHERE k.entity_id = ANY($1)),
            up AS (
              INSERT INTO entity_keywords (entity_id, tsv, doc_len, lname, ltype, lobs)
              SELECT id, setweight(to_tsvector('limbic', name), 'A') || setweight(to_tsvector('limbic', type), 'B') || setweight(to_tsvector('limbic', obs), 'C'),
                     len, lname, ltype, lobs FROM x
              ON CONFLICT (entity_id) DO UPDATE SET tsv = excluded.tsv, doc_len = excluded.doc_len, lname = excluded.lname, ltype = excluded.ltype, lobs = excluded.lobs)
       SELECT (SELECT count(*) FROM x) - (SELECT count(*) FROM old) AS docs,
              (SELECT coalesce(sum(len), 0) FROM x) - (SELECT coalesce(sum(doc_len), 0) FROM old) AS tokens`,
      [columns.id, columns.name, columns.type, columns.obs, columns.len, columns.lname, columns.ltype, columns.lobs],
    )
  ).rows;
  await addToTotals(db, Number(change?.docs ?? 0), Number(change?.tokens ?? 0));
  if (!queueVectors) return;
  await queueEmbedding(
    db,
    rows.rows.map((r) => asEntityId(r.id)),
  );
}

/**
 * Keyword rows written before kinds were indexed: the migration that began indexing them listed the
 * entities with a kind other than generic in keyword_resync; they are rebuilt once (their vectors
 * are unaffected), in the migrating transaction, then the list goes.
 */
export async function resyncListedKeywords(db: Queryable): Promise<void> {
  const [table] = (await db.query<{ t: string | null }>("SELECT to_regclass('keyword_resync')::text AS t")).rows;
  if (table?.t === null || table?.t === undefined) return;
  const listed = (await db.query<{ entity_id: number }>('SELECT entity_id FROM keyword_resync')).rows.map((r) => asEntityId(r.entity_id));
  for (let i = 0; i < listed.length; i += 500) await syncEntities(db, listed.slice(i, i + 500), false);
  await db.query('DROP TABLE keyword_resync');
}

/**
 * BM25's collection totals move by a write's change in the shard of the writer's connection
 * (migration 5): writers on other connections update other rows, so they do not wait for each
 * other's commits (two connections whose ids share a shard still take turns). One connection, one
 * shard: a transaction holds one totals row however many writes it makes, so the totals alone never
 * deadlock two writers.
 */
async function addToTotals(db: Queryable, docs: number, tokens: number): Promise<void> {
  if (docs === 0 && tokens === 0) return;
  await db.query(
    `INSERT INTO keyword_total_shards (shard, docs, tokens) VALUES (pg_backend_pid() % 64, $1, $2)
     ON CONFLICT (shard) DO UPDATE SET docs = keyword_total_shards.docs + excluded.docs, tokens = keyword_total_shards.tokens + excluded.tokens`,
    [docs, tokens],
  );
}
