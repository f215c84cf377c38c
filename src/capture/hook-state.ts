/**
 * What the hooks keep between two events of a session, in a folder of the cache (docs/hooks.md):
 * how far the session's transcript has been read (a byte offset, so a Stop fired twice reads
 * nothing twice), a lock so two hooks of one session never read the same lines at once, and a
 * short log of what went wrong in the background. Nothing in it is a memory or a secret: the
 * files hold offsets, paths, session ids and error messages; deleting the folder only makes the
 * next hook read its transcript from the start, which stores nothing twice (the service skips a
 * turn its session already holds).
 */
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';

/** How far one session's transcript has been read, for one memory. */
export interface TranscriptMark {
  /** The transcript read ('' for a client whose turns come in the hook's own fields). */
  readonly transcript: string;
  /** Bytes of the transcript already captured: the next read starts here. */
  readonly offset: number;
  /** When the session was first seen (epoch ms), for sessions no transcript dates. */
  readonly startedAt?: number | undefined;
}

/** A lock older than this belongs to a hook that died: it is taken over. */
export const STALE_LOCK_MS = 120_000;
/** Marks untouched this long are forgotten (Claude Code deletes transcripts after 30 days). */
export const MARK_TTL_MS = 45 * 24 * 3600_000;
/** The log is cut to its last half past this size. */
export const LOG_MAX_BYTES = 256 * 1024;

export class HookState {
  constructor(readonly dir: string) {}

  /** The key of one session's transcript in one memory (a hash: the file names say nothing). */
  static key(memory: string, sessionId: string, transcript: string): string {
    return createHash('sha256').update(`${memory}\0${sessionId}\0${transcript}`).digest('hex').slice(0, 32);
  }

  private ensureDir(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  /** Undefined when this session was never read, or its mark cannot be read. */
  mark(key: string): TranscriptMark | undefined {
    try {
      const parsed = JSON.parse(readFileSync(join(this.dir, `${key}.json`), 'utf8')) as Partial<TranscriptMark>;
      if (typeof parsed.offset !== 'number' || !Number.isSafeInteger(parsed.offset) || parsed.offset < 0) return undefined;
      if (typeof parsed.transcript !== 'string') return undefined;
      const startedAt = typeof parsed.startedAt === 'number' && Number.isFinite(parsed.startedAt) ? parsed.startedAt : undefined;
      return { transcript: parsed.transcript, offset: parsed.offset, startedAt };
    } catch {
      return undefined;
    }
  }

  /** Saved in one rename, so a reader never sees half a mark; a session's first start is kept. */
  setMark(key: string, mark: TranscriptMark, now = Date.now()): void {
    this.ensureDir();
    const file = join(this.dir, `${key}.json`);
    const temp = `${file}.${process.pid}.tmp`;
    const startedAt = mark.startedAt ?? this.mark(key)?.startedAt;
    writeFileSync(temp, JSON.stringify({ ...mark, startedAt, updatedAt: new Date(now).toISOString() }), { mode: 0o600 });
    renameSync(temp, file);
  }

  /**
   * Takes the session's lock, waiting up to `waitMs` for another hook of the session to finish;
   * a lock left by a hook that died (older than STALE_LOCK_MS) is taken over. Returns the release,
   * or undefined when the wait ran out.
   */
  async lock(key: string, waitMs: number, now: () => number = Date.now): Promise<(() => void) | undefined> {
    this.ensureDir();
    const file = join(this.dir, `${key}.lock`);
    const until = now() + waitMs;
    for (;;) {
      try {
        const fd = openSync(file, 'wx', 0o600);
        writeSync(fd, String(process.pid));
        closeSync(fd);
        return () => rmSync(file, { force: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      try {
        if (now() - statSync(file).mtimeMs > STALE_LOCK_MS) {
          rmSync(file, { force: true });
          continue;
        }
      } catch {
        continue; // released meanwhile
      }
      if (now() >= until) return undefined;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  /** One line in hooks.log (timestamped); never throws. The log keeps its last LOG_MAX_BYTES/2 when it grows past LOG_MAX_BYTES. */
  log(line: string, now = Date.now()): void {
    try {
      this.ensureDir();
      const file = join(this.dir, 'hooks.log');
      appendFileSync(file, `${new Date(now).toISOString()} ${line.replace(/(?<!\s)\s*\n\s*/g, ' ')}\n`, { mode: 0o600 });
      if (statSync(file).size > LOG_MAX_BYTES) {
        const text = readFileSync(file, 'utf8');
        const keep = text.slice(text.indexOf('\n', text.length - LOG_MAX_BYTES / 2) + 1);
        writeFileSync(file, keep, { mode: 0o600 });
      }
    } catch {
      // A log that cannot be written must not turn into a failing hook.
    }
  }

  /** Forgets marks older than MARK_TTL_MS and locks nobody holds any more. */
  prune(now = Date.now()): void {
    try {
      for (const name of readdirSync(this.dir)) {
        if (!/^[0-9a-f]{32}\.(json|lock)$/.test(name)) continue;
        const file = join(this.dir, name);
        const age = now - statSync(file).mtimeMs;
        if (age > (name.endsWith('.lock') ? STALE_LOCK_MS : MARK_TTL_MS)) rmSync(file, { force: true });
      }
    } catch {
      // Nothing to prune, or another hook pruned first.
    }
  }
}
