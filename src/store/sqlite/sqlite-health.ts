/**
 * `limbic doctor`'s view of the SQLite backend: the driver and its build (FTS5), the extensions
 * (sqlite-vec, usearch), and one database file: integrity, schema version, size, pending
 * embeddings, the model its vectors came from. Read-only: the database is opened with
 * `readonly`, never migrated or created.
 */
import { existsSync, statSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { healthCheck, type HealthCheck } from '../../core/health.js';
import { nativeModuleFix, type NativeModule } from '../../core/native-module.js';
import { plural } from '../../core/text/plural.js';
import { SCHEMA_VERSION } from './schema.js';
import { PACKAGE_FOLDER, locateModule } from './native-modules.js';
import type { ExactSearch } from './vector-cache/vector-cache.js';
import { vectorFilePath } from './vector-cache/vector-cache-file.js';

/** Above this size a full integrity_check reads for minutes; quick_check skips the index cross-checks. */
const QUICK_CHECK_FROM = 512 * 2 ** 20;

const firstLine = (error: unknown): string => (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
const mb = (bytes: number): string => (bytes >= 10 * 2 ** 20 ? `${(bytes / 2 ** 20).toFixed(0)} MB` : `${(bytes / 2 ** 20).toFixed(1)} MB`);

async function openDriver(): Promise<typeof Database> {
  // Loaded here so a broken native build is reported, not thrown at start-up.
  // A CommonJS module: its export is the default of the ESM namespace.
  return ((await import('better-sqlite3')) as unknown as { default: typeof Database }).default;
}

/** A check of a native module that does not load: where it is, and the command that fixes it there. */
function notLoading(check: string, status: 'fail' | 'warn', module: NativeModule, error: unknown, consequence: string): HealthCheck {
  const where = module.dir === undefined ? 'is not installed' : `does not load from ${module.dir}`;
  return healthCheck(
    check,
    status,
    `${module.name} ${where} (${firstLine(error)}): ${consequence}`,
    nativeModuleFix(module, PACKAGE_FOLDER),
  );
}

/** The driver, its SQLite and FTS5, sqlite-vec, usearch; a module that does not load is named where it is. */
export async function checkSqliteRuntime(): Promise<HealthCheck[]> {
  const checks: HealthCheck[] = [];
  const driver = locateModule('better-sqlite3', 'the SQLite driver', true);
  const reinstall = nativeModuleFix(driver, PACKAGE_FOLDER);
  let Driver: typeof Database;
  let db: Database.Database;
  try {
    Driver = await openDriver();
    db = new Driver(':memory:');
  } catch (error) {
    return [notLoading('sqlite', 'fail', driver, error, 'nothing can be stored or read')];
  }
  try {
    const version = (db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
    const options = (db.pragma('compile_options') as { compile_options: string }[]).map((o) => o.compile_options);
    let fts5 = options.includes('ENABLE_FTS5');
    try {
      db.exec("CREATE VIRTUAL TABLE doctor_fts USING fts5(x, tokenize = 'porter unicode61 remove_diacritics 2')");
      fts5 = true;
    } catch {
      fts5 = false;
    }
    checks.push(
      fts5
        ? healthCheck('sqlite', 'ok', `better-sqlite3 with SQLite ${version}, FTS5 built in`)
        : healthCheck(
            'sqlite',
            'fail',
            `SQLite ${version} was built without FTS5: keyword search cannot work`,
            `${reinstall} (its bundled SQLite has FTS5)`,
          ),
    );
    try {
      const sqliteVec = await import('sqlite-vec');
      sqliteVec.load(db);
      const vec = (db.prepare('SELECT vec_version() AS v').get() as { v: string }).v;
      checks.push(healthCheck('sqlite-vec', 'ok', `sqlite-vec ${vec} loads`));
    } catch (error) {
      checks.push(
        notLoading(
          'sqlite-vec',
          'fail',
          locateModule('sqlite-vec', 'vectors in SQLite', false),
          error,
          'no vectors, so no semantic search',
        ),
      );
    }
  } finally {
    db.close();
  }
  try {
    const exactSearch = (await import('usearch')).exactSearch as unknown as ExactSearch;
    const found = exactSearch(new Float32Array([1, 0, 0, 1]), new Float32Array([0, 1]), 2, 1, 'ip', 1);
    if (Number(found.keys[0]) !== 1) throw new Error(`a test scan found key ${String(found.keys[0])} instead of 1`);
    checks.push(healthCheck('usearch', 'ok', 'usearch loads (in-memory vector scan)'));
  } catch (error) {
    checks.push(
      notLoading(
        'usearch',
        'warn',
        locateModule('usearch', 'the in-memory vector scan', true),
        error,
        'sqlite-vec answers vector searches instead, slower on large graphs',
      ),
    );
  }
  return checks;
}

/** integrity_check's findings in one line: the first two, and how many there are (it stops at 20). */
function damage(rows: readonly string[]): string {
  const findings = rows.flatMap((r) => r.split('\n')).filter((l) => l.trim() !== '' && !/^\*\*\* in database/.test(l));
  return `${findings.slice(0, 2).join('; ')}${findings.length > 2 ? ` (and ${findings.length - 2} more${findings.length >= 20 ? ' at least' : ''})` : ''}`;
}

export interface DatabaseCheckOptions {
  /** The model that would embed now, to compare with the one the stored vectors came from. */
  readonly modelId: string | undefined;
  /** How to run limbic on this database, for fixes ("limbic --db /x/memory.db"). */
  readonly cli: string;
}

/** One database file, opened read-only. */
export async function checkDatabase(path: string, options: DatabaseCheckOptions): Promise<HealthCheck[]> {
  if (!existsSync(path)) {
    return [healthCheck('database', 'ok', `${path} does not exist yet; it is created on first use`)];
  }
  const size = statSync(path).size + (existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0);
  const { cli } = options;
  const rescue =
    `${cli} export "${path}.jsonl" && mv "${path}" "${path}.broken" && ${cli} import "${path}.jsonl" ` +
    '(copies out what still reads into a fresh file; if export fails too, restore a backup)';
  let Driver: typeof Database;
  let db: Database.Database;
  try {
    Driver = await openDriver();
    db = new Driver(path, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
  } catch (error) {
    return [
      healthCheck(
        'database',
        'fail',
        `${path} cannot be opened: ${firstLine(error)}`,
        `move it aside (mv "${path}" "${path}.broken") and restore a backup, or import your memory.jsonl into a new one`,
      ),
    ];
  }
  const checks: HealthCheck[] = [];
  try {
    const quick = size >= QUICK_CHECK_FROM;
    let integrity: string[];
    try {
      integrity = (db.pragma(quick ? 'quick_check(20)' : 'integrity_check(20)') as Record<string, string>[]).map(
        (r) => Object.values(r)[0] ?? '',
      );
    } catch (error) {
      integrity = [firstLine(error)];
    }
    const sound = integrity.length === 1 && integrity[0] === 'ok';
    checks.push(
      sound
        ? healthCheck('database', 'ok', `${path}: ${mb(size)}, ${quick ? 'quick_check' : 'integrity_check'} ok`)
        : healthCheck('database', 'fail', `${path} is damaged: ${damage(integrity)}`, rescue),
    );
    if (!sound) return checks;

    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION) {
      checks.push(
        healthCheck(
          'schema',
          'fail',
          `schema ${version} was written by a newer Limbic (this one knows ${SCHEMA_VERSION})`,
          'upgrade Limbic (git pull && npm ci, or npm install -g limbic@latest)',
        ),
      );
    } else if (version < SCHEMA_VERSION) {
      checks.push(healthCheck('schema', 'ok', `schema ${version}; the next start migrates it to ${SCHEMA_VERSION}`));
    } else {
      checks.push(healthCheck('schema', 'ok', `schema ${version}, as this Limbic expects`));
    }
    if (version === 0) return checks;

    const meta = (key: string): string | undefined =>
      (db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined)?.value;
    const entities = Number(meta('entity_count') ?? (db.prepare('SELECT count(*) AS n FROM entities').get() as { n: number }).n);
    const pending = (db.prepare('SELECT count(*) AS n FROM embedding_queue').get() as { n: number }).n;
    const vectorModel = meta('vector_model');
    const wants = options.modelId;
    const detail = `${plural(entities, 'entity', 'entities')}, ${pending} waiting for embedding${vectorModel === undefined ? '' : `, vectors by ${vectorModel}`}`;
    if (vectorModel !== undefined && wants !== undefined && vectorModel !== wants) {
      checks.push(
        healthCheck(
          'embeddings',
          'warn',
          `${detail}; the model in use is ${wants}, so every entity is re-embedded on the next start`,
          `${cli} reembed (now, with a progress bar)`,
        ),
      );
    } else if (pending > 0) {
      checks.push(
        healthCheck(
          'embeddings',
          'warn',
          `${detail}; a running server embeds them in the background`,
          `${cli} reembed (now, with a progress bar)`,
        ),
      );
    } else {
      checks.push(healthCheck('embeddings', 'ok', detail));
    }
    const vectors = vectorFilePath(path);
    if (existsSync(vectors))
      checks.push(healthCheck('vector cache', 'ok', `${vectors}: ${mb(statSync(vectors).size)} (rebuilt by itself when stale)`));
  } finally {
    db.close();
  }
  return checks;
}
