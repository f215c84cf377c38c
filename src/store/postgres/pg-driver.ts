/**
 * node-postgres, loaded on first use: a SQLite user never loads it, and an install may leave it
 * out (it is an optional dependency: `npm install --omit=optional`). Then the first postgres://
 * database says what to install instead of a bare "Cannot find package".
 */
import type pg from 'pg';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES, MemoryError } from '../../core/errors.js';
import { packageFolderOf } from '../../core/package-folder.js';

type PgModule = { default: typeof pg };

/** Limbic's package folder (this file is in dist/, src/ or the hook's bundle). */
const PACKAGE_ROOT = packageFolderOf(fileURLToPath(import.meta.url), (folder) => existsSync(join(folder, 'package.json')));

export async function loadPgDriver(importPg: () => Promise<PgModule> = () => import('pg')): Promise<typeof pg> {
  try {
    return (await importPg()).default;
  } catch (cause) {
    const missing =
      (cause as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND' && /['"]pg['"]/.test(String((cause as Error).message ?? ''));
    if (!missing) throw cause;
    throw new MemoryError(
      ERROR_CODES.STORE_FAILED,
      'A postgres:// database needs the node-postgres driver ("pg"), an optional dependency this install of Limbic left out. ' +
        `Install it beside Limbic: npm install --no-save pg@8 --prefix "${PACKAGE_ROOT}" (or reinstall Limbic without --omit=optional).`,
      { cause },
    );
  }
}
