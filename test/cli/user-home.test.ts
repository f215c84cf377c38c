/**
 * A hook or service started with HOME="" (some launchers pass the variable empty): Node's homedir()
 * answers "", and every default path resolved against it landed in the current folder. A hook run
 * that way from a repository wrote its state into the repository's `.cache` (found when one was
 * committed by mistake). userHome falls back to the account's home folder.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { userHome } from '../../src/cli/app.js';
import { ERROR_CODES } from '../../src/core/errors.js';
import { CLI, tempDir } from '../helpers/fixtures.js';

const exec = promisify(execFile);

describe('userHome', () => {
  it('is $HOME when set', () => {
    expect(
      userHome(
        () => '/home/me',
        () => '/elsewhere',
      ),
    ).toBe('/home/me');
  });

  it("is the account's home when $HOME is empty", () => {
    expect(
      userHome(
        () => '',
        () => '/home/me',
      ),
    ).toBe('/home/me');
  });

  it('refuses, saying what to set, when neither is known', () => {
    const none = (): string => {
      throw new Error('no passwd entry');
    };
    expect(() => userHome(() => '', none)).toThrow(
      expect.objectContaining({ code: ERROR_CODES.CONFIG_INVALID, message: expect.stringMatching(/set HOME/) }),
    );
    expect(() =>
      userHome(
        () => '',
        () => '',
      ),
    ).toThrow(/HOME is empty/);
  });
});

describe('a command started with HOME="" in a project folder', () => {
  const tmp = tempDir('limbic-empty-home-');

  it("finds the memory under the account's home, not in the folder it runs in", async () => {
    const cwd = join(tmp.dir, 'repo');
    mkdirSync(cwd);
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: '' };
    for (const name of ['XDG_DATA_HOME', 'XDG_CACHE_HOME', 'LIMBIC_DB', 'LIMBIC_NAMESPACE']) delete env[name];
    // doctor reads and never creates: it says where the default memory is.
    const { stdout } = await exec(process.execPath, [CLI, '--no-model', 'doctor', '--json'], { cwd, env }).catch(
      (e: { stdout: string }) => e,
    );
    const database = (JSON.parse(stdout) as { checks: { name: string; detail: string }[] }).checks.find((c) => c.name === 'database');
    expect(database?.detail).toContain(join(userInfo().homedir, '.local', 'share', 'limbic', 'memory.db'));
    expect(database?.detail).not.toContain(cwd);
    expect(readdirSync(cwd)).toEqual([]);
  });
});
