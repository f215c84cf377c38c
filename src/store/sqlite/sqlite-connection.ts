/**
 * The one connection every part of the SQLite store shares: opening the file, its pragmas and
 * migrations, write transactions, the statement cache and the `meta` table. The parts (graph,
 * keywords, vectors, usage) hold this object, not a database each, so a write that changes the
 * graph and its indexes is one transaction, and state kept per transaction (the keyword change
 * count) is kept in one place.
 */
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { ERROR_CODES, MemoryError } from '../../core/errors.js';
import { nativeModuleFailure } from '../../core/native-module.js';
import { PACKAGE_FOLDER, locateModule } from './native-modules.js';
import { makePrivateDatabaseFile } from './private-files.js';
import { migrate } from './schema.js';
import { addRemoved, decodeVarints, subtractRemoved, type Fts5Totals } from './fts5/fts5-totals.js';

/**
 * A log row's random nonce (keyword_log, vector_log; schema 11): with its entity it marks the row,
 * so a side file that reflects a position in the log is never taken for another timeline's row at
 * the same position (a restored copy of the database writes the same ids at the same positions).
 */
export const LOG_NONCE_SQL = '(random() & 1048575)';

/**
 * The time in ms by SQLite's clock, for the embedding queue's order and leases (schema 12): one
 * clock for every process sharing the file, read where the row is written.
 */
export const NOW_MS_SQL = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";

/**
 * The mark a side file keeps of the log row at its position: the entity's low 32 bits and the row's
 * nonce, exact in a double; 0 for position 0 (an empty log). Rows of two timelines share a mark once
 * in a million.
 * @example logMark(7, 3) // 7 + 3 × 2³²
 */
export function logMark(entityId: number, nonce: number): number {
  const low = ((entityId % 2 ** 32) + 2 ** 32) % 2 ** 32;
  return low + (nonce % 2 ** 20) * 2 ** 32;
}

/** keyword_log entries kept: a top-k keyword index further behind rebuilds (keyword-topk-sync.ts). */
export const KEYWORD_LOG_KEEP = 50_000;

export interface ConnectionOptions {
  readonly path: string;
  readonly busyTimeoutMs: number;
  /** Try to load sqlite-vec. */
  readonly vectors: boolean;
}

export type Statement<P extends unknown[] | object, R> = Database.Statement<P extends unknown[] ? P : [P], R>;

export class SqliteConnection {
  readonly db: Database.Database;
  readonly path: string;
  readonly busyTimeoutMs: number;
  /** sqlite-vec loaded: the vector table can be read and written on this connection. */
  readonly vectorsLoaded: boolean;
  /** Keyword rows rewritten in the open transaction, added to meta `keyword_changes` at commit. */
  private keywordChanges = 0;
  /** entity_fts rows deleted in the open transaction, taken off FTS5's totals at commit (fts5-totals.ts). */
  private removedKeywordRows: Fts5Totals = { rows: 0, tokens: [] };
  /** Prepared statements by SQL text: preparing costs more than running most of them. */
  private readonly statements = new Map<string, Database.Statement>();

  constructor(options: ConnectionOptions) {
    this.path = options.path;
    this.busyTimeoutMs = options.busyTimeoutMs;
    // Made 0600 in 0700 folders before SQLite opens it, and its -wal and -shm take its mode (private-files.ts).
    if (options.path !== ':memory:' && options.path !== '') makePrivateDatabaseFile(options.path);
    try {
      this.db = new Database(options.path);
    } catch (cause) {
      // A driver that cannot open even a memory database is the problem, not the file (issue 33).
      const driver = driverFailure();
      if (driver !== undefined) throw new MemoryError(ERROR_CODES.STORE_FAILED, driver, { cause });
      throw new MemoryError(
        ERROR_CODES.STORE_FAILED,
        `Cannot open the database at ${options.path}: ${(cause as Error).message}. Check the path and its permissions, or pass another with --db.`,
        { cause },
      );
    }
    try {
      this.db.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = NORMAL');
      this.db.pragma('foreign_keys = ON');
      this.db.pragma('cache_size = -65536'); // 64 MiB; the default 2 MiB is churned by FTS5 segment merges
      this.vectorsLoaded = options.vectors && loadSqliteVec(this.db);
      this.write(() => migrate(this.db));
    } catch (cause) {
      this.db.close();
      throw isNotADatabase(cause) ? notADatabase(options.path, cause) : cause;
    }
  }

  /**
   * Runs fn in one IMMEDIATE transaction; a lock held too long by another process becomes
   * STORE_BUSY. `graph` false for writes that change no entity, observation or relation (usage
   * signals, vectors, index merges), which leave cached facts valid.
   */
  write<T>(fn: () => T, graph = true): T {
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
      this.removedKeywordRows = { rows: 0, tokens: [] };
      const result = fn();
      // After every FTS5 write of the transaction: FTS5 does not take deleted rows off its totals itself.
      subtractRemoved(this.db, 'entity_fts', this.removedKeywordRows);
      if (graph)
        this.stmt(
          "INSERT INTO meta (key, value) VALUES ('graph_changes', 1) ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
        ).run();
      if (this.keywordChanges > 0) {
        this.stmt(
          "INSERT INTO meta (key, value) VALUES ('keyword_changes', ?) ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + excluded.value",
        ).run(this.keywordChanges);
        // A reader further behind than this rebuilds from FTS5, which costs less than the replay.
        this.stmt('DELETE FROM keyword_log WHERE seq <= (SELECT max(seq) FROM keyword_log) - ?').run(KEYWORD_LOG_KEEP);
      }
      this.stmt('COMMIT').run();
      return result;
    } catch (error) {
      if (this.db.inTransaction) this.stmt('ROLLBACK').run();
      throw error;
    } finally {
      this.keywordChanges = 0;
      this.removedKeywordRows = { rows: 0, tokens: [] };
    }
  }

  /**
   * Deletes an entity's keyword row. entity_fts is contentless_delete, whose deletes FTS5 does not
   * take off the row count and token totals bm25() reads; the row's sizes are kept until the commit
   * takes them off (fts5-totals.ts), so SQLite's BM25 stays that of the rows the table holds.
   */
  deleteKeywordRow(id: number): void {
    if (!this.db.inTransaction) {
      this.write(() => this.deleteKeywordRow(id), false);
      return;
    }
    const sz = this.stmt<[number], { sz: Buffer | null }>('SELECT sz FROM entity_fts_docsize WHERE id = ?').get(id)?.sz;
    this.stmt('DELETE FROM entity_fts WHERE rowid = ?').run(id);
    if (sz !== undefined && sz !== null) addRemoved(this.removedKeywordRows, decodeVarints(sz));
  }

  /**
   * One entity's keyword rows were rewritten in the open transaction (see termStats' cache); it is
   * logged for every process's top-k keyword index (keyword-topk-sync.ts).
   */
  noteKeywordChange(id: number): void {
    this.keywordChanges++;
    this.stmt(`INSERT INTO keyword_log (entity_id, nonce) VALUES (?, ${LOG_NONCE_SQL})`).run(id);
  }

  /**
   * The entities keyword_log says changed after `since`, up to `latest`; undefined when the log was
   * pruned past `since`, so a reader that last saw `since` must rebuild (the top-k keyword index,
   * search_nodes' word index).
   */
  keywordChangesSince(since: number, latest: number): number[] | undefined {
    const oldest = this.stmt<[], { s: number | null }>('SELECT min(seq) AS s FROM keyword_log').get()?.s ?? null;
    if (oldest === null || oldest > since + 1) return undefined;
    return this.stmt<[number, number], { id: number }>('SELECT DISTINCT entity_id AS id FROM keyword_log WHERE seq > ? AND seq <= ?')
      .all(since, latest)
      .map((r) => r.id);
  }

  stmt<P extends unknown[] | object = unknown[], R = unknown>(sql: string): Statement<P, R> {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement as unknown as Statement<P, R>;
  }

  /** count(*) of a table (a name from this code, never from input). */
  count(table: string): number {
    return this.stmt<[], { n: number }>(`SELECT count(*) AS n FROM ${table}`).get()?.n ?? 0;
  }

  tableExists(name: string): boolean {
    return this.stmt('SELECT 1 FROM sqlite_master WHERE name = ?').get(name) !== undefined;
  }

  metaGet(key: string): string | undefined {
    return this.stmt<[string], { value: string }>('SELECT value FROM meta WHERE key = ?').get(key)?.value;
  }

  metaSet(key: string, value: string): void {
    this.stmt('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value').run(key, value);
  }

  /** Entities in the graph, kept in meta by the writers: count(*) scans the table, this is read per search. */
  entityCount(): number {
    return Number(this.metaGet('entity_count') ?? 0);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

/** A list bound as one parameter and read with json_each(?). */
export const json = (values: readonly unknown[]): string => JSON.stringify(values);

export { toRelation, type RelationRow } from '../rows.js';

/** Why better-sqlite3 cannot open anything, where it is and how to fix it there; undefined when it works. */
export function driverFailure(): string | undefined {
  try {
    new Database(':memory:').close();
    return undefined;
  } catch (error) {
    const driver = locateModule('better-sqlite3', 'the SQLite driver', true);
    return nativeModuleFailure(driver, error instanceof Error ? error.message : String(error), PACKAGE_FOLDER);
  }
}

function loadSqliteVec(db: Database.Database): boolean {
  try {
    sqliteVec.load(db);
    return true;
  } catch {
    // Without sqlite-vec the store lacks the vector capability and every other tool keeps working.
    return false;
  }
}

/** SQLite's answer for a file that is not a database, or one damaged past reading its header. */
function isNotADatabase(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT';
}

/**
 * SQLite says only "file is not a database" (issue 33): which file, and what to do about it. The
 * file is left as it was; doctor tells a damaged memory from another kind of file and how to rescue it.
 */
export function notADatabase(path: string, cause: unknown): MemoryError {
  return new MemoryError(
    ERROR_CODES.STORE_FAILED,
    `${path} is not a readable Limbic database (SQLite: ${(cause as Error).message}); it was left as it is. ` +
      `If it holds your memory, run: limbic --db "${path}" doctor (it says what is wrong and how to rescue what still reads); ` +
      'if the path is a mistake, pass the right file with --db (or LIMBIC_DB).',
    { cause },
  );
}

function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED' || code === 'SQLITE_BUSY_SNAPSHOT';
}
