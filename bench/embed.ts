/**
 * `npm run bench:embed [-- --model ID]`: the embedding engine on this machine, as Limbic runs it.
 * - load time and memory of the model;
 * - query encode latency (10 words), in the server's worker thread and on the caller's thread;
 * - entities/s for short (~20 tokens) and long (~200 tokens) entity texts, in the server's
 *   configuration (a worker thread with one core fewer than the machine) and in `limbic reembed`'s
 *   (every core);
 * - server spawn to its first search_semantic answer over MCP stdio.
 * Writes bench/results/embed-<date>-<model>.md.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Embedder, EntityInput } from '../src/embed/embedder.js';
import { ThreadedEmbedder } from '../src/embed/onnx/threaded-embedder.js';
import { BENCH_MODEL, loadModel } from './quality/harness.js';

const ROOT = join(import.meta.dirname, '..');
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const CORES = availableParallelism();
const SERVER_THREADS = Math.max(1, CORES - 1);

const quantile = (xs: readonly number[], q: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))] ?? NaN;

const WORDS = (
  'the quarterly budget review meeting moved to thursday afternoon alice prefers tea over coffee and speaks fluent spanish ' +
  'deployment pipeline runs integration tests before every release sourdough bread needs a long cold fermentation ' +
  'team decided to use sqlite for the knowledge graph renew the domain name before it expires next month hiking trip ' +
  'mountains postponed because of the storm customer asked for an export of all invoices from last year'
).split(' ');
let seed = 11;
const next = (): number => (seed = (seed * 16807) % 2147483647) / 2147483647;
const words = (n: number): string => Array.from({ length: n }, () => WORDS[Math.floor(next() * WORDS.length)]).join(' ');

/** ~20 tokens: one short observation. ~200 tokens: six observations of 25 words. */
const SHAPES = { short: { observations: 1, words: 12 }, long: { observations: 6, words: 25 } } as const;
const entities = (shape: keyof typeof SHAPES, n: number): EntityInput[] =>
  Array.from({ length: n }, (_, i) => ({
    entity: {
      name: `Note ${shape} ${i}`,
      entityType: 'note',
      observations: Array.from({ length: SHAPES[shape].observations }, () => words(SHAPES[shape].words)),
    },
    relations: [],
  }));

async function rate(e: Embedder, items: readonly EntityInput[], chunk: number): Promise<number> {
  await e.embedEntities(items.slice(0, 4)); // warm
  const t0 = performance.now();
  for (let i = 0; i < items.length; i += chunk) await e.embedEntities(items.slice(i, i + chunk));
  return items.length / ((performance.now() - t0) / 1000);
}

async function encodeLatency(e: Embedder, runs: number): Promise<{ p50: number; p95: number }> {
  const query = 'how do I configure the database connection pool size properly';
  for (let i = 0; i < 5; i++) await e.embed([query], 'query');
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await e.embed([`${query} ${i}`], 'query');
    times.push(performance.now() - t0);
  }
  return { p50: quantile(times, 0.5), p95: quantile(times, 0.95) };
}

/** Spawn the built server on a prepared database and time it to the first search_semantic answer. */
async function coldStart(runs: number): Promise<{ handshake: number; firstResult: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'limbic-bench-cold-'));
  const db = join(dir, 'memory.db');
  const file = join(dir, 'memory.jsonl');
  writeFileSync(
    file,
    Array.from({ length: 200 }, (_, i) =>
      JSON.stringify({ type: 'entity', name: `Note ${i}`, entityType: 'note', observations: [words(12)] }),
    ).join('\n'),
  );
  const env = { ...process.env, LIMBIC_MODEL: BENCH_MODEL } as Record<string, string>;
  execFileSync(process.execPath, [CLI, '--db', db, 'import', file], { stdio: 'ignore', env });
  execFileSync(process.execPath, [CLI, '--db', db, 'reembed'], { stdio: 'ignore', env });
  const handshakes: number[] = [];
  const firsts: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const client = new Client({ name: 'bench', version: '1' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, '--db', db], env, stderr: 'ignore' }));
    handshakes.push(performance.now() - t0);
    await client.callTool({ name: 'search_semantic', arguments: { query: 'bread baking', limit: 5 } });
    firsts.push(performance.now() - t0);
    await client.close();
  }
  rmSync(dir, { recursive: true, force: true });
  return { handshake: quantile(handshakes, 0.5), firstResult: quantile(firsts, 0.5) };
}

const rssBefore = process.memoryUsage().rss;
const loads: number[] = [];
for (let i = 0; i < 3; i++) {
  const t0 = performance.now();
  await loadModel(CORES);
  loads.push(performance.now() - t0);
}
const local = await loadModel(CORES);
const rssLoaded = process.memoryUsage().rss;
const t0 = performance.now();
const threaded = await ThreadedEmbedder.start({
  model: {
    modelDir: local.description.location,
    cacheDir: join(homedir(), '.cache', 'limbic', 'models'),
    modelId: local.id,
    allowRemote: false,
    threads: SERVER_THREADS,
  },
});
const workerLoad = performance.now() - t0;

const short = entities('short', 160);
const long = entities('long', 48);
const tokens = (items: readonly EntityInput[]): number =>
  Math.round(
    items.reduce((s, x) => s + local.countTokens(`${x.entity.name} (note) | ${x.entity.observations.join(' | ')}`), 0) / items.length,
  );

const rows: [string, string][] = [
  ['model load, caller thread (median of 3)', `${quantile(loads, 0.5).toFixed(0)} ms`],
  ["model load in the server's worker thread", `${workerLoad.toFixed(0)} ms`],
  ['RSS growth with the model loaded (caller thread)', `${((rssLoaded - rssBefore) / 1e6).toFixed(0)} MB`],
];
const serverEncode = await encodeLatency(threaded, 100);
const localEncode = await encodeLatency(local, 100);
rows.push(
  [
    `query encode p50 / p95, server worker (${SERVER_THREADS} thread${SERVER_THREADS === 1 ? '' : 's'})`,
    `${serverEncode.p50.toFixed(1)} / ${serverEncode.p95.toFixed(1)} ms`,
  ],
  [`query encode p50 / p95, caller thread (${CORES} threads)`, `${localEncode.p50.toFixed(1)} / ${localEncode.p95.toFixed(1)} ms`],
);
for (const [label, items] of [
  ['short', short],
  ['long', long],
] as const) {
  rows.push(
    [
      `entities/s, ${label} (~${tokens(items)} tokens), server worker (${SERVER_THREADS} thread${SERVER_THREADS === 1 ? '' : 's'}, batches of 32)`,
      (await rate(threaded, items, 32)).toFixed(1),
    ],
    [
      `entities/s, ${label} (~${tokens(items)} tokens), limbic reembed (${CORES} threads, batches of 32)`,
      (await rate(local, items, 32)).toFixed(1),
    ],
  );
}
await threaded.close();
const cold = await coldStart(3);
rows.push(
  ['server spawn → MCP handshake (median of 3)', `${cold.handshake.toFixed(0)} ms`],
  ['server spawn → first search_semantic answer (model load included)', `${cold.firstResult.toFixed(0)} ms`],
);

const report = [
  `# Embedding engine — ${new Date().toISOString().slice(0, 10)} — ${BENCH_MODEL}`,
  '',
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}. Model: ${local.id} (${local.description.location}).`,
  '',
  '| measure | value |',
  '|---|---|',
  ...rows.map(([k, v]) => `| ${k} | ${v} |`),
].join('\n');
console.log(report);
writeFileSync(join(ROOT, 'bench', 'results', `embed-${new Date().toISOString().slice(0, 10)}-${BENCH_MODEL}.md`), `${report}\n`);
