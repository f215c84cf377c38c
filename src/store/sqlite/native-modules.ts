/**
 * The SQLite backend's native modules (better-sqlite3, sqlite-vec, usearch) as Node loads them from
 * here, for messages that name where a broken one really is (core/native-module.ts). Imports no
 * driver itself, so `limbic doctor` can load it when a driver is missing altogether.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { locateNativeModule, type NativeModule } from '../../core/native-module.js';
import { packageFolderOf } from '../../core/package-folder.js';

/** The folder Limbic is installed in (its package.json), from dist/, src/ or the hook's bundle. */
export const PACKAGE_FOLDER = packageFolderOf(fileURLToPath(import.meta.url), (folder) => existsSync(join(folder, 'package.json')));

/** `name` where Node resolves it from this backend; `builds`: its install script compiles it. */
export const locateModule = (name: string, role: string, builds: boolean): NativeModule =>
  locateNativeModule(name, role, builds, createRequire(import.meta.url).resolve);
