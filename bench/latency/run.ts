/**
 * `npm run bench` (bench/latency): Limbic at several graph sizes, and side by side with the
 * official server, on this machine. Writes bench/results/latency-<date>.md and .svg.
 *
 *   --sizes 10000,100000,1000000   graph sizes for Limbic alone
 *   --official 10000,50000         sizes for the side-by-side run (official server over stdio)
 *   --real-vectors-up-to 10000     sizes up to this get vectors from the real model; larger ones
 *                                  random unit vectors through the same store code path (labelled)
 *   --queries 50                   timed calls per operation (after 5 warm-up calls)
 *
 * Results of each size are kept in bench/results/latency-<date>.json as soon as they are measured,
 * merged with what earlier runs of the same day measured, so sizes can be run one at a time
 * (`npm run bench -- --sizes 1000000 --official ''`) and an interrupted run loses one size at most.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { noopLogger } from '../../src/core/logger.js';
import { LazyEmbedder, type Embedder } from '../../src/embed/embedder.js';
import { toHybridOptions } from '../../src/mcp/hybrid-options.js';
import { EmbeddingIndexer } from '../../src/service/embedding-indexer.js';
import { hybridSearch } from '../../src/service/search/hybrid-search.js';
import { MemoryService } from '../../src/service/memory-service.js';
import { searchSemantic } from '../../src/service/search/search-semantic.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { importFile } from '../../src/cli/import-file.js';
import { loadModel, memoizeQueries } from '../quality/harness.js';
import { entityName, queries, randomUnit, rng, writeGraph } from './generate.js';
import { logLogChart, type Series } from './svg-plot.js';

const ROOT = join(import.meta.dirname, '..', '..');
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const OFFICIAL = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js');

const args = process.argv.slice(2);
const opt = (name: string, fallback: string): string => {
  const i = args.indexOf(name);
  return i >= 0 ? (args[i + 1] ?? fallback) : fallback;
};
const list = (s: string): number[] => s.split(',').filter(Boolean).map(Number);
const SIZES = list(opt('--sizes', '10000,100000,1000000'));
const OFFICIAL_SIZES = list(opt('--official', '10000,50000'));
const REAL_UP_TO = Number(opt('--real-vectors-up-to', '10000'));
const RUNS = Number(opt('--queries', '50'));
const WARMUP = 5;

interface Stat {
  p50: number;
  p95: number;
}
const stat = (xs: number[]): Stat => {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: s[Math.floor(s.length / 2)] ?? NaN, p95: s[Math.min(s.length - 1, Math.floor(s.length * 0.95))] ?? NaN };
};
const f = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const log = (m: string) => process.stderr.write(`bench: ${m}\n`);

/** Times `fn` RUNS times after WARMUP calls; i is the call number (warm-ups included). */
async function time(fn: (i: number) => Promise<unknown>, runs = RUNS): Promise<Stat> {
  const times: number[] = [];
  for (let i = 0; i < WARMUP + runs; i++) {
    const t0 = performance.now();
    await fn(i);
    if (i >= WARMUP) times.push(performance.now() - t0);
  }
  return stat(times);
}

function vmHwm(pid: number | undefined): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

async function stdioClient(command: string[], env: Record<string, string> = {}) {
  // read_graph of a 10k-entity graph is over the SDK's default 10 MB message limit, for either server.
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: command,
    env: { ...process.env, ...env } as Record<string, string>,
    stderr: 'pipe',
    maxBufferSize: 512 * 1024 * 1024,
  });
  transport.stderr?.on('data', (d: Buffer) => {
    if (/error|warning/i.test(String(d))) process.stderr.write(`server: ${String(d)}`);
  });
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(transport);
  return { client, pid: transport.pid ?? undefined };
}

interface SizeResult {
  size: number;
  /** Wall time of this size's whole run (generate, import, vectors, timings, cold start), s. */
  seconds: number;
  /** Share of the exact top 30 (sqlite-vec's float32 scan) that the in-memory cache returns. */
  vectorRecallAt30: number;
  vectors: string;
  importPerSec: number;
  embedPerSec: number | undefined;
  bytesPerEntity: number;
  ops: Record<string, Stat>;
  coldHandshake: number;
  coldFirstAnswer: number;
  coldFirstSemantic: number;
  peakRss: number;
  prunedShare: number;
}

async function benchSize(size: number, model: Embedder): Promise<SizeResult> {
  const began = performance.now();
  const dir = mkdtempSync(join(tmpdir(), `limbic-lat-${size}-`));
  const jsonl = join(dir, 'memory.jsonl');
  const db = join(dir, 'memory.db');
  log(`${size}: generating`);
  await writeGraph(jsonl, size);
  const real = size <= REAL_UP_TO;
  const vectorsLabel = real ? 'real model' : 'random unit vectors';
  const queryModel = memoizeQueries(model);
  const store = openSqliteStore({ path: db });
  const lazy = new LazyEmbedder(async () => queryModel);
  const service = new MemoryService({
    store,
    embedder: new LazyEmbedder(async () => Promise.reject(new Error('import without a model'))),
    clock: Date.now,
    logger: noopLogger,
  });

  log(`${size}: importing`);
  const t0 = performance.now();
  await importFile(service, jsonl);
  const importPerSec = size / ((performance.now() - t0) / 1000);

  log(`${size}: vectors (${vectorsLabel})`);
  const indexer = new EmbeddingIndexer(store, lazy, noopLogger, 64);
  const vectors = store.requireVectors();
  let embedPerSec: number | undefined;
  const t1 = performance.now();
  if (real) {
    await indexer.drain();
    embedPerSec = size / ((performance.now() - t1) / 1000);
  } else {
    // Random vectors are stored under the real model's id, so the server started for the cold-start
    // numbers takes them as its own instead of re-embedding the whole graph.
    await vectors.configure(model.id, model.dims);
    const next = randomUnit(model.dims, size);
    for (;;) {
      const jobs = await vectors.takeJobs(5000);
      if (jobs.length === 0) break;
      await vectors.put(jobs.map((j) => ({ id: j.id, version: j.version, vector: next() })));
    }
  }
  await vectors.warm();

  const qs = queries(WARMUP + RUNS);
  for (const q of qs) await queryModel.embed([q.text], 'query'); // encoded once; search times below exclude encoding
  const r = rng(size + 1);
  const names = () => Array.from({ length: 5 }, () => entityName(Math.floor(r() * size)));
  const deps = { store, indexer };
  const now = Date.now();
  const ops: Record<string, Stat> = {};
  log(`${size}: timing reads`);
  ops.encode = await time((i) => model.embed([`${qs[i % qs.length]?.text ?? ''} ${i}`], 'query'));
  ops.search_nodes = await time((i) => store.graph.searchNodes(qs[i]?.substring ?? 'kalo'));
  ops.search_semantic = await time((i) => searchSemantic({ ...deps, reranker: undefined }, qs[i]?.text ?? '', 10, now));
  ops.hybrid_search = await time((i) =>
    hybridSearch({ ...deps, reranker: undefined }, toHybridOptions({ query: qs[i]?.text ?? '', limit: 10 }), now),
  );
  ops.vector_leg = await time(async (i) => {
    const [v] = await queryModel.embed([qs[i]?.text ?? ''], 'query');
    return vectors.search(v ?? new Float32Array(model.dims), 30);
  });
  ops.open_nodes = await time(() => store.graph.openNodes(names()));
  log(`${size}: timing writes`);
  let batch = 0;
  ops['create_entities (50)'] = await time(() =>
    store.graph.createEntities(
      Array.from({ length: 50 }, (_, k) => ({
        name: `New ${batch}-${k}`,
        entityType: 'note',
        observations: ['a new observation about kalo'],
      })),
      (batch++, Date.now()),
    ),
  );
  ops.add_observations = await time((i) =>
    store.graph.addObservations([{ entityName: entityName(i), contents: [`observation number ${i} added`] }], Date.now()),
  );
  // The writes queued embeddings; a server started on this file would embed them in the background
  // and the cold-start numbers would measure that. The new entities go, the changed ones get vectors.
  await store.graph.deleteEntities(Array.from({ length: batch }, (_, b) => Array.from({ length: 50 }, (_, k) => `New ${b}-${k}`)).flat());
  if (real) await indexer.drain();
  else {
    const next = randomUnit(model.dims, size + 2);
    const jobs = await vectors.takeJobs(10_000);
    await vectors.put(jobs.map((j) => ({ id: j.id, version: j.version, vector: next() })));
  }

  // Share of plain-text query words pruned as zero-weight (in more than half of the entities).
  let pruned = 0;
  let words = 0;
  for (const q of qs.slice(0, 20)) {
    const stats = await store.keywords.termStats(q.text.split(' '));
    words += stats.terms.length;
    pruned += stats.terms.filter((t) => t.df / stats.total > 0.5).length;
  }
  const bytesPerEntity = ((await store.stats()).databaseBytes ?? 0) / size;

  // The cache's answers against sqlite-vec's exact float32 scan of the same file.
  log(`${size}: vector recall@30 against sqlite-vec`);
  const exact = openSqliteStore({ path: db, vectorCache: false });
  let found = 0;
  let wanted = 0;
  for (const q of qs.slice(0, 20)) {
    const [v] = await queryModel.embed([q.text], 'query');
    if (v === undefined) continue;
    const truth = new Set((await exact.requireVectors().search(v, 30)).map((h) => h.id));
    found += (await vectors.search(v, 30)).filter((h) => truth.has(h.id)).length;
    wanted += truth.size;
  }
  await exact.close();
  const vectorRecallAt30 = wanted === 0 ? NaN : found / wanted;
  await store.close();

  log(`${size}: cold start`);
  const t2 = performance.now();
  const { client, pid } = await stdioClient([CLI, '--db', db]);
  const coldHandshake = performance.now() - t2;
  // open_nodes: an answer of the same size at every graph size (a substring probe matches 100x more
  // entities at 1M than at 10k, and a 20 MB answer measures the stdio transfer, not the start).
  await client.callTool({ name: 'open_nodes', arguments: { names: names() } });
  const coldFirstAnswer = performance.now() - t2;
  const first = (await client.callTool({
    name: 'search_semantic',
    arguments: { query: qs[1]?.text ?? 'kalo', limit: 10 },
  })) as CallToolResult;
  const coldFirstSemantic = performance.now() - t2;
  if (first.isError) log(`${size}: first semantic search failed: ${JSON.stringify(first.content)}`);
  for (let i = 0; i < 20; i++) await client.callTool({ name: 'hybrid_search', arguments: { query: qs[i]?.text ?? 'kalo' } });
  const peakRss = vmHwm(pid);
  await client.close();
  rmSync(dir, { recursive: true, force: true });
  return {
    size,
    seconds: (performance.now() - began) / 1000,
    vectorRecallAt30,
    vectors: vectorsLabel,
    importPerSec,
    embedPerSec,
    bytesPerEntity,
    ops,
    coldHandshake,
    coldFirstAnswer,
    coldFirstSemantic,
    peakRss,
    prunedShare: words === 0 ? 0 : pruned / words,
  };
}

interface SideBySide {
  size: number;
  ops: Record<string, { limbic: Stat; official: Stat }>;
}

async function sideBySide(size: number): Promise<SideBySide> {
  const dir = mkdtempSync(join(tmpdir(), `limbic-sbs-${size}-`));
  const jsonl = join(dir, 'memory.jsonl');
  await writeGraph(jsonl, size);
  const entities = readFileSync(jsonl, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{"type":"entity"'))
    .map((l) => {
      const { name, entityType, observations } = JSON.parse(l) as { name: string; entityType: string; observations: string[] };
      return { name, entityType, observations };
    });
  const servers = {
    limbic: () => stdioClient([CLI, '--db', join(dir, 'limbic.db'), '--no-model']),
    official: () => {
      copyFileSync(jsonl, join(dir, 'official.jsonl'));
      return stdioClient([OFFICIAL], { MEMORY_FILE_PATH: join(dir, 'official.jsonl') });
    },
  };
  const qs = queries(WARMUP + 20);
  const results: Record<string, Record<string, Stat>> = {};
  for (const [kind, start] of Object.entries(servers)) {
    log(`side by side ${size}: ${kind}`);
    // Bulk load through the same tool for both: 1,000 entities per create_entities call, into an empty store.
    const empty =
      kind === 'limbic'
        ? await stdioClient([CLI, '--db', join(dir, 'limbic-load.db'), '--no-model'])
        : await stdioClient([OFFICIAL], { MEMORY_FILE_PATH: join(dir, 'official-load.jsonl') });
    const t0 = performance.now();
    for (let i = 0; i < entities.length; i += 1000)
      await empty.client.callTool({ name: 'create_entities', arguments: { entities: entities.slice(i, i + 1000) } });
    const load = performance.now() - t0;
    await empty.client.close();
    if (kind === 'limbic') {
      execFileSync(process.execPath, [CLI, '--db', join(dir, 'limbic.db'), '--no-model', 'import', jsonl], { stdio: 'ignore' });
    }
    const { client } = await start();
    const call = (name: string, a: Record<string, unknown>) => client.callTool({ name, arguments: a });
    const r = rng(size);
    const ops: Record<string, Stat> = {};
    ops[`bulk load (create_entities × ${Math.ceil(size / 1000)})`] = { p50: load, p95: load };
    ops.search_nodes = await time((i) => call('search_nodes', { query: qs[i]?.substring ?? 'kalo' }), 20);
    ops.open_nodes = await time(
      () => call('open_nodes', { names: Array.from({ length: 5 }, () => entityName(Math.floor(r() * size))) }),
      20,
    );
    let b = 0;
    ops['create_entities (50)'] = await time(
      () =>
        call('create_entities', {
          entities: Array.from({ length: 50 }, (_, k) => ({ name: `New ${b}-${k}`, entityType: 'note', observations: ['x'] })),
        }).then(() => b++),
      10,
    );
    ops.read_graph = await time(() => call('read_graph', {}), 5);
    results[kind] = ops;
    await client.close();
  }
  rmSync(dir, { recursive: true, force: true });
  const ops: SideBySide['ops'] = {};
  for (const op of Object.keys(results.limbic ?? {})) {
    ops[op] = { limbic: results.limbic?.[op] ?? { p50: NaN, p95: NaN }, official: results.official?.[op] ?? { p50: NaN, p95: NaN } };
  }
  return { size, ops };
}

interface Results {
  machine: string;
  sizes: Record<string, SizeResult>;
  sideBySide: Record<string, SideBySide & { seconds: number }>;
}

const date = new Date().toISOString().slice(0, 10);
const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`;
const resultsPath = join(ROOT, 'bench', 'results', `latency-${date}.json`);
const results: Results = existsSync(resultsPath)
  ? (JSON.parse(readFileSync(resultsPath, 'utf8')) as Results)
  : { machine, sizes: {}, sideBySide: {} };
const save = (): void => {
  writeFileSync(resultsPath, `${JSON.stringify({ ...results, machine }, null, 1)}\n`);
  writeReport();
};

const model = await loadModel();
for (const size of SIZES) {
  results.sizes[size] = await benchSize(size, model);
  save();
}
for (const size of OFFICIAL_SIZES) {
  const began = performance.now();
  results.sideBySide[size] = { ...(await sideBySide(size)), seconds: (performance.now() - began) / 1000 };
  save();
}
if (SIZES.length + OFFICIAL_SIZES.length === 0) writeReport();

function writeReport(): void {
  const sizes = Object.values(results.sizes).sort((a, b) => a.size - b.size);
  const sbs = Object.values(results.sideBySide).sort((a, b) => a.size - b.size);
  const opNames = Object.keys(sizes[0]?.ops ?? {});
  const lines = [
    `# Latency — ${date}`,
    '',
    `Machine: ${machine}. Warm, in-process, p50 / p95 in ms over ${RUNS} calls after ${WARMUP} warm-ups. Search times exclude query encoding (\`encode\` is the real model on the query alone).`,
    `Graphs: 5 observations of 8-24 words per entity from a Zipf vocabulary of 20,000 words, about one relation per entity. Vectors: the real model (${model.id}) up to ${REAL_UP_TO.toLocaleString('en')} entities; **random unit vectors** above, through the same store code path.`,
    '',
    `| operation | ${sizes.map((s) => `${s.size.toLocaleString('en')} (${s.vectors})`).join(' | ')} |`,
    `|---|${sizes.map(() => '---|').join('')}`,
    ...opNames.map((op) => `| ${op} | ${sizes.map((s) => `${f(s.ops[op]?.p50 ?? NaN)} / ${f(s.ops[op]?.p95 ?? NaN)}`).join(' | ')} |`),
    `| import (entities/s, no embeddings) | ${sizes.map((s) => s.importPerSec.toFixed(0)).join(' | ')} |`,
    `| embedding (entities/s) | ${sizes.map((s) => (s.embedPerSec === undefined ? '—' : s.embedPerSec.toFixed(0))).join(' | ')} |`,
    `| cold start → handshake (ms) | ${sizes.map((s) => s.coldHandshake.toFixed(0)).join(' | ')} |`,
    `| cold start → first open_nodes answer (ms) | ${sizes.map((s) => s.coldFirstAnswer.toFixed(0)).join(' | ')} |`,
    `| cold start → first search_semantic answer (ms, model load included) | ${sizes.map((s) => s.coldFirstSemantic.toFixed(0)).join(' | ')} |`,
    `| server peak RSS after 20 hybrid searches (MB) | ${sizes.map((s) => (s.peakRss / 1e6).toFixed(0)).join(' | ')} |`,
    `| database bytes per entity | ${sizes.map((s) => s.bytesPerEntity.toFixed(0)).join(' | ')} |`,
    `| query words pruned as zero-weight | ${sizes.map((s) => `${(s.prunedShare * 100).toFixed(0)}%`).join(' | ')} |`,
    `| vector recall@30 against sqlite-vec's exact scan | ${sizes.map((s) => s.vectorRecallAt30.toFixed(3)).join(' | ')} |`,
    `| time to run this size (s) | ${sizes.map((s) => s.seconds.toFixed(0)).join(' | ')} |`,
    '',
    '## Side by side with the official server (both over stdio, same client script, p50 / p95 ms)',
    '',
  ];
  for (const s of sbs) {
    lines.push(
      `### ${s.size.toLocaleString('en')} entities (${s.seconds.toFixed(0)} s to run)`,
      '',
      '| operation | Limbic | official | official ÷ Limbic (p50) |',
      '|---|---|---|---|',
    );
    for (const [op, v] of Object.entries(s.ops))
      lines.push(
        `| ${op} | ${f(v.limbic.p50)} / ${f(v.limbic.p95)} | ${f(v.official.p50)} / ${f(v.official.p95)} | ${(v.official.p50 / v.limbic.p50).toFixed(1)}× |`,
      );
    lines.push('');
  }
  lines.push(`Raw numbers: latency-${date}.json.`);
  const report = lines.join('\n');
  const series: Series[] = [
    ...['search_nodes', 'search_semantic', 'hybrid_search', 'vector_leg', 'open_nodes', 'create_entities (50)', 'add_observations'].map(
      (op) => ({
        label: `Limbic ${op}`,
        points: sizes.map((s) => ({ x: s.size, y: s.ops[op]?.p50 ?? NaN })),
      }),
    ),
    ...['search_nodes', 'open_nodes', 'create_entities (50)'].map((op) => ({
      label: `official ${op}`,
      dashed: true,
      points: sbs.map((s) => ({ x: s.size, y: s.ops[op]?.official.p50 ?? NaN })),
    })),
  ];
  const svg = logLogChart(`Latency p50 against graph size (${date})`, 'entities', 'ms (p50)', series);
  writeFileSync(join(ROOT, 'bench', 'results', `latency-${date}.md`), `${report}\n\n![latency](latency-${date}.svg)\n`);
  writeFileSync(join(ROOT, 'bench', 'results', `latency-${date}.svg`), svg);
  log(`written bench/results/latency-${date}.md, .svg and .json`);
}
console.log(readFileSync(join(ROOT, 'bench', 'results', `latency-${date}.md`), 'utf8'));
