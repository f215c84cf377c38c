/**
 * Where the vector leg's time goes, stage by stage, on vector-leg.ts's vectors (derived from real
 * e5 vectors, real question vectors as queries): mean milliseconds per query of each stage the
 * cache's search reports (`how.stages`), for each scan and pool asked, with p50/p95 of the whole
 * search and recall@k (mean and worst query) against exact float32 search.
 *
 *   flock /tmp/limbic-bench.lock npx tsx bench/latency/vector-stages.ts [--size 1000000] [--k 150]
 *     [--queries 60] [--scans signs:16384:0,signs:16384:2048,int8]
 * A scan is float32, int8, or signs:POOL:RERANK (RERANK 0: the pool through the int8 scan, as before).
 * A scan ending in @2 scans the codes on two threads (scan-helper.ts: a worker
 * sharing the codes), e.g. signs@2.
 * A scan ending in + (signs+, signs@2+) is timed with a thread spinning beside the searches, as a
 * busy model worker would take a core; its line says how much work that thread got done per second
 * of search (loops of 100k turns), to compare with the line of a scan without it.
 */
import { loadavg } from 'node:os';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import usearch from 'usearch';
import { VectorCache, type ExactSearch } from '../../src/store/sqlite/vector-cache/vector-cache.js';
import { ScanHelper } from '../../src/store/sqlite/vector-cache/scan-helper.js';
import { cachedEmbedder } from '../quality/embed-cache.js';
import { loadModel } from '../quality/harness.js';
import { derivedVectors, realTextVectors } from './pool-vectors.js';

const args = process.argv.slice(2);
const opt = (name: string, fallback: string): string => {
  const i = args.indexOf(name);
  return i >= 0 ? (args[i + 1] ?? fallback) : fallback;
};
const SIZE = Number(opt('--size', '1000000'));
const K = Number(opt('--k', '150'));
const QUERIES = Number(opt('--queries', '60'));
const WARMUP = 5;
const SCANS = opt('--scans', 'signs:16384,int8').split(',').filter(Boolean);
const ROUNDS = Number(opt('--rounds', '1'));
// The competitor: a thread that, while spin[1] is 1, counts loops of 100k turns in spin[0].
const spin = new BigInt64Array(new SharedArrayBuffer(16));
if (SCANS.some((spec) => spec.endsWith('+')))
  new Worker(
    `const { workerData: c } = require('node:worker_threads');
     for (;;) {
       Atomics.wait(c, 1, 0n);
       let x = 0;
       for (let i = 0; i < 1e5; i++) x = (x * 31 + i) | 0;
       Atomics.add(c, 0, 1n + BigInt(x & 0));
     }`,
    { eval: true, workerData: spin },
  ).unref();

const exactSearch = usearch.exactSearch as unknown as ExactSearch;
const engine = await loadModel(2);
const real = await realTextVectors(cachedEmbedder(engine), WARMUP + QUERIES);
const dims = engine.dims;
// Copies: usearch reads a view from the start of its buffer (see vector-leg.ts).
const queries = real.queries.slice(0, WARMUP + QUERIES).map((q) => q.slice());

let t0 = performance.now();
const next = derivedVectors(real.pool, SIZE);
const vectors = new Float32Array(SIZE * dims);
for (let i = 0; i < SIZE; i++) vectors.set(next(), i * dims);
const ids = Float64Array.from({ length: SIZE }, (_, i) => i + 1);
const db = new Database(':memory:');
db.exec('CREATE TABLE vector_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, entity_id INTEGER NOT NULL, nonce INTEGER)');
const cache = VectorCache.fromVectors(db, exactSearch, dims, ids, vectors);
// The truth: the cache's exact float32 scan (usearch, every row).
const truth = queries.slice(WARMUP).map((q) => new Set(cache.search(q, K, { scan: 'float32' }).map((h) => h.id)));
console.log(`${SIZE}: vectors, cache and truth in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

let sharing = 1;
let helper: ScanHelper | undefined;
const percentile = (xs: number[], p: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? NaN;
for (let round = 0; round < ROUNDS; round++) {
  for (let spec of SCANS) {
    const spinning = spec.endsWith('+');
    Atomics.store(spin, 1, spinning ? 1n : 0n);
    Atomics.notify(spin, 1);
    spec = spec.replace(/\+$/, '');
    const threads = spec.endsWith('@2') ? 2 : 1;
    if (threads !== sharing) {
      cache.shareScan(threads === 2 ? (helper ??= new ScanHelper()) : undefined);
      sharing = threads;
    }
    const [scan, pool, rerank] = spec.replace(/@2$/, '').split(':') as [
      'float32' | 'int8' | 'signs',
      string | undefined,
      string | undefined,
    ];
    const stages: Record<string, number> = {};
    const times: number[] = [];
    const recalls: number[] = [];
    let spinsTimed = 0n;
    let timedMs = 0;
    for (let i = 0; i < queries.length; i++) {
      const timed = i >= WARMUP;
      const s: Record<string, number> = {};
      const spinsBefore = Atomics.load(spin, 0);
      t0 = performance.now();
      const hits = cache.search(queries[i] as Float32Array, K, {
        scan,
        pool: pool === undefined ? undefined : Number(pool),
        rerank: rerank === undefined ? undefined : Number(rerank),
        gather: spec.replace(/@2$/, '').endsWith(':r') ? 'rows' : undefined,
        stages: s,
      });
      const ms = performance.now() - t0;
      if (!timed) continue;
      spinsTimed += Atomics.load(spin, 0) - spinsBefore;
      times.push(ms);
      timedMs += ms;
      for (const [name, v] of Object.entries(s)) stages[name] = (stages[name] ?? 0) + v;
      const want = truth[i - WARMUP] as Set<number>;
      recalls.push(hits.filter((h) => want.has(h.id)).length / K);
    }
    const mean = recalls.reduce((a, b) => a + b, 0) / recalls.length;
    // The spinning thread's work while the searches ran: loops of 100k turns per second of search.
    const busy = spinning ? `\tbusy thread ${(Number(spinsTimed) / (timedMs / 1000)).toFixed(0)} loops/s while searching` : '';
    const parts = Object.entries(stages)
      .map(([name, v]) => `${name} ${(v / QUERIES).toFixed(2)}`)
      .join(' | ');
    console.log(
      `${SIZE}\t${(spinning ? `${spec}+` : spec).padEnd(14)}\tp50 ${percentile(times, 0.5).toFixed(2)} ms\tp95 ${percentile(times, 0.95).toFixed(2)} ms\trecall@${K} ${mean.toFixed(4)} (worst ${Math.min(...recalls).toFixed(3)})\tload ${loadavg()[0]?.toFixed(1)}${busy}\tmean ms: ${parts}`,
    );
  }
}
process.exit(0);
