/**
 * The tokens of `limbic serve --http` on PostgreSQL: one table, `limbic_tokens`, in the database's
 * default schema (where the default namespace lives), shared by every Limbic process on that
 * database so a token made or revoked on one machine counts on all at once. It holds hashes only;
 * see src/store/token-store.ts. A small pool of its own: the token commands never open (or migrate)
 * a memory, and checking a token never waits behind a namespace's writes. The OAuth server's tables
 * (`limbic_oauth_*`, pg-oauth.ts) are created with it and share its pool.
 */
import type pg from 'pg';
import { loadPgDriver } from './pg-driver.js';
import { ERROR_CODES, MemoryError } from '../../core/errors.js';
import type { TokenRecord, TokenStore } from '../token-store.js';
import { redactPassword } from './pg-connection.js';
import { createPgOAuthTables, pgOAuthStore } from './pg-oauth.js';

interface Row {
  id: string;
  namespace: string;
  read_only: boolean;
  label: string | null;
  created_at: string;
}

const toRecord = (row: Row): TokenRecord => ({
  id: row.id,
  namespace: row.namespace,
  readOnly: row.read_only,
  label: row.label ?? undefined,
  createdAt: Number(row.created_at),
});

/** Serialises the table's creation among processes starting together (any number, the same in all). */
const CREATE_LOCK = 7_254_611_915;

const COLUMNS = 'id, namespace, read_only, label, created_at';

/** Opens lazily: the first call connects and creates the table when absent. */
export function openPgTokenStore(url: string): TokenStore {
  let ready: Promise<pg.Pool> | undefined;
  let pool: pg.Pool | undefined;
  const open = (): Promise<pg.Pool> => {
    ready ??= (async () => {
      const driver = await loadPgDriver();
      pool = new driver.Pool({ connectionString: url, max: 4, statement_timeout: 30_000, application_name: 'limbic-tokens' });
      pool.on('error', () => undefined);
      const client = await pool.connect().catch((cause: unknown) => {
        throw new MemoryError(
          ERROR_CODES.STORE_FAILED,
          `Cannot connect to PostgreSQL at ${redactPassword(url)} for the tokens: ${(cause as Error).message}. Check that the server runs and the URL is right.`,
          { cause },
        );
      });
      try {
        await client.query('BEGIN');
        await client.query('SELECT pg_advisory_xact_lock($1)', [CREATE_LOCK]);
        await client.query(`CREATE TABLE IF NOT EXISTS limbic_tokens (
          id         text PRIMARY KEY,
          hash       text NOT NULL UNIQUE,
          namespace  text NOT NULL,
          read_only  boolean NOT NULL,
          label      text,
          created_at bigint NOT NULL
        )`);
        await createPgOAuthTables(client);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
      return pool;
    })().catch(async (error: unknown) => {
      ready = undefined;
      await pool?.end().catch(() => undefined);
      pool = undefined;
      throw error;
    });
    return ready;
  };
  const rows = async (sql: string, values: unknown[] = []): Promise<Row[]> => (await (await open()).query<Row>(sql, values)).rows;
  return {
    oauth: pgOAuthStore(open),
    async add(record, hash) {
      await rows('INSERT INTO limbic_tokens (id, hash, namespace, read_only, label, created_at) VALUES ($1, $2, $3, $4, $5, $6)', [
        record.id,
        hash,
        record.namespace,
        record.readOnly,
        record.label ?? null,
        record.createdAt,
      ]);
    },
    async byHash(hash) {
      const [row] = await rows(`SELECT ${COLUMNS} FROM limbic_tokens WHERE hash = $1`, [hash]);
      return row === undefined ? undefined : toRecord(row);
    },
    list: async () => (await rows(`SELECT ${COLUMNS} FROM limbic_tokens ORDER BY namespace, created_at`)).map(toRecord),
    async revoke(id) {
      const pool = await open();
      return ((await pool.query('DELETE FROM limbic_tokens WHERE id = $1', [id])).rowCount ?? 0) > 0;
    },
    async count() {
      const pool = await open();
      return Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM limbic_tokens')).rows[0]?.n ?? 0);
    },
    async entries() {
      const all = (await rows(`SELECT ${COLUMNS}, hash FROM limbic_tokens ORDER BY namespace, created_at`)) as (Row & { hash: string })[];
      return all.map((row) => ({ record: toRecord(row), hash: row.hash }));
    },
    async merge(list) {
      if (list.length === 0) return 0;
      const added = await rows(
        `INSERT INTO limbic_tokens (id, hash, namespace, read_only, label, created_at)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::boolean[], $5::text[], $6::bigint[]) ON CONFLICT DO NOTHING RETURNING id`,
        [
          list.map((e) => e.record.id),
          list.map((e) => e.hash),
          list.map((e) => e.record.namespace),
          list.map((e) => e.record.readOnly),
          list.map((e) => e.record.label ?? null),
          list.map((e) => e.record.createdAt),
        ],
      );
      return added.length;
    },
    async close() {
      const current = pool;
      ready = undefined;
      pool = undefined;
      await current?.end();
    },
  };
}
