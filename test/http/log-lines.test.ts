/**
 * What `limbic serve --http` writes to its log about a failing request (issue 35, item 10): the
 * method and the path, never the query string, which carries search text (GET /api/search?q=…) and
 * tokens some clients put there. A real server, as a child process, its stderr captured.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { connect as connectSocket } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pathOf } from '../../src/http/http-server.js';
import { CLI, tempDir } from '../helpers/fixtures.js';

describe('log lines of serve --http (issue 35: no query strings in logs)', () => {
  let dir: string;
  let cleanup: () => void;
  let child: ChildProcess | undefined;
  beforeEach(() => ({ dir, cleanup } = tempDir('limbic-log-lines-')));
  afterEach(async () => {
    if (child !== undefined && child.exitCode === null) {
      const exited = new Promise((resolve) => child?.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    cleanup();
  });

  it('pathOf keeps the path and drops the query string and fragment', () => {
    expect(pathOf('/api/search?q=secret&limit=5')).toBe('/api/search');
    expect(pathOf('/mcp#x?y')).toBe('/mcp');
    expect(pathOf('/mcp')).toBe('/mcp');
    expect(pathOf(undefined)).toBe('');
  });

  it('logs a request that failed mid-body by its path alone, without the search text or token in its query string', async () => {
    const db = join(dir, 'memory.db');
    const made = spawnSync(process.execPath, [CLI, '--db', db, '--no-model', 'token', 'create', '--namespace', 'default'], {
      encoding: 'utf8',
      env: { ...process.env, LIMBIC_NAMESPACE: '' },
    });
    expect(made.status, made.stderr).toBe(0);
    const token = made.stdout.trim();
    const server = spawn(process.execPath, [CLI, '--db', db, '--no-model', 'serve', '--http', '--port', '0'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, LIMBIC_NAMESPACE: '' },
    });
    child = server;
    let stderr = '';
    server.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    await expect.poll(() => stderr, { timeout: 30_000 }).toMatch(/serving MCP over HTTP at http:\/\/127\.0\.0\.1:\d+\/mcp/);
    const port = Number(/127\.0\.0\.1:(\d+)\/mcp/.exec(stderr)?.[1]);

    // A body cut short by the client: the request fails while its body is read. A client that
    // leaves before the server reaches its body is dropped unlogged, so it leaves later each time.
    for (let attempt = 1; attempt <= 10 && !/POST \S* failed/.test(stderr); attempt++) {
      const socket = connectSocket(port, '127.0.0.1');
      await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
      socket.write(
        [
          'POST /mcp?query=my+private+diagnosis&access_token=leaked-in-the-url HTTP/1.1',
          `Host: 127.0.0.1:${port}`,
          `Authorization: Bearer ${token}`,
          'Content-Type: application/json',
          'Accept: application/json, text/event-stream',
          'Content-Length: 10000',
          '',
          '{"jsonrpc":"2.0","id":1,',
        ].join('\r\n'),
      );
      await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      socket.destroy();
      await new Promise((resolve) => setTimeout(resolve, 200));
    }

    await expect.poll(() => stderr, { timeout: 30_000 }).toMatch(/POST \/mcp failed/);
    expect(stderr).not.toContain('diagnosis');
    expect(stderr).not.toContain('leaked-in-the-url');
    expect(stderr).not.toContain('?query');
  });
});
