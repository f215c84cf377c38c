/**
 * `limbic hooks install|uninstall CLIENT` (issue 34) on temporary settings files for each client:
 * a fresh file, a file with the user's own hooks and settings (kept, in order, with its
 * indentation), a second run changing nothing, a backup before a change, uninstall removing only
 * Limbic's handlers, --print writing nothing, --project writing the project's file; and once
 * through the built CLI in a fresh HOME.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Where } from '../../src/cli/connect.js';
import {
  HOOK_CLIENT_SPECS,
  findHookClient,
  hookCommand,
  installHooks,
  isLimbicHookCommand,
  uninstallHooks,
  type HookClientSpec,
  type InstallOptions,
} from '../../src/cli/hooks-install.js';
import { isMemoryError } from '../../src/core/errors.js';
import { CLI, REPO_ROOT, tempDir } from '../helpers/fixtures.js';

const exec = promisify(execFile);
const LAUNCHER = { command: '/usr/bin/node', args: ['/opt/limbic/dist/cli/hook.js'] };
const STATE = '/home/u/.cache/limbic/hooks';
const where = (home: string, platform: NodeJS.Platform = 'linux', env: Record<string, string> = {}): Where => ({ env, home, platform });
const NOON = (): number => Date.UTC(2026, 10, 27, 12, 0, 0);

/** Someone else's hook handler, in the client's format. */
function otherHandler(spec: HookClientSpec): Record<string, unknown> {
  if (spec.format === 'cursor') return { command: './scripts/format.sh' };
  if (spec.format === 'gemini') return { name: 'secret-scanner', type: 'command', command: '$GEMINI_PROJECT_DIR/scan.sh', timeout: 5000 };
  return { type: 'command', command: 'npx prettier --write "$TOOL_INPUT_FILE_PATH"', timeout: 15 };
}

/** A settings file as a user has it: other settings, another tool's hooks on our events and others, 4-space indentation. */
function existingSettings(spec: HookClientSpec): string {
  const stopName = spec.events.stop as string;
  const other = otherHandler(spec);
  const list = (handler: Record<string, unknown>, matcher?: string): unknown[] =>
    spec.format === 'cursor' ? [handler] : [{ ...(matcher === undefined ? {} : { matcher }), hooks: [handler] }];
  const hooks: Record<string, unknown> = {
    ...(spec.format === 'gemini' ? { enabled: true, disabled: ['old-hook'] } : {}),
    PostToolUse: list(other, 'Edit|Write'),
    [stopName]: list(other),
  };
  const document = { theme: 'dark', ...(spec.format === 'cursor' ? { version: 1 } : {}), hooks, zz_last: [1, 2, 3] };
  return `${JSON.stringify(document, null, 4)}\n`;
}

/** Every command of a settings file's hooks, by event. */
function commandsIn(file: string): Record<string, string[]> {
  const document = JSON.parse(readFileSync(file, 'utf8')) as { hooks?: Record<string, unknown> };
  const out: Record<string, string[]> = {};
  for (const [event, list] of Object.entries(document.hooks ?? {})) {
    if (!Array.isArray(list)) continue;
    out[event] = list.flatMap((item: Record<string, unknown>) =>
      Array.isArray(item.hooks) ? item.hooks.map((h: Record<string, unknown>) => String(h.command)) : [String(item.command)],
    );
  }
  return out;
}

describe('limbic hooks install on each client', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('limbic-hooks-');
  });
  afterEach(() => tmp.cleanup());

  const install = (options: Partial<InstallOptions> & Pick<InstallOptions, 'client'>) =>
    installHooks({
      where: where(tmp.dir),
      now: NOON,
      command: { launcher: LAUNCHER, globalArgs: ['--db', '/home/u/notes/memory.db'], stateDir: STATE },
      ...options,
    });

  it.each(HOOK_CLIENT_SPECS.map((c) => [c.id, c] as const))(
    '%s: a fresh file gets one command hook per event, by absolute paths',
    (_id, spec) => {
      const result = install({ client: spec });
      expect(result.action).toBe('created');
      expect(result.backup).toBeUndefined();
      const document = JSON.parse(readFileSync(result.file, 'utf8')) as { version?: number; hooks: Record<string, unknown[]> };
      expect(Object.keys(document.hooks)).toEqual(Object.values(spec.events));
      if (spec.format === 'cursor') expect(document.version).toBe(1);
      for (const [event, name] of Object.entries(spec.events)) {
        const [entry] = document.hooks[name as string] ?? [];
        const handler = (spec.format === 'cursor' ? entry : (entry as { hooks: unknown[] }).hooks[0]) as Record<string, unknown>;
        const writtenFor = spec.via ?? spec.id;
        expect(handler.command).toBe(
          `/usr/bin/node /opt/limbic/dist/cli/hook.js --db /home/u/notes/memory.db ${event} --client ${writtenFor} --state-dir ${STATE}`,
        );
        if (spec.format === 'claude') expect(handler).toMatchObject({ type: 'command', timeout: expect.any(Number) });
        if (spec.format === 'gemini')
          expect(handler).toMatchObject({ name: `limbic-${event}`, type: 'command', timeout: expect.any(Number) });
        if (spec.format === 'gemini') expect(handler.timeout as number).toBeGreaterThanOrEqual(1000);
      }
    },
  );

  it.each(HOOK_CLIENT_SPECS.map((c) => [c.id, c] as const))(
    '%s: keeps the user’s settings and hooks, backs up, then changes nothing; uninstall leaves the others',
    (_id, spec) => {
      const file = join(tmp.dir, `${spec.id}.json`);
      const before = existingSettings(spec);
      writeFileSync(file, before);
      const first = install({ client: spec, configFile: file });
      expect(first.action).toBe('updated');
      expect(first.backup).toBe(`${file}.bak-20261127T120000Z`);
      expect(readFileSync(first.backup ?? '', 'utf8')).toBe(before);

      const after = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      expect(Object.keys(after)).toEqual(Object.keys(JSON.parse(before) as object)); // same keys, same order
      expect(readFileSync(file, 'utf8')).toMatch(/^\{\n {4}"theme"/); // indentation kept
      const hooks = after.hooks as Record<string, unknown>;
      if (spec.format === 'gemini') expect(hooks).toMatchObject({ enabled: true, disabled: ['old-hook'] });
      const commands = commandsIn(file);
      const stopName = spec.events.stop as string;
      const other = String(otherHandler(spec).command);
      // The other tool's Stop hook is first, ours after it; its PostToolUse hook is untouched.
      expect(commands[stopName]?.[0]).toBe(other);
      expect(commands[stopName]?.[1]).toMatch(/hook\.js .* stop --client/);
      expect(commands.PostToolUse).toEqual([other]);

      const written = readFileSync(file, 'utf8');
      const second = install({ client: spec, configFile: file, now: () => NOON() + 3_600_000 });
      expect(second.action).toBe('unchanged');
      expect(second.backup).toBeUndefined();
      expect(readFileSync(file, 'utf8')).toBe(written);
      expect(readdirSync(tmp.dir).filter((f) => f.includes('.bak-'))).toHaveLength(1);

      const removed = uninstallHooks({ client: spec, where: where(tmp.dir), configFile: file, now: () => NOON() + 7_200_000 });
      expect(removed.action).toBe('removed');
      expect(Object.keys(removed.hooks).sort()).toEqual(Object.values(spec.events).sort());
      // Exactly what the user had, before Limbic ever wrote (formatting aside).
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(JSON.parse(before));
      expect(uninstallHooks({ client: spec, where: where(tmp.dir), configFile: file }).action).toBe('absent');
    },
  );

  it('replaces its handler where it stands, keeping the group’s matcher and a neighbour handler in it', () => {
    const spec = findHookClient('claude-code');
    const file = join(tmp.dir, 'settings.json');
    const old = '/old/node /old/limbic/dist/cli/hook.js stop --client claude-code';
    writeFileSync(
      file,
      JSON.stringify({
        hooks: {
          Stop: [
            {
              matcher: '',
              hooks: [
                { type: 'command', command: 'say done' },
                { type: 'command', command: old, timeout: 99 },
              ],
            },
            { hooks: [{ type: 'command', command: `${old} --state-dir /x` }] },
            { hooks: [{ type: 'command', command: 'notify-send stop' }] },
          ],
        },
      }),
    );
    install({ client: spec, configFile: file });
    const stop = (JSON.parse(readFileSync(file, 'utf8')) as { hooks: { Stop: { matcher?: string; hooks: { command: string }[] }[] } }).hooks
      .Stop;
    expect(stop).toHaveLength(2); // the duplicate of ours went, its emptied group with it
    expect(stop[0]?.matcher).toBe('');
    expect(stop[0]?.hooks.map((h) => h.command)).toEqual([
      'say done',
      expect.stringMatching(/^\/usr\/bin\/node \/opt\/limbic\/dist\/cli\/hook\.js .* stop /),
    ]);
    expect(stop[1]?.hooks.map((h) => h.command)).toEqual(['notify-send stop']);
  });

  it('--print shows the hooks and writes nothing', () => {
    const spec = findHookClient('gemini');
    const result = install({ client: spec, print: true });
    expect(result.action).toBe('printed');
    expect(existsSync(result.file)).toBe(false);
    expect(Object.keys(result.hooks)).toEqual(['SessionStart', 'BeforeAgent', 'AfterAgent', 'PreCompress', 'SessionEnd']);
    expect(result.messages[0]).toMatch(/not written/);
  });

  it('--project writes the project’s own file for each client; VS Code’s is Claude Code’s', () => {
    const project = join(tmp.dir, 'shop');
    mkdirSync(project);
    const files = Object.fromEntries(HOOK_CLIENT_SPECS.map((spec) => [spec.id, install({ client: spec, project }).file]));
    expect(files).toEqual({
      'claude-code': join(project, '.claude', 'settings.json'),
      codex: join(project, '.codex', 'hooks.json'),
      gemini: join(project, '.gemini', 'settings.json'),
      cursor: join(project, '.cursor', 'hooks.json'),
      vscode: join(project, '.claude', 'settings.json'),
    });
    expect(existsSync(join(tmp.dir, '.claude'))).toBe(false); // the user's own files untouched
  });

  it('knows each client’s user file, with CLAUDE_CONFIG_DIR and CODEX_HOME', () => {
    const file = (id: string, w: Where) => findHookClient(id).file(w, undefined);
    const home = where('/home/u');
    expect(file('claude-code', home)).toBe('/home/u/.claude/settings.json');
    expect(file('claude-code', where('/home/u', 'linux', { CLAUDE_CONFIG_DIR: '/cfg/claude' }))).toBe('/cfg/claude/settings.json');
    expect(file('codex', home)).toBe('/home/u/.codex/hooks.json');
    expect(file('codex', where('/home/u', 'linux', { CODEX_HOME: '/cfg/codex' }))).toBe('/cfg/codex/hooks.json');
    expect(file('gemini', home)).toBe('/home/u/.gemini/settings.json');
    expect(file('cursor', home)).toBe('/home/u/.cursor/hooks.json');
    expect(file('vscode', home)).toBe('/home/u/.claude/settings.json');
    expect(file('cursor', where('C:\\Users\\u', 'win32'))).toBe('C:\\Users\\u\\.cursor\\hooks.json');
    expect(() => findHookClient('windsurf')).toThrow(
      /Unknown client "windsurf". Choose one of: claude-code, codex, gemini, cursor, vscode/,
    );
    expect(findHookClient('Claude Code').id).toBe('claude-code');
  });

  it('VS Code: writes Claude Code’s file, says so, and uninstalling says both stop', () => {
    const spec = findHookClient('vscode');
    const result = install({ client: spec });
    expect(result.file).toBe(join(tmp.dir, '.claude', 'settings.json'));
    expect(result.messages.join('\n')).toMatch(/VS Code runs the hooks in Claude Code’s settings files/);
    // The same hooks serve Claude Code: installing for it changes nothing.
    expect(install({ client: findHookClient('claude-code') }).action).toBe('unchanged');
    const removed = uninstallHooks({ client: spec, where: where(tmp.dir) });
    expect(removed.messages.join('\n')).toMatch(/They were Claude Code's too/);
  });

  it('--no-brief leaves SessionStart out and removes one installed before; --no-capture keeps only SessionStart', () => {
    const spec = findHookClient('claude-code');
    const all = install({ client: spec });
    expect(Object.keys(commandsIn(all.file))).toContain('SessionStart');
    install({ client: spec, events: ['prompt', 'stop', 'pre-compact', 'session-end'] });
    expect(Object.keys(commandsIn(all.file))).toEqual(['UserPromptSubmit', 'Stop', 'PreCompact', 'SessionEnd']);
    install({ client: spec, events: ['session-start'] });
    expect(Object.keys(commandsIn(all.file))).toEqual(['SessionStart']);
  });

  it('refuses a file that is not plain JSON, or whose hooks are not an object, and leaves it untouched', () => {
    const spec = findHookClient('claude-code');
    const file = join(tmp.dir, 'settings.json');
    const text = '{\n  // my settings\n  "hooks": {},\n}\n';
    writeFileSync(file, text);
    let error: unknown;
    try {
      install({ client: spec, configFile: file });
    } catch (e) {
      error = e;
    }
    expect(isMemoryError(error) && error.code).toBe('CONFIG_INVALID');
    expect((error as Error).message).toMatch(/comments or trailing commas[\s\S]*"SessionStart"/);
    expect(readFileSync(file, 'utf8')).toBe(text);

    writeFileSync(file, '{"hooks": []}');
    expect(() => install({ client: spec, configFile: file })).toThrow(/"hooks" in .* is not an object/);
    writeFileSync(file, '{"hooks": {"Stop": {"command": "x"}}}');
    expect(() => install({ client: spec, configFile: file })).toThrow(/"hooks.Stop" in .* is not a list/);
    expect(readFileSync(file, 'utf8')).toBe('{"hooks": {"Stop": {"command": "x"}}}');
  });

  it('an npx Limbic’s hooks start `limbic hook` through npx, with this Node first on PATH', () => {
    const launcher = {
      command: '/usr/bin/node',
      args: ['/usr/lib/node_modules/npm/bin/npx-cli.js', '--yes', '--package=limbic@0.2.0', '--', 'limbic'],
      env: { PATH: '/usr/bin:/bin' },
      note: 'this Limbic runs from npx’s cache',
    };
    const command = hookCommand('stop', {
      launcher,
      globalArgs: ['--namespace', 'work'],
      client: 'codex',
      stateDir: STATE,
      platform: 'linux',
    });
    expect(command).toBe(
      `PATH=/usr/bin:/bin /usr/bin/node /usr/lib/node_modules/npm/bin/npx-cli.js --yes --package=limbic@0.2.0 -- limbic --namespace work hook stop --client codex --state-dir ${STATE}`,
    );
    expect(isLimbicHookCommand(command)).toBe(true);
    const spaced = hookCommand('prompt', {
      launcher: { command: 'C:\\Program Files\\nodejs\\node.exe', args: ['C:\\Users\\u\\limbic\\dist\\cli\\hook.js'] },
      globalArgs: [],
      client: 'claude-code',
      stateDir: 'C:\\Users\\u\\.cache\\limbic\\hooks',
      platform: 'win32',
    });
    expect(spaced).toBe(
      '"C:\\Program Files\\nodejs\\node.exe" C:\\Users\\u\\limbic\\dist\\cli\\hook.js prompt --client claude-code --state-dir C:\\Users\\u\\.cache\\limbic\\hooks',
    );
    expect(isLimbicHookCommand(spaced)).toBe(true);
    expect(isLimbicHookCommand('node ./dist/cli/hook.js stop')).toBe(false); // no --client: not ours
    expect(isLimbicHookCommand('python3 ~/.claude/hooks/memory.py --client x')).toBe(false);
  });
});

describe('limbic hooks through the built CLI', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('limbic-hooks-cli-');
  });
  afterEach(() => tmp.cleanup());

  it('install, install again, --print, uninstall in a fresh HOME, carrying --db, --namespace and the other options given', async () => {
    const home = join(tmp.dir, 'home');
    mkdirSync(home);
    const db = join(tmp.dir, 'memory.db');
    const env = {
      ...process.env,
      HOME: home,
      XDG_CACHE_HOME: '',
      XDG_DATA_HOME: '',
      LIMBIC_DB: '',
      LIMBIC_NAMESPACE: '',
      CLAUDE_CONFIG_DIR: '',
    };
    const given = [CLI, '--db', db, '--namespace', 'work', '--inverse-relations', '--no-model', 'hooks', 'install', 'claude-code'];
    const first = await exec(process.execPath, given, { env });
    expect(first.stderr).toMatch(
      /Created Limbic's hooks \(SessionStart, UserPromptSubmit, Stop, PreCompact, SessionEnd\) in .*\.claude\/settings\.json/,
    );
    const file = join(home, '.claude', 'settings.json');
    const stop = commandsIn(file).Stop?.[0] ?? '';
    expect(stop).toBe(
      `${process.execPath} ${join(REPO_ROOT, 'dist', 'cli', 'hook.js')} --db ${db} --namespace work --inverse-relations stop --client claude-code --state-dir ${join(home, '.cache', 'limbic', 'hooks')}`,
    );
    const again = await exec(process.execPath, given, { env });
    expect(again.stderr).toMatch(/Nothing to change/);
    const printed = await exec(process.execPath, [CLI, '--db', db, 'hooks', 'install', 'codex', '--print'], { env });
    expect(JSON.parse(printed.stdout)).toMatchObject({ file: join(home, '.codex', 'hooks.json'), hooks: { Stop: { type: 'command' } } });
    expect(existsSync(join(home, '.codex'))).toBe(false);
    const removed = await exec(process.execPath, [CLI, 'hooks', 'uninstall', 'claude-code'], { env });
    expect(removed.stderr).toMatch(/Removed Limbic's hooks/);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({});
  });
});
