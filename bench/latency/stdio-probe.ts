/**
 * Where a search_nodes call over MCP stdio spends its time, beside the floor server (floor-server.ts,
 * no search, same answers): the side-by-side benchmark's 10k graph and queries, without the
 * official server, the bulk loads and the other tools, so a change can be timed in a minute.
 *
 *   npx tsx bench/latency/stdio-probe.ts <dir> [size=10000] [runs=200]
 *   PROF=1   starts both servers under `node --cpu-prof` (profiles written to <dir>/prof and <dir>/prof-floor at exit)
 *   SHAPE=bench or SHAPE=broad   times one query shape only (a profile of that shape alone)
 *
 * The graph and its store are made in <dir> on the first run and reused afterwards. Needs
 * `npm run build` (the server is dist/cli/main.js).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { fmt, stat } from '../stats.js';
import { broadQueries, queries, writeGraph } from './generate.js';

const ROOT = join(import.meta.dirname, '..', '..');
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const FLOOR = join(ROOT, 'bench', 'latency', 'floor-server.ts');
const [dir = '', sizeArg = '10000', runsArg = '200'] = process.argv.slice(2);
if (dir === '') throw new Error('usage: stdio-probe.ts <dir> [size] [runs]');
const size = Number(sizeArg);
const runs = Number(runsArg);
const WARMUP = 5;

mkdirSync(dir, { recursive: true });
const jsonl = join(dir, 'memory.jsonl');
const db = join(dir, 'limbic.db');
if (!existsSync(db)) {
  await writeGraph(jsonl, size);
  execFileSync(process.execPath, [CLI, '--db', db, '--no-model', 'import', jsonl], { stdio: 'ignore' });
}
const entities = readFileSync(jsonl, 'utf8')
  .split('\n')
  .filter((l) => l.startsWith('{"type":"entity"'))
  .map((l) => JSON.parse(l) as { name: string; entityType: string; observations: string[] });
// The side-by-side benchmark's queries (run.ts: 25 of each shape).
const bench = queries(WARMUP + 20).map((q) => q.substring);
const broad = broadQueries(entities, WARMUP + 20).map((b) => b.query);
writeFileSync(join(dir, 'queries.json'), JSON.stringify([...bench, ...broad]));

async function connect(args: string[]): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args,
    env: process.env as Record<string, string>,
    stderr: 'pipe',
    maxBufferSize: 512 * 1024 * 1024,
  });
  const client = new Client({ name: 'probe', version: '1' });
  await client.connect(transport);
  return client;
}
const prof = (to: string): string[] => (process.env.PROF === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', join(dir, to)]);
const servers = {
  limbic: await connect([...prof('prof'), CLI, '--db', db, '--no-model']),
  floor: await connect([...prof('prof-floor'), '--import', 'tsx', FLOOR, jsonl, join(dir, 'queries.json')]),
};

for (const [label, qs] of [
  ['bench queries', bench],
  ['broad queries', broad],
] as const) {
  if (process.env.SHAPE !== undefined && !label.startsWith(process.env.SHAPE)) continue;
  const times = { limbic: [] as number[], floor: [] as number[] };
  for (let i = 0; i < WARMUP + runs; i++)
    for (const kind of ['limbic', 'floor'] as const) {
      const t0 = performance.now();
      await servers[kind].callTool({ name: 'search_nodes', arguments: { query: qs[i % qs.length] ?? 'kalo' } });
      if (i >= WARMUP) times[kind].push(performance.now() - t0);
    }
  const l = stat(times.limbic);
  const f = stat(times.floor);
  console.log(
    `${label}: Limbic p50 ${fmt(l.p50)} ms (p95 ${fmt(l.p95)}), floor p50 ${fmt(f.p50)} ms, Limbic ÷ floor ${(l.p50 / f.p50).toFixed(2)}`,
  );
}
await servers.limbic.close();
await servers.floor.close();
