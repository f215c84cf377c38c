/**
 * `npm run bench:http-fairness`: does one token's flood slow another namespace? (issue 35, item 12: 64
 * connections of tiny calls from a read-only token put another namespace's light call at p50
 * 514 ms / p99 1,029 ms, idle 10–20 ms; 200 concurrent large reads made it take 7.2 s.)
 *
 * One server process (built dist/, --no-model): namespace "default" holds --entities entities with
 * five observations each; namespace "other" holds a few. A read-only token of "default" floods;
 * a token of "other" calls get_statistics one call at a time (--samples calls, 20 ms apart) and
 * its latency is reported as p50/p99:
 *   idle    nobody else calls;
 *   tiny    64 connections each sending get_statistics as fast as answers come back;
 *   large   200 connections each sending read_graph (the whole graph, --limit entities) likewise.
 * A flooder sends its next call as soon as any answer (200, 429, 503) arrives: it does not honour
 * Retry-After. The target: the other namespace's light call within 3x its idle latency.
 *
 * --seconds S ends a phase's sampling after S seconds (at least 5 samples taken);
 * --runs N repeats everything on fresh servers and reports each figure's median over the runs;
 * --cli runs another build (an older one, to compare).
 *
 *   flock /tmp/limbic-bench.lock npm run bench:http-fairness -- [--entities 2000] [--limit 2000] [--samples 60] [--seconds 30] [--runs 3] [--cli dist/cli/main.js]
 */
import { fork, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : (process.argv[i + 1] ?? fallback);
};
const ENTITIES = Number(arg('entities', '2000'));
const LIMIT = Number(arg('limit', '1000'));
const SAMPLES = Number(arg('samples', '60'));
const RUNS = Number(arg('runs', '3'));
/** A phase stops sampling after this long (at least 5 samples), so a flood that stalls calls for seconds still ends. */
const SECONDS = Number(arg('seconds', '30'));
const CLI = resolve(ROOT, arg('cli', join('dist', 'cli', 'main.js')));

interface Answer {
  readonly status: number;
  readonly bytes: number;
  readonly ms: number;
}

let nextId = 1;
/** One stateless 2025-era tools/call (no handshake: the server keeps no session). */
function call(url: URL, agent: Agent, token: string, name: string, args: Record<string, unknown>): Promise<Answer> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args } });
  const started = performance.now();
  return new Promise((done) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path: '/mcp',
        agent,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${token}`,
          'mcp-protocol-version': '2025-06-18',
        },
      },
      (res) => {
        let bytes = 0;
        res.on('data', (c: Buffer) => (bytes += c.length));
        res.on('end', () => done({ status: res.statusCode ?? 0, bytes, ms: performance.now() - started }));
      },
    );
    req.on('error', () => done({ status: 0, bytes: 0, ms: performance.now() - started }));
    req.end(body);
  });
}

const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
};
const median = (values: number[]): number => quantile(values, 0.5);

interface Phase {
  p50: number;
  p99: number;
  samples: number;
  /** Flood answers by status while the samples were taken. */
  statuses: Record<string, number>;
  floodBytes: number;
}

async function runOnce(): Promise<Record<string, Phase>> {
  const dir = mkdtempSync(join(tmpdir(), 'limbic-http-fairness-'));
  const common = [CLI, '--db', join(dir, 'memory.db'), '--no-model'];
  const token = (...extra: string[]): string =>
    spawnSync(process.execPath, [...common, 'token', 'create', ...extra], { encoding: 'utf8' }).stdout.trim();
  const owner = token('--namespace', 'default');
  const flooder = token('--namespace', 'default', '--read-only');
  const other = token('--namespace', 'other');
  const server = spawn(process.execPath, [...common, 'serve', '--http', '--host', '127.0.0.1', '--port', '0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const kill = (): void => void server.kill('SIGKILL');
  process.on('exit', kill);
  let log = '';
  server.stderr.on('data', (d: Buffer) => (log += d.toString()));
  while (!/at (http:\/\/\S+)\/mcp/.test(log)) {
    if (server.exitCode !== null) throw new Error(`the server did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const url = new URL(`${/at (http:\/\/\S+)\/mcp/.exec(log)![1]!}/mcp`);
  const setup = new Agent({ keepAlive: true, maxSockets: 4 });
  for (let i = 0; i < ENTITIES; i += 100) {
    const entities = Array.from({ length: Math.min(100, ENTITIES - i) }, (_, k) => ({
      name: `entity ${i + k}`,
      entityType: ['person', 'project', 'place', 'idea'][(i + k) % 4]!,
      observations: Array.from({ length: 5 }, (_, o) => `observation ${o} of entity ${i + k}: ${'some remembered detail '.repeat(4)}`),
    }));
    const a = await call(url, setup, owner, 'create_entities', { entities });
    if (a.status !== 200) throw new Error(`create_entities answered ${a.status}`);
  }
  const small = Array.from({ length: 5 }, (_, k) => ({ name: `other ${k}`, entityType: 'thing', observations: ['a detail'] }));
  await call(url, setup, other, 'create_entities', { entities: small });
  setup.destroy();

  const victim = new Agent({ keepAlive: true, maxSockets: 1 });
  const exited = (child: ReturnType<typeof fork>): Promise<unknown> =>
    child.exitCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', r));
  const sample = async (): Promise<number[]> => {
    const times: number[] = [];
    const until = performance.now() + SECONDS * 1000;
    for (let i = 0; i < SAMPLES && (i < 5 || performance.now() < until); i++) {
      const a = await call(url, victim, other, 'get_statistics', {});
      if (a.status !== 200) throw new Error(`the other namespace's get_statistics answered ${a.status}`);
      times.push(a.ms);
      await new Promise((r) => setTimeout(r, 20));
    }
    return times;
  };
  for (let i = 0; i < 10; i++) await call(url, victim, other, 'get_statistics', {}); // warm up

  const phase = async (connections: number, name: string, args: Record<string, unknown>): Promise<Phase> => {
    // The flood runs in a process of its own, so reading its answers never delays the samples' answers here.
    const child =
      connections > 0
        ? fork(process.argv[1]!, ['--flood', url.href, flooder, String(connections), name, JSON.stringify(args)], {
            execArgv: process.execArgv,
          })
        : undefined;
    if (child !== undefined) await new Promise((r) => child.once('message', r)); // the flood under way
    const report = new Promise<{ statuses: Record<string, number>; floodBytes: number }>((done) =>
      child === undefined
        ? done({ statuses: {}, floodBytes: 0 })
        : child.once('message', (m) => done(m as { statuses: Record<string, number>; floodBytes: number })),
    );
    const times = await sample();
    child?.send('stop');
    const { statuses, floodBytes } = await report;
    if (child !== undefined) await exited(child);
    await new Promise((r) => setTimeout(r, 500));
    return { p50: quantile(times, 0.5), p99: quantile(times, 0.99), samples: times.length, statuses, floodBytes };
  };
  const result = {
    idle: await phase(0, '', {}),
    tiny: await phase(64, 'get_statistics', {}),
    large: await phase(200, 'read_graph', { limit: LIMIT }),
  };
  victim.destroy();
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  process.off('exit', kill);
  rmSync(dir, { recursive: true, force: true });
  return result;
}

/** The flooding process: `connections` loops each sending its next call as soon as an answer arrives, until told to stop. */
async function flood(href: string, token: string, connections: number, name: string, args: Record<string, unknown>): Promise<void> {
  const url = new URL(href);
  const statuses: Record<string, number> = {};
  let floodBytes = 0;
  let flooding = true;
  let counting = false;
  process.on('message', () => (flooding = false));
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const loops = Array.from({ length: connections }, async () => {
    while (flooding) {
      const a = await call(url, agent, token, name, args);
      if (counting) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
      floodBytes = Math.max(floodBytes, a.bytes);
    }
  });
  await new Promise((r) => setTimeout(r, 1_000)); // the flood under way before the samples start
  counting = true;
  process.send!('flooding');
  await Promise.all(loops);
  agent.destroy();
  process.send!({ statuses, floodBytes });
  process.disconnect();
}

async function main(): Promise<void> {
  const at = process.argv.indexOf('--flood');
  if (at >= 0) {
    const [href, token, connections, name, args] = process.argv.slice(at + 1);
    await flood(href!, token!, Number(connections), name!, JSON.parse(args!) as Record<string, unknown>);
    return;
  }
  const runs: Record<string, Phase>[] = [];
  for (let r = 0; r < RUNS; r++) {
    const run = await runOnce();
    runs.push(run);
    for (const [name, p] of Object.entries(run)) {
      console.log(
        `run ${r + 1} ${name.padEnd(5)}: p50 ${p.p50.toFixed(1)} ms, p99 ${p.p99.toFixed(1)} ms (${p.samples} samples); flood answers ${JSON.stringify(p.statuses)}${p.floodBytes > 0 ? `, up to ${Math.round(p.floodBytes / 1024)} KiB` : ''}`,
      );
    }
  }
  console.log(`\n${CLI}: ${ENTITIES} entities, read_graph {limit: ${LIMIT}}, ${SAMPLES} samples per phase, median of ${RUNS} runs`);
  const idle = median(runs.map((r) => r.idle!.p50));
  for (const name of ['idle', 'tiny', 'large']) {
    const p50 = median(runs.map((r) => r[name]!.p50));
    const p99 = median(runs.map((r) => r[name]!.p99));
    console.log(
      `${name.padEnd(5)}: other namespace's get_statistics p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (p50 ${(p50 / idle).toFixed(1)}x idle)`,
    );
  }
  process.exit(0);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
