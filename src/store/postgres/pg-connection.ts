/**
 * The pool every part of the PostgreSQL store shares: opening it (pool size, statement timeout, TLS
 * from the URL), migrations, and write transactions. Several Limbic processes on several machines
 * may write at once: each write is one transaction, and the two ways concurrent transactions fail
 * without anyone being wrong (a deadlock between two batches inserting the same names in another
 * order, a serialization failure) are retried from the start, so no write is lost.
 */
import type pg from 'pg';
import { loadPgDriver } from './pg-driver.js';
import { ERROR_CODES, MemoryError } from '../../core/errors.js';
import { redactPassword } from '../../core/redact.js';
import { migrate } from './migrations.js';
import { resyncListedKeywords } from './pg-graph.js';

export interface PgConnectionOptions {
  /** postgres:// or postgresql:// URL; TLS options (sslmode, sslrootcert...) pass through to node-postgres. */
  readonly url: string;
  /** Connections this process opens at most. @default 10 */
  readonly poolSize?: number;
  /** A statement running longer is cancelled (ms, 0 for none). @default 30000 */
  readonly statementTimeoutMs?: number;
  /** Settings every connection starts with (`-c name=value`), e.g. hnsw.ef_search. */
  readonly sessionSettings?: Readonly<Record<string, string>>;
  /**
   * A schema of its own (a namespace's, `limbic_<name>`), created and migrated on first use. Every
   * connection of this pool starts with search_path set to it (then the extensions' schemas), so
   * the store's SQL stays unqualified and the pool serves this one schema only. Unset: the
   * connection's default schema, as before namespaces.
   */
  readonly schema?: string;
}

/** A pool or one of its connections (inside a transaction): what the parts run statements on. */
export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

/**
 * PostgreSQL text cannot hold U+0000, which the official contract keeps verbatim (SQLite does). Every
 * string parameter is escaped reversibly on its way in and every text column unescaped on its way
 * out: U+0000 becomes U+FFFF U+FFFE and U+FFFF becomes U+FFFF U+FFFF (both noncharacters, valid
 * UTF-8). Text holding neither, which is all ordinary text, is unchanged, stored and compared as is.
 */
export function encodeText(text: string): string {
  // eslint-disable-next-line no-control-regex -- U+0000 is exactly what this looks for
  return /[\u0000\uFFFF]/.test(text) ? text.replace(/[\u0000\uFFFF]/g, (c) => (c === '\u0000' ? '\uFFFF\uFFFE' : '\uFFFF\uFFFF')) : text;
}

export function decodeText(text: string): string {
  return text.includes('\uFFFF') ? text.replace(/\uFFFF([\uFFFE\uFFFF])/g, (_, c: string) => (c === '\uFFFE' ? '\u0000' : '\uFFFF')) : text;
}

const encodeParam = (value: unknown): unknown =>
  typeof value === 'string' ? encodeText(value) : Array.isArray(value) ? value.map(encodeParam) : value;

/** Runs statements with their string parameters escaped (see encodeText). */
function escaping(db: Queryable): Queryable {
  return { query: (text, values) => db.query(text, values?.map(encodeParam)) };
}

/** SQLSTATEs a write is retried on: deadlock_detected, serialization_failure. */
const RETRYABLE = new Set(['40P01', '40001']);
const MAX_ATTEMPTS = 8;

export class PgConnection {
  /** The URL with its password replaced, for messages and stats: passwords are never logged. */
  readonly location: string;
  private pool: pg.Pool | undefined;
  private ready: Promise<pg.Pool> | undefined;

  constructor(private readonly options: PgConnectionOptions) {
    this.location = redactPassword(options.url) + (options.schema === undefined ? '' : ` (schema ${options.schema})`);
  }

  /** Connects and migrates once; every public method of the store awaits this first. */
  open(): Promise<pg.Pool> {
    this.ready ??= this.connectAndMigrate().catch(async (error: unknown) => {
      this.ready = undefined; // the next call tries again (the server may be starting)
      await this.close().catch(() => undefined);
      throw error;
    });
    return this.ready;
  }

  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: readonly unknown[] = []): Promise<R[]> {
    const pool = await this.open();
    return (await pool.query<R>(sql, params.map(encodeParam))).rows;
  }

  /** Runs fn in one transaction on one connection, retried whole on deadlock or serialization failure. */
  async write<T>(fn: (client: Queryable) => Promise<T>): Promise<T> {
    const pool = await this.open();
    for (let attempt = 1; ; attempt++) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn(escaping(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        const code = (error as { code?: unknown }).code;
        if (typeof code === 'string' && RETRYABLE.has(code) && attempt < MAX_ATTEMPTS) {
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
          continue;
        }
        throw error;
      } finally {
        client.release();
      }
    }
  }

  async metaGet(key: string, client?: Queryable): Promise<string | undefined> {
    const db = client ?? escaping(await this.open());
    return (await db.query<{ value: string }>('SELECT value FROM meta WHERE key = $1', [key])).rows[0]?.value;
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    await pool?.end();
  }

  private async connectAndMigrate(): Promise<pg.Pool> {
    // node-postgres is loaded on first use: a SQLite user never pays for it.
    const driver = await loadPgDriver();
    const searchPath = this.options.schema === undefined ? undefined : await prepareSchema(driver, this.options.url, this.options.schema);
    const settings = { ...this.options.sessionSettings, ...(searchPath === undefined ? {} : { search_path: searchPath }) };
    // int8 and numeric as numbers: ids, counts and millisecond times all fit a double.
    // Text and text[] unescaped (see encodeText).
    const builtinParser = driver.types.getTypeParser as (oid: number, format?: 'text' | 'binary') => (value: string) => unknown;
    const textArray = builtinParser(1009, 'text') as (value: string) => (string | null)[];
    const getTypeParser = ((oid: number, format?: 'text' | 'binary') => {
      if (oid === 20 || oid === 1700) return (value: string) => Number(value);
      if (oid === 25 || oid === 1043) return decodeText;
      if (oid === 1009 || oid === 1015) return (value: string) => textArray(value).map((v) => (v === null ? v : decodeText(v)));
      return builtinParser(oid, format);
    }) as typeof driver.types.getTypeParser;
    const pool = new driver.Pool({
      connectionString: this.options.url,
      max: this.options.poolSize ?? 10,
      statement_timeout: this.options.statementTimeoutMs ?? 30_000,
      application_name: 'limbic',
      ...(Object.keys(settings).length === 0
        ? {}
        : {
            // The server splits this on spaces; a backslash keeps one inside a value.
            options: Object.entries(settings)
              .map(([name, value]) => `-c ${name}=${value.replace(/[\\ ]/g, '\\$&')}`)
              .join(' '),
          }),
      types: { getTypeParser },
    });
    // An idle connection dropped by the server must not crash the process; the next query reconnects.
    pool.on('error', () => undefined);
    this.pool = pool;
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (cause) {
      throw cannotConnect(this.location, cause);
    }
    try {
      if (this.options.schema !== undefined) {
        // Refuse to migrate anywhere but the namespace's own schema (the setting above must have taken).
        const current = (await client.query<{ s: string | null }>('SELECT current_schema() AS s')).rows[0]?.s;
        if (current !== this.options.schema) {
          throw new MemoryError(
            ERROR_CODES.STORE_FAILED,
            `The connection to ${this.location} works in schema "${current ?? ''}", not "${this.options.schema}"; refusing to touch it. Check that the database user may use that schema.`,
          );
        }
      }
      // The guard commits with the migrations: no one ever sees a namespace's schema half made.
      await migrate(client, undefined, async () => {
        await resyncListedKeywords(escaping(client));
        if (this.options.schema !== undefined) await guardFallThrough(client);
      });
    } finally {
      client.release();
    }
    return pool;
  }
}

function cannotConnect(location: string, cause: unknown): MemoryError {
  return new MemoryError(
    ERROR_CODES.STORE_FAILED,
    `Cannot connect to PostgreSQL at ${location}: ${(cause as Error).message}. Check that the server runs and the URL (host, port, user, password, sslmode) is right.`,
    { cause },
  );
}

/** Any number: it only has to be the same in every Limbic process. */
const SCHEMA_LOCK = 7_254_611_916;

const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * Before a namespace's pool opens, on a connection of its own with the default search_path: the
 * extensions are enabled where the default namespace has them (never inside a namespace's schema,
 * where the others could not see them; failures are left to migrate(), which explains them), the
 * schema is created, and its search_path returned: the schema, then the extensions' schemas.
 */
async function prepareSchema(driver: typeof pg, url: string, schema: string): Promise<string> {
  const client = new driver.Client({ connectionString: url, application_name: 'limbic' });
  try {
    await client.connect();
  } catch (cause) {
    throw cannotConnect(redactPassword(url), cause);
  }
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
    const missing = await client.query<{ name: string }>(
      `SELECT name FROM pg_available_extensions WHERE name IN ('vector', 'pg_trgm') AND installed_version IS NULL`,
    );
    for (const { name } of missing.rows) {
      await client.query('SAVEPOINT ext');
      await client.query(`CREATE EXTENSION IF NOT EXISTS ${quoteIdent(name)}`).catch(() => client.query('ROLLBACK TO SAVEPOINT ext'));
    }
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
    const homes = await client.query<{ s: string }>(
      `SELECT DISTINCT n.nspname AS s FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace
        WHERE x.extname IN ('vector', 'pg_trgm') ORDER BY 1`,
    );
    await client.query('COMMIT');
    return [schema, ...homes.rows.map((r) => r.s).filter((s) => s !== schema && s !== 'pg_catalog')].map(quoteIdent).join(',');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * A namespace's search_path ends in the extensions' schema, often `public`, where the default
 * namespace's tables may be: a table missing from the namespace's own schema would be found there
 * instead. Migrations make every table in each schema; the ones made later (the vectors' tables,
 * entities' and observations', once the model's size is known, pg-vectors.ts) get empty stand-ins
 * now, which configure() replaces (it finds no model recorded, or no observation index of this
 * schema's) — so no statement, a DROP included, ever falls through.
 */
async function guardFallThrough(client: pg.PoolClient): Promise<void> {
  await client.query(
    'CREATE TABLE IF NOT EXISTS entity_embeddings (entity_id integer PRIMARY KEY REFERENCES entities(id) ON DELETE CASCADE, embedding vector NOT NULL)',
  );
  await client.query(
    `CREATE TABLE IF NOT EXISTS observation_embeddings (entity_id integer NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
       n integer NOT NULL, embedding vector NOT NULL, PRIMARY KEY (entity_id, n))`,
  );
}

export { redactPassword };

export type { RelationRow } from '../rows.js';
