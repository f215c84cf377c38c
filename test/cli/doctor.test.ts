/**
 * `limbic doctor` (issue 17) through the built CLI: a healthy store, a missing model, a corrupted
 * database file (bytes overwritten in the middle of a real one), a file that is no database; and
 * the pieces that need no store.
 */
import { execFile, spawn } from 'node:child_process';
import { closeSync, fstatSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkDisk, checkNode, formatReport } from '../../src/cli/doctor.js';
import type { HealthCheck } from '../../src/core/health.js';
import { CLI, modelCacheDir, tempDir } from '../helpers/fixtures.js';

const exec = promisify(execFile);

interface Report {
  ok: boolean;
  checks: HealthCheck[];
}

/** Runs `limbic doctor --json`; the exit code is part of the answer, so a failing run is not thrown. */
async function doctor(args: string[], env: Record<string, string> = {}): Promise<{ code: number; report: Report; text: string }> {
  const base = { ...process.env, LIMBIC_DB: '', LIMBIC_MODEL_DIR: '', LIMBIC_NO_MODEL: '', LIMBIC_MODEL_CACHE: modelCacheDir(), ...env };
  const run = async (extra: string[]) => {
    try {
      const { stdout } = await exec(process.execPath, [CLI, ...args, 'doctor', ...extra], { env: base });
      return { code: 0, stdout };
    } catch (error) {
      const e = error as { code?: number; stdout?: string };
      return { code: e.code ?? -1, stdout: e.stdout ?? '' };
    }
  };
  const json = await run(['--json']);
  const text = await run([]);
  expect(text.code).toBe(json.code);
  return { code: json.code, report: JSON.parse(json.stdout) as Report, text: text.stdout };
}

const byName = (report: Report, name: string): HealthCheck | undefined => report.checks.find((c) => c.name === name);

/** A real database with `n` entities, made by the CLI's import. */
async function realDatabase(dir: string, n: number): Promise<string> {
  const db = join(dir, 'memory.db');
  const file = join(dir, 'memory.jsonl');
  const lines = Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      type: 'entity',
      name: `Entity ${i}`,
      entityType: 'note',
      observations: [`observation ${i} about ${'things '.repeat(i % 40)}`],
    }),
  );
  writeFileSync(file, lines.join('\n'));
  await exec(process.execPath, [CLI, '--db', db, 'import', file], { env: { ...process.env, LIMBIC_NO_MODEL: '1' } });
  return db;
}

describe('limbic doctor', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('limbic-doctor-');
  });
  afterEach(() => tmp.cleanup());

  it('passes a healthy store: every part ok, exit code 0', async () => {
    const db = await realDatabase(tmp.dir, 20);
    const { code, report, text } = await doctor(['--db', db]);
    expect(code).toBe(0);
    expect(report.ok).toBe(true);
    for (const name of ['node', 'sqlite', 'sqlite-vec', 'usearch', 'model', 'database', 'schema', 'disk']) {
      expect(byName(report, name)?.status, `${name}: ${byName(report, name)?.detail}`).toBe('ok');
    }
    expect(byName(report, 'sqlite')?.detail).toMatch(/SQLite 3\.\d+\.\d+, FTS5 built in/);
    expect(byName(report, 'model')?.detail).toMatch(/files match their sha256/);
    expect(byName(report, 'database')?.detail).toMatch(/integrity_check ok/);
    // Imported without a model: the 20 entities wait for embedding, which is a warning with its fix.
    expect(byName(report, 'embeddings')).toMatchObject({
      status: 'warn',
      detail: expect.stringMatching(/^20 entities, 20 waiting for embedding/),
    });
    expect(byName(report, 'embeddings')?.fix).toMatch(new RegExp(`--db "${db}" reembed`));
    expect(text).toMatch(/^ok {4}node/m);
    expect(text).toMatch(/Everything works; 1 warning\.\n$/);
  });

  it('says a fresh install has no model yet, which is not a problem: exit code 0 (issue 33)', async () => {
    const empty = join(tmp.dir, 'no-models');
    const { code, report, text } = await doctor(['--db', join(tmp.dir, 'new.db')], { LIMBIC_MODEL_CACHE: empty, LIMBIC_OFFLINE: '' });
    expect(code).toBe(0);
    expect(report.ok).toBe(true);
    expect(byName(report, 'model')).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(
        new RegExp(
          `^No embedding model is installed yet \\(in ${empty}\\): the server's first start installs multilingual-e5-small .* model install" to install it now\\.$`,
        ),
      ),
    });
    expect(byName(report, 'database')).toMatchObject({ status: 'ok', detail: expect.stringMatching(/does not exist yet/) });
    expect(text).toMatch(/Everything works\.\n$/);
  });

  it('fails on a missing model that nothing may fetch (LIMBIC_OFFLINE), with "limbic model install" as the fix', async () => {
    const empty = join(tmp.dir, 'no-models');
    const { code, report, text } = await doctor(['--db', join(tmp.dir, 'new.db')], { LIMBIC_MODEL_CACHE: empty, LIMBIC_OFFLINE: '1' });
    expect(code).toBe(1);
    expect(byName(report, 'model')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining(`No embedding model is installed in ${empty}, and LIMBIC_OFFLINE is set`),
    });
    expect(byName(report, 'model')?.fix).toMatch(/ model install$/);
    expect(text).toMatch(/^fail {2}model .*\n +fix: .* model install\n/m);
    expect(text).toMatch(/1 problem to fix\.\n$/);
  });

  it('says another process is installing the model, which is not a problem', async () => {
    const cache = join(tmp.dir, 'models');
    // An install under way, as model-files.ts stages it: a folder named for the installing process, which runs.
    const installer = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    try {
      mkdirSync(join(cache, `.multilingual-e5-small.installing-${installer.pid}-x1`), { recursive: true });
      const { code, report } = await doctor(['--db', join(tmp.dir, 'new.db')], { LIMBIC_MODEL_CACHE: cache, LIMBIC_OFFLINE: '' });
      expect(code).toBe(0);
      expect(byName(report, 'model')).toMatchObject({
        status: 'ok',
        detail: `installing multilingual-e5-small in another Limbic process (pid ${installer.pid}): a running server uses it as soon as it is ready`,
      });
    } finally {
      installer.kill();
    }
  });

  it('says the model is switched off with --no-model, which is not a problem', async () => {
    const { report } = await doctor(['--no-model', '--db', join(tmp.dir, 'new.db')], { LIMBIC_MODEL_CACHE: join(tmp.dir, 'none') });
    expect(byName(report, 'model')).toMatchObject({ status: 'ok', detail: expect.stringMatching(/switched off/) });
  });

  it('fails on a corrupted database file and gives the export/import rescue', async () => {
    const db = await realDatabase(tmp.dir, 800);
    // Overwrite 2,000 bytes in the middle of the file: b-tree pages of the graph.
    const fd = openSync(db, 'r+');
    const size = fstatSync(fd).size;
    writeSync(fd, Buffer.alloc(2000, 0xab), 0, 2000, Math.floor(size / 2 / 4096) * 4096 + 100);
    closeSync(fd);
    const { code, report } = await doctor(['--db', db]);
    expect(code).toBe(1);
    const check = byName(report, 'database');
    expect(check?.status).toBe('fail');
    expect(check?.detail).toMatch(new RegExp(`^${db} is damaged: `));
    expect(check?.fix).toMatch(new RegExp(`--db "${db}" export "${db}.jsonl" && mv "${db}" "${db}.broken" && .* import "${db}.jsonl"`));
  });

  it('fails on a file that is not a database at all', async () => {
    const db = join(tmp.dir, 'memory.db');
    writeFileSync(db, Buffer.alloc(64 * 1024, 0x5a));
    const { code, report } = await doctor(['--db', db]);
    expect(code).toBe(1);
    expect(byName(report, 'database')).toMatchObject({ status: 'fail', detail: expect.stringMatching(/not a database/) });
  });
});

describe('doctor checks without a store', () => {
  it('wants Node 20 or newer', () => {
    expect(checkNode('20.0.0').status).toBe('ok');
    expect(checkNode('18.19.1')).toMatchObject({ status: 'fail', fix: expect.stringMatching(/install Node 20 or newer/) });
  });

  it('reads the free space of the nearest existing folder', () => {
    const tmp = tempDir();
    try {
      const check = checkDisk(join(tmp.dir, 'not', 'yet', 'memory.db'));
      expect(check.status).not.toBe('fail');
      expect(check.detail).toMatch(new RegExp(`(GB|MB) free on the disk holding ${tmp.dir}$`));
    } finally {
      tmp.cleanup();
    }
  });

  it('prints each fix under its problem and sums up', () => {
    const text = formatReport({
      ok: false,
      checks: [
        { name: 'node', status: 'ok', detail: 'Node 20.1.0' },
        { name: 'database', status: 'fail', detail: 'damaged', fix: 'restore it' },
        { name: 'disk', status: 'warn', detail: 'low', fix: 'free space' },
      ],
    });
    expect(text).toBe(
      [
        'ok    node      Node 20.1.0',
        'fail  database  damaged',
        '                fix: restore it',
        'warn  disk      low',
        '                fix: free space',
        '',
        '1 problem to fix, 1 warning.',
        '',
      ].join('\n'),
    );
  });
});
