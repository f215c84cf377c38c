/**
 * When the vector cache is read from its file and saved to it (the format: vector-cache-file.ts).
 *
 * Loading tries the file first and falls back to sqlite-vec's chunks. Saving never runs on a
 * search's path: a timer starts it SAVE_DELAY_MS after a full load, or after a search found the
 * file `refreshAfter(size)` log entries behind, and close() saves what is still owed. The
 * threshold keeps the replay at the next start short (a few thousand point reads) without
 * rewriting a file of 5 bytes × dims per vector for every handful of writes, and stays well
 * inside LOG_KEEP, so the log is not pruned past a file whose process keeps searching.
 */
import { unlinkSync } from 'node:fs';
import type Database from 'better-sqlite3';
import type { Logger } from '../../../core/logger.js';
import { LOG_KEEP, VectorCache, type ExactSearch, type Unusable } from './vector-cache.js';
import { peekVectorFile, readVectorFile, removeStaleTempFiles, writeVectorFile } from './vector-cache-file.js';

/** How long after the trigger a save starts, so it does not compete with a start's first answers. */
const SAVE_DELAY_MS = 5_000;

const REFRESH_MAX = Math.min(5_000, LOG_KEEP / 4);

/**
 * Log entries the file may fall behind before it is saved again: 0.5% of the vectors, within
 * [1,000, 5,000]. Each costs the next start a point read of sqlite-vec (0.1-0.25 ms on 2 cores), so
 * the replay stays under about a second; the upper bound keeps it far inside LOG_KEEP.
 */
export function refreshAfter(size: number): number {
  return Math.min(REFRESH_MAX, Math.max(1_000, Math.floor(size / 200)));
}

export interface VectorCacheKeeperOptions {
  /** Delay between the reason to save and the save. @default 5000 */
  readonly saveDelayMs?: number;
}

export class VectorCacheKeeper {
  /** The cache this keeper saves (the latest it loaded). */
  private current: VectorCache | undefined;
  /** Log position of the newest sound file known to be on disk; undefined when there is none. */
  private savedSeq: number | undefined;
  private saving: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  /** The file on disk was found unusable: its header alone must not stop a save. */
  private diskRejected = false;
  /** Set after a failed write (read-only folder, full disk): warned once, not retried. */
  private broken = false;
  private readonly saveDelayMs: number;

  constructor(
    private readonly db: Database.Database,
    readonly path: string,
    private readonly logger: Logger,
    options: VectorCacheKeeperOptions = {},
  ) {
    this.saveDelayMs = options.saveDelayMs ?? SAVE_DELAY_MS;
  }

  /** The cache from the file when it fits this database, otherwise from the database (and a save is scheduled). */
  async load(exactSearch: ExactSearch, dims: number): Promise<VectorCache> {
    this.current = undefined;
    this.savedSeq = undefined;
    this.diskRejected = false;
    let cache: VectorCache | undefined;
    try {
      cache = await this.loadFile(exactSearch, dims);
    } catch (error) {
      if (!this.db.open) throw error;
      this.report({ reason: `reading it failed (${(error as Error).message})`, stale: false });
    }
    cache ??= await VectorCache.loadInBackground(this.db, exactSearch, dims);
    this.current = cache;
    this.noteSynced(cache);
    return cache;
  }

  /** The cache from the file, undefined (and reported) when there is none or it does not fit. */
  private async loadFile(exactSearch: ExactSearch, dims: number): Promise<VectorCache | undefined> {
    removeStaleTempFiles(this.path);
    const databaseId = this.metaValue('database_id');
    const model = this.metaValue('vector_model');
    if (databaseId === undefined || model === undefined) return undefined;
    const read = await readVectorFile(
      this.path,
      { dims, model, databaseId },
      (header) => VectorCache.replayableFrom(this.db, header.seq, header.seqEntity),
      VectorCache.allocate,
    );
    if (read.kind === 'missing') return undefined;
    if (read.kind === 'rejected') {
      this.report(read);
      return undefined;
    }
    const adopted = await VectorCache.fromFile(this.db, exactSearch, dims, read.header, read.body);
    if (!(adopted instanceof VectorCache)) {
      this.report(adopted);
      return undefined;
    }
    this.savedSeq = read.header.seq;
    return adopted;
  }

  /** After a search brought `cache` up to date: schedules a save when the file is owed one. */
  noteSynced(cache: VectorCache): void {
    if (cache !== this.current || this.closed || this.broken || this.timer !== undefined || this.saving !== undefined) return;
    if (!this.owed(cache)) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.closed) return;
      this.saving = this.save(cache).then((written) => {
        this.saving = undefined;
        // Abandoned because a search changed the cache mid-write: try again later.
        if (!written) this.noteSynced(cache);
      });
    }, this.saveDelayMs);
    this.timer.unref();
  }

  /** Waits for a save under way, then saves once more if the file is still owed one. No saves after. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.saving;
    const cache = this.current;
    if (cache === undefined || this.broken || !this.db.open) return;
    try {
      // Bring in what other writers (this process's indexer included) logged since the last search.
      if (!cache.sync()) return;
    } catch {
      return;
    }
    if (this.owed(cache)) await this.save(cache);
  }

  /**
   * Saves `cache` now unless the file on disk is as new; resolves to false when nothing was written
   * because the cache changed during the write (or it could not be). Errors are warned, never thrown.
   */
  async save(cache: VectorCache): Promise<boolean> {
    try {
      const databaseId = this.metaValue('database_id');
      const model = this.metaValue('vector_model');
      if (databaseId === undefined || model === undefined) return true;
      const onDisk = await peekVectorFile(this.path);
      const snapshot = cache.snapshot();
      if (snapshot === undefined) return true;
      const { header, body, changes } = snapshot;
      const same = onDisk?.databaseId === databaseId && onDisk.model === model && onDisk.dims === header.dims;
      if (same && !this.diskRejected && onDisk.seq >= header.seq) {
        this.savedSeq = onDisk.seq; // another process saved the same or a later state
        return true;
      }
      const written = await writeVectorFile(this.path, { ...header, databaseId, model }, body, () => cache.changeCount === changes);
      if (written) {
        this.savedSeq = header.seq;
        this.diskRejected = false;
      }
      return written;
    } catch (error) {
      this.broken = true;
      this.logger.warn(
        `Saving the vector cache to ${this.path} failed, so the next start will read the vectors from the database (slower). Make the folder writable or free disk space; the file is rebuilt by itself.`,
        error,
      );
      return true;
    }
  }

  /** Read when loading or saving only, so not prepared ahead (the keeper exists before the schema). */
  private metaValue(key: string): string | undefined {
    return this.db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?').get(key)?.value;
  }

  private owed(cache: VectorCache): boolean {
    if (cache.size === 0) return false;
    return this.savedSeq === undefined || cache.position - this.savedSeq >= refreshAfter(cache.size);
  }

  private report(unusable: Unusable): void {
    this.diskRejected = true;
    // A file for another state of the database (a restored copy, a foreign file) is removed at once,
    // so no later start can take it for this one (issue 26); a merely stale one is saved over.
    if (!unusable.stale) {
      try {
        unlinkSync(this.path);
      } catch {
        // already gone, or not ours to remove: it is rejected again next time
      }
    }
    const message = `The vector cache file ${this.path} was not used: ${unusable.reason}. The vectors are read from the database instead, and the file is saved again.`;
    if (unusable.stale) this.logger.info(message);
    else this.logger.warn(message);
  }
}
