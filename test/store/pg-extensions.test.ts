/**
 * PostgreSQL without what Limbic needs: a real server whose binaries lack pgvector (a copy of the
 * test server's with the extension's files removed, test/helpers/pg-server.ts), and a role not
 * allowed to enable it. Each refusal names the missing piece and what to do, through the store and
 * through the `limbic` command, and leaves the database as it was.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ERROR_CODES, MemoryError } from '../../src/core/errors.js';
import { openPgStore } from '../../src/store/postgres/pg-store.js';
import { CLI } from '../helpers/fixtures.js';
import { skipNote, startPgServer, type PgServer } from '../helpers/pg-server.js';

const exec = promisify(execFile);

const [bare, full] = await Promise.all([startPgServer({ withoutExtensions: ['vector'] }), startPgServer()]);
const withoutVector: PgServer | undefined = 'url' in bare ? bare : undefined;
const withVector: PgServer | undefined = 'url' in full ? full : undefined;

afterAll(async () => {
  await Promise.all([withoutVector?.stop(), withVector?.stop()]);
});

async function query<R extends pg.QueryResultRow>(url: string, sql: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql)).rows;
  } finally {
    await client.end();
  }
}

async function openError(url: string): Promise<MemoryError> {
  const store = openPgStore({ url });
  try {
    const error = await store.open().then(
      () => undefined,
      (e: unknown) => e,
    );
    if (!(error instanceof MemoryError)) throw new Error(`expected a MemoryError, got ${String(error)}`);
    return error;
  } finally {
    await store.close();
  }
}

describe.skipIf(withoutVector === undefined)(`a PostgreSQL server without pgvector${skipNote(bare)}`, () => {
  it('is refused with an error naming pgvector and how to install it; nothing is created', async () => {
    const server = withoutVector as PgServer;
    const url = await server.createDatabase();
    try {
      const available = (await query<{ name: string }>(url, 'SELECT name FROM pg_available_extensions')).map((r) => r.name);
      expect(available).toContain('pg_trgm'); // the copy lacks only what was removed
      expect(available).not.toContain('vector');
      const error = await openError(url);
      expect(error.code).toBe(ERROR_CODES.VECTOR_UNAVAILABLE);
      expect(error.message).toMatch(/no pgvector extension \("vector"\)/);
      expect(error.message).toMatch(/Install pgvector on the server \(https:\/\/github\.com\/pgvector\/pgvector#installation/);
      expect(error.message).toMatch(/then start Limbic again/);
      const made = await query<{ t: string | null }>(
        url,
        "SELECT to_regclass('limbic_schema')::text AS t, to_regclass('entities')::text AS e",
      );
      expect(made).toEqual([{ t: null, e: null }]);
    } finally {
      await server.dropDatabase(url);
    }
  });

  it('the limbic command says the same and exits with an error', async () => {
    const server = withoutVector as PgServer;
    const url = await server.createDatabase();
    try {
      const failed = await exec(process.execPath, [CLI, '--db', url, 'stats'], { env: { ...process.env, LIMBIC_NO_MODEL: '1' } }).then(
        () => undefined,
        (e: unknown) => e as { code: number; stderr: string },
      );
      expect(failed?.code).not.toBe(0);
      expect(failed?.stderr).toMatch(/no pgvector extension \("vector"\).*Install pgvector on the server/s);
    } finally {
      await server.dropDatabase(url);
    }
  });
});

describe.skipIf(withVector === undefined)(`a role that may not enable pgvector${skipNote(full)}`, () => {
  it('is told to run CREATE EXTENSION as a user allowed to; once done, it opens', async () => {
    const server = withVector as PgServer;
    const url = await server.createDatabase();
    const role = `limbic_limited_${process.pid}`;
    try {
      // No CREATE on the database: a trusted extension still cannot be enabled by this role.
      await query(url, `CREATE ROLE ${role} LOGIN; REVOKE CREATE ON DATABASE ${new URL(url).pathname.slice(1)} FROM PUBLIC`);
      const limited = new URL(url);
      limited.username = role;
      const error = await openError(limited.toString());
      expect(error.code).toBe(ERROR_CODES.VECTOR_UNAVAILABLE);
      expect(error.message).toMatch(/pgvector is installed on the server but could not be enabled in this database \(.+\)/);
      expect(error.message).toMatch(/Run "CREATE EXTENSION vector;" as a user allowed to, then start Limbic again/);
      // What the message says to do, done by the owner: the role can now open (and migrate) the memory.
      await query(url, `CREATE EXTENSION vector; GRANT CREATE, USAGE ON SCHEMA public TO ${role}`);
      const store = openPgStore({ url: limited.toString() });
      try {
        await store.graph.createEntities([{ name: 'A', entityType: 't', observations: ['x'] }], 0);
        expect((await store.stats()).entities).toBe(1);
      } finally {
        await store.close();
      }
    } finally {
      await server.dropDatabase(url);
      await query(server.url, `DROP ROLE IF EXISTS ${role}`);
    }
  });
});
