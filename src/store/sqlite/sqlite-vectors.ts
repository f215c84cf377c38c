/**
 * The vector index on SQLite: sqlite-vec's vec0 table, the embedding queue the graph writes fill,
 * and the in-memory copy searched with usearch (vector-cache.ts), kept in a file next to the
 * database between starts (vector-cache-keeper.ts). Exists only when sqlite-vec loaded.
 *
 * Every process sharing the file may drain the queue, as on PostgreSQL (pg-vectors.ts): takeJobs
 * claims the oldest queued jobs under a lease in one write transaction, so no two processes embed
 * the same entity at once, and a killed process's jobs are taken again (at once when its process is
 * gone, at the latest when its lease runs out). A job whose entity changed while it was embedded
 * goes behind the others at put, so entities that keep changing never hold the head of the queue
 * (issue 26).
 */
import { randomInt } from 'node:crypto';
import { ERROR_CODES, MemoryError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { ASIDE_DISTANCE, asidePull, ENTITY_TEXT_VERSION, hasAsides, MAY_NOT_FIT_CHARS } from '../../core/text/entity-text.js';
import { asEntityId, type EntityId } from '../../core/types.js';
import type { VectorHit } from '../../core/signals.js';
import { processAlive } from '../../os/process-alive.js';
import type { EmbeddingJob, EmbeddingResult, VectorIndex, VectorStatus } from '../vector-index.js';
import { LOG_NONCE_SQL, NOW_MS_SQL, toRelation, type RelationRow, type SqliteConnection } from './sqlite-connection.js';
import { publicEntity } from '../rows.js';
import { hydrate } from './sqlite-graph-reads.js';
import { LOG_KEEP, RESET_ALL, VectorCache, type ExactSearch } from './vector-cache/vector-cache.js';
import { vectorFilePath } from './vector-cache/vector-cache-file.js';
import { VectorCacheKeeper } from './vector-cache/vector-cache-keeper.js';

export interface SqliteVectorOptions {
  /** Scan vectors in memory with usearch instead of sqlite-vec's KNN. */
  readonly cache: boolean;
  /** Save the in-memory copy next to the database (never for `:memory:`). */
  readonly cacheFile: boolean;
  readonly logger: Logger;
  /**
   * How long a taken job is left to this process before another may take it: long enough for a
   * batch of long entities on a loaded machine, as on PostgreSQL. @default 120000
   */
  readonly leaseMs?: number;
  /**
   * From this many vectors the cache's sign-code scan is shared with a worker thread
   * (scan-helper.ts); Infinity: one thread. @default Infinity
   */
  readonly scanSplitFrom?: number;
}

const LEASE_MS = 120_000;

/**
 * Claims the oldest jobs no other process holds: unclaimed, lease run out, or this process's own
 * (taken before and not put: its embedding failed, so it tries again now).
 */
const TAKE_SQL = `UPDATE embedding_queue SET claimed_until = ${NOW_MS_SQL} + @lease, claimed_by = @owner
   WHERE entity_id IN (SELECT entity_id FROM embedding_queue
                        WHERE claimed_until IS NULL OR claimed_until <= ${NOW_MS_SQL} OR claimed_by = @owner
                        ORDER BY queued_at, entity_id LIMIT @limit)
  RETURNING entity_id, version, queued_at`;

/**
 * A claim's owner: the process id (every process sharing a SQLite file runs on its machine, WAL
 * needs that) times 2^21, plus a random part telling two stores of one process apart.
 */
const OWNER_PID_STEP = 2 ** 21;
const newOwner = (): number => process.pid * OWNER_PID_STEP + randomInt(0, OWNER_PID_STEP);

/** Whether the process that made this claim still runs (one of another user counts as running). */
function ownerRuns(owner: number): boolean {
  return processAlive(Math.floor(owner / OWNER_PID_STEP));
}

/**
 * Entities that may not fit one vector (entity-text.ts mayNotFitOneVector, in SQL), queued once
 * when a memory made before observation vectors gains them. The model's tokenizer decides when
 * each is embedded; one that fits is embedded as before.
 */
const REQUEUE_LONG_SQL = `INSERT INTO embedding_queue (entity_id, version, queued_at)
  SELECT entity_id, abs(random()) % 140737488355328 + 1, ${NOW_MS_SQL} FROM observations WHERE superseded_at IS NULL
   GROUP BY entity_id HAVING count(*) > 1 AND sum(length(content)) > ${MAY_NOT_FIT_CHARS}
  ON CONFLICT(entity_id) DO UPDATE SET version = excluded.version`;

/**
 * Observation vectors (EmbeddingResult.observations) are rows of entity_embeddings too, so the
 * in-memory cache scans them with the entities' (a separate vec0 table, scanned by sqlite-vec,
 * cost 20 ms per search at 10k of them: bench/latency/observation-vectors.ts): entity `id`'s
 * j-th (j from 1) is row `id + j × 2^32`. `observation_vectors` lists them by entity, to delete.
 */
const KEY_STRIDE = 2 ** 32;
/** At most this many vectors of one entity's observations (keys stay below 2^53). */
const MAX_OBSERVATION_VECTORS = 2 ** 20;
const entityOfKey = (key: number): number => key % KEY_STRIDE;
/** An entity's k-th aside (EmbeddingResult.asides, k from 0) is row `id + (ASIDE_BASE + 1 + k) × 2^32`. */
const ASIDE_BASE = MAX_OBSERVATION_VECTORS;
const MAX_ASIDE_VECTORS = 2 ** 20 - 1;
const FIRST_ASIDE_KEY = (ASIDE_BASE + 1) * KEY_STRIDE;
/** A row's distance as search ranks it: an aside's handicapped by ASIDE_DISTANCE. */
const rankedDistance = (key: number, distance: number): number => (key >= FIRST_ASIDE_KEY ? distance + ASIDE_DISTANCE : distance);

/** Every entity, queued with a fresh random version, as the graph's writes queue one (sqlite-graph.ts). */
const REQUEUE_ALL_SQL = `INSERT INTO embedding_queue (entity_id, version, queued_at)
  SELECT id, abs(random()) % 140737488355328 + 1, ${NOW_MS_SQL} FROM entities WHERE true
  ON CONFLICT(entity_id) DO UPDATE SET version = excluded.version`;

/**
 * Queues, once, the entities whose vector a memory made before asides (entity-text.ts
 * ENTITY_TEXT_VERSION) holds observations in another language than the entity's: their vectors are
 * made again without them, and the asides get their own, through the queue as any write's.
 */
function requeueWithAsides(conn: SqliteConnection): void {
  const found: number[] = [];
  let entity: number | undefined;
  let observations: string[] = [];
  const flush = (): void => {
    if (entity !== undefined && hasAsides(observations)) found.push(entity);
  };
  for (const { entity_id, content } of conn
    .stmt<[], { entity_id: number; content: string }>(
      'SELECT entity_id, content FROM observations WHERE entity_id IN (SELECT entity_id FROM observations GROUP BY entity_id HAVING count(*) > 1) ORDER BY entity_id, id',
    )
    .iterate()) {
    if (entity_id !== entity) {
      flush();
      entity = entity_id;
      observations = [];
    }
    observations.push(content);
  }
  flush();
  const queue = conn.stmt(
    `INSERT INTO embedding_queue (entity_id, version, queued_at) VALUES (?, abs(random()) % 140737488355328 + 1, ${NOW_MS_SQL})
     ON CONFLICT(entity_id) DO UPDATE SET version = excluded.version`,
  );
  for (const id of found) queue.run(id);
}

/** `text_hash`: an aside's key (EmbeddingResult.asideKeys), so a later write reuses its vector; NULL for the others. */
function ensureObservationTable(conn: SqliteConnection): void {
  conn.db.exec('CREATE TABLE IF NOT EXISTS observation_vectors (key INTEGER PRIMARY KEY, entity_id INTEGER NOT NULL, text_hash TEXT)');
  conn.db.exec('CREATE INDEX IF NOT EXISTS observation_vectors_entity ON observation_vectors (entity_id)');
  // A table made before aside keys: its asides have none, and are made again on their next write.
  const columns = conn.db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('observation_vectors');
  if (!columns.includes('text_hash')) conn.db.exec('ALTER TABLE observation_vectors ADD COLUMN text_hash TEXT');
}

/**
 * Removes an entity's observation vectors, logging each so every process's cache drops it (the
 * rows only where sqlite-vec is loaded; a row left behind is never answered: its key is gone).
 */
export function deleteObservationVectors(conn: SqliteConnection, id: number): void {
  if (!conn.tableExists('observation_vectors')) return;
  if (conn.vectorsLoaded && conn.tableExists('entity_embeddings')) {
    const remove = conn.stmt('DELETE FROM entity_embeddings WHERE rowid = ?');
    const log = conn.stmt(`INSERT INTO vector_log (entity_id, nonce) VALUES (?, ${LOG_NONCE_SQL})`);
    for (const { key } of conn.stmt<[number], { key: number }>('SELECT key FROM observation_vectors WHERE entity_id = ?').all(id)) {
      remove.run(BigInt(key));
      log.run(key);
    }
  }
  conn.stmt('DELETE FROM observation_vectors WHERE entity_id = ?').run(id);
}

export class SqliteVectorIndex implements VectorIndex {
  readonly keepsObservationVectors = true;
  private readonly useCache: boolean;
  /** The in-memory vector cache, loaded on first need; undefined when usearch cannot load. */
  private cache: Promise<VectorCache | undefined> | undefined;
  /** Reads and saves the cache's file; undefined for `:memory:` or when switched off. */
  private readonly keeper: VectorCacheKeeper | undefined;
  private readonly leaseMs: number;
  private readonly scanSplitFrom: number;
  /** This index's token in the queue's claimed_by: another process's, or another store's, differs. */
  private readonly owner = newOwner();
  /** Entities whose jobs were taken here and not put yet. */
  private readonly taken = new Set<number>();

  constructor(
    private readonly conn: SqliteConnection,
    options: SqliteVectorOptions,
  ) {
    this.useCache = options.cache;
    this.leaseMs = options.leaseMs ?? LEASE_MS;
    this.scanSplitFrom = options.scanSplitFrom ?? Number.POSITIVE_INFINITY;
    const saveCache = options.cache && options.cacheFile && conn.path !== ':memory:';
    this.keeper = saveCache ? new VectorCacheKeeper(conn.db, vectorFilePath(conn.path), options.logger) : undefined;
  }

  async configure(model: string, dims: number): Promise<{ readonly reset: boolean }> {
    if (!Number.isInteger(dims) || dims <= 0) throw new MemoryError(ERROR_CODES.CONFIG_INVALID, `Invalid vector size ${dims}.`);
    return this.conn.write(() => {
      const current = this.conn.metaGet('vector_model');
      const currentDims = this.conn.metaGet('vector_dims');
      if (this.hasTable() && current === model && currentDims === String(dims)) {
        // A memory made before observation vectors gains them, for the entities that may need them.
        const older = !this.conn.tableExists('observation_vectors');
        ensureObservationTable(this.conn);
        if (older) this.conn.db.exec(REQUEUE_LONG_SQL);
        if (this.conn.metaGet('entity_text') !== ENTITY_TEXT_VERSION) {
          requeueWithAsides(this.conn);
          this.conn.metaSet('entity_text', ENTITY_TEXT_VERSION);
        }
        return { reset: false };
      }
      this.conn.db.exec('DROP TABLE IF EXISTS entity_embeddings');
      this.conn.db.exec(`CREATE VIRTUAL TABLE entity_embeddings USING vec0(embedding float[${dims}] distance_metric=cosine)`);
      this.conn.db.exec('DROP TABLE IF EXISTS observation_vectors'); // their rows went with entity_embeddings
      ensureObservationTable(this.conn);
      this.conn.metaSet('vector_model', model);
      this.conn.metaSet('vector_dims', String(dims));
      this.conn.metaSet('entity_text', ENTITY_TEXT_VERSION);
      this.conn.stmt(`INSERT INTO vector_log (entity_id, nonce) VALUES (?, ${LOG_NONCE_SQL})`).run(RESET_ALL);
      this.conn.db.exec(REQUEUE_ALL_SQL);
      return { reset: current !== undefined };
    }, false);
  }

  async status(): Promise<VectorStatus> {
    const dims = this.conn.metaGet('vector_dims');
    return {
      model: this.conn.metaGet('vector_model'),
      dims: dims === undefined ? undefined : Number(dims),
      // Entities with a vector: the table's rows less their observations'.
      indexed: this.hasTable()
        ? this.conn.count('entity_embeddings') - (this.conn.tableExists('observation_vectors') ? this.conn.count('observation_vectors') : 0)
        : 0,
      pending: this.conn.count('embedding_queue'),
    };
  }

  async search(query: Float32Array, limit: number): Promise<VectorHit[]> {
    if (!this.hasTable() || limit <= 0) return [];
    if (!this.hasObservationVectors())
      return (await this.searchRows(query, limit)).map((r) => ({ id: asEntityId(r.id), distance: r.distance }));
    // Each entity once, at its nearest row: read deeper until `limit` entities are found, as one
    // entity's observations may crowd the nearest rows.
    for (let depth = limit * 2; ; depth *= 4) {
      const rows = await this.searchRows(query, depth);
      const nearest = new Map<number, number>();
      // An entity's own vector's distance, where its nearest row is an aside (asidePull).
      const own = new Map<number, number>();
      const byAside = new Set<number>();
      for (const r of rows) {
        const id = entityOfKey(r.id);
        if (r.id === id) own.set(id, r.distance);
        const distance = rankedDistance(r.id, r.distance);
        if (distance < (nearest.get(id) ?? Infinity)) {
          nearest.set(id, distance);
          if (r.id >= FIRST_ASIDE_KEY) byAside.add(id);
          else byAside.delete(id);
        }
      }
      for (const id of byAside) {
        const ownDistance = own.get(id) ?? this.ownDistance(query, id);
        const distance = nearest.get(id);
        if (ownDistance !== undefined && distance !== undefined) nearest.set(id, asidePull(distance, ownDistance));
      }
      if (nearest.size >= limit || rows.length < depth || depth >= 4096)
        return [...nearest]
          .sort((a, b) => a[1] - b[1] || a[0] - b[0])
          .slice(0, limit)
          .map(([id, distance]) => ({ id: asEntityId(id), distance }));
    }
  }

  /** The cosine distance of the query to an entity's own vector (its row `id`), undefined without one. */
  private ownDistance(query: Float32Array, id: number): number | undefined {
    const row = this.conn.stmt<[bigint], { embedding: Buffer }>('SELECT embedding FROM entity_embeddings WHERE rowid = ?').get(BigInt(id));
    return row === undefined ? undefined : cosineDistance(query, floats(row.embedding));
  }

  async observationVectors(ids: readonly EntityId[]): Promise<Map<EntityId, Float32Array[]>> {
    const found = new Map<EntityId, Float32Array[]>();
    if (ids.length === 0 || !this.hasTable() || !this.conn.tableExists('observation_vectors')) return found;
    // Point reads by row key (sqlite-vec answers rowid = ? from its rowid index): an entity's j-th
    // observation is row id + j × 2^32, so key order is observation order.
    const read = this.conn.stmt<[bigint], { embedding: Buffer }>('SELECT embedding FROM entity_embeddings WHERE rowid = ?');
    const keys = this.conn.stmt<[number, number], { key: number }>(
      'SELECT key FROM observation_vectors WHERE entity_id = ? AND key < ? ORDER BY key',
    );
    for (const id of ids) {
      const vectors = keys.all(id, FIRST_ASIDE_KEY).flatMap(({ key }) => {
        const row = read.get(BigInt(key));
        return row === undefined ? [] : [floats(row.embedding)];
      });
      if (vectors.length > 0) found.set(id, vectors);
    }
    return found;
  }

  async asideVectors(ids: readonly EntityId[]): Promise<Map<EntityId, Map<string, Float32Array>>> {
    const found = new Map<EntityId, Map<string, Float32Array>>();
    if (ids.length === 0 || !this.hasTable() || !this.conn.tableExists('observation_vectors')) return found;
    const read = this.conn.stmt<[bigint], { embedding: Buffer }>('SELECT embedding FROM entity_embeddings WHERE rowid = ?');
    const keys = this.conn.stmt<[number, number], { key: number; text_hash: string }>(
      'SELECT key, text_hash FROM observation_vectors WHERE entity_id = ? AND key >= ? AND text_hash IS NOT NULL',
    );
    for (const id of ids) {
      const byKey = new Map<string, Float32Array>();
      for (const { key, text_hash } of keys.all(id, FIRST_ASIDE_KEY)) {
        const row = read.get(BigInt(key));
        if (row !== undefined) byKey.set(text_hash, floats(row.embedding));
      }
      if (byKey.size > 0) found.set(id, byKey);
    }
    return found;
  }

  /** Whether any entity has observation vectors (a memory of short entities has none, and pays nothing). */
  private hasObservationVectors(): boolean {
    return this.conn.tableExists('observation_vectors') && this.conn.stmt('SELECT 1 FROM observation_vectors LIMIT 1').get() !== undefined;
  }

  /** The nearest rows, entities' and observations' alike, by row key. */
  private async searchRows(query: Float32Array, limit: number): Promise<{ id: number; distance: number }[]> {
    const cache = await this.loadCache();
    if (cache !== undefined && cache.dims === query.length) {
      if (!cache.sync()) cache.reload();
      if (cache.dims === Number(this.conn.metaGet('vector_dims'))) {
        this.keeper?.noteSynced(cache); // a save, when owed, starts later, off this path
        return cache.search(query, limit);
      }
      void this.cache?.then((cache) => cache?.close()).catch(() => undefined);
      this.cache = undefined; // the model changed size: the next search loads a cache of the new size
    }
    return this.conn
      .stmt<[Buffer, number], { id: number; distance: number }>(
        'SELECT rowid AS id, distance FROM entity_embeddings WHERE embedding MATCH ? AND k = ? ORDER BY distance',
      )
      .all(vectorBytes(query), Math.min(limit, 4096));
  }

  async warm(): Promise<void> {
    if (this.hasTable()) await this.loadCache();
  }

  async countPending(upTo: number): Promise<number> {
    return this.conn.stmt<[number], { n: number }>('SELECT count(*) AS n FROM (SELECT 1 FROM embedding_queue LIMIT ?)').get(upTo)?.n ?? 0;
  }

  async takeJobs(limit: number): Promise<EmbeddingJob[]> {
    // An empty queue (every drain's last look) takes no write lock.
    if (limit <= 0 || this.conn.stmt('SELECT 1 FROM embedding_queue LIMIT 1').get() === undefined) return [];
    const queued = this.conn
      .write(() => {
        // The claims of a process that was killed are free at once, not when their lease runs out.
        // A process id reused since is taken for the dead one's: its claims wait for their lease.
        const owners = this.conn
          .stmt<[number], { owner: number }>(
            'SELECT DISTINCT claimed_by AS owner FROM embedding_queue WHERE claimed_by IS NOT NULL AND claimed_by <> ?',
          )
          .all(this.owner);
        for (const { owner } of owners) {
          if (!ownerRuns(owner))
            this.conn.stmt('UPDATE embedding_queue SET claimed_until = NULL, claimed_by = NULL WHERE claimed_by = ?').run(owner);
        }
        return this.conn
          .stmt<{ lease: number; owner: number; limit: number }, { entity_id: number; version: number; queued_at: number }>(TAKE_SQL)
          .all({ lease: this.leaseMs, owner: this.owner, limit });
      }, false)
      .sort((a, b) => a.queued_at - b.queued_at || a.entity_id - b.entity_id);
    for (const q of queued) this.taken.add(q.entity_id);
    const entities = hydrate(
      this.conn,
      queued.map((q) => q.entity_id),
    );
    const outgoing = this.conn.stmt<[string], RelationRow>(
      'SELECT from_name, to_name, relation_type FROM relations WHERE from_name = ? ORDER BY id',
    );
    const jobs: EmbeddingJob[] = [];
    for (const q of queued) {
      const entity = entities.get(asEntityId(q.entity_id));
      if (entity === undefined) continue;
      jobs.push({ id: entity.id, version: q.version, entity: publicEntity(entity), relations: outgoing.all(entity.name).map(toRelation) });
    }
    return jobs;
  }

  async releaseJobs(ids: readonly EntityId[]): Promise<void> {
    if (ids.length === 0) return;
    this.conn.write(() => {
      const release = this.conn.stmt(
        'UPDATE embedding_queue SET claimed_until = NULL, claimed_by = NULL WHERE entity_id = ? AND claimed_by = ?',
      );
      for (const id of ids) {
        release.run(id, this.owner);
        this.taken.delete(id);
      }
    }, false);
  }

  async put(results: readonly EmbeddingResult[]): Promise<void> {
    this.conn.write(() => {
      const exists = this.conn.stmt('SELECT 1 FROM entities WHERE id = ?');
      const remove = this.conn.stmt('DELETE FROM entity_embeddings WHERE rowid = ?');
      const insert = this.conn.stmt('INSERT INTO entity_embeddings (rowid, embedding) VALUES (?, ?)');
      const queued = this.conn.stmt<[number], { version: number; claimed_by: number | null }>(
        'SELECT version, claimed_by FROM embedding_queue WHERE entity_id = ?',
      );
      const dequeue = this.conn.stmt('DELETE FROM embedding_queue WHERE entity_id = ?');
      const requeue = this.conn.stmt(
        `UPDATE embedding_queue SET queued_at = max(${NOW_MS_SQL}, (SELECT max(queued_at) + 1 FROM embedding_queue)), claimed_until = NULL, claimed_by = NULL
          WHERE entity_id = ?`,
      );
      const log = this.conn.stmt(`INSERT INTO vector_log (entity_id, nonce) VALUES (?, ${LOG_NONCE_SQL})`);
      const observations = this.conn.tableExists('observation_vectors');
      const addKey = this.conn.stmt('INSERT INTO observation_vectors (key, entity_id, text_hash) VALUES (?, ?, ?)');
      for (const r of results) {
        const ours = this.taken.delete(r.id);
        if (exists.get(r.id) === undefined) continue; // deleted while it was being embedded
        const job = queued.get(r.id);
        // Taken here, then its lease ran out and another process embedded it since: that vector
        // is of the entity's current text, this one may be older.
        if (ours && job === undefined) continue;
        remove.run(BigInt(r.id));
        insert.run(BigInt(r.id), vectorBytes(r.vector));
        if (observations) {
          deleteObservationVectors(this.conn, r.id);
          if (r.id < KEY_STRIDE)
            (r.observations ?? []).slice(0, MAX_OBSERVATION_VECTORS).forEach((v, j) => {
              const key = r.id + (j + 1) * KEY_STRIDE;
              insert.run(BigInt(key), vectorBytes(v));
              addKey.run(key, r.id, null);
              log.run(key);
            });
          if (r.id < KEY_STRIDE)
            (r.asides ?? []).slice(0, MAX_ASIDE_VECTORS).forEach((v, k) => {
              const key = r.id + (ASIDE_BASE + 1 + k) * KEY_STRIDE;
              insert.run(BigInt(key), vectorBytes(v));
              addKey.run(key, r.id, r.asideKeys?.[k] ?? null);
              log.run(key);
            });
        }
        if (job?.version === r.version) dequeue.run(r.id);
        // Changed while it was embedded: queued again, behind the jobs waiting, and free to take.
        else if (job !== undefined && job.claimed_by === this.owner) requeue.run(r.id);
        log.run(r.id);
      }
      this.conn.stmt('DELETE FROM vector_log WHERE seq <= (SELECT max(seq) FROM vector_log) - ?').run(LOG_KEEP);
    }, false);
  }

  async requeueAll(): Promise<number> {
    return this.conn.write(() => {
      this.conn.db.exec(REQUEUE_ALL_SQL);
      return this.conn.count('embedding_queue');
    }, false);
  }

  /** Threads the cache's sign-code scan runs on now (2 once its worker is up); undefined before the cache loaded or when there is none. */
  async scanThreads(): Promise<number | undefined> {
    return (await this.cache)?.scanThreads;
  }

  /** Where the in-memory vector cache came from ('file', 'chunks', 'rows'); undefined before it loaded or when there is none. */
  async cacheSource(): Promise<VectorCache['loadedFrom'] | undefined> {
    return (await this.cache)?.loadedFrom;
  }

  /** Saves the vector cache's file when it is owed one (vector-cache-keeper.ts); call before the database closes. */
  async close(): Promise<void> {
    await this.keeper?.close();
    // Not awaited: a cache still loading ends its scan's worker (if it ever starts one) once loaded.
    void this.cache?.then(
      (cache) => cache?.close(),
      () => undefined,
    );
  }

  /** The vec0 table exists once configure() ran, in this process or another. */
  private hasTable(): boolean {
    return this.conn.tableExists('entity_embeddings');
  }

  /**
   * Loads the in-memory cache once (usearch imported lazily): from its file when that fits this
   * database, else from sqlite-vec's storage. Undefined when it is off or cannot load.
   */
  private loadCache(): Promise<VectorCache | undefined> {
    if (this.cache !== undefined) return this.cache;
    const dims = Number(this.conn.metaGet('vector_dims'));
    if (!this.useCache || !Number.isInteger(dims) || dims <= 0) return Promise.resolve(undefined);
    this.cache = (async () => {
      try {
        const exactSearch = (await import('usearch')).exactSearch as unknown as ExactSearch;
        const cache =
          this.keeper !== undefined
            ? await this.keeper.load(exactSearch, dims)
            : await VectorCache.loadInBackground(this.conn.db, exactSearch, dims);
        cache.splitScanFrom(this.scanSplitFrom);
        return cache;
      } catch {
        // No usearch for this platform (or the store closed while loading): sqlite-vec's own KNN
        // answers, slower but the same.
        return undefined;
      }
    })();
    return this.cache;
  }
}

function vectorBytes(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

/** 1 − cosine similarity, as sqlite-vec's `distance_metric=cosine` (1 against a zero vector). */
function cosineDistance(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 1 : 1 - dot / Math.sqrt(na * nb);
}

/** A stored float32 vector's bytes as floats (a copy: the row's buffer need not be 4-byte aligned). */
function floats(bytes: Buffer): Float32Array {
  const v = new Float32Array(bytes.length / 4);
  Buffer.from(v.buffer).set(bytes);
  return v;
}
