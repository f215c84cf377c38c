/**
 * `npm run bench:http`: load on `limbic serve --http` beside the HTTP floor, loopback only.
 *
 * For each mix and client count, one server process (built dist/, a fresh database) takes CLIENTS
 * SDK clients over Streamable HTTP, each making CALLS calls one after another, all clients at once;
 * then the floor (bench/latency/http-floor-server.ts: the same node:http + SDK stateless stack,
 * answering each tool with an answer of Limbic's recorded in that run, so the same size) takes the
 * very same calls. Limbic ÷ floor is what Limbic adds over what any server on this stack pays.
 *
 * Mixes: `mixed` is the calls of every earlier run (writes, searches, reads; 20 % hybrid_search);
 * `light` is the calls that touch a few rows: create_entities of 3 entities, open_nodes of one,
 * search_nodes whose answer is one entity, get_statistics.
 *
 * Reports, per mix and client count, the median over --runs of: errors, calls/s, p50/p99 of all
 * calls and per tool, for Limbic and the floor, and their ratios. Lost writes: every acknowledged
 * entity and observation is looked up on Limbic afterwards. Where a tail comes from: `--explain`
 * asks hybrid_search for its stage times; the report has this process's event-loop delay (a busy
 * client inflates every latency it measures) and Limbic's slowest calls with when they started.
 * Bounded: it stops at --max-seconds whatever happened.
 *
 *   npm run bench:http -- [--mix light|mixed|both] [--clients 50|1,50] [--calls N] [--runs 1]
 *                         [--no-floor] [--no-model] [--explain] [--cli dist/cli/main.js]
 *                         [--cpu-prof DIR] [--max-seconds 900] [--out report.json]
 *
 * --calls is per client (default: 2000 calls in all, at least 40 per client). --cli serves another
 * build (a checkout of main, to measure before and after in one way). --cpu-prof writes Limbic's
 * CPU profile of each run into DIR; it covers the server's whole life, the lost-write check after
 * the load included (an open_nodes of every name written): read the load's seconds only.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { cpuMs } from './proc-stats.js';

const ROOT = join(import.meta.dirname, '..');
const FLOOR = join(ROOT, 'bench', 'latency', 'http-floor-server.ts');
const text = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1];
};
const arg = (name: string, fallback: number): number => Number(text(name) ?? fallback);
const CLI = text('cli') ?? join(ROOT, 'dist', 'cli', 'main.js');
const CLIENT_COUNTS = (text('clients') ?? '50').split(',').map(Number);
const CALLS_ARG = text('calls');
const RUNS = arg('runs', 1);
const MIX_ARG = text('mix') ?? 'both';
const MIXES: readonly Mix[] = MIX_ARG === 'both' ? ['light', 'mixed'] : [MIX_ARG as Mix];
const MAX_SECONDS = arg('max-seconds', 900);
const NO_MODEL = process.argv.includes('--no-model');
const NO_FLOOR = process.argv.includes('--no-floor');
const EXPLAIN = process.argv.includes('--explain');
const CPU_PROF = text('cpu-prof');
type Mix = 'light' | 'mixed';
if (MIXES.some((m) => m !== 'light' && m !== 'mixed')) throw new Error('--mix is light, mixed or both');
const callsPer = (clients: number): number => (CALLS_ARG === undefined ? Math.max(40, Math.ceil(2000 / clients)) : Number(CALLS_ARG));

const WORDS = ['garden', 'river', 'engine', 'violin', 'harbour', 'comet', 'lantern', 'meadow', 'copper', 'glacier', 'orchard', 'falcon'];
const pick = <T>(xs: readonly T[], n: number): T => xs[n % xs.length]!;

interface Call {
  tool: string;
  args: Record<string, unknown>;
  wrote?: { entities?: string[]; observation?: [string, string] };
}

/** The mix of every earlier run. Deterministic per (client, call): the same run makes the same calls. */
function mixedCall(client: number, n: number, mine: string[]): Call {
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
      wrote: { entities: [name] },
    };
  }
  const own = pick(mine, n * 31);
  if (r < 40) {
    const note = `${pick(WORDS, n * 3)} follow-up ${client}/${n}`;
    return {
      tool: 'add_observations',
      args: { observations: [{ entityName: own, contents: [note] }] },
      wrote: { observation: [own, note] },
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

/**
 * Light calls only: a few rows each. Names are `lc<client>n<call>k<i>z`, none a part of another,
 * so a search_nodes for one finds that entity alone.
 */
function lightCall(client: number, n: number, mine: string[]): Call {
  const r = (client * 7919 + n * 104_729) % 100;
  if (r < 30 || mine.length === 0) {
    const names = [0, 1, 2].map((k) => `lc${client}n${n}k${k}z`);
    return {
      tool: 'create_entities',
      args: {
        entities: names.map((name, k) => ({
          name,
          entityType: pick(['note', 'person', 'place'], n + k),
          observations: [`${pick(WORDS, client + n + k)} noted by client ${client} at call ${n}`],
        })),
      },
      wrote: { entities: names },
    };
  }
  const own = pick(mine, n * 31);
  if (r < 55) return { tool: 'open_nodes', args: { names: [own] } };
  if (r < 80) return { tool: 'search_nodes', args: { query: own, limit: 5 } };
  return { tool: 'get_statistics', args: {} };
}

const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
const median = (xs: number[]): number => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const round = (x: number, digits = 1): number => +x.toFixed(digits);

interface Figures {
  calls: number;
  errors: number;
  callsPerSecond: number;
  p50_ms: number;
  p99_ms: number;
  /** The server's CPU time (user + system) during the load, per call: all its threads, and its main thread alone (summed over its worker processes under --workers). */
  cpuMsPerCall: number;
  mainThreadCpuMsPerCall: number;
  perTool: Record<string, { calls: number; p50_ms: number; p99_ms: number }>;
}
interface LoadRun extends Figures {
  firstErrors: string[];
  lostEntities: number;
  lostObservations: number;
  acknowledgedEntities: number;
  clientEventLoopDelay_ms: { p50: number; p99: number; max: number };
  slowestCalls: { tool: string; startS: number; ms: number }[];
  stages: Record<string, { p50: number; p99: number }>;
  /** Per tool, answers seen (for the floor): up to 64, with their size. */
  answers: Map<string, { bytes: number; result: CallToolResult }[]>;
}

/** Starts a server process and waits for the URL it prints on stderr. */
async function started(child: ChildProcess, pattern: RegExp): Promise<{ url: string; log: () => string }> {
  let log = '';
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  while (!pattern.test(log)) {
    if (child.exitCode !== null) throw new Error(`the server did not start:\n${log}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { url: pattern.exec(log)![1]!, log: () => log };
}

const children = new Set<ChildProcess>();
// Whatever ends this process (a failure included) ends the servers too.
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  children.delete(child);
}

/**
 * The server's processes: itself and, under `--workers N`, the workers it forked (each serves
 * requests on its own main thread, so the primary's figures alone would miss them).
 */
function serverProcesses(pid: number): number[] {
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    // No such file on this kernel: the process alone.
  }
  return [pid, ...children];
}

/** CPU ms of all the server's processes: all threads, or each process's main thread. */
const serverCpuMs = (pids: readonly number[], mainThreads = false): number =>
  pids.reduce((sum, p) => sum + cpuMs(p, mainThreads ? p : undefined), 0);

/** CLIENTS clients making the mix's calls against `mcpUrl`; `check` looks every write up afterwards. */
async function load(
  mcpUrl: string,
  token: string | undefined,
  mix: Mix,
  clientCount: number,
  check: boolean,
  pid: number,
): Promise<LoadRun> {
  const nextCall = mix === 'light' ? lightCall : mixedCall;
  const calls = callsPer(clientCount);
  const connect = async () => {
    const client = new Client({ name: 'http-load', version: '1' });
    const headers: Record<string, string> = token === undefined ? {} : { Authorization: `Bearer ${token}` };
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers } }));
    return client;
  };
  const clients = await Promise.all(Array.from({ length: clientCount }, connect));
  // Before the clock: one write and one search, so the model is loaded and the first calls pay no start.
  await clients[0]!.callTool({
    name: 'create_entities',
    arguments: { entities: [{ name: 'warm-up', entityType: 'note', observations: ['a warm-up note'] }] },
  });
  await clients[0]!.callTool({ name: mix === 'light' ? 'search_nodes' : 'hybrid_search', arguments: { query: 'warm-up note' } });
  const latencies = new Map<string, number[]>();
  const errors: string[] = [];
  const entities: string[] = [];
  const observations: [string, string][] = [];
  const stages = new Map<string, number[]>();
  const slowest: { tool: string; startS: number; ms: number }[] = [];
  const answers = new Map<string, { bytes: number; result: CallToolResult }[]>();
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const pids = serverProcesses(pid);
  const cpu0 = serverCpuMs(pids);
  const main0 = serverCpuMs(pids, true);
  const t0All = performance.now();
  await Promise.all(
    clients.map(async (client, c) => {
      const mine: string[] = [];
      for (let n = 0; n < calls; n++) {
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
          slowest.push({ tool: call.tool, startS: round((t0 - t0All) / 1000), ms: Math.round(ms) });
          const seen = answers.get(call.tool) ?? answers.set(call.tool, []).get(call.tool)!;
          if (seen.length < 64) seen.push({ bytes: JSON.stringify(result).length, result });
          const stagesMs = (result.structuredContent as { stats?: { stages_ms?: Record<string, number> } } | undefined)?.stats?.stages_ms;
          for (const [stage, v] of Object.entries(stagesMs ?? {})) (stages.get(stage) ?? stages.set(stage, []).get(stage)!).push(v);
          if (call.wrote?.entities !== undefined) {
            mine.push(...call.wrote.entities);
            entities.push(...call.wrote.entities);
          }
          if (call.wrote?.observation !== undefined) observations.push(call.wrote.observation);
        } catch (error) {
          errors.push(`${call.tool}: ${error instanceof Error ? error.message : String(error)}`.slice(0, 300));
        }
      }
    }),
  );
  const seconds = (performance.now() - t0All) / 1000;
  const cpu = serverCpuMs(pids) - cpu0;
  const mainCpu = serverCpuMs(pids, true) - main0;
  loopDelay.disable();
  let lostEntities = 0;
  let lostObservations = 0;
  if (check) {
    // Lost writes: every acknowledged entity and observation, looked up after the load.
    const found = new Map<string, Set<string>>();
    for (let i = 0; i < entities.length; i += 500) {
      const graph = (await clients[0]!.callTool({ name: 'open_nodes', arguments: { names: entities.slice(i, i + 500) } }))
        .structuredContent as { entities: { name: string; observations: string[] }[] };
      for (const e of graph.entities) found.set(e.name, new Set(e.observations));
    }
    lostEntities = entities.filter((name) => !found.has(name)).length;
    lostObservations = observations.filter(([name, note]) => found.get(name)?.has(note) !== true).length;
  }
  await Promise.all(clients.map((c) => c.close()));
  const all = [...latencies.values()].flat().sort((a, b) => a - b);
  const perTool = Object.fromEntries(
    [...latencies].sort().map(([tool, ms]) => {
      const s = ms.sort((a, b) => a - b);
      return [tool, { calls: s.length, p50_ms: round(quantile(s, 0.5), 2), p99_ms: round(quantile(s, 0.99), 2) }];
    }),
  );
  return {
    calls: clientCount * calls,
    errors: errors.length,
    firstErrors: errors.slice(0, 5),
    callsPerSecond: round((clientCount * calls) / seconds),
    cpuMsPerCall: round(cpu / (clientCount * calls), 2),
    mainThreadCpuMsPerCall: round(mainCpu / (clientCount * calls), 2),
    p50_ms: round(quantile(all, 0.5), 2),
    p99_ms: round(quantile(all, 0.99), 2),
    perTool,
    lostEntities,
    lostObservations,
    acknowledgedEntities: entities.length,
    clientEventLoopDelay_ms: {
      p50: round(loopDelay.percentile(50) / 1e6),
      p99: round(loopDelay.percentile(99) / 1e6),
      max: round(loopDelay.max / 1e6),
    },
    slowestCalls: slowest.sort((a, b) => b.ms - a.ms).slice(0, 6),
    stages: Object.fromEntries(
      [...stages].sort().map(([stage, ms]) => {
        const s = ms.sort((a, b) => a - b);
        return [stage, { p50: round(quantile(s, 0.5)), p99: round(quantile(s, 0.99)) }];
      }),
    ),
    answers,
  };
}

async function limbicRun(mix: Mix, clientCount: number, run: number): Promise<LoadRun> {
  const dir = mkdtempSync(join(tmpdir(), 'limbic-http-load-'));
  try {
    const common = [CLI, '--db', join(dir, 'memory.db'), ...(NO_MODEL ? ['--no-model'] : [])];
    const token = spawnSync(process.execPath, [...common, 'token', 'create', '--namespace', 'load'], { encoding: 'utf8' }).stdout.trim();
    const prof =
      CPU_PROF === undefined
        ? []
        : ['--cpu-prof', '--cpu-prof-dir', CPU_PROF, '--cpu-prof-name', `limbic-${mix}-${clientCount}-${run}.cpuprofile`];
    const server = spawn(process.execPath, [...prof, ...common, 'serve', '--http', '--host', '127.0.0.1', '--port', '0'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.add(server);
    const { url } = await started(server, /at (http:\/\/\S+)\/mcp/);
    const result = await load(`${url}/mcp`, token, mix, clientCount, true, server.pid!);
    await stop(server);
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function floorRun(mix: Mix, clientCount: number, from: LoadRun): Promise<LoadRun> {
  const dir = mkdtempSync(join(tmpdir(), 'limbic-http-floor-'));
  try {
    // Each tool's answer of median size among those Limbic gave in this run.
    const answers = Object.fromEntries(
      [...from.answers].map(([tool, seen]) => [tool, [...seen].sort((a, b) => a.bytes - b.bytes)[Math.floor(seen.length / 2)]!.result]),
    );
    const file = join(dir, 'answers.json');
    writeFileSync(file, JSON.stringify(answers));
    const server = spawn(process.execPath, ['--import', 'tsx', FLOOR, file], { stdio: ['ignore', 'ignore', 'pipe'], cwd: ROOT });
    children.add(server);
    const { url } = await started(server, /listening at (http:\/\/\S+\/mcp)/);
    const result = await load(url, undefined, mix, clientCount, false, server.pid!);
    await stop(server);
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The median of each figure over runs (each tool's too). */
function medianOf(runs: readonly Figures[]): Figures {
  const tools = [...new Set(runs.flatMap((r) => Object.keys(r.perTool)))].sort();
  return {
    calls: median(runs.map((r) => r.calls)),
    errors: median(runs.map((r) => r.errors)),
    callsPerSecond: round(median(runs.map((r) => r.callsPerSecond))),
    p50_ms: round(median(runs.map((r) => r.p50_ms)), 2),
    p99_ms: round(median(runs.map((r) => r.p99_ms)), 2),
    cpuMsPerCall: round(median(runs.map((r) => r.cpuMsPerCall)), 2),
    mainThreadCpuMsPerCall: round(median(runs.map((r) => r.mainThreadCpuMsPerCall)), 2),
    perTool: Object.fromEntries(
      tools.map((tool) => {
        const of = runs.map((r) => r.perTool[tool]).filter((t) => t !== undefined);
        return [
          tool,
          {
            calls: median(of.map((t) => t.calls)),
            p50_ms: round(median(of.map((t) => t.p50_ms)), 2),
            p99_ms: round(median(of.map((t) => t.p99_ms)), 2),
          },
        ];
      }),
    ),
  };
}

const ratio = (a: number, b: number): number => round(a / b, 2);

async function main(): Promise<void> {
  const deadline = setTimeout(() => {
    console.error(`http-load: stopped at the ${MAX_SECONDS} s bound`);
    process.exit(2);
  }, MAX_SECONDS * 1000);
  const cases: Record<string, unknown>[] = [];
  const tables: string[] = [];
  let failed = false;
  for (const mix of MIXES)
    for (const clientCount of CLIENT_COUNTS) {
      const limbic: LoadRun[] = [];
      const floor: LoadRun[] = [];
      // Other work on the machine slows both servers alike, but is said with the figures.
      const loadBefore = loadavg().map((x) => round(x));
      for (let run = 0; run < RUNS; run++) {
        console.error(`http-load: ${mix}, ${clientCount} clients, run ${run + 1}/${RUNS}: limbic`);
        const l = await limbicRun(mix, clientCount, run);
        limbic.push(l);
        if (!NO_FLOOR) {
          console.error(`http-load: ${mix}, ${clientCount} clients, run ${run + 1}/${RUNS}: floor`);
          floor.push(await floorRun(mix, clientCount, l));
        }
      }
      const lm = medianOf(limbic);
      const fm = NO_FLOOR ? undefined : medianOf(floor);
      const lost = limbic.reduce((n, r) => n + r.lostEntities + r.lostObservations, 0);
      failed ||= limbic.some((r) => r.errors > 0) || lost > 0;
      const limbicOverFloor =
        fm === undefined
          ? undefined
          : {
              timePerCall: ratio(fm.callsPerSecond, lm.callsPerSecond),
              p50: ratio(lm.p50_ms, fm.p50_ms),
              p99: ratio(lm.p99_ms, fm.p99_ms),
              cpuPerCall: ratio(lm.cpuMsPerCall, fm.cpuMsPerCall),
              mainThreadCpuPerCall: ratio(lm.mainThreadCpuMsPerCall, fm.mainThreadCpuMsPerCall),
              perTool: Object.fromEntries(
                Object.entries(lm.perTool).map(([tool, t]) => {
                  const f = fm.perTool[tool];
                  return [tool, f === undefined ? null : { p50: ratio(t.p50_ms, f.p50_ms), p99: ratio(t.p99_ms, f.p99_ms) }];
                }),
              ),
            };
      cases.push({
        mix,
        clients: clientCount,
        callsPerClient: callsPer(clientCount),
        runs: RUNS,
        loadAverage: { before: loadBefore, after: loadavg().map((x) => round(x)) },
        limbic: lm,
        ...(fm === undefined ? {} : { floor: fm, limbicOverFloor }),
        lostEntities: limbic.map((r) => r.lostEntities),
        lostObservations: limbic.map((r) => r.lostObservations),
        acknowledgedEntities: limbic.map((r) => r.acknowledgedEntities),
        limbicPerRun: limbic.map((r) => ({
          callsPerSecond: r.callsPerSecond,
          p50_ms: r.p50_ms,
          p99_ms: r.p99_ms,
          cpuMsPerCall: r.cpuMsPerCall,
          mainThreadCpuMsPerCall: r.mainThreadCpuMsPerCall,
          errors: r.errors,
        })),
        floorPerRun: floor.map((r) => ({
          callsPerSecond: r.callsPerSecond,
          p50_ms: r.p50_ms,
          p99_ms: r.p99_ms,
          cpuMsPerCall: r.cpuMsPerCall,
        })),
        firstErrors: limbic.flatMap((r) => r.firstErrors).slice(0, 5),
        floorErrors: floor.map((r) => r.errors),
        clientEventLoopDelay_ms: limbic.map((r) => r.clientEventLoopDelay_ms),
        slowestCalls: limbic.map((r) => r.slowestCalls),
        ...(EXPLAIN ? { hybridSearchStages_ms: limbic.map((r) => r.stages) } : {}),
      });
      const rows = Object.entries(lm.perTool).map(([tool, t]) => {
        const f = fm?.perTool[tool];
        return f === undefined
          ? `| \`${tool}\` | ${t.calls} | ${t.p50_ms} | ${t.p99_ms} | | | |`
          : `| \`${tool}\` | ${t.calls} | ${t.p50_ms} | ${t.p99_ms} | ${f.p50_ms} | ${f.p99_ms} | ${ratio(t.p50_ms, f.p50_ms)} / ${ratio(t.p99_ms, f.p99_ms)} |`;
      });
      tables.push(
        [
          `### ${mix}, ${clientCount} client${clientCount === 1 ? '' : 's'} (median of ${RUNS})`,
          '',
          `Load average ${loadBefore.join(', ')} before, ${loadavg()
            .map((x) => round(x))
            .join(', ')} after. ` +
            `Limbic ${lm.callsPerSecond} calls/s, p50 ${lm.p50_ms} ms, p99 ${lm.p99_ms} ms, CPU ${lm.cpuMsPerCall} ms a call (main thread ${lm.mainThreadCpuMsPerCall}), ${lm.errors} errors, ${lost} lost writes` +
            (fm === undefined
              ? ''
              : `; floor ${fm.callsPerSecond} calls/s, p50 ${fm.p50_ms} ms, p99 ${fm.p99_ms} ms, CPU ${fm.cpuMsPerCall} ms a call; Limbic ÷ floor: time per call ${limbicOverFloor!.timePerCall}, p50 ${limbicOverFloor!.p50}, p99 ${limbicOverFloor!.p99}, CPU a call ${limbicOverFloor!.cpuPerCall} (main thread ${limbicOverFloor!.mainThreadCpuPerCall})`),
          '',
          '| tool | calls | Limbic p50 ms | Limbic p99 ms | floor p50 ms | floor p99 ms | Limbic ÷ floor (p50 / p99) |',
          '|---|---|---|---|---|---|---|',
          ...rows,
        ].join('\n'),
      );
    }
  clearTimeout(deadline);
  const report = {
    date: new Date().toISOString(),
    command: `npm run bench:http -- ${process.argv.slice(2).join(' ')}`.trim(),
    cli: CLI,
    model: NO_MODEL ? 'none (keyword only)' : 'default (multilingual-e5-small)',
    cases,
  };
  const out = text('out');
  if (out !== undefined) writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  console.log(JSON.stringify(report, null, 2));
  console.log(`\n${tables.join('\n\n')}`);
  process.exitCode = failed ? 1 : 0;
}

await main();
