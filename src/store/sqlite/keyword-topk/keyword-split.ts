/**
 * The keyword leg on two cores. FTS5 scores every entity an OR query matches (about 1 µs each),
 * so on large graphs BM25 is most of a search: 26 ms at 100k entities here. Split by rowid range,
 * each half scores half the matches, and since FTS5 takes idf from the whole index, not the range,
 * the merged halves are the unsplit answer exactly, scores included (checked on 40 of 40 bench
 * queries, and in test/store/keyword-split.test.ts). One half runs on the caller's connection, the
 * other in a worker thread with its own read-only connection to the same file.
 *
 * The worker is plain JavaScript evaluated from a string, so it runs the same from dist/, from tsx
 * and under vitest; it loads the better-sqlite3 the store itself resolved.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

export interface RangeHit {
  readonly id: number;
  readonly score: number;
}

/** A failure inside the worker, with SQLite's error code when there was one. */
export class KeywordWorkerError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

export const RANGE_SQL =
  'SELECT rowid AS id, bm25(entity_fts) AS score FROM entity_fts WHERE entity_fts MATCH ? AND rowid BETWEEN ? AND ? ORDER BY score, rowid LIMIT ?';

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = ' + workerData.busyTimeoutMs);
const search = db.prepare(workerData.sql);
parentPort.on('message', (m) => {
  if (m.close) {
    db.close(); // a clean close lets the last connection checkpoint and remove the WAL
    parentPort.close();
    return;
  }
  try {
    parentPort.postMessage({ id: m.id, rows: search.all(m.match, m.from, m.to, m.limit) });
  } catch (error) {
    parentPort.postMessage({ id: m.id, error: String(error && error.message), code: error && error.code });
  }
});
`;

interface Reply {
  readonly id: number;
  readonly rows?: RangeHit[];
  readonly error?: string;
  readonly code?: string;
}

/** One worker answering range queries; `broken` once it failed to start or died. */
export class KeywordWorker {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (rows: RangeHit[]) => void; reject: (e: Error) => void }>();
  private nextId = 0;
  broken = false;

  constructor(path: string, busyTimeoutMs: number) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path, busyTimeoutMs, driver, sql: RANGE_SQL } });
    this.worker.unref(); // an idle worker never keeps the process alive
    this.worker.on('message', (reply: Reply) => {
      const waiting = this.pending.get(reply.id);
      if (waiting === undefined) return;
      this.pending.delete(reply.id);
      if (reply.rows !== undefined) waiting.resolve(reply.rows);
      else waiting.reject(new KeywordWorkerError(reply.error ?? 'keyword worker failed', reply.code));
    });
    const fail = (error: Error): void => {
      this.broken = true;
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', () => fail(new Error('keyword worker exited')));
  }

  /** Best `limit` matches with rowid in [from, to], best first (BM25 negated, as FTS5 gives it). */
  search(match: string, from: number, to: number, limit: number): Promise<RangeHit[]> {
    if (this.broken) return Promise.reject(new Error('keyword worker unavailable'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.ref(); // keep the process alive while an answer is owed
      this.worker.postMessage({ id, match, from, to, limit });
    }).finally(() => {
      if (this.pending.size === 0) this.worker.unref();
    }) as Promise<RangeHit[]>;
  }

  /** Closes the worker's connection, then the thread (terminated if it does not end within a second). */
  async close(): Promise<void> {
    if (this.broken) return;
    this.broken = true;
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.ref();
    this.worker.postMessage({ close: true });
    const timer = setTimeout(() => void this.worker.terminate(), 1000);
    await exited;
    clearTimeout(timer);
  }
}

/** Merges the halves' best-first lists into the best `limit`, ties by rowid as the unsplit query orders them. */
export function mergeRanges(a: readonly RangeHit[], b: readonly RangeHit[], limit: number): RangeHit[] {
  return [...a, ...b].sort((x, y) => x.score - y.score || x.id - y.id).slice(0, limit);
}
