/**
 * `serve --http` is stateless (issue 28): two `limbic serve --http` processes on one PostgreSQL
 * database behind a balancer with no affinity. One client, of either protocol generation, sends
 * each request to the other process than the last; every write is seen by the next read wherever
 * it lands, and a token revoked (by `limbic token revoke`, a third process) is refused by both at
 * its next request.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from '../helpers/fixtures.js';
import { ERAS, httpClient } from '../helpers/mcp-eras.js';
import { startPgServer, type PgServer } from '../helpers/pg-server.js';
import { rawRequest } from './http-helpers.js';

const pgStarted = await startPgServer();
const pgServer: PgServer | undefined = 'url' in pgStarted ? pgStarted : undefined;
afterAll(async () => {
  await pgServer?.stop();
});
if (pgServer === undefined)
  describe('stateless serve --http on PostgreSQL', () => {
    it.skip(`skipped: ${'unavailable' in pgStarted ? pgStarted.unavailable : ''}`, () => undefined);
  });

const limbic = (url: string, ...args: string[]) =>
  spawnSync(process.execPath, [CLI, '--db', url, '--no-model', ...args], {
    encoding: 'utf8',
    env: { ...process.env, LIMBIC_NAMESPACE: '' },
  });

/** A `limbic serve --http` process on `url`, and the address it serves at. */
async function serveHttp(url: string): Promise<{ child: ChildProcess; base: string; stderr: () => string }> {
  const child = spawn(process.execPath, [CLI, '--db', url, '--no-model', 'serve', '--http', '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LIMBIC_NAMESPACE: '' },
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const started = Date.now();
  for (;;) {
    const base = /at (http:\/\/[^ ]+)\/mcp/.exec(stderr)?.[1];
    if (base !== undefined) return { child, base, stderr: () => stderr };
    if (child.exitCode !== null || Date.now() - started > 30_000) throw new Error(`serve --http did not start: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.runIf(pgServer !== undefined)('stateless serve --http: two processes on one PostgreSQL, no affinity', () => {
  let url: string;
  let token: string;
  let tokenId: string;
  let processes: { child: ChildProcess; base: string; stderr: () => string }[] = [];
  beforeAll(async () => {
    url = await (pgServer as PgServer).createDatabase();
    processes = await Promise.all([serveHttp(url), serveHttp(url)]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all(
      processes.map(({ child }) => {
        const exited = new Promise((resolve) => child.on('exit', resolve));
        child.kill('SIGTERM');
        return exited;
      }),
    );
    await pgServer?.dropDatabase(url);
  });
  let client: Client | undefined;
  afterEach(async () => {
    await client?.close().catch(() => undefined);
    client = undefined;
  });

  /**
   * A round-robin balancer in the client's fetch: request k goes to process k mod 2, whatever it
   * is (handshake, notification, call). `served` counts the requests each process answered.
   */
  const balancer = () => {
    const served = [0, 0];
    let next = 0;
    const fetch = (request: Request): Promise<Response> => {
      const target = next;
      next = (next + 1) % processes.length;
      served[target] = (served[target] ?? 0) + 1;
      const to = new URL(request.url);
      const base = new URL(processes[target]!.base);
      to.host = base.host;
      return globalThis.fetch(new Request(to, request));
    };
    return { fetch, served };
  };

  it.each(ERAS)('$name: every request may land on either process; each write is read back from the other', async ({ era }) => {
    const made = limbic(url, 'token', 'create', '--namespace', 'shared', '--label', era);
    expect(made.status, made.stderr).toBe(0);
    token = made.stdout.trim();
    const { fetch, served } = balancer();
    client = await httpClient(era, 'http://balancer.invalid/mcp', { token, fetch });
    const names: string[] = [];
    for (let i = 0; i < 6; i++) {
      const name = `${era}-${i}`;
      names.push(name);
      const written = await client.callTool({
        name: 'create_entities',
        arguments: { entities: [{ name, entityType: 'balanced', observations: [`written through request ${i}`] }] },
      });
      expect(written.isError, JSON.stringify(written.content)).toBeFalsy();
      // The next request goes to the other process: it reads what this one wrote.
      const opened = await client.callTool({ name: 'open_nodes', arguments: { names: [name] } });
      expect((opened.structuredContent as { entities: { name: string }[] }).entities.map((e) => e.name)).toEqual([name]);
    }
    const graph = await client.callTool({ name: 'read_graph', arguments: {} });
    const found = (graph.structuredContent as { entities: { name: string }[] }).entities.map((e) => e.name);
    expect(found).toEqual(expect.arrayContaining(names));
    expect(served[0]).toBeGreaterThanOrEqual(7);
    expect(served[1]).toBeGreaterThanOrEqual(7);
  });

  it("a token revoked by another process is refused by both at its next request (401), another token's calls go on", async () => {
    const doomed = limbic(url, 'token', 'create', '--namespace', 'shared', '--label', 'doomed');
    const kept = limbic(url, 'token', 'create', '--namespace', 'shared', '--label', 'kept');
    const doomedToken = doomed.stdout.trim();
    const { fetch } = balancer();
    client = await httpClient('modern', 'http://balancer.invalid/mcp', { token: doomedToken, fetch });
    expect((await client.callTool({ name: 'get_statistics', arguments: {} })).isError).toBeFalsy();
    tokenId = (JSON.parse(limbic(url, 'token', 'list', '--json').stdout) as { id: string; label?: string }[]).find(
      (t) => t.label === 'doomed',
    )!.id;
    expect(limbic(url, 'token', 'revoke', tokenId).status).toBe(0);
    // Both processes, one request each, through the same client: no cached session keeps it in.
    for (let i = 0; i < 2; i++) await expect(client.callTool({ name: 'get_statistics', arguments: {} })).rejects.toThrow(/401|not valid/);
    for (const { base } of processes) {
      const raw = await rawRequest(base, {
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${doomedToken}`,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } },
        }),
      });
      expect(raw.status).toBe(401);
    }
    const other = await httpClient('legacy', 'http://balancer.invalid/mcp', { token: kept.stdout.trim(), fetch: balancer().fetch });
    expect((await other.callTool({ name: 'get_statistics', arguments: {} })).isError).toBeFalsy();
    await other.close();
    for (const { stderr } of processes) {
      expect(stderr()).not.toContain(doomedToken);
      expect(stderr()).not.toContain(token);
    }
  });
});
