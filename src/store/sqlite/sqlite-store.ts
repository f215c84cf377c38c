/**
 * The embedded default: one SQLite file (better-sqlite3), FTS5 for keywords and substrings,
 * sqlite-vec for vectors. Several processes may share the file: every write is one IMMEDIATE
 * transaction under WAL, so concurrent writers queue on the lock instead of losing updates.
 */
import { mkdirSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname } from 'node:path';
import { randomInt } from 'node:crypto';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { ERROR_CODES, MemoryError, entityNotFound } from '../../core/errors.js';
import { noopLogger, type Logger } from '../../core/logger.js';
import { buildSubstringQuery } from '../../core/text/fts-query.js';
import {
  asEntityId,
  DEFAULT_OBSERVATION_KIND,
  METADATA_KIND,
  type Entity,
  type EntityId,
  type EntityStatus,
  type KnowledgeGraph,
  type NewEntity,
  type ObservationAddition,
  type ObservationAdditionResult,
  type ObservationDeletion,
  type Relation,
} from '../../core/types.js';
import type {
  AccessSignal,
  CoOccurrence,
  CompactionListener,
  EmbeddingJob,
  EmbeddingResult,
  EntityFacts,
  ImportBatch,
  ImportCounts,
  KeywordHit,
  RankSignals,
  Store,
  StoreCapabilities,
  StoreStats,
  StoredEntity,
  VectorHit,
  VectorStatus,
} from '../store.js';
import { compactFts5 } from './fts5-compaction.js';
import { KeywordWorker, KeywordWorkerError, RANGE_SQL, mergeRanges, type RangeHit } from './keyword-split.js';
import { migrate } from './schema.js';
import { LOG_KEEP, RESET_ALL, VectorCache, type ExactSearch } from './vector-cache.js';
import { vectorFilePath } from './vector-cache-file.js';
import { VectorCacheKeeper } from './vector-cache-keeper.js';

export interface SqliteStoreOptions {
  /** Path of the database file; its folder is created when missing. `:memory:` works for tests. */
  readonly path: string;
  /** How long a write waits for another process's lock before giving up. @default 10000 */
  readonly busyTimeoutMs?: number;
  /** Load sqlite-vec; off gives a store without the vector capability. @default true */
  readonly vectors?: boolean;
  /** Scan vectors in memory with usearch instead of sqlite-vec's KNN (same results, faster). @default true */
  readonly vectorCache?: boolean;
  /**
   * Save the vector cache next to the database (`<path>.vectors`, vector-cache-file.ts), so a
   * restart reads it in one pass and replays the log since. Never for `:memory:`. @default true
   */
  readonly vectorCacheFile?: boolean;
  /** Where the store reports what it repairs by itself (a damaged vector cache file). @default no-op */
  readonly logger?: Logger;
  /**
   * From this many entities the keyword leg is split over two cores (keyword-split.ts); never on a
   * single core or in memory. @default 5000
   */
  readonly keywordSplitFrom?: number;
}

/** Entity text is joined with this separator in the FTS index (spec/hybrid-search.md). */
const OBS_SEPARATOR = ' | ';
const DAY_MS = 86_400_000;

interface EntityRow {
  id: number;
  name: string;
  entity_type: string;
  status: EntityStatus;
  created_at: number;
  updated_at: number;
}

interface FactsRow extends EntityRow {
  degree: number;
  metadata: number;
}

/** Entries kept in each of the keyword-term caches before they start over. */
const TERM_CACHE_SIZE = 50_000;
/** Graphs from this size split the keyword leg over two cores (at 10k entities: 4.5 -> 3.6 ms median). */
const KEYWORD_SPLIT_FROM = 5_000;
/** Entities whose facts are kept between searches before the cache starts over. */
const FACTS_CACHE_SIZE = 200_000;

const json = (values: readonly unknown[]): string => JSON.stringify(values);
const newQueueVersion = (): number => randomInt(1, 2 ** 47);

export function openSqliteStore(options: SqliteStoreOptions): SqliteStore {
  return new SqliteStore(options);
}

export class SqliteStore implements Store {
  readonly capabilities: StoreCapabilities;
  private readonly db: Database.Database;
  private readonly path: string;
  private readonly useVectorCache: boolean;
  private termTablesReady = false;
  /** Query word → the stored terms it tokenizes to (porter, accents folded): fixed for the tokenizer. */
  private readonly stemsOf = new Map<string, readonly string[]>();
  /** Document frequency per stored term, with the keyword change count it was read at. */
  private readonly dfOf = new Map<string, { readonly df: number; readonly changes: number }>();
  /** See cachedFacts(). */
  private readonly facts = new Map<EntityId, { readonly facts: EntityFacts; readonly degree: number }>();
  private factsAt = -1;
  /** Keyword rows rewritten in the open transaction, added to meta `keyword_changes` at commit. */
  private keywordChanges = 0;
  /** Prepared statements by SQL text: preparing costs more than running most of them. */
  private readonly statements = new Map<string, Database.Statement>();
  /** The in-memory vector cache, loaded on first need; undefined when usearch cannot load. */
  private cache: Promise<VectorCache | undefined> | undefined;
  /** Reads and saves the cache's file; undefined for `:memory:` or when switched off. */
  private readonly vectorKeeper: VectorCacheKeeper | undefined;

  /** The second half of split keyword queries; created on the first search that splits. */
  private keywordWorker: KeywordWorker | undefined;
  private keywordSplitFrom: number;
  /** Keyword searches answered by two halves (for tests and diagnostics). */
  keywordSplits = 0;
  private readonly busyTimeoutMs: number;

  constructor(options: SqliteStoreOptions) {
    this.path = options.path;
    this.busyTimeoutMs = options.busyTimeoutMs ?? 10_000;
    this.keywordSplitFrom = options.path === ':memory:' || availableParallelism() < 2 ? Infinity : (options.keywordSplitFrom ?? KEYWORD_SPLIT_FROM);
    this.useVectorCache = options.vectorCache ?? true;
    const saveVectors = this.useVectorCache && (options.vectorCacheFile ?? true) && options.path !== ':memory:';
    if (options.path !== ':memory:') mkdirSync(dirname(options.path), { recursive: true });
    try {
      this.db = new Database(options.path);
    } catch (cause) {
      throw new MemoryError(
        ERROR_CODES.STORE_FAILED,
        `Cannot open the database at ${options.path}: ${(cause as Error).message}. Check the path and its permissions, or pass another with --db.`,
        { cause },
      );
    }
    this.db.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
    this.db.pragma('cache_size = -65536'); // 64 MiB; the default 2 MiB is churned by FTS5 segment merges
    let vector = false;
    if (options.vectors ?? true) {
      try {
        sqliteVec.load(this.db);
        vector = true;
      } catch {
        // spec/semantic-search.md: without sqlite-vec the server keeps every other tool working.
        vector = false;
      }
    }
    this.capabilities = Object.freeze({ fts: true, vector });
    this.vectorKeeper = saveVectors && vector ? new VectorCacheKeeper(this.db, vectorFilePath(options.path), options.logger ?? noopLogger) : undefined;
    this.write(() => migrate(this.db));
    this.backfillFts();
  }

  // ---------- writes ----------

  async createEntities(entities: readonly NewEntity[], now: number): Promise<Entity[]> {
    return this.write(() => {
      const added: Entity[] = [];
      for (const entity of entities) {
        const id = this.insertEntity(entity, now);
        if (id === undefined) continue;
        for (const content of entity.observations) this.insertObservation(id, content, DEFAULT_OBSERVATION_KIND, now);
        this.syncEntity(id);
        added.push({ name: entity.name, entityType: entity.entityType, observations: [...entity.observations] });
      }
      return added;
    });
  }

  async createRelations(relations: readonly Relation[], now: number): Promise<Relation[]> {
    return this.write(() => {
      const added: Relation[] = [];
      const touched = new Set<string>();
      const insert = this.stmt(
        'INSERT INTO relations (from_name, to_name, relation_type, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
      );
      for (const r of relations) {
        if (insert.run(r.from, r.to, r.relationType, now).changes === 0) continue;
        added.push({ from: r.from, to: r.to, relationType: r.relationType });
        touched.add(r.from).add(r.to);
      }
      this.resyncNames(touched, now);
      return added;
    });
  }

  async addObservations(items: readonly ObservationAddition[], now: number): Promise<ObservationAdditionResult[]> {
    return this.write(() => {
      const results: ObservationAdditionResult[] = [];
      for (const item of items) {
        const id = this.idOf(item.entityName);
        if (id === undefined) throw entityNotFound(item.entityName);
        const addedObservations: string[] = [];
        for (const content of item.contents) {
          if (this.insertObservation(id, content, item.kind ?? DEFAULT_OBSERVATION_KIND, now)) addedObservations.push(content);
        }
        if (addedObservations.length > 0) this.touch(id, now);
        results.push({ entityName: item.entityName, addedObservations });
      }
      return results;
    });
  }

  async deleteEntities(names: readonly string[]): Promise<void> {
    this.write(() => {
      const neighbours = new Set<string>();
      const relationsOf = this.stmt<[string, string], { from_name: string; to_name: string }>(
        'SELECT from_name, to_name FROM relations WHERE from_name = ? OR to_name = ?',
      );
      const deleteRelations = this.stmt('DELETE FROM relations WHERE from_name = ? OR to_name = ?');
      for (const name of new Set(names)) {
        for (const r of relationsOf.all(name, name)) neighbours.add(r.from_name).add(r.to_name);
        deleteRelations.run(name, name);
        const id = this.idOf(name);
        if (id === undefined) continue;
        this.deleteIndexes(id);
        this.stmt('DELETE FROM entities WHERE id = ?').run(id);
        this.countEntities(-1);
      }
      for (const name of names) neighbours.delete(name);
      this.resyncNames(neighbours, undefined);
    });
  }

  async deleteObservations(deletions: readonly ObservationDeletion[], now: number): Promise<void> {
    this.write(() => {
      const remove = this.stmt(
        'DELETE FROM observations WHERE entity_id = ? AND content IN (SELECT value FROM json_each(?))',
      );
      for (const d of deletions) {
        const id = this.idOf(d.entityName);
        if (id === undefined) continue;
        if (remove.run(id, json(d.observations)).changes > 0) this.touch(id, now);
      }
    });
  }

  async deleteRelations(relations: readonly Relation[], now: number): Promise<void> {
    this.write(() => {
      const remove = this.stmt('DELETE FROM relations WHERE from_name = ? AND to_name = ? AND relation_type = ?');
      const touched = new Set<string>();
      for (const r of relations) {
        if (remove.run(r.from, r.to, r.relationType).changes > 0) touched.add(r.from).add(r.to);
      }
      this.resyncNames(touched, now);
    });
  }

  async setStatus(name: string, status: EntityStatus, now: number): Promise<boolean> {
    return this.write(
      () => this.stmt('UPDATE entities SET status = ?, updated_at = ? WHERE name = ?').run(status, now, name).changes > 0,
    );
  }

  async importBatch(batch: ImportBatch, now: number): Promise<ImportCounts> {
    return this.write(() => {
      let entitiesAdded = 0;
      let observationsAdded = 0;
      let relationsAdded = 0;
      for (const entity of batch.entities) {
        let id = this.insertEntity(entity, now);
        if (id === undefined) id = this.idOf(entity.name);
        else entitiesAdded++;
        if (id === undefined) continue;
        let changed = false;
        for (const content of entity.observations) {
          if (this.insertObservation(id, content, DEFAULT_OBSERVATION_KIND, now)) {
            observationsAdded++;
            changed = true;
          }
        }
        if (changed) this.touch(id, now);
      }
      const insert = this.stmt(
        'INSERT INTO relations (from_name, to_name, relation_type, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
      );
      const touched = new Set<string>();
      for (const r of batch.relations) {
        if (insert.run(r.from, r.to, r.relationType, now).changes === 0) continue;
        relationsAdded++;
        touched.add(r.from).add(r.to);
      }
      this.resyncNames(touched, now);
      return { entitiesAdded, observationsAdded, relationsAdded };
    });
  }

  // ---------- reads ----------

  async optimizeIndexes(progress?: CompactionListener): Promise<void> {
    // Not FTS5's 'optimize': one transaction that, at 1M entities, locked out other writers for
    // tens of seconds (fts5-compaction.ts). Merging changes no graph data: cached facts stay valid.
    await compactFts5(this.db, ['entity_fts', 'entity_trigram'], {
      inTransaction: (step) => this.write(step, false),
      busyTimeoutMs: this.busyTimeoutMs,
      progress,
    });
  }

  async readGraph(): Promise<KnowledgeGraph> {
    const rows = this.stmt<[], EntityRow>('SELECT * FROM entities ORDER BY id').all();
    const observations = new Map<number, string[]>();
    for (const o of this.stmt<[], { entity_id: number; content: string }>('SELECT entity_id, content FROM observations ORDER BY entity_id, id')
      .iterate()) {
      let list = observations.get(o.entity_id);
      if (list === undefined) observations.set(o.entity_id, (list = []));
      list.push(o.content);
    }
    const relations = this.stmt<[], { from_name: string; to_name: string; relation_type: string }>(
        'SELECT from_name, to_name, relation_type FROM relations ORDER BY id',
      )
      .all()
      .map(toRelation);
    return {
      entities: rows.map((r) => ({ name: r.name, entityType: r.entity_type, observations: observations.get(r.id) ?? [] })),
      relations,
    };
  }

  async searchNodes(query: string): Promise<KnowledgeGraph> {
    const candidateIds = this.substringCandidates(query);
    const entities = this.hydrate(candidateIds);
    // The official predicate, applied exactly: the index only narrows the candidates.
    const q = query.toLowerCase();
    const ranked: { entity: StoredEntity; tier: number; order: number }[] = [];
    candidateIds.forEach((id, order) => {
      const entity = entities.get(asEntityId(id));
      if (entity === undefined) return;
      const tier = substringTier(entity, q);
      if (tier !== undefined) ranked.push({ entity, tier, order });
    });
    ranked.sort((a, b) => a.tier - b.tier || a.order - b.order);
    const found = ranked.map((r) => r.entity);
    return { entities: found.map(publicEntity), relations: this.relationsTouching(found.map((e) => e.name)) };
  }

  /**
   * Candidates for a substring query: the trigram index for 3+ characters, else every entity; in
   * creation order, which breaks ties within a tier as the official server's file order does.
   * (Ordering them by BM25 cost half the time of a 10k-entity search and changed nothing a tier
   * did not already decide.)
   */
  private substringCandidates(query: string): number[] {
    const match = buildSubstringQuery(query);
    if (match !== undefined) {
      try {
        return this.stmt<[string], { id: number }>(
            'SELECT rowid AS id FROM entity_trigram WHERE entity_trigram MATCH ? ORDER BY rowid',
          )
          .all(match)
          .map((r) => r.id);
      } catch {
        // Text FTS5 cannot parse (a NUL character, say) falls back to the scan, which is always exact.
      }
    }
    return this.stmt<[], { id: number }>('SELECT id FROM entities ORDER BY id').all().map((r) => r.id);
  }

  async openNodes(names: readonly string[]): Promise<KnowledgeGraph> {
    const ids = this.stmt<[string], { id: number }>('SELECT id FROM entities WHERE name IN (SELECT value FROM json_each(?)) ORDER BY id')
      .all(json(names))
      .map((r) => r.id);
    const entities = this.hydrate(ids);
    const found = ids.map((id) => entities.get(asEntityId(id))).filter((e): e is StoredEntity => e !== undefined);
    return { entities: found.map(publicEntity), relations: this.relationsTouching(found.map((e) => e.name)) };
  }

  async idsByName(names: readonly string[]): Promise<EntityId[]> {
    const ids: EntityId[] = [];
    for (const name of names) {
      const id = this.idOf(name);
      if (id !== undefined) ids.push(id);
    }
    return ids;
  }

  async entitiesById(ids: readonly EntityId[]): Promise<Map<EntityId, StoredEntity>> {
    return this.hydrate(ids);
  }

  async stats(): Promise<StoreStats> {
    const count = (table: string): number =>
      (this.stmt<[], { n: number }>(`SELECT count(*) AS n FROM ${table}`).get()?.n ?? 0);
    return {
      entities: count('entities'),
      observations: count('observations'),
      relations: count('relations'),
      databaseBytes: this.path === ':memory:' ? undefined : fileBytes(this.path) + fileBytes(`${this.path}-wal`),
      location: this.path,
    };
  }

  async searchKeywords(match: string, limit: number): Promise<KeywordHit[]> {
    try {
      const hits = await this.keywordHits(match, limit);
      return hits.map((r) => ({ id: asEntityId(r.id), bm25: r.score }));
    } catch (cause) {
      const code = (cause as { code?: unknown }).code;
      if (code !== 'SQLITE_ERROR') throw cause;
      throw new MemoryError(ERROR_CODES.INVALID_QUERY, `The keyword expression could not be parsed (${(cause as Error).message}).`, { cause });
    }
  }

  /** Best-first BM25 matches: one query, or from keywordSplitFrom entities two halves on two cores. */
  private async keywordHits(match: string, limit: number): Promise<RangeHit[]> {
    const entities = Number(this.metaGet('entity_count') ?? 0);
    const worker = entities >= this.keywordSplitFrom ? this.splitWorker() : undefined;
    if (worker === undefined) {
      return this.stmt<[string, number], RangeHit>(
          'SELECT rowid AS id, bm25(entity_fts) AS score FROM entity_fts WHERE entity_fts MATCH ? ORDER BY score, rowid LIMIT ?',
        )
        .all(match, limit);
    }
    const last = this.stmt<[], { m: number | null }>('SELECT max(id) AS m FROM entities').get()?.m ?? 0;
    const middle = Math.floor(last / 2);
    const range = this.stmt<[string, number, number, number], RangeHit>(RANGE_SQL);
    const far = worker.search(match, middle + 1, last, limit);
    let near: RangeHit[];
    try {
      near = range.all(match, 0, middle, limit);
    } catch (error) {
      far.catch(() => undefined); // the same expression fails there too; this error is the answer
      throw error;
    }
    let rest: RangeHit[];
    try {
      rest = await far;
    } catch (error) {
      if (error instanceof KeywordWorkerError) throw error;
      rest = range.all(match, middle + 1, last, limit); // the worker is gone: this connection answers
    }
    this.keywordSplits++;
    return mergeRanges(near, rest, limit);
  }

  private splitWorker(): KeywordWorker | undefined {
    if (this.keywordWorker?.broken === true) return undefined;
    try {
      this.keywordWorker ??= new KeywordWorker(this.path, this.busyTimeoutMs);
    } catch {
      this.keywordSplitFrom = Infinity; // no worker threads here: one core answers
      return undefined;
    }
    return this.keywordWorker;
  }

  async keywordTermStats(words: readonly string[]): Promise<{ total: number; terms: { word: string; df: number }[] }> {
    const total = Number(this.metaGet('entity_count') ?? 0);
    if (words.length === 0) return { total, terms: [] };
    const changes = Number(this.metaGet('keyword_changes') ?? 0);
    this.learnStems(words.filter((w) => !this.stemsOf.has(w)));
    // fts5vocab counts a term's documents by reading its whole doclist: 11 ms per query at 100k
    // entities for common words. A count is reused while fewer than 1% of the entities changed
    // since it was read (every writer, in any process, adds to meta `keyword_changes`), so it is
    // off by less than 1% of the entity count, and in a graph under 100 entities always exact.
    const df = this.stmt<[string], { doc: number }>('SELECT doc FROM entity_fts_vocab WHERE term = ?');
    const docsWith = (term: string): number => {
      const cached = this.dfOf.get(term);
      if (cached !== undefined && (changes - cached.changes) * 100 < total) return cached.df;
      const fresh = df.get(term)?.doc ?? 0;
      if (this.dfOf.size >= TERM_CACHE_SIZE) this.dfOf.clear();
      this.dfOf.set(term, { df: fresh, changes });
      return fresh;
    };
    const terms = words.map((word) => ({ word, df: Math.max(0, ...(this.stemsOf.get(word) ?? []).map(docsWith)) }));
    return { total, terms };
  }

  /** Puts the words through the index's own tokenizer, in a private temporary table. */
  private learnStems(words: readonly string[]): void {
    if (words.length === 0) return;
    if (!this.termTablesReady) {
      this.db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_terms USING fts5(t, tokenize = 'porter unicode61 remove_diacritics 2');
        CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_terms_vocab USING fts5vocab(temp, query_terms, 'instance');`);
      this.termTablesReady = true;
    }
    const insert = this.stmt('INSERT INTO temp.query_terms (rowid, t) VALUES (?, ?)');
    const stems = this.db.transaction(() => {
      words.forEach((w, i) => insert.run(i + 1, w));
      const rows = this.stmt<[], { term: string; doc: number }>('SELECT term, doc FROM temp.query_terms_vocab').all();
      this.db.exec('DELETE FROM temp.query_terms');
      return rows;
    })();
    if (this.stemsOf.size + words.length > TERM_CACHE_SIZE) this.stemsOf.clear();
    words.forEach((w, i) => this.stemsOf.set(w, [...new Set(stems.filter((s) => s.doc === i + 1).map((s) => s.term))]));
  }

  async edgesTouching(ids: readonly EntityId[]): Promise<{ readonly from: EntityId; readonly to: EntityId }[]> {
    if (ids.length === 0) return [];
    return this.stmt<[string, string], { a: number; b: number }>(
        `SELECT ef.id AS a, et.id AS b FROM relations r
           JOIN entities ef ON ef.name = r.from_name
           JOIN entities et ON et.name = r.to_name
          WHERE ef.id IN (SELECT value FROM json_each(?)) OR et.id IN (SELECT value FROM json_each(?))
          ORDER BY r.id`,
      )
      .all(json(ids), json(ids))
      .map((r) => ({ from: asEntityId(r.a), to: asEntityId(r.b) }));
  }

  // ---------- vectors ----------

  async configureVectors(model: string, dims: number): Promise<{ readonly reset: boolean }> {
    this.requireVectors();
    if (!Number.isInteger(dims) || dims <= 0) throw new MemoryError(ERROR_CODES.CONFIG_INVALID, `Invalid vector size ${dims}.`);
    return this.write(() => {
      const current = this.metaGet('vector_model');
      const currentDims = this.metaGet('vector_dims');
      const exists = this.tableExists('entity_embeddings');
      if (exists && current === model && currentDims === String(dims)) return { reset: false };
      this.db.exec('DROP TABLE IF EXISTS entity_embeddings');
      this.db.exec(`CREATE VIRTUAL TABLE entity_embeddings USING vec0(embedding float[${dims}] distance_metric=cosine)`);
      this.metaSet('vector_model', model);
      this.metaSet('vector_dims', String(dims));
      this.stmt('INSERT INTO vector_log (entity_id) VALUES (?)').run(RESET_ALL);
      this.db.exec(
        'INSERT INTO embedding_queue (entity_id, version) SELECT id, abs(random()) % 140737488355328 + 1 FROM entities WHERE true ON CONFLICT(entity_id) DO UPDATE SET version = excluded.version',
      );
      return { reset: current !== undefined };
    }, false);
  }

  async vectorStatus(): Promise<VectorStatus> {
    const pending = this.stmt<[], { n: number }>('SELECT count(*) AS n FROM embedding_queue').get()?.n ?? 0;
    const dims = this.metaGet('vector_dims');
    const indexed =
      this.capabilities.vector && this.tableExists('entity_embeddings')
        ? (this.stmt<[], { n: number }>('SELECT count(*) AS n FROM entity_embeddings').get()?.n ?? 0)
        : 0;
    return { model: this.metaGet('vector_model'), dims: dims === undefined ? undefined : Number(dims), indexed, pending };
  }

  async countPendingEmbeddings(upTo: number): Promise<number> {
    return this.stmt<[number], { n: number }>('SELECT count(*) AS n FROM (SELECT 1 FROM embedding_queue LIMIT ?)').get(upTo)?.n ?? 0;
  }

  async takeEmbeddingJobs(limit: number): Promise<EmbeddingJob[]> {
    const queued = this.stmt<[number], { entity_id: number; version: number }>(
        'SELECT entity_id, version FROM embedding_queue ORDER BY entity_id LIMIT ?',
      )
      .all(limit);
    const entities = this.hydrate(queued.map((q) => q.entity_id));
    const outgoing = this.stmt<[string], { from_name: string; to_name: string; relation_type: string }>(
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

  async putEmbeddings(results: readonly EmbeddingResult[]): Promise<void> {
    this.requireVectors();
    this.write(() => {
      const exists = this.stmt('SELECT 1 FROM entities WHERE id = ?');
      const remove = this.stmt('DELETE FROM entity_embeddings WHERE rowid = ?');
      const insert = this.stmt('INSERT INTO entity_embeddings (rowid, embedding) VALUES (?, ?)');
      const dequeue = this.stmt('DELETE FROM embedding_queue WHERE entity_id = ? AND version = ?');
      const log = this.stmt('INSERT INTO vector_log (entity_id) VALUES (?)');
      for (const r of results) {
        if (exists.get(r.id) === undefined) continue; // deleted while it was being embedded
        remove.run(BigInt(r.id));
        insert.run(BigInt(r.id), vectorBytes(r.vector));
        dequeue.run(r.id, r.version);
        log.run(r.id);
      }
      this.stmt('DELETE FROM vector_log WHERE seq <= (SELECT max(seq) FROM vector_log) - ?').run(LOG_KEEP);
    }, false);
  }

  async requeueAllEmbeddings(): Promise<number> {
    return this.write(() => {
      this.db.exec(
        'INSERT INTO embedding_queue (entity_id, version) SELECT id, abs(random()) % 140737488355328 + 1 FROM entities WHERE true ON CONFLICT(entity_id) DO UPDATE SET version = excluded.version',
      );
      return this.stmt<[], { n: number }>('SELECT count(*) AS n FROM embedding_queue').get()?.n ?? 0;
    }, false);
  }

  async searchVectors(query: Float32Array, limit: number): Promise<VectorHit[]> {
    if (!this.capabilities.vector || !this.tableExists('entity_embeddings') || limit <= 0) return [];
    const cache = await this.vectorCache();
    if (cache !== undefined && cache.dims === query.length) {
      if (!cache.sync()) cache.reload();
      if (cache.dims === Number(this.metaGet('vector_dims'))) {
        this.vectorKeeper?.noteSynced(cache); // a save, when owed, starts later, off this path
        return cache.search(query, limit).map((h) => ({ id: asEntityId(h.id), distance: h.distance }));
      }
      this.cache = undefined; // the model changed size: the next search loads a cache of the new size
    }
    return this.stmt<[Buffer, number], { id: number; distance: number }>(
        'SELECT rowid AS id, distance FROM entity_embeddings WHERE embedding MATCH ? AND k = ? ORDER BY distance',
      )
      .all(vectorBytes(query), Math.min(limit, 4096))
      .map((r) => ({ id: asEntityId(r.id), distance: r.distance }));
  }

  async warmVectors(): Promise<void> {
    if (this.capabilities.vector && this.tableExists('entity_embeddings')) await this.vectorCache();
  }

  /** Where the in-memory vector cache came from ('file', 'chunks', 'rows'); undefined before it loaded or when there is none. */
  async vectorCacheSource(): Promise<VectorCache['loadedFrom'] | undefined> {
    return (await this.cache)?.loadedFrom;
  }

  /**
   * Loads the in-memory cache once (usearch imported lazily): from its file when that fits this
   * database, else from sqlite-vec's storage. Undefined when it is off or cannot load.
   */
  private vectorCache(): Promise<VectorCache | undefined> {
    if (this.cache !== undefined) return this.cache;
    const dims = Number(this.metaGet('vector_dims'));
    if (!this.useVectorCache || !Number.isInteger(dims) || dims <= 0) return Promise.resolve(undefined);
    this.cache = (async () => {
      try {
        const exactSearch = (await import('usearch')).exactSearch as unknown as ExactSearch;
        if (this.vectorKeeper !== undefined) return await this.vectorKeeper.load(exactSearch, dims);
        return await VectorCache.loadInBackground(this.db, exactSearch, dims);
      } catch {
        // No usearch for this platform (or the store closed while loading): sqlite-vec's own KNN
        // answers, slower but the same.
        return undefined;
      }
    })();
    return this.cache;
  }

  // ---------- signals ----------

  async rankSignals(ids: readonly EntityId[]): Promise<RankSignals> {
    const list = json(ids);
    const known = this.cachedFacts();
    const missing = ids.filter((id) => !known.has(id));
    if (missing.length > 0) {
      // Observations are not read: their metadata share comes from a partial index, usually empty.
      for (const r of this.stmt<[string], FactsRow>(
          `SELECT e.id, e.name, e.entity_type, e.status, e.created_at, e.updated_at,
                  (SELECT count(*) FROM relations WHERE from_name = e.name) +
                  (SELECT count(*) FROM relations WHERE to_name = e.name) AS degree,
                  (SELECT count(*) FROM observations m WHERE m.entity_id = e.id AND m.kind = 'metadata') AS metadata
             FROM entities e WHERE e.id IN (SELECT value FROM json_each(?))`,
        )
        .all(json(missing))) {
        const id = asEntityId(r.id);
        const observations = r.metadata === 0 ? 0 : (this.stmt<[number], { n: number }>('SELECT count(*) AS n FROM observations WHERE entity_id = ?').get(r.id)?.n ?? 0);
        if (known.size >= FACTS_CACHE_SIZE) known.clear();
        known.set(id, {
          facts: {
            id,
            name: r.name,
            entityType: r.entity_type,
            status: r.status,
            createdAt: r.created_at,
            updatedAt: r.updated_at,
            metadataRatio: observations === 0 ? 0 : r.metadata / observations,
          },
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
    const access = new Map<EntityId, AccessSignal>();
    for (const r of this.stmt<[string], { id: number; access_count: number; last_access: number; days: number }>(
        `SELECT a.entity_id AS id, a.access_count, a.last_access,
                (SELECT count(*) FROM entity_access_days d WHERE d.entity_id = a.entity_id) AS days
           FROM entity_access a WHERE a.entity_id IN (SELECT value FROM json_each(?))`,
      )
      .all(list)) {
      access.set(asEntityId(r.id), { accessCount: r.access_count, lastAccess: r.last_access, accessDays: r.days });
    }
    const coOccurrences: CoOccurrence[] = this.stmt<[string, string], { a: number; b: number; co_count: number; last_co: number }>(
        `SELECT entity_a_id AS a, entity_b_id AS b, co_count, last_co FROM co_occurrences
          WHERE entity_a_id IN (SELECT value FROM json_each(?)) AND entity_b_id IN (SELECT value FROM json_each(?))`,
      )
      .all(list, list)
      .map((r) => ({ a: asEntityId(r.a), b: asEntityId(r.b), count: r.co_count, lastCo: r.last_co }));
    return { facts, access, degree, coOccurrences };
  }

  /**
   * Facts and degree of entities read by earlier searches. They change only when the graph does:
   * every graph write, in any process, adds to meta `graph_changes`, and a different count empties
   * the cache (usage signals are not cached; they change with every search).
   */
  private cachedFacts(): Map<EntityId, { readonly facts: EntityFacts; readonly degree: number }> {
    const changes = Number(this.metaGet('graph_changes') ?? 0);
    if (changes !== this.factsAt) {
      this.facts.clear();
      this.factsAt = changes;
    }
    return this.facts;
  }

  async recordAccess(ids: readonly EntityId[], now: number): Promise<void> {
    const unique = [...new Set(ids)].sort((a, b) => a - b);
    if (unique.length === 0) return;
    const day = new Date(Math.floor(now / DAY_MS) * DAY_MS).toISOString().slice(0, 10);
    this.write(() => {
      const access = this.stmt(
        `INSERT INTO entity_access (entity_id, access_count, last_access) SELECT @id, 1, @now WHERE EXISTS (SELECT 1 FROM entities WHERE id = @id)
         ON CONFLICT(entity_id) DO UPDATE SET access_count = access_count + 1, last_access = excluded.last_access`,
      );
      const days = this.stmt(
        'INSERT INTO entity_access_days (entity_id, day) SELECT @id, @day WHERE EXISTS (SELECT 1 FROM entities WHERE id = @id) ON CONFLICT DO NOTHING',
      );
      const pair = this.stmt(
        `INSERT INTO co_occurrences (entity_a_id, entity_b_id, co_count, last_co)
         SELECT @a, @b, 1, @now WHERE EXISTS (SELECT 1 FROM entities WHERE id = @a) AND EXISTS (SELECT 1 FROM entities WHERE id = @b)
         ON CONFLICT(entity_a_id, entity_b_id) DO UPDATE SET co_count = co_count + 1, last_co = excluded.last_co`,
      );
      for (const id of unique) {
        access.run({ id, now });
        days.run({ id, day });
      }
      for (let i = 0; i < unique.length; i++) {
        for (let j = i + 1; j < unique.length; j++) pair.run({ a: unique[i], b: unique[j], now });
      }
    }, false);
  }

  async close(): Promise<void> {
    // Saves the vector cache's file when it is owed one (see vector-cache-keeper.ts), while the
    // database is still open to bring the cache up to date first.
    await this.vectorKeeper?.close();
    await this.keywordWorker?.close();
    if (this.db.open) this.db.close();
  }

  // ---------- internals ----------

  /**
   * Runs fn in one IMMEDIATE transaction; a lock held too long by another process becomes
   * STORE_BUSY. `graph` false for writes that change no entity, observation or relation (usage
   * signals, vectors), which leave cached facts valid.
   */
  private write<T>(fn: () => T, graph = true): T {
    // Not db.transaction(): it prepares BEGIN and COMMIT anew on every call.
    if (this.db.inTransaction) return fn();
    try {
      this.stmt('BEGIN IMMEDIATE').run();
    } catch (cause) {
      if (isBusy(cause)) {
        throw new MemoryError(
          ERROR_CODES.STORE_BUSY,
          'The database is locked by another Limbic process and stayed locked past the wait limit. Nothing was saved; try the call again.',
          { cause },
        );
      }
      throw cause;
    }
    try {
      this.keywordChanges = 0;
      const result = fn();
      if (graph) this.stmt("INSERT INTO meta (key, value) VALUES ('graph_changes', 1) ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1").run();
      if (this.keywordChanges > 0) {
        this.stmt("INSERT INTO meta (key, value) VALUES ('keyword_changes', ?) ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + excluded.value").run(
          this.keywordChanges,
        );
      }
      this.stmt('COMMIT').run();
      return result;
    } catch (error) {
      if (this.db.inTransaction) this.stmt('ROLLBACK').run();
      throw error;
    } finally {
      this.keywordChanges = 0;
    }
  }

  private stmt<P extends unknown[] | object = unknown[], R = unknown>(sql: string): Database.Statement<P extends unknown[] ? P : [P], R> {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement as unknown as Database.Statement<P extends unknown[] ? P : [P], R>;
  }

  private insertEntity(entity: NewEntity, now: number): EntityId | undefined {
    // run() + lastInsertRowid: RETURNING made this insert about 20x slower inside transactions that
    // also write FTS5 tables (found with bench/latency's import).
    const result = this.stmt(
      'INSERT INTO entities (name, entity_type, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT(name) DO NOTHING',
    ).run(entity.name, entity.entityType, entity.status ?? 'activo', now, now);
    if (result.changes === 0) return undefined;
    this.countEntities(1);
    return asEntityId(Number(result.lastInsertRowid));
  }

  private insertObservation(id: EntityId, content: string, kind: string, now: number): boolean {
    return (
      this.stmt('INSERT INTO observations (entity_id, content, kind, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING')
        .run(id, content, kind, now).changes > 0
    );
  }

  private countEntities(delta: number): void {
    this.stmt("UPDATE meta SET value = CAST(value AS INTEGER) + ? WHERE key = 'entity_count'").run(delta);
  }

  private idOf(name: string): EntityId | undefined {
    const row = this.stmt<[string], { id: number }>('SELECT id FROM entities WHERE name = ?').get(name);
    return row === undefined ? undefined : asEntityId(row.id);
  }

  /** Marks an entity changed: new updated_at, fresh keyword rows, vector queued. */
  private touch(id: EntityId, now: number | undefined): void {
    if (now !== undefined) this.stmt('UPDATE entities SET updated_at = ? WHERE id = ?').run(now, id);
    this.syncEntity(id);
  }

  /** Relations changed: keyword rows are unaffected, the text made for embedding is not. */
  private resyncNames(names: ReadonlySet<string>, now: number | undefined): void {
    for (const name of names) {
      const id = this.idOf(name);
      if (id === undefined) continue;
      if (now !== undefined) this.stmt('UPDATE entities SET updated_at = ? WHERE id = ?').run(now, id);
      this.queueEmbedding(id);
    }
  }

  private queueEmbedding(id: EntityId): void {
    this.stmt('INSERT INTO embedding_queue (entity_id, version) VALUES (?, ?) ON CONFLICT(entity_id) DO UPDATE SET version = excluded.version').run(
      id,
      newQueueVersion(),
    );
  }

  /** spec/hybrid-search.md `_sync_fts`: rebuild the keyword rows from the entity's current state. */
  private syncEntity(id: EntityId): void {
    const row = this.stmt<[number], EntityRow>('SELECT * FROM entities WHERE id = ?').get(id);
    if (row === undefined) return;
    const obsText = this.stmt<[number], { content: string }>('SELECT content FROM observations WHERE entity_id = ? ORDER BY id')
      .all(id)
      .map((o) => o.content)
      .join(OBS_SEPARATOR);
    this.keywordChanges++;
    for (const table of ['entity_fts', 'entity_trigram']) {
      this.stmt(`DELETE FROM ${table} WHERE rowid = ?`).run(id);
      this.stmt(`INSERT INTO ${table} (rowid, name, entity_type, obs_text) VALUES (?, ?, ?, ?)`).run(id, row.name, row.entity_type, obsText);
    }
    this.queueEmbedding(id);
  }

  private deleteIndexes(id: EntityId): void {
    this.keywordChanges++;
    this.stmt('DELETE FROM entity_fts WHERE rowid = ?').run(id);
    this.stmt('DELETE FROM entity_trigram WHERE rowid = ?').run(id);
    if (this.capabilities.vector && this.tableExists('entity_embeddings')) {
      this.stmt('DELETE FROM entity_embeddings WHERE rowid = ?').run(BigInt(id));
      this.stmt('INSERT INTO vector_log (entity_id) VALUES (?)').run(id);
    }
  }

  /** spec/hybrid-search.md `_backfill_fts`: an index that is empty while entities exist is rebuilt. */
  private backfillFts(): void {
    const entities = this.stmt<[], { n: number }>('SELECT count(*) AS n FROM entities').get()?.n ?? 0;
    const indexed = this.stmt<[], { n: number }>('SELECT count(*) AS n FROM entity_trigram').get()?.n ?? 0;
    const keywords = this.stmt<[], { n: number }>('SELECT count(*) AS n FROM entity_fts').get()?.n ?? 0;
    if (entities === 0 || (indexed > 0 && keywords > 0)) return;
    this.write(() => {
      for (const r of this.stmt<[], { id: number }>('SELECT id FROM entities').all()) this.syncEntity(asEntityId(r.id));
    });
  }

  private hydrate(ids: readonly number[]): Map<EntityId, StoredEntity> {
    const result = new Map<EntityId, StoredEntity>();
    if (ids.length === 0) return result;
    const list = json(ids);
    const rows = this.stmt<[string], EntityRow>('SELECT * FROM entities WHERE id IN (SELECT value FROM json_each(?))')
      .all(list);
    const observations = new Map<number, { content: string; kind: string }[]>();
    for (const o of this.stmt<[string], { entity_id: number; content: string; kind: string }>(
        'SELECT entity_id, content, kind FROM observations WHERE entity_id IN (SELECT value FROM json_each(?)) ORDER BY entity_id, id',
      )
      .iterate(list)) {
      let l = observations.get(o.entity_id);
      if (l === undefined) observations.set(o.entity_id, (l = []));
      l.push(o);
    }
    for (const r of rows) {
      const obs = observations.get(r.id) ?? [];
      const metadata = obs.filter((o) => o.kind === METADATA_KIND).length;
      result.set(asEntityId(r.id), {
        id: asEntityId(r.id),
        name: r.name,
        entityType: r.entity_type,
        observations: obs.map((o) => o.content),
        kinds: obs.map((o) => o.kind),
        status: r.status,
        createdAt: r.created_at,
        updatedAt: r.updated_at,
        metadataRatio: obs.length === 0 ? 0 : metadata / obs.length,
      });
    }
    return result;
  }

  private relationsTouching(names: readonly string[]): Relation[] {
    if (names.length === 0) return [];
    const list = json(names);
    return this.stmt<[string, string], { from_name: string; to_name: string; relation_type: string }>(
        `SELECT from_name, to_name, relation_type FROM relations
          WHERE from_name IN (SELECT value FROM json_each(?)) OR to_name IN (SELECT value FROM json_each(?)) ORDER BY id`,
      )
      .all(list, list)
      .map(toRelation);
  }

  private requireVectors(): void {
    if (!this.capabilities.vector) {
      throw new MemoryError(
        ERROR_CODES.VECTOR_UNAVAILABLE,
        'The sqlite-vec extension could not be loaded, so vectors cannot be stored. Reinstall Limbic (npm install) to restore it; every other tool keeps working.',
      );
    }
  }

  private tableExists(name: string): boolean {
    return this.stmt('SELECT 1 FROM sqlite_master WHERE name = ?').get(name) !== undefined;
  }

  private metaGet(key: string): string | undefined {
    return this.stmt<[string], { value: string }>('SELECT value FROM meta WHERE key = ?').get(key)?.value;
  }

  private metaSet(key: string, value: string): void {
    this.stmt('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value').run(key, value);
  }
}

/**
 * How well an entity matches a lower-cased query under the official substring test, best first;
 * undefined when it does not match at all.
 */
function substringTier(entity: Entity, q: string): number | undefined {
  const name = entity.name.toLowerCase();
  if (name === q) return 0;
  if (name.startsWith(q)) return 1;
  if (name.includes(q)) return 2;
  if (entity.entityType.toLowerCase().includes(q)) return 3;
  if (entity.observations.some((o) => o.toLowerCase().includes(q))) return 4;
  return undefined;
}

function publicEntity(e: Entity): Entity {
  return { name: e.name, entityType: e.entityType, observations: [...e.observations] };
}

function toRelation(r: { from_name: string; to_name: string; relation_type: string }): Relation {
  return { from: r.from_name, to: r.to_name, relationType: r.relation_type };
}

function vectorBytes(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

function fileBytes(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED' || code === 'SQLITE_BUSY_SNAPSHOT';
}
