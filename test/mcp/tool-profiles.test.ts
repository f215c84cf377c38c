/**
 * Issue 33 item 10: every conversation paid for the whole tool list (25.9 KB the model reads), with
 * no way to serve less. `--tools core` (LIMBIC_TOOLS=core) serves the official nine and
 * search_semantic; `all`, the default, every tool. Checked in process for both protocol eras, then
 * through the built CLI over stdio and HTTP, and through `limbic connect`, which carries the profile
 * into the client's entry.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CORE_TOOLS, OFFICIAL_TOOLS } from '../../src/mcp/server.js';
import { CLI, harness, tempDir } from '../helpers/fixtures.js';
import { ERAS, httpClient, stdioClient } from '../helpers/mcp-eras.js';

/** The budget of docs/tools.md for what the model reads of the core profile's list, in bytes of compact JSON. */
const CORE_MODEL_BYTES = 12_000;

const CORE = [...OFFICIAL_TOOLS, 'search_semantic'];

describe.each(ERAS)('the core tool profile ($name)', ({ era }) => {
  it('lists and answers the official nine and search_semantic only, within its budget', async () => {
    const h = await harness({ era, tools: 'core' });
    try {
      const { tools } = await h.client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([...CORE].sort());
      expect([...CORE_TOOLS].sort()).toEqual([...CORE].sort());
      const read = JSON.stringify(tools.map(({ outputSchema: _checked, ...shown }) => shown)).length;
      expect(read).toBeLessThanOrEqual(CORE_MODEL_BYTES);
      await h.ok('create_entities', { entities: [{ name: 'Core', entityType: 'test', observations: ['served by the core profile'] }] });
      expect((await h.ok<{ results: { name: string }[] }>('search_semantic', { query: 'core profile' })).results[0]?.name).toBe('Core');
      // A tool of the full set is not there to call.
      await expect(h.client.callTool({ name: 'hybrid_search', arguments: { query: 'core' } })).rejects.toThrow(
        /Tool hybrid_search not found/,
      );
    } finally {
      await h.close();
    }
  });
});

describe('the tool profile through the built CLI', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('limbic-tools-');
  });
  afterEach(() => tmp.cleanup());
  const env = (extra: Record<string, string> = {}): Record<string, string> => ({
    PATH: process.env.PATH ?? '',
    HOME: tmp.dir,
    LIMBIC_NO_MODEL: '1',
    ...extra,
  });

  it.each(ERAS)('serves it over stdio from --tools core and from LIMBIC_TOOLS=core ($name)', async ({ era }) => {
    const db = join(tmp.dir, 'memory.db');
    for (const [args, extra] of [
      [['--tools', 'core'], {}],
      [[], { LIMBIC_TOOLS: 'core' }],
    ] as const) {
      const client = await stdioClient(era, {
        command: process.execPath,
        args: [CLI, '--db', db, ...args],
        env: env(extra),
        stderr: 'ignore',
      });
      try {
        expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual([...CORE].sort());
      } finally {
        await client.close();
      }
    }
    // The default serves every tool.
    const all = await stdioClient(era, { command: process.execPath, args: [CLI, '--db', db], env: env(), stderr: 'ignore' });
    try {
      expect((await all.listTools()).tools.map((t) => t.name)).toContain('hybrid_search');
    } finally {
      await all.close();
    }
  });

  it('refuses a profile it does not know, naming the ones there are', () => {
    const db = join(tmp.dir, 'memory.db');
    for (const [args, extra, said] of [
      [['--tools', 'tiny'], {}, '--tools tiny'],
      [[], { LIMBIC_TOOLS: 'tiny' }, 'LIMBIC_TOOLS=tiny'],
    ] as const) {
      const run = spawnSync(process.execPath, [CLI, '--db', db, ...args, 'serve'], { encoding: 'utf8', env: env(extra), input: '' });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(`${said} is no tool profile: use "all" or "core"`);
    }
  });

  it.each(ERAS)('serves it over HTTP with serve --http --tools core ($name)', async ({ era }) => {
    const db = join(tmp.dir, 'memory.db');
    const token = spawnSync(process.execPath, [CLI, '--db', db, 'token', 'create', '--namespace', 'default'], {
      encoding: 'utf8',
      env: env(),
    }).stdout.trim();
    const child = spawn(process.execPath, [CLI, '--db', db, '--tools', 'core', 'serve', '--http', '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: env(),
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      await expect.poll(() => /at (http:\/\/[^ ]+)\/mcp/.exec(stderr)?.[1], { timeout: 30_000 }).toBeDefined();
      const url = `${/at (http:\/\/[^ ]+)\/mcp/.exec(stderr)?.[1] ?? ''}/mcp`;
      const client = await httpClient(era, url, { token });
      try {
        expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual([...CORE].sort());
      } finally {
        await client.close();
      }
    } finally {
      const exited = new Promise((resolve) => child.on('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  });

  it('limbic connect writes the profile into the client entry, from --tools or LIMBIC_TOOLS; the default adds nothing', () => {
    const file = join(tmp.dir, 'claude_desktop_config.json');
    writeFileSync(file, '{}');
    const connect = (args: readonly string[], extra: Record<string, string> = {}): string[] => {
      const run = spawnSync(process.execPath, [CLI, ...args, 'connect', 'claude-desktop', '--config', file], {
        encoding: 'utf8',
        env: env(extra),
      });
      expect(run.status, run.stderr).toBe(0);
      return (JSON.parse(readFileSync(file, 'utf8')) as { mcpServers: { memory: { args: string[] } } }).mcpServers.memory.args;
    };
    expect(connect(['--tools', 'core']).slice(-2)).toEqual(['--tools', 'core']);
    expect(connect([])).not.toContain('--tools');
    expect(connect([], { LIMBIC_TOOLS: 'core' }).slice(-2)).toEqual(['--tools', 'core']);
  });
});
