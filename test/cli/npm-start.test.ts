/**
 * Issue 33: `npm start` prints npm's banner ("> limbic@0.1.0 start ...") on stdout, which is the
 * MCP channel, so a client that starts a clone through npm reads lines that are not JSON-RPC. npm
 * leaves its banner out only with --silent, which no script can set; the README gives a client
 * `npm --prefix /path/to/limbic --silent start`. This launches exactly that, from another folder
 * as a client does, and reads every byte the server writes on stdout: the model install of
 * `prestart` must go to stderr too.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, tempDir } from '../helpers/fixtures.js';

describe('npm start as the README gives it to an MCP client', () => {
  const tmp = tempDir('limbic-npm-start-');
  afterAll(() => tmp.cleanup());

  it('is in the README', () => {
    expect(readFileSync(join(REPO_ROOT, 'README.md'), 'utf8')).toContain('`npm --prefix /path/to/limbic --silent start`');
  });

  it('writes nothing but JSON-RPC on stdout, from prestart to the answer', async () => {
    const child = spawn('npm', ['--prefix', REPO_ROOT, '--silent', 'start'], {
      cwd: tmp.dir,
      env: { ...process.env, LIMBIC_DB: join(tmp.dir, 'memory.db'), npm_config_update_notifier: 'false' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const answered = new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        if (stdout.includes('\n')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`npm start exited (${code}) before answering: ${stderr}`)));
    });
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'npm-start-test', version: '1' } },
    };
    child.stdin.write(`${JSON.stringify(initialize)}\n`);
    try {
      await answered;
    } finally {
      child.stdin.end();
      child.kill('SIGTERM');
    }
    const lines = stdout.split('\n').filter((l) => l !== '');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line), `not JSON-RPC on stdout: ${line}`).not.toThrow();
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ jsonrpc: '2.0', id: 1, result: { serverInfo: { name: expect.any(String) } } });
    expect(stderr).toMatch(/is installed and verified|installed /); // prestart spoke, on stderr
  }, 120_000);
});
