/**
 * `npm run bench` (bench/latency): Limbic at several graph sizes, and side by side with the
 * official server, on this machine. Writes bench/results/latency-<date>.md and .svg.
 *
 *   --sizes 10000,100000,1000000   graph sizes for Limbic alone
 *   --official 10000,50000         sizes for the side-by-side run (official server over stdio)
 *   --real-vectors-up-to 0         sizes up to this embed the graph's own text with the real model
 *                                  (about 14 entities/s on 2 cores); larger ones get vectors derived
 *                                  from real text (pool-vectors.ts: a pool of LoCoMo and XQuAD texts
 *                                  embedded by the real model, mixed per entity) and real-model
 *                                  vectors of held-out questions as queries (labelled in the report)
 *   --queries 50                   timed calls per operation (after 5 warm-up calls)
 *   --keep-stores                  keeps each size's store under the temp directory (for profiling)
 *
 * Results of each size are kept in bench/results/latency-<date>.json as soon as they are measured,
 * merged with what earlier runs of the same day measured, so sizes can be run one at a time
 * (`npm run bench -- --sizes 1000000 --official ''`) and an interrupted run loses one size at most.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { noopLogger } from '../../src/core/logger.js';
import { LazyEmbedder, type Embedder } from '../../src/embed/embedder.js';
import { toHybridOptions } from '../../src/mcp/hybrid-options.js';
import { EmbeddingIndexer } from '../../src/service/embedding-indexer.js';
import { HYBRID_DEPTH, hybridSearch } from '../../src/service/search/hybrid-search.js';
import { keywordLeg } from '../../src/service/search/legs.js';
import { MemoryService } from '../../src/service/memory-service.js';
import { searchSemantic, semanticRequest } from '../../src/service/search/search-semantic.js';
import { keywordFilePath } from '../../src/store/sqlite/keyword-topk/keyword-topk-file.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { importFile } from '../../src/cli/import-file.js';
import { loadModel, memoizeQueries } from '../quality/harness.js';
import { broadQueries, entityName, queries, randomUnit, rng, writeGraph } from './generate.js';
import {
  derivedVectors,
  distributionFacts,
  heldOutQueries,
  realTextVectors,
  type DistributionFacts,
  type RealTextVectors,
} from './pool-vectors.js';
import { logLogChart, type Series } from './svg-plot.js';
import { fmt as f, stat, type Stat } from '../stats.js';

const ROOT = join(import.meta.dirname, '..', '..');
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const OFFICIAL = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js');
const FLOOR = join(ROOT, 'bench', 'latency', 'floor-server.ts');

const args = process.argv.slice(2);
const opt = (name: string, fallback: string): string => {
  const i = args.indexOf(name);
  return i >= 0 ? (args[i + 1] ?? fallback) : fallback;
};
const list = (s: string): number[] => s.split(',').filter(Boolean).map(Number);
const SIZES = list(opt('--sizes', '10000,100000,1000000'));
const OFFICIAL_SIZES = list(opt('--official', '10000,50000'));
const REAL_UP_TO = Number(opt('--real-vectors-up-to', '0'));
const RUNS = Number(opt('--queries', '50'));
/** Keeps each size's store (for profiling afterwards) instead of deleting it. */
const KEEP = args.includes('--keep-stores');
const WARMUP = 5;

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
  /** The in-memory top-k keyword index: start-up and memory. */
  keywordIndex?: { buildMs: number; loadMs: number; bytesPerEntity: number; fileBytesPerEntity: number };
  /** p50 over the timed queries of their best and 30th best cosine (exact scan): how close and crowded the top is. */
  queryCosine?: { top1: number; top30: number };
  /** hybrid_search's stages (explain_query's stages_ms), p50 over 20 calls. */
  hybridStages?: Record<string, number>;
}

async function benchSize(size: number, model: Embedder, realText: () => Promise<RealTextVectors>): Promise<SizeResult> {
  const began = performance.now();
  const dir = mkdtempSync(join(tmpdir(), `limbic-lat-${size}-`));
  const jsonl = join(dir, 'memory.jsonl');
  const db = join(dir, 'memory.db');
  log(`${size}: generating`);
  await writeGraph(jsonl, size);
  const real = size <= REAL_UP_TO;
  const vectorsLabel = real ? 'real model' : 'derived from real text';
  const qs = queries(WARMUP + RUNS);
  const store = openSqliteStore({ path: db });
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
  // Awaited only now: the pool is embedded (on its first run) while the graph is generated and imported.
  const pool = real ? undefined : await realText();
  const queryModel =
    pool === undefined
      ? memoizeQueries(model)
      : heldOutQueries(
          memoizeQueries(model),
          qs.map((q) => q.text),
          pool.queries,
        );
  const lazy = new LazyEmbedder(async () => queryModel);
  const indexer = new EmbeddingIndexer(store, lazy, noopLogger, 64);
  const vectors = store.requireVectors();
  let embedPerSec: number | undefined;
  const t1 = performance.now();
  if (real) {
    await indexer.drain();
    embedPerSec = size / ((performance.now() - t1) / 1000);
  } else {
    // Derived vectors are stored under the real model's id, so the server started for the cold-start
    // numbers takes them as its own instead of re-embedding the whole graph.
    await vectors.configure(model.id, model.dims);
    const next = derivedVectors(pool?.pool ?? [], size);
    for (;;) {
      const jobs = await vectors.takeJobs(5000);
      if (jobs.length === 0) break;
      await vectors.put(jobs.map((j) => ({ id: j.id, version: j.version, vector: next() })));
    }
  }
  await vectors.warm();

  // The keyword index built from FTS5's vocabulary, as the first search after a start without its file does.
  const topK = store.keywords.topK;
  let t3 = performance.now();
  await topK?.warm();
  const keywordBuildMs = performance.now() - t3;
  const keywordBytes = topK?.memory()?.bytes ?? NaN;

  for (const q of qs) await queryModel.embed([q.text], 'query'); // encoded once; search times below exclude encoding
  const r = rng(size + 1);
  const names = () => Array.from({ length: 5 }, () => entityName(Math.floor(r() * size)));
  const deps = { store, indexer };
  const now = Date.now();
  const ops: Record<string, Stat> = {};
  log(`${size}: timing reads`);
  ops.encode = await time((i) => model.embed([`${qs[i % qs.length]?.text ?? ''} ${i}`], 'query'));
  // As a server does at start (MemoryService.warm): search_nodes' word index, up to 50k entities.
  await store.graph.warmSearch?.();
  ops.search_nodes = await time((i) => store.graph.searchNodes(qs[i]?.substring ?? 'kalo'));
  ops.search_semantic = await time((i) => searchSemantic({ ...deps, reranker: undefined }, qs[i]?.text ?? '', 10, now));
  ops.hybrid_search = await time((i) =>
    hybridSearch({ ...deps, reranker: undefined }, toHybridOptions({ query: qs[i]?.text ?? '', limit: 10 }), now),
  );
  ops.keyword_leg = await time((i) => keywordLeg(store.keywords, semanticRequest(qs[i]?.text ?? '', 10), HYBRID_DEPTH));
  ops.vector_leg = await time(async (i) => {
    const [v] = await queryModel.embed([qs[i]?.text ?? ''], 'query');
    return vectors.search(v ?? new Float32Array(model.dims), 30);
  });
  ops.open_nodes = await time(() => store.graph.openNodes(names()));
  // Where hybrid_search's time goes: explain_query's stage timings, p50 of each.
  const stages: Record<string, number[]> = {};
  for (let i = 0; i < 20; i++) {
    const answer = await hybridSearch(
      { ...deps, reranker: undefined },
      toHybridOptions({ query: qs[i]?.text ?? '', limit: 10, explain_query: true }),
      now,
    );
    const timings = (answer as { stats?: { stages_ms?: Record<string, number> } }).stats?.stages_ms ?? {};
    for (const [stage, ms] of Object.entries(timings)) (stages[stage] ??= []).push(ms);
  }
  const hybridStages = Object.fromEntries(Object.entries(stages).map(([stage, xs]) => [stage, stat(xs).p50]));
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
    const next = derivedVectors(pool?.pool ?? [], size + 2);
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
  const top1: number[] = [];
  const top30: number[] = [];
  for (const q of qs.slice(0, 20)) {
    const [v] = await queryModel.embed([q.text], 'query');
    if (v === undefined) continue;
    const exactHits = await exact.requireVectors().search(v, 30);
    top1.push(1 - (exactHits[0]?.distance ?? NaN));
    top30.push(1 - (exactHits[29]?.distance ?? NaN));
    const truth = new Set(exactHits.map((h) => h.id));
    found += (await vectors.search(v, 30)).filter((h) => truth.has(h.id)).length;
    wanted += truth.size;
  }
  await exact.close();
  const vectorRecallAt30 = wanted === 0 ? NaN : found / wanted;
  // The writes above may have set the index aside (a replay larger than a rebuild): rebuilt now,
  // so the file saved at close is current and the restart below reads it.
  await store.keywords.topK?.warm();
  await store.close(); // saves the keyword index's file

  // A restart's keyword index: read from that file.
  const again = openSqliteStore({ path: db, vectors: false });
  t3 = performance.now();
  await again.keywords.topK?.warm();
  const keywordLoadMs = performance.now() - t3;
  if (again.keywords.topK?.loadedFrom !== 'file') log(`${size}: the keyword index was rebuilt, not read from its file`);
  await again.close();
  const keywordFileBytes = existsSync(keywordFilePath(db)) ? statSync(keywordFilePath(db)).size : NaN;

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
  if (KEEP) log(`${size}: store kept in ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
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
    keywordIndex: {
      buildMs: keywordBuildMs,
      loadMs: keywordLoadMs,
      bytesPerEntity: keywordBytes / size,
      fileBytesPerEntity: keywordFileBytes / size,
    },
    queryCosine: { top1: stat(top1).p50, top30: stat(top30).p50 },
    hybridStages,
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
  const qs = queries(WARMUP + 20).map((q) => q.substring);
  const broad = broadQueries(entities, WARMUP + 20);
  const shares = broad.map((b) => b.share * 100).sort((a, b) => a - b);
  const broadLabel = `broad (${f(shares[0] ?? NaN)}-${f(shares.at(-1) ?? NaN)}% of entities each, median ${f(shares[shares.length >> 1] ?? NaN)}%)`;
  log(`side by side ${size}: ${broadLabel}`);
  writeFileSync(join(dir, 'queries.json'), JSON.stringify([...qs, ...broad.map((b) => b.query)]));

  // Bulk load through the same tool for both: 1,000 entities per create_entities call, into an empty store.
  const load: Record<string, number> = {};
  for (const kind of ['limbic', 'official'] as const) {
    log(`side by side ${size}: ${kind} bulk load`);
    const empty =
      kind === 'limbic'
        ? await stdioClient([CLI, '--db', join(dir, 'limbic-load.db'), '--no-model'])
        : await stdioClient([OFFICIAL], { MEMORY_FILE_PATH: join(dir, 'official-load.jsonl') });
    const t0 = performance.now();
    for (let i = 0; i < entities.length; i += 1000)
      await empty.client.callTool({ name: 'create_entities', arguments: { entities: entities.slice(i, i + 1000) } });
    load[kind] = performance.now() - t0;
    await empty.client.close();
  }
  execFileSync(process.execPath, [CLI, '--db', join(dir, 'limbic.db'), '--no-model', 'import', jsonl], { stdio: 'ignore' });
  copyFileSync(jsonl, join(dir, 'official.jsonl'));
  const clients = {
    limbic: (await stdioClient([CLI, '--db', join(dir, 'limbic.db'), '--no-model'])).client,
    official: (await stdioClient([OFFICIAL], { MEMORY_FILE_PATH: join(dir, 'official.jsonl') })).client,
    // No search at all: what an answer of the same size costs any server (floor-server.ts).
    floor: (await stdioClient(['--import', 'tsx', FLOOR, jsonl, join(dir, 'queries.json')])).client,
  };
  type Kind = keyof typeof clients;
  const ops: SideBySide['ops'] = {};
  ops[`bulk load (create_entities × ${Math.ceil(size / 1000)})`] = {
    limbic: { p50: load.limbic ?? NaN, p95: load.limbic ?? NaN },
    official: { p50: load.official ?? NaN, p95: load.official ?? NaN },
  };
  /**
   * One operation on several servers, call by call in turn, so a change in the machine's load
   * (other work on its cores) falls on all of them alike.
   */
  const interleaved = async (kinds: readonly Kind[], runs: number, warmup: number, call: (kind: Kind, i: number) => Promise<unknown>) => {
    const times = new Map<Kind, number[]>(kinds.map((k) => [k, []]));
    for (let i = 0; i < warmup + runs; i++)
      for (const kind of kinds) {
        const t0 = performance.now();
        await call(kind, i);
        if (i >= warmup) times.get(kind)?.push(performance.now() - t0);
      }
    return (kind: Kind): Stat => stat(times.get(kind) ?? []);
  };
  const search = (kind: Kind, a: Record<string, unknown>) => clients[kind].callTool({ name: 'search_nodes', arguments: a });
  log(`side by side ${size}: search_nodes`);
  const both = ['limbic', 'official', 'floor'] as const;
  const bench = await interleaved(both, 20, WARMUP, (kind, i) => search(kind, { query: qs[i] ?? 'kalo' }));
  ops.search_nodes = { limbic: bench('limbic'), official: bench('official') };
  const wide = await interleaved(both, 20, WARMUP, (kind, i) => search(kind, { query: broad[i]?.query ?? 'kalo' }));
  ops[`search_nodes, ${broadLabel}`] = { limbic: wide('limbic'), official: wide('official') };
  // The rows below put another server where Limbic's column is: official ÷ it is the ratio no
  // server can beat on these answers, as all the time left is MCP, JSON and stdio.
  ops['floor for search_nodes: no search, same answer (Limbic column)'] = { limbic: bench('floor'), official: bench('official') };
  ops['floor for search_nodes, broad: no search, same answer (Limbic column)'] = {
    limbic: wide('floor'),
    official: wide('official'),
  };
  const paged = await interleaved(['limbic', 'official'], 20, WARMUP, (kind, i) =>
    // The official server has no paging: it drops the extra fields and returns every match.
    search(kind, { query: broad[i]?.query ?? 'kalo', limit: 20 }),
  );
  ops['search_nodes, broad: Limbic a page of 20 and the total (official: every match)'] = {
    limbic: paged('limbic'),
    official: paged('official'),
  };
  await clients.floor.close();

  log(`side by side ${size}: open_nodes, create_entities, read_graph`);
  const r = rng(size);
  const names = Array.from({ length: WARMUP + 20 }, () => Array.from({ length: 5 }, () => entityName(Math.floor(r() * size))));
  const open = await interleaved(['limbic', 'official'], 20, WARMUP, (kind, i) =>
    clients[kind].callTool({ name: 'open_nodes', arguments: { names: names[i] ?? [] } }),
  );
  ops.open_nodes = { limbic: open('limbic'), official: open('official') };
  const create = await interleaved(['limbic', 'official'], 10, WARMUP, (kind, i) =>
    clients[kind].callTool({
      name: 'create_entities',
      arguments: { entities: Array.from({ length: 50 }, (_, k) => ({ name: `New ${i}-${k}`, entityType: 'note', observations: ['x'] })) },
    }),
  );
  ops['create_entities (50)'] = { limbic: create('limbic'), official: create('official') };
  // The whole graph takes the SDK client's read buffer about 45 s per call at 50k for either
  // server (it copies the message so far on every chunk), so large sizes are read fewer times.
  const reads = size <= 10_000 ? 5 : 2;
  const read = await interleaved(['limbic', 'official'], reads, size <= 10_000 ? 1 : 0, (kind) =>
    clients[kind].callTool({ name: 'read_graph', arguments: {} }, undefined, { timeout: 600_000 }),
  );
  ops[`read_graph (p50 of ${reads})`] = { limbic: read('limbic'), official: read('official') };
  for (const client of [clients.limbic, clients.official]) await client.close();
  rmSync(dir, { recursive: true, force: true });
  return { size, ops };
}

interface Results {
  machine: string;
  sizes: Record<string, SizeResult>;
  sideBySide: Record<string, SideBySide & { seconds: number }>;
  /** The derived vectors against the pool they come from and random unit vectors, at the pool's size. */
  vectorFacts?: { poolSize: number; queries: number; pool: DistributionFacts; derived: DistributionFacts; random: DistributionFacts };
}

const date = new Date().toISOString().slice(0, 10);
const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`;
const resultsPath = join(ROOT, 'bench', 'results', `latency-${date}.json`);
const results: Results = existsSync(resultsPath)
  ? (JSON.parse(readFileSync(resultsPath, 'utf8')) as Results)
  : { machine, sizes: {}, sideBySide: {} };
/** What this run measured: a run of the same day in another process (the side by side, say) keeps the rest. */
const measured = { sizes: new Set<string>(), sideBySide: new Set<string>() };
const save = (): void => {
  if (existsSync(resultsPath)) {
    const disk = JSON.parse(readFileSync(resultsPath, 'utf8')) as Results;
    for (const [k, v] of Object.entries(disk.sizes)) if (!measured.sizes.has(k)) results.sizes[k] = v;
    for (const [k, v] of Object.entries(disk.sideBySide)) if (!measured.sideBySide.has(k)) results.sideBySide[k] = v;
    results.vectorFacts ??= disk.vectorFacts;
  }
  writeFileSync(resultsPath, `${JSON.stringify({ ...results, machine }, null, 1)}\n`);
  writeReport();
};

const model = await loadModel();
let realText: Promise<RealTextVectors> | undefined;
/** The pool and held-out queries, embedded (or read from their cache) once, and their distribution facts measured. */
const loadRealText = (): Promise<RealTextVectors> =>
  (realText ??= (async () => {
    log('vectors from real text: embedding the pool (cached under ~/.cache/limbic/bench after the first run)');
    const vectors = await realTextVectors(model, WARMUP + RUNS);
    const n = vectors.pool.length;
    const derived = derivedVectors(vectors.pool, 1);
    const random = randomUnit(model.dims, 1);
    results.vectorFacts = {
      poolSize: n,
      queries: vectors.queries.length,
      pool: distributionFacts(vectors.pool, vectors.queries),
      derived: distributionFacts(Array.from({ length: n }, derived), vectors.queries),
      random: distributionFacts(Array.from({ length: n }, random), vectors.queries),
    };
    return vectors;
  })());
// Started at once, so a first run embeds the pool while the first graph is generated and imported.
if (SIZES.some((size) => size > REAL_UP_TO)) void loadRealText().catch(() => undefined);
for (const size of SIZES) {
  measured.sizes.add(String(size));
  results.sizes[size] = await benchSize(size, model, loadRealText);
  save();
}
for (const size of OFFICIAL_SIZES) {
  const began = performance.now();
  measured.sideBySide.add(String(size));
  results.sideBySide[size] = { ...(await sideBySide(size)), seconds: (performance.now() - began) / 1000 };
  save();
}
if (SIZES.length + OFFICIAL_SIZES.length === 0) writeReport();

function writeReport(): void {
  const sizes = Object.values(results.sizes).sort((a, b) => a.size - b.size);
  const sbs = Object.values(results.sideBySide).sort((a, b) => a.size - b.size);
  const opNames = [...new Set(sizes.flatMap((s) => Object.keys(s.ops)))];
  const facts = results.vectorFacts;
  const c3 = (x: number | undefined): string => (x === undefined ? '—' : x.toFixed(3));
  const factRow = (label: string, d: DistributionFacts | undefined): string =>
    `| ${label} | ${c3(d?.meanPairCosine)} | ${d?.nnCosine.map(c3).join(' / ') ?? '—'} | ${d?.queryTopCosine.map(c3).join(' / ') ?? '—'} | ${c3(d?.queryTop30Gap)} |`;
  const keywordRow = (label: string, value: (k: NonNullable<SizeResult['keywordIndex']>) => string): string =>
    `| ${label} | ${sizes.map((s) => (s.keywordIndex === undefined ? '—' : value(s.keywordIndex))).join(' | ')} |`;
  const stageNames = [...new Set(sizes.flatMap((s) => Object.keys(s.hybridStages ?? {})))];
  const lines = [
    `# Latency — ${date}`,
    '',
    `Machine: ${machine}. Warm, in-process, p50 / p95 in ms over ${RUNS} calls after ${WARMUP} warm-ups. Search times exclude query encoding (\`encode\` is the real model on the query alone).`,
    `Graphs: 5 observations of 8-24 words per entity from a Zipf vocabulary of 20,000 words, about one relation per entity. Vectors: ${REAL_UP_TO > 0 ? `the real model (${model.id}) on the graph's text up to ${REAL_UP_TO.toLocaleString('en')} entities; above that, ` : ''}**derived from real text**: ${facts?.poolSize.toLocaleString('en') ?? 'a pool of'} LoCoMo and XQuAD texts embedded by ${model.id}, each entity the pool's mean direction plus the centred parts of 2-3 pool vectors and a little noise (bench/latency/pool-vectors.ts); queries are ${model.id} vectors of held-out questions, not in the pool.`,
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
    keywordRow("keyword index: build from FTS5's vocabulary (ms)", (k) => k.buildMs.toFixed(0)),
    keywordRow('keyword index: read from its file at a restart (ms)', (k) => k.loadMs.toFixed(0)),
    keywordRow('keyword index: memory per entity (bytes)', (k) => k.bytesPerEntity.toFixed(0)),
    keywordRow('keyword index: file per entity (bytes)', (k) => k.fileBytesPerEntity.toFixed(0)),
    `| queries' best / 30th best cosine, p50 (exact scan) | ${sizes.map((s) => (s.queryCosine === undefined ? '—' : `${c3(s.queryCosine.top1)} / ${c3(s.queryCosine.top30)}`)).join(' | ')} |`,
    '',
    '### Where hybrid_search spends its time (explain_query stages, p50 ms over 20 calls)',
    '',
    `| stage | ${sizes.map((s) => s.size.toLocaleString('en')).join(' | ')} |`,
    `|---|${sizes.map(() => '---|').join('')}`,
    ...stageNames.map((st) => `| ${st} | ${sizes.map((s) => f(s.hybridStages?.[st] ?? NaN)).join(' | ')} |`),
    '',
    `### The derived vectors against the real pool (${facts?.poolSize.toLocaleString('en') ?? '—'} vectors each, ${facts?.queries ?? '—'} held-out queries)`,
    '',
    "Cosines by exact float scans: mean of 20,000 random pairs; each of 200 sampled members' nearest neighbour in its set (p10 / p50 / p90); each query's best match (p10 / p50 / p90); the 30th best minus the best (p50).",
    '',
    '| set | mean pair cosine | nearest neighbour | query best | query 30th − best |',
    '|---|---|---|---|---|',
    factRow(`real model, pool texts (${facts?.poolSize ?? '—'})`, facts?.pool),
    factRow('derived from the pool, same count', facts?.derived),
    factRow('random unit vectors, same count', facts?.random),
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
