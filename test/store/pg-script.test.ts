/**
 * Issue 25, item 6: `npm run -s postgres` stops PostgreSQL, and deletes its data, on SIGTERM or
 * SIGINT to the process the script starts (npm's PID), not only on Ctrl-C in a terminal.
 */
import { spawn } from 'node:child_process';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/fixtures.js';

/** Starts the script; resolves with its first stdout line (the URL) and the npm process. */
function startScript(): Promise<{ url: string; npm: ReturnType<typeof spawn>; exited: Promise<number | null> }> {
  const npm = spawn('npm', ['run', '-s', 'postgres'], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    npm.stderr?.on('data', (c: Buffer) => (err += c.toString()));
    npm.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line !== undefined) resolve({ url: line.trim(), npm, exited });
    });
    npm.once('exit', (code) => reject(new Error(`npm run postgres exited (${code}) before printing a URL: ${err.slice(-500)}`)));
  });
}

const reachable = async (url: string): Promise<boolean> => {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
};

describe('npm run postgres', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const)
    it(`stops PostgreSQL on ${signal} to npm's PID`, async () => {
      const { url, npm, exited } = await startScript();
      expect(url).toMatch(/^postgres:\/\//);
      expect(await reachable(url)).toBe(true);
      npm.kill(signal);
      await exited;
      // The server is gone (its data with it: stop() removes the folder once the server exited).
      await expect.poll(() => reachable(url), { timeout: 15_000, interval: 250 }).toBe(false);
    }, 90_000);
});
