/**
 * `npm run bench:http`: load on `limbic serve --http`, loopback only. One server process (built
 * dist/, a fresh database); CLIENTS SDK clients over Streamable HTTP, each making CALLS mixed calls
 * (writes, searches, reads) one after another, all clients at once. Reports errors, lost writes
 * (every acknowledged entity and observation is looked up afterwards), throughput and p50/p99 per
 * tool. Bounded: it stops at --max-seconds whatever happened.
 *
 * Where a tail comes from: `--explain` asks hybrid_search for its stage times (explain_query) and
 * reports their p50/p99 (catchUp is the wait for fresh entities' vectors, encode the query's); the
 * report always has this process's event-loop delay (a busy client inflates every latency it
 * measures) and the slowest calls with when they started, so a stall (tails at one moment) and a
 * queue (tails spread out) can be told apart.
 *
 *   npm run bench:http -- [--clients 50] [--calls 200] [--no-model] [--explain] [--max-seconds 600]
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

const ROOT = join(import.meta.dirname, '..');
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
};
const CLIENTS = arg('clients', 50);
const CALLS = arg('calls', 200);
const MAX_SECONDS = arg('max-seconds', 600);
const NO_MODEL = process.argv.includes('--no-model');
const EXPLAIN = process.argv.includes('--explain');

const WORDS = ['garden', 'river', 'engine', 'violin', 'harbour', 'comet', 'lantern', 'meadow', 'copper', 'glacier', 'orchard', 'falcon'];
const pick = <T>(xs: readonly T[], n: number): T => xs[n % xs.length]!;

/** Deterministic per (client, call): the same run makes the same calls. */
function nextCall(
  client: number,
  n: number,
  mine: string[],
): { tool: string; args: Record<string, unknown>; wrote?: { entity?: string; observation?: [string, string] } } {
  const r = (client * 7919 + n * 104_729) % 100;
  const word = pick(WORDS, client + n);
  if (r < 30 || mine.length === 0) {
    const name = `c${client}-e${n}`;
    return {
      tool: 'create_entities',
      args: {
        entities: [
          { name, entityType: pick(['note', 'person', 'place'], n), observations: [`${word} seen by client ${client} at call ${n}`] },
        ],
      },
      wrote: { entity: name },
    };
  }
  const own = pick(mine, n * 31);
  if (r < 40) {
    const text = `${pick(WORDS, n * 3)} follow-up ${client}/${n}`;
    return {
      tool: 'add_observations',
      args: { observations: [{ entityName: own, contents: [text] }] },
      wrote: { observation: [own, text] },
    };
  }
  if (r < 50) return { tool: 'create_relations', args: { relations: [{ from: own, to: pick(mine, n * 17), relationType: 'relates to' }] } };
  if (r < 70)
    return { tool: 'hybrid_search', args: { query: `${word} ${pick(WORDS, n)}`, limit: 10, ...(EXPLAIN ? { explain_query: true } : {}) } };
  if (r < 80) return { tool: 'search_nodes', args: { query: word, limit: 20 } };
  if (r < 90) return { tool: 'open_nodes', args: { names: [own] } };
  // Without a model search_semantic answers isError when no words match: it is not asked then.
  if (r < 95)
    return NO_MODEL
      ? { tool: 'hybrid_search', args: { query: word } }
      : { tool: 'search_semantic', args: { query: `something about a ${word}`, limit: 5 } };
  return { tool: 'get_statistics', args: {} };
}

const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'limbic-http-load-'));
  const db = join(dir, 'memory.db');
  const common = [CLI, '--db', db, ...(NO_MODEL ? ['--no-model'] : [])];
  const token = spawnSync(process.execPath, [...common, 'token', 'create', '--namespace', 'load'], { encoding: 'utf8' }).stdout.trim();
  const server = spawn(process.execPath, [...common, 'serve', '--http', '--host', '127.0.0.1', '--port', '0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // Whatever ends this process (a failure included) ends the server too.
  process.on('exit', () => server.kill('SIGKILL'));
  let log = '';
  server.stderr.on('data', (d: Buffer) => (log += d.toString()));
  const deadline = setTimeout(() => {
    console.error(`http-load: stopped at the ${MAX_SECONDS} s bound`);
    server.kill('SIGKILL');
    process.exit(2);
  }, MAX_SECONDS * 1000);
  while (!/at (http:\/\/\S+)\/mcp/.test(log)) {
    if (server.exitCode !== null) throw new Error(`the server did not start:\n${log}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const url = /at (http:\/\/\S+)\/mcp/.exec(log)![1]!;
  const connect = async () => {
    const client = new Client({ name: 'http-load', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
    );
    return client;
  };
  const clients = await Promise.all(Array.from({ length: CLIENTS }, connect));
  const latencies = new Map<string, number[]>();
  const errors: string[] = [];
  const entities: string[] = [];
  const observations: [string, string][] = [];
  const stages = new Map<string, number[]>();
  const slowest: { tool: string; startS: number; ms: number }[] = [];
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const started = performance.now();
  await Promise.all(
    clients.map(async (client, c) => {
      const mine: string[] = [];
      for (let n = 0; n < CALLS; n++) {
        const call = nextCall(c, n, mine);
        const t0 = performance.now();
        try {
          const result = (await client.callTool({ name: call.tool, arguments: call.args })) as CallToolResult;
          const ms = performance.now() - t0;
          if (result.isError === true) {
            errors.push(`${call.tool}: ${JSON.stringify(result.content).slice(0, 200)}`);
            continue;
          }
          (latencies.get(call.tool) ?? latencies.set(call.tool, []).get(call.tool)!).push(ms);
          slowest.push({ tool: call.tool, startS: +((t0 - started) / 1000).toFixed(1), ms: Math.round(ms) });
          const stagesMs = (result.structuredContent as { stats?: { stages_ms?: Record<string, number> } } | undefined)?.stats?.stages_ms;
          for (const [stage, v] of Object.entries(stagesMs ?? {})) (stages.get(stage) ?? stages.set(stage, []).get(stage)!).push(v);
          if (call.wrote?.entity !== undefined) {
            mine.push(call.wrote.entity);
            entities.push(call.wrote.entity);
          }
          if (call.wrote?.observation !== undefined) observations.push(call.wrote.observation);
        } catch (error) {
          errors.push(`${call.tool}: ${error instanceof Error ? error.message : String(error)}`.slice(0, 300));
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  loopDelay.disable();
  // Lost writes: every acknowledged entity and observation, looked up after the load.
  const checker = clients[0]!;
  const found = new Map<string, Set<string>>();
  for (let i = 0; i < entities.length; i += 500) {
    const graph = (await checker.callTool({ name: 'open_nodes', arguments: { names: entities.slice(i, i + 500) } })).structuredContent as {
      entities: { name: string; observations: string[] }[];
    };
    for (const e of graph.entities) found.set(e.name, new Set(e.observations));
  }
  const lostEntities = entities.filter((name) => !found.has(name)).length;
  const lostObservations = observations.filter(([name, text]) => found.get(name)?.has(text) !== true).length;
  await Promise.all(clients.map((c) => c.close()));
  server.kill('SIGTERM');
  await new Promise((resolve) => server.on('exit', resolve));
  clearTimeout(deadline);
  rmSync(dir, { recursive: true, force: true });

  const all = [...latencies.values()].flat().sort((a, b) => a - b);
  const perTool = Object.fromEntries(
    [...latencies].sort().map(([tool, ms]) => {
      const s = ms.sort((a, b) => a - b);
      return [tool, { calls: s.length, p50_ms: +quantile(s, 0.5).toFixed(2), p99_ms: +quantile(s, 0.99).toFixed(2) }];
    }),
  );
  const report = {
    date: new Date().toISOString(),
    command: `npm run bench:http -- --clients ${CLIENTS} --calls ${CALLS}${NO_MODEL ? ' --no-model' : ''}`,
    model: NO_MODEL ? 'none (keyword only)' : 'default (multilingual-e5-small)',
    clients: CLIENTS,
    callsPerClient: CALLS,
    calls: CLIENTS * CALLS,
    errors: errors.length,
    firstErrors: errors.slice(0, 5),
    acknowledgedEntities: entities.length,
    acknowledgedObservations: observations.length,
    lostEntities,
    lostObservations,
    seconds: +seconds.toFixed(2),
    callsPerSecond: +((CLIENTS * CALLS) / seconds).toFixed(1),
    p50_ms: +quantile(all, 0.5).toFixed(2),
    p99_ms: +quantile(all, 0.99).toFixed(2),
    perTool,
    clientEventLoopDelay_ms: {
      p50: +(loopDelay.percentile(50) / 1e6).toFixed(1),
      p99: +(loopDelay.percentile(99) / 1e6).toFixed(1),
      max: +(loopDelay.max / 1e6).toFixed(1),
    },
    ...(EXPLAIN
      ? {
          hybridSearchStages_ms: Object.fromEntries(
            [...stages].sort().map(([stage, ms]) => {
              const s = ms.sort((a, b) => a - b);
              return [stage, { p50: +quantile(s, 0.5).toFixed(1), p99: +quantile(s, 0.99).toFixed(1) }];
            }),
          ),
        }
      : {}),
    slowestCalls: slowest.sort((a, b) => b.ms - a.ms).slice(0, 12),
  };
  console.log(JSON.stringify(report, null, 2));
  const out = process.argv.indexOf('--out');
  if (out >= 0) writeFileSync(process.argv[out + 1]!, `${JSON.stringify(report, null, 2)}\n`);
  process.exitCode = errors.length === 0 && lostEntities === 0 && lostObservations === 0 ? 0 : 1;
}

await main();
