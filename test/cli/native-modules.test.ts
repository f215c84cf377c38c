/**
 * A native module that does not load (issue 33): a client that timed out during the first
 * `npx limbic` (while better-sqlite3 compiled) left it unbuilt in the npx cache; every later start
 * blamed the database path, and doctor's `npm rebuild` in Limbic's own folder rebuilt nothing.
 * Here a copy of an npx install (<tmp>/_npx/<hash>/node_modules/limbic beside its dependencies)
 * has better-sqlite3 without its compiled file and onnxruntime-node without its binaries; the
 * start and doctor name each where it really is, with the command that fixes it there.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HealthCheck } from '../../src/core/health.js';
import { locateNativeModule, nativeModuleFix } from '../../src/core/native-module.js';
import { CLI, REPO_ROOT, tempDir } from '../helpers/fixtures.js';

const exec = promisify(execFile);
const BROKEN = { 'better-sqlite3': 'build', 'onnxruntime-node': 'bin' } as const;

async function run(main: string, args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [main, ...args], { env: { ...process.env, ...env }, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('a native module that does not load, in a copy of an npx install', () => {
  const tmp = tempDir('limbic-native-');
  const npx = join(tmp.dir, '_npx', '3f2a9c61d0e4b7a5');
  const modules = join(npx, 'node_modules');
  const main = join(modules, 'limbic', 'dist', 'cli', 'main.js');
  const env = { LIMBIC_DB: join(tmp.dir, 'memory.db'), LIMBIC_MODEL_DIR: '', LIMBIC_NO_MODEL: '' };

  beforeAll(async () => {
    // The memory was made while the install still worked: a command that reads it must open it.
    const jsonl = join(tmp.dir, 'memory.jsonl');
    writeFileSync(jsonl, '{"type":"entity","name":"Ada","entityType":"person","observations":["writes code"]}');
    await exec(process.execPath, [CLI, '--no-model', 'import', jsonl], { env: { ...process.env, ...env } });
    mkdirSync(join(modules, 'limbic'), { recursive: true });
    cpSync(join(REPO_ROOT, 'dist'), join(modules, 'limbic', 'dist'), { recursive: true });
    copyFileSync(join(REPO_ROOT, 'package.json'), join(modules, 'limbic', 'package.json'));
    // npx installs the dependencies beside limbic, not inside it: linked here, but for the broken two.
    for (const name of readdirSync(join(REPO_ROOT, 'node_modules'))) {
      if (name === '.bin' || name in BROKEN) continue;
      symlinkSync(join(REPO_ROOT, 'node_modules', name), join(modules, name));
    }
    // Copied without what the interrupted install never wrote (a fresh copy: the shared tree is never touched).
    for (const [name, missing] of Object.entries(BROKEN)) {
      const from = join(REPO_ROOT, 'node_modules', name);
      cpSync(from, join(modules, name), { recursive: true, filter: (path) => relative(from, path).split(sep)[0] !== missing });
    }
  });
  afterAll(() => tmp.cleanup());

  const driverFix = `rm -rf "${npx}" (npx installs Limbic afresh on its next start), or npm rebuild better-sqlite3 --prefix "${npx}"`;

  it('says at start that better-sqlite3 does not load, where, and the fix there; not that the database path is wrong', async () => {
    const started = await run(main, ['stats', '--json'], env);
    expect(started.code).toBe(1);
    expect(started.stderr).toContain(
      `better-sqlite3 (the SQLite driver) does not load from ${join(modules, 'better-sqlite3')}: Could not locate the bindings file`,
    );
    expect(started.stderr).toContain(`the database is not the problem. Fix: ${driverFix}`);
    expect(started.stderr).not.toMatch(/Check the path and its permissions/);
  });

  it('doctor names both broken modules where they are, with the fix there', async () => {
    const doctor = await run(main, ['doctor', '--json'], env);
    expect(doctor.code).toBe(1);
    const checks = (JSON.parse(doctor.stdout) as { checks: HealthCheck[] }).checks;
    expect(checks.find((c) => c.name === 'sqlite')).toEqual({
      name: 'sqlite',
      status: 'fail',
      detail: expect.stringMatching(
        new RegExp(`^better-sqlite3 does not load from ${join(modules, 'better-sqlite3')} \\(Could not locate the bindings file`),
      ) as unknown,
      fix: driverFix,
    });
    expect(checks.find((c) => c.name === 'onnxruntime')).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(new RegExp(`^onnxruntime-node does not load from ${join(modules, 'onnxruntime-node')} \\(`)) as unknown,
      fix: `rm -rf "${npx}" (npx installs Limbic afresh on its next start), or rm -rf "${join(modules, 'onnxruntime-node')}" && npm install --omit=dev --prefix "${npx}"`,
    });
  });

  it('doctor of the intact install finds every native module loading', async () => {
    const doctor = await run(CLI, ['doctor', '--json'], env);
    const checks = (JSON.parse(doctor.stdout) as { checks: HealthCheck[] }).checks;
    for (const name of ['sqlite', 'sqlite-vec', 'usearch', 'onnxruntime']) expect(checks.find((c) => c.name === name)?.status).toBe('ok');
  });
});

describe('nativeModuleFix', () => {
  const resolveIn = (main: string) => () => main;

  it('rebuilds a compiled module in the folder whose node_modules holds it (a clone, a global install)', () => {
    const module = locateNativeModule(
      'better-sqlite3',
      'the SQLite driver',
      true,
      resolveIn('/src/limbic/node_modules/better-sqlite3/lib/index.js'),
    );
    expect(module.dir).toBe('/src/limbic/node_modules/better-sqlite3');
    expect(nativeModuleFix(module, '/src/limbic')).toBe('npm rebuild better-sqlite3 --prefix "/src/limbic"');
    const global = locateNativeModule(
      'usearch',
      'x',
      true,
      resolveIn('/usr/lib/node_modules/limbic/node_modules/usearch/javascript/dist/cjs/usearch.js'),
    );
    expect(nativeModuleFix(global, '/usr/lib/node_modules/limbic')).toBe('npm rebuild usearch --prefix "/usr/lib/node_modules/limbic"');
  });

  it('reinstalls a module whose native files ship in its package', () => {
    const module = locateNativeModule('sqlite-vec', 'x', false, resolveIn('/src/limbic/node_modules/sqlite-vec/index.cjs'));
    expect(nativeModuleFix(module, '/src/limbic')).toBe(
      'rm -rf "/src/limbic/node_modules/sqlite-vec" && npm install --omit=dev --prefix "/src/limbic"',
    );
  });

  it('offers to remove the npx cache folder first when npx installed it', () => {
    const module = locateNativeModule(
      'better-sqlite3',
      'x',
      true,
      resolveIn('/home/u/.npm/_npx/ab12/node_modules/better-sqlite3/lib/index.js'),
    );
    expect(nativeModuleFix(module, '/home/u/.npm/_npx/ab12/node_modules/limbic')).toBe(
      'rm -rf "/home/u/.npm/_npx/ab12" (npx installs Limbic afresh on its next start), or npm rebuild better-sqlite3 --prefix "/home/u/.npm/_npx/ab12"',
    );
  });

  it('names a module that is not installed at all, and reinstalls Limbic', () => {
    const missing = locateNativeModule('usearch', 'x', true, () => {
      throw new Error("Cannot find module 'usearch'");
    });
    expect(missing.dir).toBeUndefined();
    expect(nativeModuleFix(missing, '/src/limbic')).toBe(
      'npm install --omit=dev --prefix "/src/limbic" (usearch is missing from Limbic\'s packages)',
    );
  });
});
