/**
 * Processes sharing one SQLite file while their embedding queues drain (issue 26): each runs
 * queue-drain-worker.ts, and what is still unembedded is read from the file by a second connection.
 * Used by test/faults/queue-drain.test.ts and bench/queue-drain.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { REPO_ROOT } from './fixtures.js';

export interface WorkerPlan {
  readonly db: string;
  /** `fake`: a fake embedder that sleeps per batch (meaning does not matter for draining); `real`: the installed model, run as a server runs it. */
  readonly embedder: 'fake' | 'real';
  /** The fake's time per batch, as the model would take (a sleep: it leaves the CPU to the others). @default 100 */
  readonly fakeBatchMs?: number;
  /** Entities this process creates: `${prefix}${i}`, `batch` per call. */
  readonly create?: { readonly prefix: string; readonly count: number; readonly batch: number };
  /** A memory.jsonl this process imports, as `limbic import` does. */
  readonly importFile?: string;
  /** Entities that exist already, changed every `everyMs` until `stop-churn`; `tag` marks this process's observations. */
  readonly churn?: { readonly names: readonly string[]; readonly everyMs: number; readonly tag: string };
}

export interface DrainWorker {
  readonly child: ChildProcess;
  /** Resolves when the worker printed this line. */
  said(line: string): Promise<void>;
  send(line: 'stop-churn' | 'exit'): void;
  readonly exited: Promise<number | null>;
  stderr(): string;
}

const WORKER = join(REPO_ROOT, 'test', 'helpers', 'queue-drain-worker.ts');

export function startDrainWorker(plan: WorkerPlan): DrainWorker {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(plan)], {
    cwd: REPO_ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiting = new Map<string, () => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    waiting.get(line)?.();
  });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return {
    child,
    said: (line) =>
      lines.includes(line)
        ? Promise.resolve()
        : Promise.race([
            new Promise<void>((resolve) => waiting.set(line, resolve)),
            exited.then((code) => Promise.reject(new Error(`the worker exited (${code}) before saying ${line}: ${err}`))),
          ]),
    send: (line) => child.stdin.write(`${line}\n`),
    exited,
    stderr: () => err,
  };
}

/** Ends a worker that is still running (a failed test), by its own process. */
export async function killDrainWorker(worker: DrainWorker): Promise<void> {
  if (worker.child.exitCode !== null || worker.child.signalCode !== null) return;
  worker.child.kill('SIGKILL');
  await worker.exited;
}

export interface DrainState {
  readonly entities: number;
  /** Entities (outside `except`) still queued, or without a vector. */
  readonly unembedded: number;
}

/**
 * What is still to embed, read by a connection of its own (the vector table's rowid shadow table
 * is a plain one: no sqlite-vec needed). Undefined before any process made the vector table.
 */
export function drainState(db: Database.Database, exceptPrefix?: string): DrainState | undefined {
  const hasTable = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'entity_embeddings_rowids'").get() !== undefined;
  if (!hasTable) return undefined;
  const row = db
    .prepare(
      `SELECT count(*) AS entities,
              coalesce(sum(NOT (name LIKE @except) AND (id IN (SELECT entity_id FROM embedding_queue)
                        OR id NOT IN (SELECT rowid FROM entity_embeddings_rowids))), 0) AS unembedded
         FROM entities`,
    )
    .get({ except: exceptPrefix === undefined ? '' : `${exceptPrefix}%` }) as DrainState;
  return row;
}

/** A read-only connection to the shared file, for drainState. */
export function openReader(path: string): Database.Database {
  return new Database(path, { readonly: true });
}
