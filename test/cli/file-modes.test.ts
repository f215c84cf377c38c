/**
 * Every file Limbic makes for a memory is its owner's alone (0600, folders 0700; issue 35, item 9):
 * the database with its -wal and -shm, the other namespaces and their folder, the token file, the
 * side files (.keywords, .vectors), an export, and the data folder itself. Made through the built
 * CLI under the usual umask (022, which left them 0644 and 0755), with the real model so the
 * vector file is written. `limbic doctor` names files an older Limbic made readable, with the fix.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI, tempDir } from '../helpers/fixtures.js';

const modeOf = (path: string): string => (statSync(path).mode & 0o777).toString(8);

/** The built CLI under umask 022, so what it makes without a mode of its own shows as 0644 / 0755. */
const command = (args: readonly string[]): [string, string[]] => [
  '/bin/sh',
  ['-c', 'umask 022 && exec "$0" "$@"', process.execPath, CLI, ...args],
];

describe('file modes of a memory (issue 35: files 0600, folders 0700)', () => {
  let dir: string;
  let cleanup: () => void;
  let env: NodeJS.ProcessEnv;
  let data: string;
  beforeEach(() => {
    ({ dir, cleanup } = tempDir('limbic-modes-'));
    data = join(dir, 'xdg', 'data');
    // No --db: the default data folder, made by Limbic. The model stays where it is installed.
    env = { ...process.env, XDG_DATA_HOME: data, LIMBIC_DB: '', LIMBIC_NAMESPACE: '' };
  });
  afterEach(() => cleanup());

  const limbic = (...args: string[]) => {
    const [file, argv] = command(args);
    const run = spawnSync(file, argv, { encoding: 'utf8', env });
    expect(run.status, run.stderr).toBe(0);
    return run;
  };

  it('makes the data folder, memories, namespaces, tokens, side files and exports private', async () => {
    const memory = join(dir, 'memory.jsonl');
    writeFileSync(memory, '{"type":"entity","name":"Alice","entityType":"person","observations":["likes green tea"]}\n');
    limbic('--no-model', 'import', memory);
    limbic('--no-model', '--namespace', 'work', 'import', memory);
    limbic('--no-model', 'token', 'create', '--namespace', 'work');
    const out = join(dir, 'out.jsonl');
    limbic('--no-model', 'export', out);

    // A stdio session with the real model: the -wal and -shm while it runs, the side files it saves on leaving.
    const [file, argv] = command(['serve']);
    const server = spawn(file, argv, { stdio: ['pipe', 'pipe', 'pipe'], env });
    const replies = new Map<number, unknown>();
    let buffered = '';
    server.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const reply = JSON.parse(buffered.slice(0, nl)) as { id: number };
        replies.set(reply.id, reply);
        buffered = buffered.slice(nl + 1);
      }
    });
    const ask = async (id: number, method: string, params: object): Promise<unknown> => {
      server.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      await expect.poll(() => replies.has(id), { timeout: 60_000 }).toBe(true);
      return replies.get(id);
    };
    const limbicFolder = join(data, 'limbic');
    const db = join(limbicFolder, 'memory.db');
    try {
      await ask(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'modes', version: '0' } });
      server.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
      await ask(2, 'tools/call', {
        name: 'create_entities',
        arguments: { entities: [{ name: 'Bob', entityType: 'person', observations: ['drinks coffee'] }] },
      });
      expect(JSON.stringify(await ask(3, 'tools/call', { name: 'search_semantic', arguments: { query: 'a hot drink' } }))).toContain(
        '"mode\\":\\"hybrid',
      );
      await ask(4, 'tools/call', { name: 'hybrid_search', arguments: { query: 'coffee' } });
      expect({ wal: modeOf(`${db}-wal`), shm: modeOf(`${db}-shm`) }).toEqual({ wal: '600', shm: '600' });
    } finally {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.stdin.end();
      await exited;
    }

    const modes = Object.fromEntries(
      [
        join(dir, 'xdg'),
        data,
        limbicFolder,
        db,
        `${db}.keywords`,
        `${db}.vectors`,
        join(limbicFolder, 'memory.namespaces'),
        join(limbicFolder, 'memory.namespaces', 'work.db'),
        join(limbicFolder, 'memory.tokens.db'),
        out,
      ].map((path) => [path.slice(dir.length), modeOf(path)]),
    );
    expect(modes).toEqual({
      '/xdg': '700',
      '/xdg/data': '700',
      '/xdg/data/limbic': '700',
      '/xdg/data/limbic/memory.db': '600',
      '/xdg/data/limbic/memory.db.keywords': '600',
      '/xdg/data/limbic/memory.db.vectors': '600',
      '/xdg/data/limbic/memory.namespaces': '700',
      '/xdg/data/limbic/memory.namespaces/work.db': '600',
      '/xdg/data/limbic/memory.tokens.db': '600',
      '/out.jsonl': '600',
    });
  }, 120_000);

  it('limbic doctor warns of files an older Limbic left readable, with the chmod that fixes them', () => {
    const memory = join(dir, 'memory.jsonl');
    writeFileSync(memory, '{"type":"entity","name":"Alice","entityType":"person","observations":["likes green tea"]}\n');
    mkdirSync(join(dir, 'old'));
    const db = join(dir, 'old', 'memory.db');
    limbic('--no-model', '--db', db, 'import', memory);
    limbic('--no-model', '--db', db, '--namespace', 'work', 'import', memory);
    const privacy = () => {
      const run = spawnSync(process.execPath, [CLI, '--no-model', '--db', db, 'doctor', '--json'], { encoding: 'utf8', env });
      return (JSON.parse(run.stdout) as { checks: { name: string; status: string; detail: string; fix?: string }[] }).checks.find(
        (c) => c.name === 'privacy',
      );
    };
    expect(privacy()).toMatchObject({ status: 'ok' });
    // As an older Limbic made them.
    chmodSync(db, 0o644);
    chmodSync(join(dir, 'old', 'memory.namespaces'), 0o755);
    const warned = privacy();
    expect(warned).toMatchObject({ status: 'warn' });
    expect(warned?.detail).toContain(db);
    expect(warned?.fix).toContain(`chmod go-rwx ${JSON.stringify(db)}`);
    expect(warned?.fix).toContain(`chmod -R go-rwx ${JSON.stringify(join(dir, 'old', 'memory.namespaces'))}`);
    const fix = spawnSync('/bin/sh', ['-c', (warned?.fix ?? '').replace(/ \(owner-only.*$/, '')], { encoding: 'utf8' });
    expect(fix.status, fix.stderr).toBe(0);
    expect(privacy()).toMatchObject({ status: 'ok' });
  });
});
