/**
 * Every command given a postgres:// database (issue 27): it works on PostgreSQL, or refuses with
 * what to do instead; none creates anything on disk from the URL. The built CLI as a subprocess,
 * in an empty working folder, against a real PostgreSQL server.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, tempDir } from '../helpers/fixtures.js';
import { skipNote, startPgServer, type PgServer } from '../helpers/pg-server.js';

const started = await startPgServer();
const pgServer: PgServer | undefined = 'url' in started ? started : undefined;
afterAll(async () => {
  await pgServer?.stop();
});

describe.runIf(pgServer !== undefined)(`every command on a postgres:// database${skipNote(started)}`, () => {
  let url: string;
  let tmp: ReturnType<typeof tempDir>;
  const limbic = (...args: string[]) =>
    spawnSync(process.execPath, [CLI, '--db', url, '--no-model', ...args], {
      cwd: tmp.dir,
      encoding: 'utf8',
      env: { ...process.env, LIMBIC_NAMESPACE: '', LIMBIC_DB: '', HOME: tmp.dir, XDG_DATA_HOME: '', XDG_CONFIG_HOME: '' },
    });

  beforeAll(async () => {
    url = await (pgServer as PgServer).createDatabase();
    tmp = tempDir('limbic-pg-commands-');
    writeFileSync(
      join(tmp.dir, 'memory.jsonl'),
      `${JSON.stringify({ type: 'entity', name: 'Ada', entityType: 'person', observations: ['wrote the first program'] })}\n`,
    );
  });
  afterAll(async () => {
    await pgServer?.dropDatabase(url);
    tmp.cleanup();
  });

  it('import, export, stats, search, tune, consolidate and connect work on it', () => {
    const imported = limbic('import', 'memory.jsonl');
    expect(imported.status, imported.stderr).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({ entitiesRead: 1 });

    const exported = limbic('export');
    expect(exported.status, exported.stderr).toBe(0);
    expect(exported.stdout).toContain('"name":"Ada"');

    const stats = limbic('stats', '--json');
    expect(stats.status, stats.stderr).toBe(0);
    expect(JSON.parse(stats.stdout)).toMatchObject({ entities: 1 });

    const search = limbic('search', 'program', '--json');
    expect(search.status, search.stderr).toBe(0);
    expect((JSON.parse(search.stdout) as { results: { name: string }[] }).results[0]?.name).toBe('Ada');

    const tune = limbic('tune', '--json');
    expect(tune.status, tune.stderr).toBe(0);

    const consolidate = limbic('consolidate', '--dry-run');
    expect(consolidate.status, consolidate.stderr).toBe(0);

    const connect = limbic('connect', 'claude-code', '--print');
    expect(connect.status, connect.stderr).toBe(0);
    expect(connect.stdout).toContain(url);
  });

  it('token create and list keep the tokens in the database', () => {
    const created = limbic('token', 'create', '--namespace', 'default', '--label', 'test');
    expect(created.status, created.stderr).toBe(0);
    const listed = limbic('token', 'list');
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('test');
  });

  it('migrate copies it to a SQLite file, with its token (issue 35)', () => {
    const migrated = spawnSync(process.execPath, [CLI, 'migrate', '--from', url, '--to', join(tmp.dir, 'copy.db')], {
      cwd: tmp.dir,
      encoding: 'utf8',
    });
    expect(migrated.status, migrated.stderr).toBe(0);
    expect(JSON.parse(migrated.stdout)).toMatchObject({ entities: 1, tokensAdded: 1, check: { differences: 0 } });
  });

  it('doctor refuses, saying what shows a PostgreSQL memory instead', () => {
    const doctor = limbic('doctor');
    expect(doctor.status).toBe(1);
    expect(doctor.stderr).toMatch(/checks a SQLite file.*limbic --db URL stats/);
  });

  it('created nothing on disk from the URL', () => {
    const names = readdirSync(tmp.dir).filter(
      // copy.tokens.db: the copy's tokens, which migrate carried there.
      (n) => !['memory.jsonl', 'copy.db', 'copy.db-wal', 'copy.db-shm', 'copy.keywords', 'copy.tokens.db'].includes(n),
    );
    // connect --print writes nothing; the HOME is this folder, so a stray client file would show here too.
    expect(names.filter((n) => n.includes('postgres') || n.endsWith('.db') || n.startsWith('.'))).toEqual([]);
  });
});
