/**
 * The hook runtime through the built dist/cli/hook.js, as a client runs it (issue 34): whatever
 * arrives on stdin and whatever state the memory is in, it exits 0, says a failure in one line on
 * stderr and prints on stdout only what the client injects.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/fixtures.js';
import { runHook } from '../helpers/hook-process.js';

describe('limbic hook never breaks the agent', () => {
  let tmp: ReturnType<typeof tempDir>;
  let env: Record<string, string>;
  beforeEach(() => {
    tmp = tempDir('limbic-hook-run-');
    mkdirSync(join(tmp.dir, 'home'));
    env = { HOME: join(tmp.dir, 'home'), XDG_CACHE_HOME: join(tmp.dir, 'cache'), XDG_DATA_HOME: join(tmp.dir, 'data') };
  });
  afterEach(() => tmp.cleanup());

  it('malformed stdin: exit 0, one line on stderr, nothing on stdout', async () => {
    for (const event of ['session-start', 'prompt', 'stop']) {
      const run = await runHook(['--db', join(tmp.dir, 'm.db'), event, '--foreground'], '{"session_id": "s1", "prompt": ', env);
      expect(run).toEqual({ code: 0, stdout: '', stderr: 'limbic hook: the input on stdin is not JSON; nothing done\n' });
    }
  });

  it('reads an input that starts with a byte order mark', async () => {
    const run = await runHook(['--db', join(tmp.dir, 'm.db'), 'session-start', '--client', 'gemini'], '\uFEFF{"session_id": "s1"}', env);
    expect(run).toEqual({ code: 0, stdout: '{}', stderr: '' });
  });

  it('a missing database folder: exit 0 with one line naming it', async () => {
    const db = join(tmp.dir, 'no-such-folder', 'm.db');
    const stop = await runHook(['--db', db, 'stop', '--foreground'], JSON.stringify({ session_id: 's1', prompt: 'x', cwd: tmp.dir }), env);
    expect(stop.code).toBe(0);
    expect(stop.stdout).toBe('');
    expect(stop.stderr.trim().split('\n')).toHaveLength(1);
    expect(stop.stderr).toMatch(/^limbic hook: stop claude-code: The folder of --db ".*no-such-folder\/m\.db" does not exist/);
    const start = await runHook(
      ['--db', db, 'session-start'],
      JSON.stringify({ session_id: 's1', cwd: tmp.dir, hook_event_name: 'SessionStart' }),
      env,
    );
    expect(start.code).toBe(0);
    expect(start.stderr).toMatch(/does not exist/);
  });

  it('no event on the command line or in the input: exit 0 and says so', async () => {
    const run = await runHook(['--db', join(tmp.dir, 'm.db')], '{"hook_event_name": "Notification"}', env);
    expect(run).toMatchObject({ code: 0, stdout: '' });
    expect(run.stderr).toMatch(/no event named/);
    const empty = await runHook(['--db', join(tmp.dir, 'm.db')], '', env);
    expect(empty.code).toBe(0);
  });

  it('SessionStart before any memory exists: nothing to say, in each client’s shape, and no database made', async () => {
    const db = join(tmp.dir, 'm.db');
    const input = JSON.stringify({ session_id: 's1', cwd: tmp.dir, hook_event_name: 'SessionStart', source: 'startup' });
    expect(await runHook(['--db', db, 'session-start', '--client', 'claude-code'], input, env)).toEqual({
      code: 0,
      stdout: '',
      stderr: '',
    });
    expect(await runHook(['--db', db, 'session-start', '--client', 'gemini'], input, env)).toEqual({ code: 0, stdout: '{}', stderr: '' });
    expect(await runHook(['--db', db, 'session-start', '--client', 'cursor'], input, env)).toEqual({ code: 0, stdout: '{}', stderr: '' });
    expect(existsSync(db)).toBe(false);
  });

  it('capture off (LIMBIC_CAPTURE=0): a capture event stores nothing and makes no database', async () => {
    const db = join(tmp.dir, 'm.db');
    const run = await runHook(
      ['--db', db, 'prompt', '--foreground'],
      JSON.stringify({ session_id: 's1', cwd: tmp.dir, prompt: 'We decided on PostgreSQL.' }),
      {
        ...env,
        LIMBIC_CAPTURE: '0',
      },
    );
    expect(run).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(existsSync(db)).toBe(false);
  });

  it('Gemini CLI and Cursor get JSON on stdout even when a capture event has nothing to say', async () => {
    const input = JSON.stringify({ session_id: 's1', cwd: tmp.dir, prompt: 'hi' });
    const db = join(tmp.dir, 'm.db');
    const off = { ...env, LIMBIC_CAPTURE: 'off' };
    expect((await runHook(['--db', db, 'prompt', '--client', 'gemini', '--foreground'], input, off)).stdout).toBe('{}');
    expect((await runHook(['--db', db, 'prompt', '--client', 'cursor', '--foreground'], input, off)).stdout).toBe('{"continue":true}');
    expect((await runHook(['--db', db, 'stop', '--client', 'cursor', '--foreground'], input, off)).stdout).toBe('{}');
  });
});
