/**
 * The embedded default: one SQLite file (better-sqlite3), FTS5 for keywords and substrings,
 * sqlite-vec for vectors. Several processes may share the file: every write is one IMMEDIATE
 * transaction under WAL, so concurrent writers queue on the lock instead of losing updates.
 *
 * This file composes the parts, which share one connection (sqlite-connection.ts): the graph
 * (sqlite-graph.ts, sqlite-graph-reads.ts), usage signals (sqlite-usage.ts), the keyword index
 * (sqlite-keywords.ts) and, when sqlite-vec loads, the vector index (sqlite-vectors.ts).
 */
import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { ERROR_CODES, MemoryError } from '../../core/errors.js';
import { noopLogger, type Logger } from '../../core/logger.js';
import type { Store, StoreStats } from '../store.js';
import { SqliteConnection } from './sqlite-connection.js';
import { SqliteCapture } from './sqlite-capture.js';
import { SqliteGraph } from './sqlite-graph.js';
import { SqliteKeywordIndex } from './sqlite-keywords.js';
import { SqliteMaintenance } from './sqlite-maintenance.js';
import { SqliteRewrite } from './sqlite-rewrite.js';
import { SqliteTuning } from './sqlite-tuning.js';
import { SqliteTransfer } from './sqlite-transfer.js';
import { SqliteUsage } from './sqlite-usage.js';
import { SqliteVectorIndex } from './sqlite-vectors.js';

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
  /**
   * From this many vectors the vector leg's first pass (the sign codes' scan) is split over two
   * cores (scan-helper.ts); never on a single core. @default 500000
   */
  readonly vectorSplitFrom?: number;
  /**
   * Answer plain OR keyword queries from an in-memory top-k index with FTS5's exact bm25()
   * (keyword-topk.ts); off sends every query to FTS5. @default true
   */
  readonly keywordTopK?: boolean;
  /**
   * How long an embedding job this process took is left to it before another process sharing the
   * file may take it (sqlite-vectors.ts). @default 120000
   */
  readonly embeddingLeaseMs?: number;
}

/** Graphs from this size split the keyword leg over two cores (at 10k entities: 4.5 -> 3.6 ms median). */
const KEYWORD_SPLIT_FROM = 5_000;
/** Memories from this size split the vector leg's sign-code scan over two cores (bench/results/vector-leg-2026-11-28-s18.md). */
const VECTOR_SPLIT_FROM = 500_000;

export function openSqliteStore(options: SqliteStoreOptions): SqliteStore {
  return new SqliteStore(options);
}

export class SqliteStore implements Store {
  readonly graph: SqliteGraph;
  readonly usage: SqliteUsage;
  readonly keywords: SqliteKeywordIndex;
  /** The tuner's shadow log and applied parameters (sqlite-tuning.ts). */
  readonly tuning: SqliteTuning;
  /** Undefined when sqlite-vec could not be loaded (or was switched off). */
  readonly vectors: SqliteVectorIndex | undefined;
  /** Whole-memory reads and merges for limbic migrate (sqlite-transfer.ts). */
  readonly transfer: SqliteTransfer;
  /** Supersedes, end_relation, duplicate and split tools (sqlite-maintenance.ts). */
  readonly maintenance: SqliteMaintenance;
  /** Captured conversations, projects and the brief's reads (sqlite-capture.ts). */
  readonly capture: SqliteCapture;
  /** Stored text rewritten in place, for limbic redact --apply (sqlite-rewrite.ts). */
  readonly rewrite: SqliteRewrite;
  private readonly conn: SqliteConnection;

  constructor(options: SqliteStoreOptions) {
    this.conn = new SqliteConnection({
      path: options.path,
      busyTimeoutMs: options.busyTimeoutMs ?? 10_000,
      vectors: options.vectors ?? true,
    });
    const splitFrom =
      options.path === ':memory:' || availableParallelism() < 2 ? Infinity : (options.keywordSplitFrom ?? KEYWORD_SPLIT_FROM);
    this.graph = new SqliteGraph(this.conn);
    this.usage = new SqliteUsage(this.conn);
    this.keywords = new SqliteKeywordIndex(this.conn, splitFrom, options.keywordTopK ?? true);
    this.tuning = new SqliteTuning(this.conn);
    this.vectors = this.conn.vectorsLoaded
      ? new SqliteVectorIndex(this.conn, {
          cache: options.vectorCache ?? true,
          cacheFile: options.vectorCacheFile ?? true,
          logger: options.logger ?? noopLogger,
          leaseMs: options.embeddingLeaseMs,
          scanSplitFrom: availableParallelism() < 2 ? Infinity : (options.vectorSplitFrom ?? VECTOR_SPLIT_FROM),
        })
      : undefined;
    this.transfer = new SqliteTransfer(this.conn, this.graph, this.vectors);
    this.maintenance = new SqliteMaintenance(this.conn, this.graph);
    this.capture = new SqliteCapture(this.conn, this.graph);
    this.rewrite = new SqliteRewrite(this.conn, this.graph, [this.vectors, this.keywords]);
    this.graph.backfillIndexes();
    this.graph.resyncListedKeywords();
  }

  /** The vector index, for callers that cannot go on without it (benches, tests). */
  requireVectors(): SqliteVectorIndex {
    if (this.vectors !== undefined) return this.vectors;
    throw new MemoryError(
      ERROR_CODES.VECTOR_UNAVAILABLE,
      'The sqlite-vec extension could not be loaded, so vectors cannot be stored. Reinstall Limbic (npm install) to restore it; every other tool keeps working.',
    );
  }

  async stats(): Promise<StoreStats> {
    const path = this.conn.path;
    return {
      entities: this.conn.count('entities'),
      observations: this.conn.count('observations'),
      relations: this.conn.count('relations'),
      databaseBytes: path === ':memory:' ? undefined : fileBytes(path) + fileBytes(`${path}-wal`),
      location: path,
    };
  }

  async close(): Promise<void> {
    // The vector cache's file is saved while the database is still open, to bring the cache up to
    // date first; the keyword worker closes its own connection.
    await this.vectors?.close();
    await this.keywords.close();
    this.conn.close();
  }
}

function fileBytes(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}
