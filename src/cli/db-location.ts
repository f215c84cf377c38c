/**
 * What a --db / LIMBIC_DB value names, checked before anything is opened (issue 25): a mistyped
 * location must not become a new, empty memory somewhere else. A postgres:// URL passes as written;
 * another scheme, a "~" the shell did not expand, or a file in a folder that does not exist is
 * refused with what to do. The default location's folders are created (a first start), a chosen
 * one's are not.
 */
import { existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, resolve } from 'node:path';
import { ERROR_CODES, MemoryError } from '../core/errors.js';
import { DEFAULT_NAMESPACE } from '../http/namespaces.js';

const SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;

/** How the PostgreSQL backend reads a location (the composition root passes its functions in). */
export interface UrlRules {
  readonly isPostgresUrl: (location: string) => boolean;
  readonly redactPassword: (url: string) => string;
}

/**
 * The location to open: a postgres:// URL as written, else an absolute file path.
 * @throws MemoryError CONFIG_INVALID naming the mistake and the fix.
 */
export function checkDbLocation(location: string, chosen: boolean, { isPostgresUrl, redactPassword }: UrlRules): string {
  if (isPostgresUrl(location)) return location;
  const scheme = SCHEME.exec(location)?.[1];
  if (scheme !== undefined)
    throw new MemoryError(
      ERROR_CODES.CONFIG_INVALID,
      `--db ${JSON.stringify(redactPassword(location))} is a URL with the scheme "${scheme}", which Limbic does not know. ` +
        'Give a postgres:// (or postgresql://) URL for PostgreSQL, or a file path for SQLite.',
    );
  const path = resolve(location);
  if (!chosen) return path;
  if (location === '~' || location.startsWith('~/') || location.startsWith('~\\'))
    throw new MemoryError(
      ERROR_CODES.CONFIG_INVALID,
      `--db ${JSON.stringify(location)} starts with "~", which only a shell expands (not inside quotes, nor in a client's config file). ` +
        `Write the whole path: ${JSON.stringify(resolve(homedir(), location.slice(2)))}.`,
    );
  const folder = dirname(path);
  if (!existsSync(folder))
    throw new MemoryError(
      ERROR_CODES.CONFIG_INVALID,
      `The folder of --db ${JSON.stringify(location)} does not exist (${folder}). Check the path, or create the folder first (mkdir -p ${JSON.stringify(folder)}).`,
    );
  if (!statSync(folder).isDirectory())
    throw new MemoryError(ERROR_CODES.CONFIG_INVALID, `--db ${JSON.stringify(location)}: ${folder} is not a folder.`);
  return path;
}

/** Whether opening this SQLite file will make it (said once on stderr when it does). */
export const willCreate = (path: string): boolean => !existsSync(path);

/**
 * A command that only reads a memory (export, stats, search, tune, consolidate, reembed) must find
 * one: opening a missing SQLite file would make a new, empty memory as a side effect and answer
 * from it (issue 33). Only serve and import (and migrate's --to) make a memory.
 * @throws MemoryError CONFIG_INVALID naming the file and how to make or find the memory.
 */
export function requireExistingMemory(
  path: string,
  command: string,
  namespace: string,
  { isPostgresUrl }: Pick<UrlRules, 'isPostgresUrl'>,
): void {
  if (isPostgresUrl(path) || existsSync(path)) return;
  const which = namespace === DEFAULT_NAMESPACE ? '' : ` (namespace "${namespace}")`;
  throw new MemoryError(
    ERROR_CODES.CONFIG_INVALID,
    `There is no memory at ${path}${which} yet, so "limbic ${command}" has nothing to work on; nothing was created. ` +
      'Check --db, LIMBIC_DB and --namespace, or make the memory first: "limbic import memory.jsonl", or start the server ("limbic serve") and write to it.',
  );
}
