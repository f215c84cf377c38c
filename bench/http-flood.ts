/**
 * `npm run bench:http-flood`: the server's memory under a flood of concurrent calls (issue 26: 200
 * concurrent read_graph {compact:true} took the server from 458 to 1,682 MB). One server process
 * (built dist/, --no-model, a fresh database of --entities entities with five observations each),
 * then --calls concurrent read_graph {compact:true} calls: from one token, then spread over eight.
 * Reports the server's RSS (Linux /proc) before, its peak while the calls are answered, and after,
 * and how many calls were answered or refused (429/503).
 *
 * --full asks for the whole graph instead; --slow-clients makes the clients read their answers only
 * 2 s after the last call is sent (clients slower than the server, where answers pile up); --cli
 * runs another build (an older one, to compare).
 *
 *   npm run bench:http-flood -- [--entities 3000] [--calls 400] [--full] [--slow-clients] [--cli dist/cli/main.js]
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const ROOT = join(import.meta.dirname, '..');
const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : (process.argv[i + 1] ?? fallback);
};
const ENTITIES = Number(arg('entities', '3000'));
const CALLS = Number(arg('calls', '400'));
const CLI = resolve(ROOT, arg('cli', join('dist', 'cli', 'main.js')));
/** Clients read their answers only once every call is sent and 2 s have passed: clients slower than the server. */
const SLOW = process.argv.includes('--slow-clients');
const ARGS = process.argv.includes('--full') ? {} : { compact: true };

const rssMb = (pid: number): number => {
  const line = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Math.round(Number(line?.[1] ?? NaN) / 1024);
};

/** The largest answer seen, to show what one call weighs. */
let answerBytes = 0;
let startReading: () => void = () => undefined;
let reading = Promise.resolve();

function post(url: string, token: string, sessionId: string, id: number): Promise<number> {
  const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'read_graph', arguments: ARGS } });
  const target = new URL(`${url}/mcp`);
  return new Promise((done) => {
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        method: 'POST',
        path: '/mcp',
        agent: false,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${token}`,
          'mcp-session-id': sessionId,
          'mcp-protocol-version': '2025-06-18',
        },
      },
      (res) => {
        if (SLOW) {
          res.pause();
          void reading.then(() => res.resume());
        }
        let bytes = 0;
        res.on('data', (c: Buffer) => (bytes += c.length));
        res.on('end', () => {
          answerBytes = Math.max(answerBytes, bytes);
          done(res.statusCode ?? 0);
        });
      },
    );
    req.on('error', () => done(0));
    req.end(body);
  });
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'limbic-http-flood-'));
  const common = [CLI, '--db', join(dir, 'memory.db'), '--no-model'];
  const tokens = Array.from({ length: 8 }, () =>
    spawnSync(process.execPath, [...common, 'token', 'create', '--namespace', 'default'], { encoding: 'utf8' }).stdout.trim(),
  );
  // One process: its RSS is the server's (with workers, the primary answers nothing and holds little).
  const server = spawn(process.execPath, [...common, 'serve', '--http', '--host', '127.0.0.1', '--port', '0', '--workers', '1'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  process.on('exit', () => server.kill('SIGKILL'));
  let log = '';
  server.stderr.on('data', (d: Buffer) => (log += d.toString()));
  while (!/at (http:\/\/\S+)\/mcp/.test(log)) {
    if (server.exitCode !== null) throw new Error(`the server did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const url = /at (http:\/\/\S+)\/mcp/.exec(log)![1]!;
  const sessions: string[] = [];
  for (const token of tokens) {
    const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    const client = new Client({ name: 'http-flood', version: '1' });
    await client.connect(transport);
    sessions.push(transport.sessionId!);
    if (sessions.length === 1) {
      for (let i = 0; i < ENTITIES; i += 100) {
        const entities = Array.from({ length: Math.min(100, ENTITIES - i) }, (_, k) => ({
          name: `entity ${i + k}`,
          entityType: ['person', 'project', 'place', 'idea'][(i + k) % 4]!,
          observations: Array.from({ length: 5 }, (_, o) => `observation ${o} of entity ${i + k}: ${'some remembered detail '.repeat(4)}`),
        }));
        await client.callTool({ name: 'create_entities', arguments: { entities } });
      }
    }
  }
  const flood = async (label: string, tokenCount: number): Promise<void> => {
    const before = rssMb(server.pid!);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(server.pid!))), 25);
    const started = Date.now();
    reading = new Promise((r) => (startReading = r));
    const calls = Array.from({ length: CALLS }, (_, i) => post(url, tokens[i % tokenCount]!, sessions[i % tokenCount]!, i + 1));
    setTimeout(() => startReading(), SLOW ? 2_000 : 0);
    const statuses = await Promise.all(calls);
    clearInterval(sampler);
    const seconds = (Date.now() - started) / 1000;
    await new Promise((r) => setTimeout(r, 2_000));
    const after = rssMb(server.pid!);
    const count = (s: number): number => statuses.filter((x) => x === s).length;
    console.log(
      `${label}: RSS before ${before} MB, peak ${peak} MB, 2 s after ${after} MB; answered ${count(200)}, 429 ${count(429)}, 503 ${count(503)}, other ${CALLS - count(200) - count(429) - count(503)}; ${seconds.toFixed(1)} s`,
    );
  };
  await flood('one token', 1);
  await flood('eight tokens', 8);
  console.log(
    `${CLI}: ${ENTITIES} entities, ${CALLS} concurrent read_graph ${JSON.stringify(ARGS)}${SLOW ? ', slow clients' : ''}, answers up to ${Math.round(answerBytes / 1024)} KiB`,
  );
  server.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
