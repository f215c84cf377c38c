/**
 * `npm run bench:soak`: does a server cost the same at its ten-thousandth call as at its first?
 *
 * One agent (an SDK client over stdio, one call after another, as an agent works) uses one built
 * server for many calls: writes (create_entities, add_observations, create_relations), searches
 * (search_semantic, hybrid_search, search_nodes) and reads (open_nodes), the model installed and
 * embedding the writes as they come. The calls are cut into windows; for each window the report
 * gives calls/s, p50 and p99, the server's CPU per call (all threads, and its main thread alone, from
 * /proc) and its resident memory at the window's end. A cost that grows with the calls made (a list
 * that is never freed, a scan of everything seen so far) shows as a main-thread CPU per call that
 * climbs from window to window: the last window ÷ the first is the headline. The memory grows as it
 * should (entities, vectors), so CPU is what to read.
 *
 * Found the need for it: secretlint's profiler kept every performance mark and scanned them all at
 * each new one (bench/results/http-load-2026-11-28-profiler.md); no benchmark ran a server long
 * enough to see it.
 *
 * Options: --calls N (6000), --window N (1000), --bin FILE (a built dist/cli/main.js; default this
 * checkout's, so another build can be measured by the same driver), --no-model, --json FILE.
 *
 *   flock /tmp/limbic-bench.lock npm run bench:soak -- --calls 6000
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { cpuMs, residentMb } from './proc-stats.js';

const ROOT = join(import.meta.dirname, '..');
const { values: args } = parseArgs({
  options: {
    calls: { type: 'string', default: '6000' },
    window: { type: 'string', default: '1000' },
    bin: { type: 'string', default: join(ROOT, 'dist', 'cli', 'main.js') },
    'no-model': { type: 'boolean', default: false },
    json: { type: 'string' },
  },
});
const CALLS = Number(args.calls);
const WINDOW = Number(args.window);

const WORDS = ['garden', 'river', 'engine', 'violin', 'harbour', 'comet', 'lantern', 'meadow', 'copper', 'glacier', 'orchard', 'falcon'];
const PLACES = ['Lisbon', 'Oslo', 'Kyoto', 'Quito', 'Accra', 'Perth'];
const pick = <T>(xs: readonly T[], n: number): T => xs[Math.abs(n) % xs.length] as T;

interface Call {
  readonly tool: string;
  readonly args: Record<string, unknown>;
}

/** The n-th call of the agent: deterministic, so two builds make the same calls. */
function callOf(n: number, made: number): Call {
  const r = (n * 7919) % 100;
  const word = pick(WORDS, n);
  const nameOf = (i: number): string => `note ${pick(WORDS, i)} ${i}`;
  const own = nameOf((n * 31) % Math.max(1, made));
  if (r < 20 || made === 0) {
    return {
      tool: 'create_entities',
      args: {
        entities: [0, 1].map((k) => ({
          name: nameOf(made + k),
          entityType: pick(['note', 'person', 'place'], n + k),
          observations: [`${pick(WORDS, n + k)} seen near ${pick(PLACES, n * 3 + k)} on call ${n}`],
        })),
      },
    };
  }
  if (r < 35) return { tool: 'add_observations', args: { observations: [{ entityName: own, contents: [`${word} again, call ${n}`] }] } };
  if (r < 40)
    return {
      tool: 'create_relations',
      args: { relations: [{ from: own, to: nameOf(n % made), relationType: 'relates to' }] },
    };
  if (r < 60) return { tool: 'search_semantic', args: { query: `what was seen near ${pick(PLACES, n)}`, limit: 5 } };
  if (r < 75) return { tool: 'hybrid_search', args: { query: `${word} ${pick(PLACES, n * 7)}`, limit: 10 } };
  if (r < 85) return { tool: 'search_nodes', args: { query: word, limit: 10 } };
  return { tool: 'open_nodes', args: { names: [own] } };
}

const quantile = (sorted: readonly number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
const round = (x: number, digits = 2): number => Number(x.toFixed(digits));

interface Window {
  readonly calls: string;
  readonly callsPerSecond: number;
  readonly p50_ms: number;
  readonly p99_ms: number;
  readonly cpuMsPerCall: number;
  readonly mainThreadCpuMsPerCall: number;
  readonly rssMb: number;
  readonly errors: number;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'limbic-soak-'));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [args.bin, '--db', join(dir, 'memory.db'), ...(args['no-model'] ? ['--no-model'] : [])],
    stderr: 'ignore',
  });
  const client = new Client({ name: 'soak', version: '1' });
  const windows: Window[] = [];
  try {
    await client.connect(transport);
    const pid = transport.pid;
    if (pid === null) throw new Error('the server has no pid');
    // The model loads in the background: wait for it, so that the first window is not the load.
    for (let i = 0; i < 600 && !args['no-model']; i++) {
      const stats = (await client.callTool({ name: 'get_statistics', arguments: {} })) as {
        structuredContent?: { embeddings?: { state?: string } };
      };
      if (stats.structuredContent?.embeddings?.state === 'ready') break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    let made = 0;
    for (let start = 0; start < CALLS; start += WINDOW) {
      const latencies: number[] = [];
      let errors = 0;
      const cpu0 = cpuMs(pid);
      const main0 = cpuMs(pid, pid);
      const t0 = performance.now();
      for (let n = start; n < Math.min(CALLS, start + WINDOW); n++) {
        const call = callOf(n, made);
        const t = performance.now();
        const result = (await client.callTool({ name: call.tool, arguments: call.args })) as { isError?: boolean };
        latencies.push(performance.now() - t);
        if (result.isError === true) errors++;
        else if (call.tool === 'create_entities') made += 2;
      }
      const seconds = (performance.now() - t0) / 1000;
      const count = latencies.length;
      latencies.sort((a, b) => a - b);
      const window: Window = {
        calls: `${start + 1}-${start + count}`,
        callsPerSecond: round(count / seconds, 1),
        p50_ms: round(quantile(latencies, 0.5)),
        p99_ms: round(quantile(latencies, 0.99)),
        cpuMsPerCall: round((cpuMs(pid) - cpu0) / count),
        mainThreadCpuMsPerCall: round((cpuMs(pid, pid) - main0) / count),
        rssMb: round(residentMb(pid), 0),
        errors,
      };
      windows.push(window);
      console.error(`soak: calls ${window.calls}: ${JSON.stringify(window)}`);
    }
  } finally {
    await client.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const first = windows[0];
  const last = windows.at(-1);
  console.log(`| calls | calls/s | p50 ms | p99 ms | CPU ms a call | main thread ms a call | RSS MB | errors |`);
  console.log(`|---|---:|---:|---:|---:|---:|---:|---:|`);
  for (const w of windows)
    console.log(
      `| ${w.calls} | ${w.callsPerSecond} | ${w.p50_ms} | ${w.p99_ms} | ${w.cpuMsPerCall} | ${w.mainThreadCpuMsPerCall} | ${w.rssMb} | ${w.errors} |`,
    );
  if (first !== undefined && last !== undefined)
    console.log(`\nlast window ÷ first, main thread CPU a call: ${round(last.mainThreadCpuMsPerCall / first.mainThreadCpuMsPerCall)}`);
  if (args.json !== undefined) writeFileSync(args.json, JSON.stringify({ bin: args.bin, calls: CALLS, window: WINDOW, windows }, null, 2));
}

await main();
