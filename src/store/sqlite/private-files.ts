/**
 * The files and folders a SQLite memory is kept in are its owner's alone (issue 35): a memory holds
 * a person's private life, and whatever a redaction rule missed. Each is made private when it is
 * created — a mode passed to open and mkdir, not a chmod afterwards (no moment when another user can
 * open it) and not a process umask (it would also change what Limbic writes for others: a client's
 * config file edited by `limbic connect`, the shared model cache).
 *
 * SQLite gives the -wal, -shm and -journal files the database file's own mode (os_unix.c,
 * findCreateFileMode), whatever the umask, so a database file made 0600 keeps them private too.
 * Files made by an older Limbic keep their mode; `limbic doctor` names them with the chmod that
 * fixes them (src/cli/doctor.ts), and side files become private on their next save (a new file
 * renamed over the old one).
 */
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

/** Read and write for the owner only. */
export const PRIVATE_FILE_MODE = 0o600;
/** Enter, list and write for the owner only. */
export const PRIVATE_FOLDER_MODE = 0o700;

/** Makes a folder and any missing parent 0700 (as the XDG base directory spec asks); existing ones are left as they are. */
export function makePrivateFolder(path: string): void {
  mkdirSync(path, { recursive: true, mode: PRIVATE_FOLDER_MODE });
}

/**
 * Makes a SQLite file empty and 0600 when it does not exist yet, in private folders, before SQLite
 * opens it (an empty file is an empty database). An existing file is left alone; when the file cannot
 * be made here, SQLite's own open says why.
 */
export function makePrivateDatabaseFile(path: string): void {
  makePrivateFolder(dirname(path));
  try {
    closeSync(openSync(path, 'wx', PRIVATE_FILE_MODE));
  } catch {
    // There already (the usual case), or not ours to make: the open that follows reports a real problem.
  }
}
