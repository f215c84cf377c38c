/**
 * Issue 33 ("The first hour, again", item 3): on a CPU without AVX-512, the test PostgreSQL's
 * pgvector (built with -march=native on one with it) killed the backend with "Illegal instruction"
 * at the first vector insert, and every later PostgreSQL test failed with "Connection terminated
 * unexpectedly". The test server now runs on such CPUs, and a server whose pgvector cannot run is
 * found by a probe before any test uses it: a skip that says why.
 *
 * Other CPUs are emulated with Debian's qemu-user (`qemu-x86_64 -cpu NAME`); those tests skip,
 * saying so, where it is not installed (.ci/run installs it).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { explainProbeFailure, startPgServer, type PgServer } from './pg-server.js';

const qemu = spawnSync('qemu-x86_64', ['--version']).status === 0;
const linuxX64 = process.platform === 'linux' && process.arch === 'x64';
const noQemu = !linuxX64 ? 'not linux x64' : !qemu ? 'qemu-x86_64 (Debian package qemu-user) is not installed' : undefined;

/** Debian's layout, as scripts/install-test-postgres.sh leaves it. */
const systemVector = existsSync('/usr/share/postgresql')
  ? readdirSync('/usr/share/postgresql').some((major) => existsSync(`/usr/share/postgresql/${major}/extension/vector.control`))
  : false;

const started: PgServer[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.stop()));
});

async function vectorsWork(server: PgServer): Promise<number> {
  const url = await server.createDatabase();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('CREATE EXTENSION vector');
    await client.query('CREATE TABLE t (id integer, v vector(384))');
    await client.query(
      'INSERT INTO t SELECT i, (SELECT array_agg(cos(i + j))::vector(384) FROM generate_series(1, 384) AS j) FROM generate_series(1, 8) AS i',
    );
    const row = await client.query<{ id: number }>('SELECT id FROM t ORDER BY v <=> (SELECT v FROM t WHERE id = 3) LIMIT 1');
    return row.rows[0]?.id ?? -1;
  } finally {
    await client.end();
  }
}

describe('the test PostgreSQL on CPUs without AVX-512 (issue 33)', () => {
  it.skipIf(noQemu !== undefined)(
    `the wheel's server stores and queries vectors on a Haswell CPU (no AVX-512)${noQemu === undefined ? '' : ` [skipped: ${noQemu}]`}`,
    async () => {
      const server = await startPgServer({ sources: ['wheel'], emulateCpu: 'Haswell' });
      if ('unavailable' in server) throw new Error(server.unavailable);
      started.push(server);
      expect(server.description).toMatch(/emulated Haswell/);
      expect(await vectorsWork(server)).toBe(3);
    },
    180_000,
  );

  it.skipIf(noQemu !== undefined)(
    `a pgvector built for instructions the CPU lacks is a skip that says why, not a crash${noQemu === undefined ? '' : ` [skipped: ${noQemu}]`}`,
    async () => {
      // The wheel's pgvector uses AVX2 and FMA, which a Nehalem CPU (2008) lacks.
      const server = await startPgServer({ sources: ['wheel'], emulateCpu: 'Nehalem' });
      if (!('unavailable' in server)) started.push(server);
      expect(server).toHaveProperty('unavailable');
      const reason = (server as { unavailable: string }).unavailable;
      expect(reason).toMatch(/pgvector crashed the server \(a backend was terminated by signal 4: Illegal instruction\)/);
      expect(reason).toMatch(/built for a CPU with instructions this one lacks/);
      expect(reason).toMatch(/scripts\/install-test-postgres\.sh/);
    },
    180_000,
  );

  it.skipIf(!systemVector || process.env.LIMBIC_TEST_PG_URL !== undefined)(
    `prefers the system PostgreSQL with pgvector to the wheel${systemVector ? '' : ' [skipped: no system pgvector: scripts/install-test-postgres.sh installs one]'}`,
    async () => {
      const server = await startPgServer();
      if ('unavailable' in server) throw new Error(server.unavailable);
      started.push(server);
      expect(server.description).toMatch(/^the system PostgreSQL in \/usr\/lib\/postgresql\/\d+\/bin$/);
      expect(await vectorsWork(server)).toBe(3);
    },
  );

  it('a server named by LIMBIC_TEST_PG_URL that does not answer is a skip with the reason', async () => {
    const saved = process.env.LIMBIC_TEST_PG_URL;
    process.env.LIMBIC_TEST_PG_URL = 'postgres://postgres@127.0.0.1:1/postgres';
    try {
      const server = await startPgServer();
      expect(server).toEqual({
        unavailable: expect.stringMatching(/^the server LIMBIC_TEST_PG_URL names cannot serve the tests: .*ECONNREFUSED/),
      });
    } finally {
      if (saved === undefined) delete process.env.LIMBIC_TEST_PG_URL;
      else process.env.LIMBIC_TEST_PG_URL = saved;
    }
  });

  it('names the signal and the cause from the server log', () => {
    const log =
      'LOG:  client backend (PID 5952) was terminated by signal 4: Illegal instruction\nLOG:  all server processes terminated; reinitializing\n';
    expect(explainProbeFailure('Connection terminated unexpectedly', log)).toBe(
      'pgvector crashed the server (a backend was terminated by signal 4: Illegal instruction): its vector.so was built for a CPU with instructions this one lacks (pgvector compiles with -march=native unless built with OPTFLAGS="")',
    );
    expect(
      explainProbeFailure(
        'Connection terminated unexpectedly',
        'LOG:  server process (PID 7) was terminated by signal 11: Segmentation fault\n',
      ),
    ).toBe('pgvector crashed the server (a backend was terminated by signal 11: Segmentation fault)');
    expect(explainProbeFailure('extension "vector" is not available', '')).toBe('it has no pgvector');
    expect(explainProbeFailure('permission denied to create extension "vector"', '')).toBe(
      'pgvector does not work: permission denied to create extension "vector"',
    );
  });
});
