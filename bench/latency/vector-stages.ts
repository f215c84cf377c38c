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
 */
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
  for (const spec of SCANS) {
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
    for (let i = 0; i < queries.length; i++) {
      const timed = i >= WARMUP;
      const s: Record<string, number> = {};
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
      times.push(ms);
      for (const [name, v] of Object.entries(s)) stages[name] = (stages[name] ?? 0) + v;
      const want = truth[i - WARMUP] as Set<number>;
      recalls.push(hits.filter((h) => want.has(h.id)).length / K);
    }
    const mean = recalls.reduce((a, b) => a + b, 0) / recalls.length;
    const parts = Object.entries(stages)
      .map(([name, v]) => `${name} ${(v / QUERIES).toFixed(2)}`)
      .join(' | ');
    console.log(
      `${SIZE}\t${spec.padEnd(14)}\tp50 ${percentile(times, 0.5).toFixed(2)} ms\tp95 ${percentile(times, 0.95).toFixed(2)} ms\trecall@${K} ${mean.toFixed(4)} (worst ${Math.min(...recalls).toFixed(3)})\tmean ms: ${parts}`,
    );
  }
}
process.exit(0);
