/**
 * `limbic connect CLIENT` (issue 17) on temporary config files for each client: existing entries
 * and keys kept in order, a backup written first, a second run changing nothing, --print writing
 * nothing, a file that is not JSON refused, the official server's entry replaced with its import
 * command; and once through the built CLI, with the written entry started by a real MCP client.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLIENTS, connectClient, findClient, npxLauncher, type ConnectOptions, type Where } from '../../src/cli/connect.js';
import { isMemoryError } from '../../src/core/errors.js';
import { CLI, tempDir } from '../helpers/fixtures.js';

const exec = promisify(execFile);
const LAUNCHER = { command: '/usr/bin/node', args: ['/opt/limbic/dist/cli/main.js'] };
const where = (home: string, platform: NodeJS.Platform = 'linux', env: Record<string, string> = {}): Where => ({ env, home, platform });

/** A config as a user has it: other servers, other settings, 4-space indentation. */
function existingConfig(serversKey: string): string {
  const document = {
    theme: 'dark',
    [serversKey]: {
      github: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-github'], env: { GITHUB_TOKEN: 'secret' } },
      memory: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'], env: { MEMORY_FILE_PATH: '/data/memory.jsonl' } },
      fetch: { command: 'uvx', args: ['mcp-server-fetch'] },
    },
    zz_last: [1, 2, 3],
  };
  return `${JSON.stringify(document, null, 4)}\n`;
}

describe('limbic connect on each client', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('limbic-connect-');
  });
  afterEach(() => tmp.cleanup());

  const run = (options: Partial<ConnectOptions> & Pick<ConnectOptions, 'client'>) =>
    connectClient({ launcher: LAUNCHER, where: where(tmp.dir), now: () => Date.UTC(2026, 10, 22, 12, 0, 0), ...options });

  it.each(CLIENTS.map((c) => [c.id, c] as const))(
    '%s: replaces the official server in place, keeps the rest, backs up, then changes nothing',
    (_id, client) => {
      const file = join(tmp.dir, `${client.id}.json`);
      const before = existingConfig(client.serversKey);
      writeFileSync(file, before);
      const first = run({ client, configFile: file, db: '/home/u/notes/memory.db' });
      expect(first.action).toBe('updated');

      const after = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      expect(Object.keys(after)).toEqual(['theme', client.serversKey, 'zz_last']);
      const servers = after[client.serversKey] as Record<string, Record<string, unknown>>;
      expect(Object.keys(servers)).toEqual(['github', 'memory', 'fetch']);
      expect(servers.github).toEqual({
        command: 'npx',
        args: ['-y', '@modelcontextprotocol/server-github'],
        env: { GITHUB_TOKEN: 'secret' },
      });
      expect(servers.memory).toEqual({
        ...(client.typed ? { type: 'stdio' } : {}),
        command: '/usr/bin/node',
        args: ['/opt/limbic/dist/cli/main.js', '--db', '/home/u/notes/memory.db'],
      });
      // The official server's MEMORY_FILE_PATH is not carried over; its import is offered instead.
      expect(first.official?.importCommand).toBe('limbic --db /home/u/notes/memory.db import /data/memory.jsonl');
      expect(first.messages.join('\n')).toMatch(
        /ran the official memory server .*\n.*limbic --db \/home\/u\/notes\/memory\.db import \/data\/memory\.jsonl/,
      );
      expect(readFileSync(file, 'utf8')).toMatch(/^\{\n {4}"theme"/); // indentation kept

      expect(first.backup).toBe(`${file}.bak-20261122T120000Z`);
      expect(readFileSync(first.backup ?? '', 'utf8')).toBe(before);

      const written = readFileSync(file, 'utf8');
      const second = run({ client, configFile: file, db: '/home/u/notes/memory.db', now: () => Date.UTC(2026, 10, 22, 13, 0, 0) });
      expect(second.action).toBe('unchanged');
      expect(second.messages[0]).toMatch(/Nothing to change/);
      expect(readFileSync(file, 'utf8')).toBe(written);
      expect(readdirSync(tmp.dir).filter((f) => f.includes('.bak-'))).toHaveLength(1);
    },
  );

  it('creates a missing file (and its folder) at the client’s own location', () => {
    const client = findClient('cursor');
    const result = connectClient({ client, launcher: LAUNCHER, where: where(tmp.dir) });
    expect(result.action).toBe('created');
    expect(result.file).toBe(join(tmp.dir, '.cursor', 'mcp.json'));
    expect(result.backup).toBeUndefined();
    expect(JSON.parse(readFileSync(result.file, 'utf8'))).toEqual({
      mcpServers: { memory: { command: '/usr/bin/node', args: ['/opt/limbic/dist/cli/main.js'] } },
    });
  });

  it('adds beside other servers under --name, and keeps flags the client added to its entry', () => {
    const client = findClient('windsurf');
    const file = join(tmp.dir, 'mcp_config.json');
    writeFileSync(file, existingConfig('mcpServers'));
    const added = run({ client, configFile: file, name: 'limbic' });
    expect(added.action).toBe('added');
    const servers = (JSON.parse(readFileSync(file, 'utf8')) as { mcpServers: Record<string, Record<string, unknown>> }).mcpServers;
    expect(Object.keys(servers)).toEqual(['github', 'memory', 'fetch', 'limbic']);
    // Windsurf writes "disabled"; the user added an env for Limbic: both survive a later connect.
    servers.limbic = { ...servers.limbic, disabled: false, env: { LIMBIC_OFFLINE: '1' } };
    writeFileSync(file, JSON.stringify({ mcpServers: servers }, null, 2));
    const again = run({ client, configFile: file, name: 'limbic', db: '/x.db' });
    expect(again.action).toBe('updated');
    const entry = (JSON.parse(readFileSync(file, 'utf8')) as { mcpServers: Record<string, unknown> }).mcpServers.limbic;
    expect(entry).toEqual({
      command: '/usr/bin/node',
      args: ['/opt/limbic/dist/cli/main.js', '--db', '/x.db'],
      disabled: false,
      env: { LIMBIC_OFFLINE: '1' },
    });
  });

  it('--print shows the entry and writes nothing', () => {
    const client = findClient('claude-code');
    const file = join(tmp.dir, '.claude.json');
    const before = existingConfig('mcpServers');
    writeFileSync(file, before);
    const result = run({ client, configFile: file, print: true });
    expect(result.action).toBe('printed');
    expect(result.entry).toEqual({ type: 'stdio', command: '/usr/bin/node', args: ['/opt/limbic/dist/cli/main.js'] });
    expect(result.messages.join('\n')).toMatch(/claude mcp add-json --scope user memory /);
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(readdirSync(tmp.dir)).toEqual(['.claude.json']);
  });

  it('asks which Claude "claude" means, and writes a chosen namespace into the entry (issue 25)', () => {
    expect(() => findClient('claude')).toThrow(
      /"claude" could be Claude Code \(the `claude` command\) or Claude Desktop.*claude-code.*claude-desktop/,
    );
    expect(findClient('Claude Code').id).toBe('claude-code');
    const result = run({
      client: findClient('claude-code'),
      configFile: join(tmp.dir, '.claude.json'),
      print: true,
      db: '/x.db',
      namespace: 'work',
    });
    expect(result.entry).toMatchObject({ args: ['/opt/limbic/dist/cli/main.js', '--db', '/x.db', '--namespace', 'work'] });
  });

  it('refuses a file that is not JSON (VS Code allows comments) and leaves it untouched', () => {
    const client = findClient('vscode');
    const file = join(tmp.dir, 'mcp.json');
    const jsonc = '{\n  // my servers\n  "servers": {},\n}\n';
    writeFileSync(file, jsonc);
    let error: unknown;
    try {
      run({ client, configFile: file });
    } catch (e) {
      error = e;
    }
    expect(isMemoryError(error)).toBe(true);
    expect((error as Error).message).toMatch(
      /is not valid JSON .*comments or trailing commas.*left it untouched.*add the entry by hand:\n\{\n {2}"servers"/s,
    );
    expect(readFileSync(file, 'utf8')).toBe(jsonc);
    expect(readdirSync(tmp.dir)).toEqual(['mcp.json']);
  });

  it('refuses to replace a different server of the same name unless told to', () => {
    const client = findClient('claude-desktop');
    const file = join(tmp.dir, 'claude_desktop_config.json');
    writeFileSync(file, JSON.stringify({ mcpServers: { memory: { command: 'mem0-mcp' } } }));
    expect(() => run({ client, configFile: file })).toThrow(
      /already has a server named "memory" that is not Limbic.*--name limbic.*--replace/,
    );
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ mcpServers: { memory: { command: 'mem0-mcp' } } });
    expect(run({ client, configFile: file, replace: true }).action).toBe('updated');
  });

  it('finds the official server’s memory.jsonl in the npx cache when MEMORY_FILE_PATH is not set', () => {
    const dist = join(tmp.dir, '.npm', '_npx', 'abc123', 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist');
    mkdirSync(dist, { recursive: true });
    writeFileSync(join(dist, 'memory.jsonl'), '');
    const file = join(tmp.dir, 'c.json');
    writeFileSync(
      file,
      JSON.stringify({ mcpServers: { memory: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'] } } }),
    );
    const result = run({ client: findClient('cursor'), configFile: file, limbicCommand: '/usr/bin/node /opt/limbic/dist/cli/main.js' });
    expect(result.official?.importCommand).toBe(`/usr/bin/node /opt/limbic/dist/cli/main.js import ${join(dist, 'memory.jsonl')}`);
  });

  it('knows where each client keeps its config on Linux, macOS and Windows', () => {
    const path = (id: string, platform: NodeJS.Platform, home: string, env: Record<string, string> = {}) =>
      findClient(id).configPath(where(home, platform, env));
    expect(path('claude-desktop', 'darwin', '/Users/u')).toBe('/Users/u/Library/Application Support/Claude/claude_desktop_config.json');
    expect(path('claude-desktop', 'win32', 'C:\\Users\\u', { APPDATA: 'C:\\Users\\u\\AppData\\Roaming' })).toBe(
      'C:\\Users\\u\\AppData\\Roaming\\Claude\\claude_desktop_config.json',
    );
    expect(path('claude-desktop', 'linux', '/home/u')).toBe('/home/u/.config/Claude/claude_desktop_config.json');
    expect(path('claude-code', 'linux', '/home/u')).toBe('/home/u/.claude.json');
    expect(path('claude-code', 'linux', '/home/u', { CLAUDE_CONFIG_DIR: '/cfg/claude' })).toBe('/cfg/claude/.claude.json');
    expect(path('claude-code', 'win32', 'C:\\Users\\u')).toBe('C:\\Users\\u\\.claude.json');
    expect(path('cursor', 'win32', 'C:\\Users\\u')).toBe('C:\\Users\\u\\.cursor\\mcp.json');
    expect(path('vscode', 'darwin', '/Users/u')).toBe('/Users/u/Library/Application Support/Code/User/mcp.json');
    expect(path('vscode', 'linux', '/home/u', { XDG_CONFIG_HOME: '/xdg' })).toBe('/xdg/Code/User/mcp.json');
    expect(path('vscode', 'win32', 'C:\\Users\\u')).toBe('C:\\Users\\u\\AppData\\Roaming\\Code\\User\\mcp.json');
    expect(path('windsurf', 'darwin', '/Users/u')).toBe('/Users/u/.codeium/windsurf/mcp_config.json');
    expect(() => findClient('emacs')).toThrow(
      /Unknown client "emacs". Choose one of: claude-desktop, claude-code, cursor, vscode, windsurf/,
    );
    expect(findClient('VS Code').id).toBe('vscode');
  });
});

describe('limbic connect through the built CLI', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('limbic-connect-cli-');
  });
  afterEach(() => tmp.cleanup());

  it('writes an entry a real MCP client can start, and says so once', async () => {
    const file = join(tmp.dir, 'claude_desktop_config.json');
    writeFileSync(file, JSON.stringify({ mcpServers: { other: { command: 'x' } } }, null, 2));
    const db = join(tmp.dir, 'memory.db');
    const env = { ...process.env, LIMBIC_DB: '', HOME: tmp.dir };
    const first = await exec(process.execPath, [CLI, 'connect', 'claude-desktop', '--config', file, '--db', db], { env });
    expect(first.stderr).toMatch(/Added "memory" in .*claude_desktop_config\.json \(backup: .*\.bak-\d{8}T\d{6}Z\)/);
    const second = await exec(process.execPath, [CLI, 'connect', 'claude-desktop', '--config', file, '--db', db], { env });
    expect(second.stderr).toMatch(/Nothing to change/);
    const printed = await exec(process.execPath, [CLI, 'connect', 'claude-desktop', '--config', file, '--print'], { env });
    expect(JSON.parse(printed.stdout)).toMatchObject({ mcpServers: { memory: { command: process.execPath } } });

    const entry = (JSON.parse(readFileSync(file, 'utf8')) as { mcpServers: { memory: { command: string; args: string[] } } }).mcpServers
      .memory;
    expect(entry.command).toBe(process.execPath);
    expect(existsSync(entry.args[0] ?? '')).toBe(true);
    const transport = new StdioClientTransport({
      command: entry.command,
      args: entry.args,
      env: { PATH: process.env.PATH ?? '', LIMBIC_NO_MODEL: '1' },
      stderr: 'ignore',
    });
    const client = new Client({ name: 'connect-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name)).toContain('search_nodes');
      await client.callTool({
        name: 'create_entities',
        arguments: { entities: [{ name: 'Connected', entityType: 'test', observations: ['via limbic connect'] }] },
      });
    } finally {
      await client.close();
    }
    // The server used the database named in the entry.
    expect(statSync(db).size).toBeGreaterThan(0);
  });
});

describe('limbic connect run from npx', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('limbic-connect-npx-');
  });
  afterEach(() => tmp.cleanup());

  /** The layout `npx -y ./limbic-0.1.0.tgz` leaves (npm 11): a folder per spec, its package.json naming the tarball relative to it. */
  function npxInstall(): { main: string; node: string; npxCli: string } {
    const root = join(tmp.dir, 'home', '.npm', '_npx', '3f2a9c1b7d');
    const main = join(root, 'node_modules', 'limbic', 'dist', 'cli', 'main.js');
    mkdirSync(join(main, '..'), { recursive: true });
    writeFileSync(main, '');
    writeFileSync(
      join(root, 'package.json'),
      JSON.stringify({ dependencies: { limbic: 'file:../../../../work/limbic-0.1.0.tgz' }, _npx: { packages: ['./limbic-0.1.0.tgz'] } }),
    );
    const bin = join(tmp.dir, 'node', 'bin');
    const npxCli = join(tmp.dir, 'node', 'lib', 'node_modules', 'npm', 'bin', 'npx-cli.js');
    mkdirSync(join(npxCli, '..'), { recursive: true });
    mkdirSync(bin, { recursive: true });
    writeFileSync(npxCli, '');
    writeFileSync(join(bin, 'node'), '');
    symlinkSync(npxCli, join(bin, 'npx'));
    return { main, node: join(bin, 'node'), npxCli };
  }

  /** The PATH npm gives a bin it runs through npx: its own folders first, then the user's. */
  const npmRunPath = (dir: string) =>
    [
      join(dir, 'home', '.npm', '_npx', '3f2a9c1b7d', 'node_modules', '.bin'),
      join(dir, 'work', 'node_modules', '.bin'),
      '/usr/lib/node_modules/npm/node_modules/@npmcli/run-script/lib/node-gyp-bin',
      '/home/me/.cargo/bin',
      '/usr/bin',
      '/bin',
    ].join(':');

  it('starts Limbic through npx with the tarball it came from, not from the cache that may be cleared', () => {
    const { main, node, npxCli } = npxInstall();
    const launcher = npxLauncher(main, node, { PATH: npmRunPath(tmp.dir) });
    const tarball = join(tmp.dir, 'work', 'limbic-0.1.0.tgz');
    expect(launcher).toMatchObject({
      command: node,
      args: [realpathSync(npxCli), '--yes', `--package=file:${tarball}`, '--', 'limbic'],
    });
    const file = join(tmp.dir, 'claude.json');
    const result = connectClient({ client: findClient('claude-code'), launcher: launcher!, configFile: file, where: where(tmp.dir) });
    const entry = (JSON.parse(readFileSync(file, 'utf8')) as { mcpServers: Record<string, { args: string[]; env: object }> }).mcpServers
      .memory;
    expect(entry?.args.join(' ')).not.toContain('_npx');
    expect(result.messages.join('\n')).toContain("runs from npx's cache");
  });

  it("writes only the PATH the entry needs, never npm's run-time PATH, and says how to depend on neither npx nor the tarball (issue 33)", () => {
    const { main, node } = npxInstall();
    const launcher = npxLauncher(main, node, { PATH: npmRunPath(tmp.dir) });
    const file = join(tmp.dir, 'claude.json');
    const result = connectClient({ client: findClient('claude-code'), launcher: launcher!, configFile: file, where: where(tmp.dir) });
    const entry = (JSON.parse(readFileSync(file, 'utf8')) as { mcpServers: Record<string, { env: { PATH: string } }> }).mcpServers.memory;
    // This Node's folder, then the system's: nothing of npm's, nothing of the user's shell.
    expect(entry?.env).toEqual({ PATH: `${join(node, '..')}:/usr/local/bin:/usr/bin:/bin`, ONNXRUNTIME_NODE_INSTALL: 'skip' });
    const said = result.messages.join('\n');
    const tarball = join(tmp.dir, 'work', 'limbic-0.1.0.tgz');
    expect(said).toContain(`keep ${tarball} where it is`);
    expect(said).toContain(`ONNXRUNTIME_NODE_INSTALL=skip npm i -g ${tarball}, then "limbic connect" with the same options`);
  });

  it('a registry install is started by its version range; a Limbic outside any npx cache is left to thisLimbic', () => {
    const { main, node } = npxInstall();
    writeFileSync(join(main, '..', '..', '..', '..', '..', 'package.json'), JSON.stringify({ dependencies: { limbic: '^0.1.0' } }));
    expect(npxLauncher(main, node)?.args).toContain('--package=limbic@^0.1.0');
    expect(npxLauncher(main, node)?.note).toContain('(from the registry). For an entry that depends on neither and starts at once');
    expect(npxLauncher(main, node)?.note).toContain('ONNXRUNTIME_NODE_INSTALL=skip npm i -g "limbic@^0.1.0"');
    expect(npxLauncher('/opt/limbic/dist/cli/main.js', node)).toBeUndefined();
  });
});
