/**
 * `limbic redact` and `--apply` over the built binary (docs/redaction.md): a memory written with
 * redaction off, through every write path, holds the planted secrets; `limbic redact` reports them
 * by entity, type and count without a value and changes nothing; `--apply` rewrites them so that
 * no file in the database's folder (SQLite) and no row of any table (PostgreSQL) holds one, and a
 * second report finds nothing left.
 */
import { execFile } from 'node:child_process';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { NO_REDACTION } from '../../src/core/text/redaction.js';
import { openPgStore } from '../../src/store/postgres/pg-store.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { CLI, harness, tempDir } from '../helpers/fixtures.js';
import { startPgServer } from '../helpers/pg-server.js';
import { PATHS, STORED_PATHS, fileLeaks, pgLeaks, writeEverything } from '../helpers/redaction-plant.js';

const exec = promisify(execFile);
const limbic = (args: string[]) =>
  exec(process.execPath, [CLI, ...args], { env: { ...process.env, LIMBIC_NO_MODEL: '1' }, maxBuffer: 64 << 20 });

const pgServer = await startPgServer();
afterAll(async () => {
  if ('url' in pgServer) await pgServer.stop();
});

interface Report {
  applied: boolean;
  changes: { entities: number; names: number; types: number; observations: number; superseded: number; relations: number };
  redactions: { type: string; count: number }[];
  entities: { entity: string; fields: string[]; redactions: { type: string; count: number }[] }[];
  rewrite?: { renamedApart: string[] };
  purged?: string[];
}

/** No planted secret's bytes in `text` (the report, what the command printed). */
function expectNoSecret(text: string): void {
  for (const p of Object.values(PATHS)) expect(text).not.toContain(p.secret);
}

/** The report and apply, checked the same on both backends; `leaks` reads what the backend stores. */
async function reportThenApply(db: string, leaks: () => Promise<Record<string, string[]>>): Promise<void> {
  expect(new Set(Object.values(await leaks()).flat())).toEqual(new Set(STORED_PATHS));

  const dry = await limbic(['--db', db, 'redact']);
  expectNoSecret(dry.stdout + dry.stderr);
  const report = JSON.parse(dry.stdout) as Report;
  expect(report.applied).toBe(false);
  expect(report.changes).toMatchObject({ names: 4, types: 1, superseded: 1 });
  expect(report.changes.observations).toBeGreaterThanOrEqual(5);
  expect(report.changes.relations).toBeGreaterThanOrEqual(2);
  expect(report.redactions.map((r) => r.type)).toEqual(expect.arrayContaining(['github-token', 'aws-access-key', 'private-key', 'jwt']));
  expect(report.entities.find((e) => e.entity === 'Deploy')?.fields).toEqual(['type', 'observations: 3', 'superseded: 1']);
  expect(dry.stderr).toContain('redact --apply');
  // A report changes nothing.
  expect(new Set(Object.values(await leaks()).flat())).toEqual(new Set(STORED_PATHS));

  const applied = await limbic(['--db', db, 'redact', '--apply']);
  expectNoSecret(applied.stdout + applied.stderr);
  const done = JSON.parse(applied.stdout) as Report;
  expect(done.applied).toBe(true);
  expect(done.purged?.length).toBeGreaterThan(0);
  expect(await leaks()).toEqual({});

  const again = JSON.parse((await limbic(['--db', db, 'redact'])).stdout) as Report;
  expect(again.changes).toEqual({ entities: 0, names: 0, types: 0, observations: 0, superseded: 0, relations: 0 });
}

describe('the switches', () => {
  const token = PATHS.entityName.secret;
  const line = JSON.stringify({
    type: 'entity',
    name: 'CI',
    entityType: 'service',
    observations: [`token ${token}`, 'mail ops@example.org'],
  });

  /** Imports one line with these flags and environment; what export gives back. */
  async function roundTrip(flags: string[], env: Record<string, string> = {}): Promise<string> {
    const tmp = tempDir();
    try {
      const [db, file] = [join(tmp.dir, 'memory.db'), join(tmp.dir, 'in.jsonl')];
      writeFileSync(file, line);
      const run = (args: string[]) =>
        exec(process.execPath, [CLI, '--db', db, ...flags, ...args], { env: { ...process.env, LIMBIC_NO_MODEL: '1', ...env } });
      const imported = JSON.parse((await run(['import', file])).stdout) as { redactions: unknown };
      const exported = (await run(['export'])).stdout;
      return `${JSON.stringify(imported.redactions)}\n${exported}`;
    } finally {
      tmp.cleanup();
    }
  }

  it('redacts by default, and says what in the import summary', async () => {
    const out = await roundTrip([]);
    expect(out).not.toContain(token);
    expect(out).toContain('token [REDACTED:github-token]');
    expect(out).toContain('ops@example.org');
    expect(out.split('\n')[0]).toBe('[{"type":"github-token","count":1}]');
  });

  it('stores text as given with --no-redact or LIMBIC_NO_REDACT=1', async () => {
    expect(await roundTrip(['--no-redact'])).toContain(`token ${token}`);
    expect(await roundTrip([], { LIMBIC_NO_REDACT: '1' })).toContain(`token ${token}`);
  });

  it('redacts e-mail addresses too with --redact-pii or LIMBIC_REDACT_PII=1', async () => {
    for (const out of [await roundTrip(['--redact-pii']), await roundTrip([], { LIMBIC_REDACT_PII: '1' })]) {
      expect(out).toContain('mail [REDACTED:email]');
      expect(out).not.toContain(token);
    }
  });
});

describe('limbic redact', () => {
  it('reports, then rewrites a SQLite memory so that no file holds a planted secret', async () => {
    const tmp = tempDir();
    const db = join(tmp.dir, 'memory.db');
    const h = await harness({ path: db, redactor: NO_REDACTION, embedder: 'fake' });
    try {
      await writeEverything(h, tmp.dir);
    } finally {
      await h.close();
    }
    await reportThenApply(db, async () => fileLeaks(tmp.dir));
    // The write-ahead log was truncated (and is removed when the last connection closes).
    expect(existsSync(`${db}-wal`) ? statSync(`${db}-wal`).size : 0).toBe(0);
    expect(existsSync(`${db}.keywords`) || existsSync(`${db}.vectors`)).toBe(false);
    // The rewritten memory still reads as a graph: relation ends followed their entity's new name.
    const store = openSqliteStore({ path: db });
    const graph = await store.graph.openNodes(['Deploy']);
    expect(
      graph.relations
        .filter((r) => r.from === 'Deploy')
        .map((r) => r.to)
        .sort(),
    ).toEqual(['service key [REDACTED:github-token]', 'service key [REDACTED:gitlab-token]']);
    expect((await store.graph.searchNodes('REDACTED:aws-access-key')).entities.map((e) => e.name)).toEqual(['Deploy']);
    await store.close();
    tmp.cleanup();
  });

  it('keeps two names apart that the rewrite would make equal', async () => {
    const tmp = tempDir();
    const db = join(tmp.dir, 'memory.db');
    const h = await harness({ path: db, redactor: NO_REDACTION });
    const [a, b] = [PATHS.entityName.secret, PATHS.entityName.secret.replace(/.$/, 'Q')];
    await h.ok('create_entities', {
      entities: [
        { name: `key ${a}`, entityType: 't', observations: [] },
        { name: `key ${b}`, entityType: 't', observations: [] },
      ],
    });
    await h.ok('create_relations', { relations: [{ from: `key ${b}`, to: 'Deploy', relationType: 'used_by' }] });
    await h.close();
    const done = JSON.parse((await limbic(['--db', db, 'redact', '--apply'])).stdout) as Report;
    expect(done.rewrite?.renamedApart).toEqual(['key [REDACTED:github-token] (2)']);
    const store = openSqliteStore({ path: db });
    expect((await store.graph.readGraph()).relations).toEqual([
      { from: 'key [REDACTED:github-token] (2)', to: 'Deploy', relationType: 'used_by' },
    ]);
    await store.close();
    tmp.cleanup();
  });

  const server = 'url' in pgServer ? pgServer : undefined;
  it.skipIf(server === undefined)(
    'reports, then rewrites a PostgreSQL memory so that no row of any table holds a planted secret',
    async () => {
      const url = (await server?.createDatabase()) ?? '';
      const tmp = tempDir();
      const h = await harness({ store: openPgStore({ url, poolSize: 4 }), redactor: NO_REDACTION, embedder: 'fake' });
      try {
        await writeEverything(h, tmp.dir);
      } finally {
        await h.close();
      }
      await reportThenApply(url, () => pgLeaks(url));
      tmp.cleanup();
    },
  );
});
