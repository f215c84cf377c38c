/**
 * The vector index on PostgreSQL: a pgvector column with an HNSW index (cosine), made by configure()
 * once the model's size is known, and the embedding queue the graph writes fill. Any process may
 * drain the queue: takeJobs claims rows with `FOR UPDATE SKIP LOCKED` and a lease, so two processes
 * never embed the same entity at once, and a process that dies mid-batch leaves its jobs to the
 * others when the lease runs out. A change to a claimed entity clears the claim (pg-graph.ts).
 */
import { ERROR_CODES, MemoryError } from '../../core/errors.js';
import { ASIDE_DISTANCE, ASIDE_PULL, ENTITY_TEXT_VERSION, hasAsides, MAY_NOT_FIT_CHARS } from '../../core/text/entity-text.js';
import type { VectorHit } from '../../core/signals.js';
import { asEntityId, type EntityId } from '../../core/types.js';
import type { EmbeddingJob, EmbeddingResult, VectorIndex, VectorStatus } from '../vector-index.js';
import type { PgConnection, Queryable, RelationRow } from './pg-connection.js';
import { publicEntity } from '../rows.js';
import { hydrate } from './pg-graph-reads.js';

/** How long a taken job is left to its process before another may take it. */
const LEASE_MS = 120_000;
/** The server's clock in ms: the lease is compared on one clock, whichever machine took the job. */
const NOW_MS = '(extract(epoch from clock_timestamp()) * 1000)::bigint';
export const DEFAULT_EF_SEARCH = 200;
/** A configure() at a time, in every process. */
const CONFIGURE_LOCK = 7_254_611_915;

export interface PgVectorOptions {
  /**
   * Candidates HNSW keeps while searching (hnsw.ef_search), set for every connection of the pool;
   * a search asking for more than half of it raises it for that search. Higher is closer to an
   * exact scan and slower: recall@30 against an exact scan was 0.988 at 100 on real-model vectors
   * (bench/postgres.ts), hence 200. @default 200
   */
  readonly efSearch?: number;
}

export class PgVectorIndex implements VectorIndex {
  readonly keepsObservationVectors = true;
  private readonly efSearch: number;

  constructor(
    private readonly conn: PgConnection,
    options: PgVectorOptions = {},
  ) {
    this.efSearch = options.efSearch ?? DEFAULT_EF_SEARCH;
  }

  async configure(model: string, dims: number): Promise<{ readonly reset: boolean }> {
    if (!Number.isInteger(dims) || dims <= 0 || dims > 2000) {
      throw new MemoryError(ERROR_CODES.CONFIG_INVALID, `Invalid vector size ${dims}: pgvector's HNSW index takes 1 to 2000 dimensions.`);
    }
    return this.conn.write(async (db) => {
      await db.query('SELECT pg_advisory_xact_lock($1)', [CONFIGURE_LOCK]);
      const current = await this.conn.metaGet('vector_model', db);
      const currentDims = await this.conn.metaGet('vector_dims', db);
      const exists = (await db.query("SELECT to_regclass('entity_embeddings') IS NOT NULL AS e")).rows[0]?.e === true;
      if (exists && current === model && currentDims === String(dims)) {
        // A memory made before observation vectors gains their table, and queues the entities that may need them.
        if (!(await hasObservationIndex(db))) {
          await makeObservationTable(db, dims);
          await db.query(REQUEUE_LONG_SQL);
        } else if (!(await hasAsideKeys(db))) {
          // A table made before aside keys: its asides have none, and are made again on their next write.
          await db.query('ALTER TABLE observation_embeddings ADD COLUMN text_hash text');
        }
        if ((await this.conn.metaGet('entity_text', db)) !== ENTITY_TEXT_VERSION) {
          await requeueWithAsides(db);
          await setEntityText(db);
        }
        return { reset: false };
      }
      await db.query('DROP TABLE IF EXISTS entity_embeddings');
      await db.query(
        `CREATE TABLE entity_embeddings (entity_id integer PRIMARY KEY REFERENCES entities(id) ON DELETE CASCADE, embedding vector(${dims}) NOT NULL)`,
      );
      await db.query('CREATE INDEX entity_embeddings_hnsw ON entity_embeddings USING hnsw (embedding vector_cosine_ops)');
      await makeObservationTable(db, dims);
      await db.query(
        `INSERT INTO meta (key, value) VALUES ('vector_model', $1), ('vector_dims', $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
        [model, String(dims)],
      );
      await setEntityText(db);
      await requeueAll(db);
      return { reset: current !== undefined };
    });
  }

  async status(): Promise<VectorStatus> {
    const [row] = await this.conn.query<{ model: string | null; dims: string | null; indexed: number | null; pending: number }>(
      `SELECT (SELECT value FROM meta WHERE key = 'vector_model') AS model, (SELECT value FROM meta WHERE key = 'vector_dims') AS dims,
              (SELECT count(*) FROM embedding_queue) AS pending`,
    );
    const indexed = (await this.hasTable())
      ? ((await this.conn.query<{ n: number }>('SELECT count(*) AS n FROM entity_embeddings'))[0]?.n ?? 0)
      : 0;
    return {
      model: row?.model ?? undefined,
      dims: row?.dims === null || row?.dims === undefined ? undefined : Number(row.dims),
      indexed,
      pending: row?.pending ?? 0,
    };
  }

  async search(query: Float32Array, limit: number): Promise<VectorHit[]> {
    if (limit <= 0) return [];
    try {
      return await this.searchWith(true, query, limit);
    } catch (error) {
      // A memory whose observation table configure() has not made yet: its entities' vectors alone.
      if ((error as { code?: unknown }).code !== '42P01') throw error;
      return this.searchWith(false, query, limit);
    }
  }

  async observationVectors(ids: readonly EntityId[]): Promise<Map<EntityId, Float32Array[]>> {
    const found = new Map<EntityId, Float32Array[]>();
    if (ids.length === 0) return found;
    let rows: { entity_id: number; embedding: string }[];
    try {
      rows = await this.conn.query<{ entity_id: number; embedding: string }>(
        'SELECT entity_id, embedding::text AS embedding FROM observation_embeddings WHERE entity_id = ANY($1::int[]) AND n < $2 ORDER BY entity_id, n',
        [[...ids], FIRST_ASIDE_N],
      );
    } catch (error) {
      // A memory whose observation table configure() has not made yet has none.
      if ((error as { code?: unknown }).code === '42P01') return found;
      throw error;
    }
    for (const r of rows) {
      const id = asEntityId(r.entity_id);
      let list = found.get(id);
      if (list === undefined) found.set(id, (list = []));
      // pgvector's text form, '[0.1,0.2,...]', is a JSON array.
      list.push(Float32Array.from(JSON.parse(r.embedding) as number[]));
    }
    return found;
  }

  async asideVectors(ids: readonly EntityId[]): Promise<Map<EntityId, Map<string, Float32Array>>> {
    const found = new Map<EntityId, Map<string, Float32Array>>();
    if (ids.length === 0) return found;
    let rows: { entity_id: number; text_hash: string; embedding: string }[];
    try {
      rows = await this.conn.query<{ entity_id: number; text_hash: string; embedding: string }>(
        `SELECT entity_id, text_hash, embedding::text AS embedding FROM observation_embeddings
          WHERE entity_id = ANY($1::int[]) AND n >= $2 AND text_hash IS NOT NULL`,
        [[...ids], FIRST_ASIDE_N],
      );
    } catch (error) {
      // A memory whose observation table (or its aside keys) configure() has not made yet has none.
      const code = (error as { code?: unknown }).code;
      if (code === '42P01' || code === '42703') return found;
      throw error;
    }
    for (const r of rows) {
      const id = asEntityId(r.entity_id);
      let byKey = found.get(id);
      if (byKey === undefined) found.set(id, (byKey = new Map()));
      byKey.set(r.text_hash, Float32Array.from(JSON.parse(r.embedding) as number[]));
    }
    return found;
  }

  private async searchWith(observations: boolean, query: Float32Array, limit: number): Promise<VectorHit[]> {
    const sql = observations ? SEARCH_WITH_OBSERVATIONS_SQL : SEARCH_ENTITIES_SQL;
    // $3: observation rows read, twice the entities wanted (one entity's may crowd the nearest).
    const params = [vectorText(query), limit, ...(observations ? [limit * 2] : [])];
    let rows: { id: number; distance: number }[];
    try {
      if (limit * 2 <= this.efSearch) {
        rows = await this.conn.query<{ id: number; distance: number }>(sql, params); // one round trip: ef_search is the session's
      } else {
        // HNSW returns at most ef_search rows: raised with the limit, for this transaction only.
        rows = await this.conn.write(async (db) => {
          await db.query("SELECT set_config('hnsw.ef_search', $1, true)", [String(Math.min(1000, limit * 2))]);
          return (await db.query<{ id: number; distance: number }>(sql, params)).rows;
        });
      }
    } catch (error) {
      // No table before configure() ran (42P01), or a query of another size than the stored vectors
      // (22000: pgvector's "different vector dimensions"): nothing to find, as on SQLite.
      const code = (error as { code?: unknown }).code;
      if ((code === '42P01' && !observations) || code === '22000') return [];
      throw error;
    }
    // HNSW returns equal distances in no fixed order; ties go by id, as the SQLite store's exact scan has them.
    return rows.sort((a, b) => a.distance - b.distance || a.id - b.id).map((r) => ({ id: asEntityId(r.id), distance: r.distance }));
  }

  async warm(): Promise<void> {
    await this.conn.open();
  }

  async countPending(upTo: number): Promise<number> {
    return (
      (await this.conn.query<{ n: number }>('SELECT count(*) AS n FROM (SELECT 1 FROM embedding_queue LIMIT $1) s', [upTo]))[0]?.n ?? 0
    );
  }

  async takeJobs(limit: number): Promise<EmbeddingJob[]> {
    const queued = await this.conn.write(async (db) =>
      (
        await db.query<{ entity_id: number; version: number; queued_at: number }>(
          `UPDATE embedding_queue q SET claimed_until = ${NOW_MS} + $2
             FROM (SELECT entity_id FROM embedding_queue WHERE claimed_until IS NULL OR claimed_until < ${NOW_MS}
                    ORDER BY queued_at, entity_id LIMIT $1 FOR UPDATE SKIP LOCKED) s
            WHERE q.entity_id = s.entity_id
        RETURNING q.entity_id, q.version, q.queued_at`,
          [limit, LEASE_MS],
        )
      ).rows.sort((a, b) => a.queued_at - b.queued_at || a.entity_id - b.entity_id),
    );
    if (queued.length === 0) return [];
    const entities = await hydrate(
      this.conn,
      queued.map((q) => q.entity_id),
    );
    const names = [...entities.values()].map((e) => e.name);
    const relations = await this.conn.query<RelationRow>(
      'SELECT from_name, to_name, relation_type FROM relations WHERE from_name = ANY($1) ORDER BY id',
      [names],
    );
    const jobs: EmbeddingJob[] = [];
    for (const q of queued) {
      const entity = entities.get(asEntityId(q.entity_id));
      if (entity === undefined) continue;
      jobs.push({
        id: entity.id,
        version: q.version,
        entity: publicEntity(entity),
        relations: relations
          .filter((r) => r.from_name === entity.name)
          .map((r) => ({ from: r.from_name, to: r.to_name, relationType: r.relation_type })),
      });
    }
    return jobs;
  }

  async releaseJobs(ids: readonly EntityId[]): Promise<void> {
    if (ids.length === 0) return;
    // Still under a lease: taken here (another process takes a job only once its lease has run out).
    await this.conn.query(`UPDATE embedding_queue SET claimed_until = NULL WHERE entity_id = ANY($1) AND claimed_until >= ${NOW_MS}`, [
      [...ids],
    ]);
  }

  async put(results: readonly EmbeddingResult[]): Promise<void> {
    if (results.length === 0) return;
    await this.conn.write(async (db) => {
      // Only jobs still queued are written: one whose row is gone was finished by another process
      // (its claim cleared when the entity changed, then taken again), and this late, older vector
      // would overwrite that newer one. An entity deleted meanwhile is skipped too.
      const queued = new Set(
        (
          await db.query<{ entity_id: number }>(
            'SELECT entity_id FROM embedding_queue WHERE entity_id = ANY($1::int[]) ORDER BY entity_id FOR UPDATE',
            [results.map((r) => r.id)],
          )
        ).rows.map((r) => r.entity_id),
      );
      const sorted = results.filter((r) => queued.has(r.id)).sort((a, b) => a.id - b.id);
      if (sorted.length === 0) return;
      await db.query(
        `INSERT INTO entity_embeddings (entity_id, embedding)
         SELECT x.id, x.v::vector FROM unnest($1::int[], $2::text[]) AS x(id, v) WHERE EXISTS (SELECT 1 FROM entities e WHERE e.id = x.id)
         ON CONFLICT (entity_id) DO UPDATE SET embedding = excluded.embedding`,
        [sorted.map((r) => r.id), sorted.map((r) => vectorText(r.vector))],
      );
      // An entity's observation vectors are replaced whole: made anew when it is too long for one, gone when it fits.
      await db.query('DELETE FROM observation_embeddings WHERE entity_id = ANY($1::int[])', [sorted.map((r) => r.id)]);
      const observations = sorted.flatMap((r) => [
        ...(r.observations ?? []).map((v, n) => ({ id: r.id, n, v: vectorText(v), hash: null })),
        ...(r.asides ?? []).map((v, k) => ({ id: r.id, n: FIRST_ASIDE_N + k, v: vectorText(v), hash: r.asideKeys?.[k] ?? null })),
      ]);
      if (observations.length > 0) {
        await db.query(
          `INSERT INTO observation_embeddings (entity_id, n, embedding, text_hash)
           SELECT x.id, x.n, x.v::vector, x.hash FROM unnest($1::int[], $2::int[], $3::text[], $4::text[]) AS x(id, n, v, hash)
            WHERE EXISTS (SELECT 1 FROM entities e WHERE e.id = x.id)`,
          [observations.map((o) => o.id), observations.map((o) => o.n), observations.map((o) => o.v), observations.map((o) => o.hash)],
        );
      }
      await db.query(
        'DELETE FROM embedding_queue q USING unnest($1::int[], $2::bigint[]) AS x(id, v) WHERE q.entity_id = x.id AND q.version = x.v',
        [sorted.map((r) => r.id), sorted.map((r) => r.version)],
      );
      // A job whose entity changed while it was embedded keeps its row (the change is embedded
      // again), behind the jobs waiting: an entity that keeps changing never holds the head.
      await db.query(
        `UPDATE embedding_queue q SET queued_at = ${NOW_MS} FROM unnest($1::int[], $2::bigint[]) AS x(id, v)
          WHERE q.entity_id = x.id AND q.version <> x.v`,
        [sorted.map((r) => r.id), sorted.map((r) => r.version)],
      );
    });
  }

  async requeueAll(): Promise<number> {
    return this.conn.write(async (db) => {
      await requeueAll(db);
      return (await db.query<{ n: number }>('SELECT count(*) AS n FROM embedding_queue')).rows[0]?.n ?? 0;
    });
  }

  private async hasTable(): Promise<boolean> {
    return (await this.conn.query<{ e: boolean }>("SELECT to_regclass('entity_embeddings') IS NOT NULL AS e"))[0]?.e === true;
  }
}

const SEARCH_ENTITIES_SQL =
  'SELECT entity_id AS id, embedding <=> $1::vector AS distance FROM entity_embeddings ORDER BY embedding <=> $1::vector LIMIT $2';

/**
 * An entity's asides (EmbeddingResult.asides) are its observation rows from this n on, after its
 * observations' (at most 2^20 of either), as on SQLite.
 */
const FIRST_ASIDE_N = 2 ** 20;

/**
 * Each entity at the nearest of its own vector, its observations' (a long entity's, see
 * vector-index.ts) and its asides' plus ASIDE_DISTANCE, an aside never more than ASIDE_PULL nearer
 * than the entity's own vector (entity-text.ts asidePull; an entity without one takes the aside's):
 * both HNSW indexes read, merged, each entity once.
 */
const SEARCH_WITH_OBSERVATIONS_SQL = `SELECT id, min(distance) AS distance FROM (
    (SELECT entity_id AS id, embedding <=> $1::vector AS distance FROM entity_embeddings ORDER BY embedding <=> $1::vector LIMIT $2)
    UNION ALL
    (SELECT id, CASE WHEN n >= ${FIRST_ASIDE_N}
        THEN least(own, greatest(distance + ${ASIDE_DISTANCE}, own - ${ASIDE_PULL}))
        ELSE distance END FROM
      (SELECT o.entity_id AS id, o.n, o.embedding <=> $1::vector AS distance,
          CASE WHEN o.n >= ${FIRST_ASIDE_N} THEN (SELECT e.embedding <=> $1::vector FROM entity_embeddings e WHERE e.entity_id = o.entity_id) END AS own
        FROM observation_embeddings o ORDER BY o.embedding <=> $1::vector LIMIT $3) o)
  ) hits GROUP BY id ORDER BY distance, id LIMIT $2`;

/** Entities that may not fit one vector (entity-text.ts mayNotFitOneVector, in SQL), queued once by an upgraded memory. */
const REQUEUE_LONG_SQL = `INSERT INTO embedding_queue (entity_id, version)
  SELECT entity_id, (random() * 140737488355327)::bigint + 1 FROM observations
   GROUP BY entity_id HAVING count(*) > 1 AND sum(length(content)) > ${MAY_NOT_FIT_CHARS}
  ON CONFLICT (entity_id) DO UPDATE SET version = excluded.version, claimed_until = NULL`;

/**
 * The observation vectors' table at the model's size (HNSW needs one), in place of the stand-in a
 * namespace's migration made (pg-connection.ts guardFallThrough) or of one of another size.
 */
async function makeObservationTable(db: Queryable, dims: number): Promise<void> {
  await db.query('DROP TABLE IF EXISTS observation_embeddings');
  await db.query(
    `CREATE TABLE observation_embeddings (entity_id integer NOT NULL REFERENCES entities(id) ON DELETE CASCADE, n integer NOT NULL,
       embedding vector(${dims}) NOT NULL, text_hash text, PRIMARY KEY (entity_id, n))`,
  );
  await db.query('CREATE INDEX observation_embeddings_hnsw ON observation_embeddings USING hnsw (embedding vector_cosine_ops)');
}

/** Whether this memory's own observation table has `text_hash`: an aside's key (EmbeddingResult.asideKeys), NULL for the others. */
async function hasAsideKeys(db: Queryable): Promise<boolean> {
  const found = await db.query<{ e: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()
       AND table_name = 'observation_embeddings' AND column_name = 'text_hash') AS e`,
  );
  return found.rows[0]?.e === true;
}

/** Whether this memory's own schema has the observation vectors' HNSW index (not one a search_path reaches elsewhere). */
async function hasObservationIndex(db: Queryable): Promise<boolean> {
  const found = await db.query<{ e: boolean }>(
    "SELECT EXISTS (SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'observation_embeddings_hnsw') AS e",
  );
  return found.rows[0]?.e === true;
}

/** Every entity, queued with a fresh random version and no claim, as the graph's writes queue one. */
/**
 * Queues, once, the entities whose vector a memory made before asides (entity-text.ts
 * ENTITY_TEXT_VERSION) holds observations in another language than the entity's (as on SQLite).
 */
async function requeueWithAsides(db: Queryable): Promise<void> {
  const rows = await db.query<{ entity_id: number; contents: string[] }>(
    `SELECT entity_id, array_agg(content ORDER BY id) AS contents FROM observations GROUP BY entity_id HAVING count(*) > 1`,
  );
  const found = rows.rows.filter((r) => hasAsides(r.contents)).map((r) => r.entity_id);
  if (found.length === 0) return;
  await db.query(
    `INSERT INTO embedding_queue (entity_id, version, queued_at)
     SELECT id, (random() * 140737488355327)::bigint + 1, ${NOW_MS} FROM unnest($1::int[]) AS id
     ON CONFLICT (entity_id) DO UPDATE SET version = excluded.version, claimed_until = NULL`,
    [found],
  );
}

const setEntityText = (db: Queryable): Promise<unknown> =>
  db.query(`INSERT INTO meta (key, value) VALUES ('entity_text', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, [
    ENTITY_TEXT_VERSION,
  ]);

async function requeueAll(db: Queryable): Promise<void> {
  await db.query(
    `INSERT INTO embedding_queue (entity_id, version, queued_at)
     SELECT id, (random() * 140737488355327)::bigint + 1, ${NOW_MS} FROM entities ORDER BY id
     ON CONFLICT (entity_id) DO UPDATE SET version = excluded.version, claimed_until = NULL`,
  );
}

/** pgvector's text form, '[0.1,0.2,...]': exact for float32 values (shortest round-trip digits). */
function vectorText(v: Float32Array): string {
  return `[${Array.from(v, (x) => (Number.isFinite(x) ? x : 0)).join(',')}]`;
}
