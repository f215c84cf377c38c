/**
 * The vector leg alone, side by side, on the latency benchmark's vectors without building a store:
 * entity vectors derived from the pool of real e5 vectors exactly as `npm run bench` makes them
 * (pool-vectors.ts, seed = size), queries the real vectors of held-out questions. Every method is
 * timed on the same in-memory set and its recall@k measured against exact float32 search:
 *
 *   int8      today's scan below SIGN_FROM: usearch's int8 exact scan, max(2k, k+100) re-scored on float32
 *   signs     sign codes (1 bit per dimension, centred), Hamming scan in WebAssembly: the `pool` nearest
 *             through the int8 scan (before), or narrowed first to the `rerank` best by the codes'
 *             estimated dot product (now); the int8 scan's best re-scored on float32
 *   int8 ×2   the int8 scan split over two worker threads (a copy of one half each), merged, re-scored
 *   hnsw      usearch's HNSW Index (int8, inner product) searched for k' >= k, re-scored on float32
 *
 *   npx tsx bench/latency/vector-leg.ts [--sizes 100000,1000000] [--k 150] [--queries 100]
 *     [--pools 8192,16384] [--reranks 2048,3072] [--hnsw-up-to 100000] [--hnsw-k 150,300,600,1200] [--out file.json]
 *
 * Run it as `flock /tmp/limbic-bench.lock npx tsx bench/latency/vector-leg.ts ...`.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import usearch from 'usearch';
import { VectorCache, type ExactSearch } from '../../src/store/sqlite/vector-cache/vector-cache.js';
import { cachedEmbedder } from '../quality/embed-cache.js';
import { loadModel } from '../quality/harness.js';
import { derivedVectors, realTextVectors } from './pool-vectors.js';

const args = process.argv.slice(2);
const opt = (name: string, fallback: string): string => {
  const i = args.indexOf(name);
  return i >= 0 ? (args[i + 1] ?? fallback) : fallback;
};
const list = (s: string): number[] => s.split(',').filter(Boolean).map(Number);
const SIZES = list(opt('--sizes', '100000,1000000'));
const K = Number(opt('--k', '150'));
const QUERIES = Number(opt('--queries', '100'));
const WARMUP = 5;
const POOLS = list(opt('--pools', '8192,16384'));
const RERANKS = list(opt('--reranks', '2048,3072'));
const HNSW_UP_TO = Number(opt('--hnsw-up-to', '100000'));
const HNSW_K = list(opt('--hnsw-k', '150,300,600,1200'));
const OUT = opt('--out', '');

const exactSearch = usearch.exactSearch as unknown as ExactSearch;
const engine = await loadModel(2);
const model = cachedEmbedder(engine);
const real = await realTextVectors(model, WARMUP + QUERIES);
const dims = engine.dims;
// Copies: vectors read from the bench's cache file are views into one buffer, and usearch (exactSearch,
// Index.search) reads a typed array from the start of its buffer whatever its offset, so every
// view but the first was read as another vector (recall about 0.1 for every method).
const queries = real.queries.slice(0, WARMUP + QUERIES).map((q) => q.slice());

interface Row {
  size: number;
  method: string;
  p50: number;
  p95: number;
  recall: number;
  worst: number;
  note?: string;
}
const rows: Row[] = [];
const builds: { size: number; signsSeconds: number }[] = [];
const percentile = (xs: number[], p: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? NaN;

/** Times `search` over the queries (warm-ups untimed); recall@K of its ids against `truth`. */
async function measure(
  size: number,
  method: string,
  truth: Set<number>[],
  search: (q: Float32Array) => number[] | Promise<number[]>,
  note?: string,
): Promise<Row> {
  const times: number[] = [];
  let found = 0;
  let worst = 1;
  for (let i = 0; i < queries.length; i++) {
    const q = queries[i] as Float32Array;
    const t0 = performance.now();
    const ids = await search(q);
    const ms = performance.now() - t0;
    if (i < WARMUP) continue;
    times.push(ms);
    const want = truth[i - WARMUP] as Set<number>;
    const hits = ids.slice(0, K).filter((id) => want.has(id)).length;
    found += hits;
    worst = Math.min(worst, hits / K);
  }
  const row = { size, method, p50: percentile(times, 0.5), p95: percentile(times, 0.95), recall: found / (QUERIES * K), worst, note };
  rows.push(row);
  console.log(
    `${size}\t${method.padEnd(22)}\tp50 ${row.p50.toFixed(2)} ms\tp95 ${row.p95.toFixed(2)} ms\trecall@${K} ${row.recall.toFixed(4)} (worst ${worst.toFixed(3)})${note ? `\t${note}` : ''}`,
  );
  return row;
}

/** The int8 scan over two halves in two worker threads (usearch in each), merged and re-scored on float32. */
async function splitScan(
  quantized: Int8Array,
  count: number,
): Promise<{ search: (q: Int8Array, pool: number) => Promise<number[]>; stop: () => Promise<void> }> {
  // Each half is copied into a buffer of its own handed to its worker: on views of one shared
  // buffer usearch's exactSearch threw "Invalid argument" in the workers (and it reads a view from
  // the start of its buffer whatever its offset), which crashed this case before.
  const half = Math.ceil(count / 2);
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { exactSearch } = require(workerData.usearch);
    const { buffer, from, dims } = workerData;
    const data = new Int8Array(buffer);
    parentPort.on('message', ({ q, pool }) => {
      const { keys, distances } = exactSearch(data, q, dims, pool, 'ip', 1);
      parentPort.postMessage({ keys: Float64Array.from(keys, (k) => Number(k) + from), distances });
    });`;
  const usearchPath = (await import('node:module')).createRequire(import.meta.url).resolve('usearch');
  const workers = [
    [0, half],
    [half, count],
  ].map(([from, to]) => {
    const buffer = quantized.slice((from as number) * dims, (to as number) * dims).buffer;
    return new Worker(code, { eval: true, workerData: { usearch: usearchPath, buffer, from, dims }, transferList: [buffer] });
  });
  const ask = (w: Worker, q: Int8Array, pool: number): Promise<{ keys: Float64Array; distances: Float32Array }> =>
    new Promise((resolve) => {
      w.once('message', resolve);
      w.postMessage({ q, pool });
    });
  return {
    search: async (q, pool) => {
      const parts = await Promise.all(workers.map((w) => ask(w, q, pool)));
      const merged: { row: number; d: number }[] = [];
      for (const p of parts) for (let i = 0; i < p.keys.length; i++) merged.push({ row: p.keys[i] as number, d: p.distances[i] as number });
      merged.sort((a, b) => a.d - b.d);
      return merged.slice(0, pool).map((m) => m.row);
    },
    stop: async () => {
      await Promise.all(workers.map((w) => w.terminate()));
    },
  };
}

const dot = (data: Float32Array, row: number, q: Float32Array): number => {
  let s = 0;
  for (let j = 0, o = row * dims; j < dims; j++, o++) s += (data[o] as number) * (q[j] as number);
  return s;
};
const rescore = (data: Float32Array, rowsIn: ArrayLike<number>, q: Float32Array, ids: Float64Array): number[] => {
  const scored: { row: number; dot: number }[] = [];
  for (let i = 0; i < rowsIn.length; i++) scored.push({ row: rowsIn[i] as number, dot: dot(data, rowsIn[i] as number, q) });
  scored.sort((a, b) => b.dot - a.dot || a.row - b.row);
  return scored.slice(0, K).map((s) => ids[s.row] as number);
};

for (const size of SIZES) {
  let t0 = performance.now();
  const next = derivedVectors(real.pool, size);
  const vectors = new Float32Array(size * dims);
  for (let i = 0; i < size; i++) vectors.set(next(), i * dims);
  const ids = Float64Array.from({ length: size }, (_, i) => i + 1);
  console.log(`${size}: derived in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  // Exact float32 top-K of every timed query: the truth (usearch's float32 scan, two threads).
  t0 = performance.now();
  const truth = queries.slice(WARMUP).map((q) => {
    const { keys } = exactSearch(vectors, q, dims, K, 'ip', 2);
    return new Set(Array.from(keys, (k) => Number(k) + 1));
  });
  console.log(`${size}: truth in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  const db = new Database(':memory:');
  db.exec('CREATE TABLE vector_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, entity_id INTEGER NOT NULL, nonce INTEGER)');
  t0 = performance.now();
  const cache = VectorCache.fromVectors(db, exactSearch, dims, ids, vectors);
  console.log(`${size}: cache (int8 + sign codes) built in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  t0 = performance.now();
  cache.buildSigns();
  const signsBuilt = (performance.now() - t0) / 1000;
  console.log(`${size}: sign codes (centre + encoding) built again in ${signsBuilt.toFixed(2)} s`);
  builds.push({ size, signsSeconds: signsBuilt });

  await measure(size, 'float32 exact (usearch)', truth, (q) => cache.search(q, K, { scan: 'float32' }).map((h) => h.id));
  await measure(size, 'int8 + re-score', truth, (q) => cache.search(q, K, { scan: 'int8' }).map((h) => h.id));
  for (const pool of POOLS) {
    await measure(size, `signs ${pool} → int8 (before)`, truth, (q) =>
      cache.search(q, K, { scan: 'signs', pool, rerank: 0, gather: 'rows' }).map((h) => h.id),
    );
    for (const rerank of RERANKS) {
      await measure(size, `signs ${pool} → est. ${rerank} → int8`, truth, (q) =>
        cache.search(q, K, { scan: 'signs', pool, rerank }).map((h) => h.id),
      );
    }
  }
  await measure(size, 'default (auto)', truth, (q) => cache.search(q, K).map((h) => h.id), cache.scansSigns ? 'signs' : 'int8');

  // The int8 scan split in two threads, from the cache's own int8 copy and scale.
  const snap = cache.snapshot();
  if (snap !== undefined) {
    const split = await splitScan(snap.body.quantized, size);
    const scale = snap.header.scale;
    const pool = Math.max(2 * K, K + 100);
    await measure(size, 'int8 ×2 threads + re-score', truth, async (q) => {
      const unit = q; // the held-out vectors are unit length
      const q8 = Int8Array.from(unit, (x) => Math.max(-127, Math.min(127, Math.round(x * scale))));
      return rescore(vectors, await split.search(q8, pool), unit, ids);
    });
    await split.stop();
  }

  if (size <= HNSW_UP_TO) {
    // usearch's defaults for the graph: 16 links a node, 128 candidates while adding, 64 while searching.
    const hnswConfig = {
      dimensions: dims,
      metric: usearch.MetricKind.IP,
      quantization: usearch.ScalarKind.I8,
      connectivity: 16,
      expansion_add: 128,
      expansion_search: 64,
      multi: false,
    };
    const index = new usearch.Index(hnswConfig);
    t0 = performance.now();
    const keys = BigUint64Array.from({ length: size }, (_, i) => BigInt(i));
    index.add(keys, vectors, 2);
    const build = (performance.now() - t0) / 1000;
    const dir = mkdtempSync(join(tmpdir(), 'limbic-hnsw-'));
    const file = join(dir, 'index.usearch');
    t0 = performance.now();
    index.save(file);
    const save = (performance.now() - t0) / 1000;
    const bytes = statSync(file).size;
    const loaded = new usearch.Index(hnswConfig);
    t0 = performance.now();
    loaded.load(file);
    const load = (performance.now() - t0) / 1000;
    const note = `build ${build.toFixed(1)} s (2 threads), file ${(bytes / 2 ** 20).toFixed(0)} MiB, save ${save.toFixed(1)} s, load ${load.toFixed(1)} s`;
    console.log(`${size}: hnsw ${note}`);
    for (const k of HNSW_K) {
      await measure(
        size,
        `hnsw k'=${k} + re-score`,
        truth,
        (q) => {
          const found = loaded.search(q, k, 1);
          return rescore(vectors, Array.from(found.keys, Number), q, ids);
        },
        note,
      );
    }
    rmSync(dir, { recursive: true, force: true });
  }
  db.close();
}

if (OUT !== '')
  writeFileSync(OUT, JSON.stringify({ k: K, queries: QUERIES, load: (await import('node:os')).loadavg(), builds, rows }, null, 2));
process.exit(0);
