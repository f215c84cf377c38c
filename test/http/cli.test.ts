/** The commands as a user runs them: `limbic token …` and `limbic serve --http`, as child processes, on SQLite and PostgreSQL. */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI, tempDir } from '../helpers/fixtures.js';
import { skipNote, startPgServer, type PgServer } from '../helpers/pg-server.js';
import { connect } from './http-helpers.js';

const limbic = (db: string, ...args: string[]) =>
  spawnSync(process.execPath, [CLI, '--db', db, '--no-model', ...args], {
    encoding: 'utf8',
    env: { ...process.env, LIMBIC_NAMESPACE: '' },
  });

describe('limbic token and serve --http', () => {
  let dir: string;
  let cleanup: () => void;
  let db: string;
  beforeEach(() => {
    ({ dir, cleanup } = tempDir('limbic-http-cli-'));
    db = join(dir, 'memory.db');
  });
  afterEach(() => cleanup());

  it('token create prints the token once; list shows ids, never tokens; revoke removes it', () => {
    const made = limbic(db, 'token', 'create', '--namespace', 'work', '--read-only', '--label', 'laptop');
    expect(made.status).toBe(0);
    const token = made.stdout.trim();
    expect(token).toMatch(/^limbic_[A-Za-z0-9_-]{43}$/);
    expect(made.stderr).toMatch(/only time it is shown/);
    expect(existsSync(join(dir, 'memory.tokens.db'))).toBe(true);
    const list = limbic(db, 'token', 'list', '--json');
    const records = JSON.parse(list.stdout) as { id: string; namespace: string; readOnly: boolean; label: string }[];
    expect(records).toEqual([expect.objectContaining({ namespace: 'work', readOnly: true, label: 'laptop' })]);
    expect(list.stdout + list.stderr).not.toContain(token);
    expect(limbic(db, 'token', 'revoke', records[0]!.id).status).toBe(0);
    expect(JSON.parse(limbic(db, 'token', 'list', '--json').stdout)).toEqual([]);
    const bad = limbic(db, 'token', 'create', '--namespace', '../etc');
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/not a namespace name/);
  });

  it('on a wildcard address, says which Host names it answers to and how to add the LAN one (issue 25)', async () => {
    limbic(db, 'token', 'create', '--namespace', 'default');
    const child = spawn(process.execPath, [CLI, '--db', db, '--no-model', 'serve', '--http', '--host', '0.0.0.0', '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      await expect
        .poll(() => stderr, { timeout: 20_000 })
        .toMatch(/answers requests whose Host is one of: [^\n]*LAN name or address, add each with --allowed-host NAME/);
    } finally {
      const exited = new Promise((resolve) => child.on('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  });

  it('refuses to bind beyond loopback with no token, and says what to do', () => {
    const run = limbic(db, 'serve', '--http', '--host', '0.0.0.0', '--port', '0');
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/Refusing to listen on 0\.0\.0\.0 with no token configured.*limbic token create --namespace default/);
  });

  it('serves over HTTP, never logs a token, and stops cleanly on SIGTERM', async () => {
    const token = limbic(db, 'token', 'create', '--namespace', 'default').stdout.trim();
    const child = spawn(process.execPath, [CLI, '--db', db, '--no-model', 'serve', '--http', '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    await expect.poll(() => /at (http:\/\/[^ ]+)\/mcp/.exec(stderr)?.[1], { timeout: 20_000 }).toBeDefined();
    const url = /at (http:\/\/[^ ]+)\/mcp/.exec(stderr)![1]!;
    const c = await connect(url, token);
    await c.ok('create_entities', { entities: [{ name: 'Over HTTP', entityType: 'test', observations: ['from a child process'] }] });
    await expect(connect(url, 'limbic_wrong')).rejects.toThrow();
    await c.close();
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).toMatch(/stopping/);
    // The start says which Host names it answers to (issue 25).
    expect(stderr).toMatch(/answers requests whose Host is one of: .*localhost.*127\.0\.0\.1.*add others with --allowed-host NAME/);
    expect(stderr).not.toContain(token);
    expect(stderr).not.toContain('limbic_wrong');
    const exported = limbic(db, 'export');
    expect(exported.stdout).toContain('Over HTTP');
  });

  it('stdio and the other commands pick a namespace with --namespace or LIMBIC_NAMESPACE', () => {
    const file = join(dir, 'graph.jsonl');
    spawnSync('sh', ['-c', `printf '%s\\n' '{"type":"entity","name":"OnlyInWork","entityType":"t","observations":[]}' > ${file}`]);
    expect(limbic(db, '--namespace', 'work', 'import', file).status).toBe(0);
    expect(existsSync(join(dir, 'memory.namespaces', 'work.db'))).toBe(true);
    expect(limbic(db, '--namespace', 'work', 'export').stdout).toContain('OnlyInWork');
    expect(limbic(db, 'export').stdout).not.toContain('OnlyInWork');
    const viaEnv = spawnSync(process.execPath, [CLI, '--db', db, '--no-model', 'export'], {
      encoding: 'utf8',
      env: { ...process.env, LIMBIC_NAMESPACE: 'work' },
    });
    expect(viaEnv.stdout).toContain('OnlyInWork');
  });
});

const started = await startPgServer();
const pgServer: PgServer | undefined = 'url' in started ? started : undefined;
afterAll(async () => {
  await pgServer?.stop();
});

describe.runIf(pgServer !== undefined)(`limbic token and serve --http on PostgreSQL${skipNote(started)}`, () => {
  let url: string;
  beforeEach(async () => {
    url = await (pgServer as PgServer).createDatabase();
  });
  afterEach(async () => {
    await pgServer?.dropDatabase(url);
  });

  it('tokens live in the database; serve --http opens each token its namespace; stdio takes --namespace', async () => {
    const made = limbic(url, 'token', 'create', '--namespace', 'work', '--label', 'ci');
    expect(made.status, made.stderr).toBe(0);
    const token = made.stdout.trim();
    const records = JSON.parse(limbic(url, 'token', 'list', '--json').stdout) as { id: string; namespace: string }[];
    expect(records).toEqual([expect.objectContaining({ namespace: 'work', readOnly: false, label: 'ci' })]);
    expect(limbic(url, 'token', 'create', '--namespace', 'x'.repeat(57)).stderr).toMatch(/at most 56/);

    const child = spawn(process.execPath, [CLI, '--db', url, '--no-model', 'serve', '--http', '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    await expect.poll(() => /at (http:\/\/[^ ]+)\/mcp/.exec(stderr)?.[1], { timeout: 20_000 }).toBeDefined();
    const served = /at (http:\/\/[^ ]+)\/mcp/.exec(stderr)![1]!;
    const c = await connect(served, token);
    await c.ok('create_entities', { entities: [{ name: 'InWork', entityType: 'test', observations: ['over HTTP on PostgreSQL'] }] });
    await c.close();
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).not.toContain(token);

    expect(limbic(url, '--namespace', 'work', 'export').stdout).toContain('InWork');
    expect(limbic(url, 'export').stdout).not.toContain('InWork');
    expect(limbic(url, 'token', 'revoke', records[0]!.id).status).toBe(0);
    expect(JSON.parse(limbic(url, 'token', 'list', '--json').stdout)).toEqual([]);
  });
});
