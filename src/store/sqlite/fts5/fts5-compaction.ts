/**
 * Merges FTS5 indexes into one segment in short write transactions, so other writers (in this
 * process or another) and checkpoints keep going while it runs. FTS5's 'optimize' does the same
 * merge in one transaction: at 1M entities it held the write lock for tens of seconds, so a second
 * Limbic process's write failed with STORE_BUSY, and it wrote a 2.4 GB WAL that no checkpoint
 * could shorten until it committed.
 *
 * The steps are FTS5's 'merge' command (sqlite.org/fts5.html, "The 'merge' Command"): a negative
 * page count first, which puts every segment on one level and starts merging them all, then
 * positive counts, which continue that merge without restarting it when other writers add
 * segments meanwhile. It ends when no merge in progress involves the largest segment (the one all
 * others are folded into), or when a step changes fewer than 2 rows (total_changes()): nothing
 * was left to merge.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import type { CompactionListener } from '../../store.js';
import { STRUCTURE_ROWID, decodeFts5Structure, mergingLargest, pagesToMerge, type Fts5Structure } from './fts5-structure.js';

export interface CompactionOptions {
  /** Runs one step in one write transaction (the store's IMMEDIATE transaction). */
  readonly inTransaction: <T>(step: () => T) => T;
  /** The connection's busy timeout, restored after the final checkpoint. */
  readonly busyTimeoutMs: number;
  readonly progress?: CompactionListener | undefined;
  /** How long a step should hold the write lock; the page count per step adapts to it. @default 150 */
  readonly stepMs?: number;
  /**
   * Pause between steps with the write lock free. SQLite's busy handler retries a waiting writer
   * at most every 100 ms, so a longer pause lets every waiting writer in before the next step.
   * @default 110
   */
  readonly pauseMs?: number;
}

const FIRST_STEP_PAGES = 256;
const MIN_STEP_PAGES = 16;
const MAX_STEP_PAGES = 16_384;

/** Compacts each table in turn; resolves when each one's segments are merged into one. */
export async function compactFts5(db: Database.Database, tables: readonly string[], options: CompactionOptions): Promise<void> {
  const work = tables.map((table) => {
    const read = db.prepare<[number], { block: Buffer }>(`SELECT block FROM ${table}_data WHERE id = ?`);
    const structure = (): Fts5Structure => {
      const row = read.get(STRUCTURE_ROWID);
      return row === undefined ? { levels: [] } : decodeFts5Structure(row.block);
    };
    return { table, structure };
  });
  const total = work.reduce((sum, w) => sum + pagesToMerge(w.structure()), 0);
  if (total === 0) return;
  options.progress?.({ done: 0, total, lockMs: 0 });
  // Checkpoints run in the pauses, not in a step's COMMIT, where the connection would copy the
  // WAL to the database (with an fsync) before the next step could begin.
  const autocheckpoint = db.pragma('wal_autocheckpoint', { simple: true }) as number;
  db.pragma('wal_autocheckpoint = 0');
  try {
    await mergeInSteps(db, work, total, options);
  } finally {
    db.pragma(`wal_autocheckpoint = ${autocheckpoint}`);
  }
  truncateWal(db, options.busyTimeoutMs);
}

async function mergeInSteps(
  db: Database.Database,
  work: readonly { readonly table: string; readonly structure: () => Fts5Structure }[],
  total: number,
  options: CompactionOptions,
): Promise<void> {
  const stepMs = options.stepMs ?? 150;
  const pauseMs = options.pauseMs ?? 110;
  const totalChanges = db.prepare<[], { n: number }>('SELECT total_changes() AS n');
  let finished = 0; // pages of the tables already compacted
  let reported = 0;
  let pages = FIRST_STEP_PAGES;
  for (const { table, structure } of work) {
    const start = pagesToMerge(structure());
    if (start === 0) continue;
    const merge = db.prepare<[number]>(`INSERT INTO ${table} (${table}, rank) VALUES ('merge', ?)`);
    // Other writers' segments can keep FTS5 merging forever; past this much work, automerge has them.
    let budget = 3 * start + MAX_STEP_PAGES;
    let left = start;
    for (let first = true; ; first = false) {
      let startedAt = 0;
      const worked = options.inTransaction(() => {
        startedAt = performance.now();
        const changes = totalChanges.get()?.n ?? 0;
        merge.run(first ? -pages : pages);
        return (totalChanges.get()?.n ?? 0) - changes >= 2;
      });
      const lockMs = performance.now() - startedAt;
      budget -= pages;
      const now = structure();
      const running = worked && mergingLargest(now);
      const rest = running ? pagesToMerge(now) : 0;
      // Other writers' segments can make the figure rise a little: progress never goes back.
      reported = Math.min(total, Math.max(reported, finished + start - rest));
      options.progress?.({ done: reported, total, lockMs });
      if (!running || budget <= 0) break;
      // Pages per step from the pace of steps that merged a fair amount; small ones say little.
      const merged = left - rest;
      if (merged >= MIN_STEP_PAGES && lockMs >= 1) {
        const target = (merged / lockMs) * stepMs;
        pages = Math.round(Math.min(MAX_STEP_PAGES, Math.max(MIN_STEP_PAGES, pages / 2, Math.min(pages * 2, target))));
      }
      left = rest;
      const pauseStart = performance.now();
      db.pragma('wal_checkpoint(PASSIVE)'); // never waits for other connections
      await sleep(Math.max(0, pauseMs - (performance.now() - pauseStart)));
    }
    finished += start;
  }
  if (reported < total) options.progress?.({ done: total, total, lockMs: 0 });
}

/**
 * Checkpoints and empties the WAL if nobody else is writing or reading an older snapshot right
 * now; otherwise it checkpoints what it can without waiting (the busy timeout is 0 meanwhile).
 */
function truncateWal(db: Database.Database, busyTimeoutMs: number): void {
  db.pragma('busy_timeout = 0');
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
  } catch {
    // SQLITE_BUSY: another connection holds the lock; the next checkpoint will do it.
  } finally {
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  }
}
