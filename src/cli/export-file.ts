/**
 * Where `limbic export FILE` writes (issue 33): through to what FILE names, never replacing what it
 * is. A symlink stays a link and its target gets the text; a character device (/dev/null,
 * /dev/stdout) or a FIFO is written to directly; a regular file is replaced atomically (a temporary
 * file beside the real file, renamed over it, with the old file's mode), unless other hard links
 * share it, which are kept by writing in place; a new path in an existing folder is made. A folder,
 * a block device or a socket is refused: no one exports a memory.jsonl to a disk or a socket, and
 * writing one there by mistake would be hard to undo. Every refusal says what to do.
 */
import {
  chmodSync,
  chownSync,
  closeSync,
  fsyncSync,
  lstatSync,
  openSync,
  readlinkSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import type { Stats } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { ERROR_CODES, MemoryError } from '../core/errors.js';

/** How the text reaches the path: replaced atomically, written in place, or made new. */
export type ExportTarget =
  | { readonly kind: 'replace'; readonly path: string; readonly stats: Stats }
  | { readonly kind: 'in-place'; readonly path: string }
  | { readonly kind: 'new'; readonly path: string };

const refuse = (message: string): MemoryError => new MemoryError(ERROR_CODES.CONFIG_INVALID, message);

const statOrUndefined = (path: string, follow: boolean): Stats | undefined => {
  try {
    return follow ? statSync(path) : lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
};

/** The folder a new file would go in must exist and be a folder; the error says how to make it. */
function checkFolder(file: string, asked: string): void {
  const folder = dirname(file);
  const stats = statOrUndefined(folder, true);
  if (stats === undefined)
    throw refuse(
      `Cannot export to ${JSON.stringify(asked)}: the folder ${folder} does not exist. Create it first (mkdir -p ${JSON.stringify(folder)}) or choose another path. Nothing was written.`,
    );
  if (!stats.isDirectory()) throw refuse(`Cannot export to ${JSON.stringify(asked)}: ${folder} is not a folder. Nothing was written.`);
}

/**
 * What `file` names and how an export will write it; checked before the memory is read, so a bad
 * path costs nothing and leaves nothing behind.
 * @throws MemoryError CONFIG_INVALID for a missing folder, a folder, a block device or a socket.
 */
export function exportTarget(file: string): ExportTarget {
  const asked = resolve(file);
  const link = statOrUndefined(asked, false);
  if (link === undefined) {
    checkFolder(asked, file);
    return { kind: 'new', path: asked };
  }
  const stats = statOrUndefined(asked, true);
  if (stats === undefined) {
    // A link to nothing: the file it names is made, in its own folder (as a shell's `>` would).
    const target = resolve(dirname(asked), readlinkSync(asked));
    checkFolder(target, file);
    return { kind: 'new', path: target };
  }
  const path = realpathSync(asked);
  if (stats.isFile()) return stats.nlink > 1 ? { kind: 'in-place', path } : { kind: 'replace', path, stats };
  if (stats.isCharacterDevice() || stats.isFIFO()) return { kind: 'in-place', path };
  if (stats.isDirectory())
    throw refuse(
      `Cannot export to ${JSON.stringify(file)}: it is a folder. Name a file in it, such as ${JSON.stringify(join(file, 'memory.jsonl'))}.`,
    );
  const what = stats.isBlockDevice() ? 'a block device (a disk)' : 'a socket';
  throw refuse(`Cannot export to ${JSON.stringify(file)}: it is ${what}. Name a file, or leave FILE out to write to stdout.`);
}

/**
 * Refuses a target that is the memory's own database file (or its -wal / -shm): an export there
 * would overwrite the memory with its own JSONL.
 * @throws MemoryError CONFIG_INVALID naming the file.
 */
export function refuseOwnDatabase(target: ExportTarget, dbPath: string): void {
  let db: string;
  try {
    db = realpathSync(dbPath);
  } catch {
    return; // a postgres:// URL, or no file: nothing to overwrite
  }
  if ([db, `${db}-wal`, `${db}-shm`].includes(target.path))
    throw refuse(
      `Cannot export to ${target.path}: it is the database being exported, which the export would overwrite. Name another file, such as ${JSON.stringify(`${db}.jsonl`)}.`,
    );
}

/** Writes all of `text` to an open descriptor (writeSync may write less than asked on a pipe). */
function writeAll(fd: number, text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  for (let done = 0; done < bytes.length;) done += writeSync(fd, bytes, done, bytes.length - done);
}

/** Opens, truncates and writes the file itself; one it makes is private (0600), as the memory it copies. */
function writeInPlace(path: string, text: string): void {
  const fd = openSync(path, 'w', 0o600);
  try {
    writeAll(fd, text);
  } finally {
    closeSync(fd);
  }
}

/** A file system refusal, as the CLI says it: the path, the reason, what to check. */
function cannotWrite(path: string, error: unknown): MemoryError {
  return new MemoryError(
    ERROR_CODES.CONFIG_INVALID,
    `Cannot write the export to ${path}: ${(error as Error).message}. Check the path and its permissions, or choose another.`,
    { cause: error },
  );
}

/** Writes `text` where `target` says, the way it says. Returns the path written. */
export function writeExport(target: ExportTarget, text: string): string {
  try {
    writeTo(target, text);
  } catch (error) {
    throw error instanceof MemoryError ? error : cannotWrite(target.path, error);
  }
  return target.path;
}

function writeTo(target: ExportTarget, text: string): void {
  switch (target.kind) {
    case 'in-place':
    case 'new':
      writeInPlace(target.path, text);
      return;
    case 'replace': {
      const { path, stats } = target;
      // Beside the real file (a link's target, not the link), so the rename stays on one file system.
      const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
      let fd: number;
      try {
        fd = openSync(temp, 'wx', 0o600);
      } catch (error) {
        // A file one may write in a folder one may not (or a file system that makes no new files, as
        // /proc): written in place, as asked, if not atomically.
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'EACCES' && code !== 'EPERM' && code !== 'EROFS' && code !== 'ENOENT') throw error;
        writeInPlace(path, text);
        return;
      }
      try {
        try {
          writeAll(fd, text);
          fsyncSync(fd);
        } finally {
          closeSync(fd);
        }
        // The file keeps its permissions (a memory is private) and, where allowed, its owner.
        chmodSync(temp, stats.mode & 0o7777);
        if (typeof process.getuid === 'function' && process.getuid() === 0) chownSync(temp, stats.uid, stats.gid);
        renameSync(temp, path);
      } catch (error) {
        try {
          unlinkSync(temp);
        } catch {
          // Already renamed, or never made: nothing to clean.
        }
        throw error;
      }
      return;
    }
    default: {
      const _exhaustive: never = target;
      return _exhaustive;
    }
  }
}
