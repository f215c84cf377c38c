/**
 * Re-times the search paths on a store kept by `npm run bench -- --keep-stores` (or any store of
 * the benchmark's graph), without generating or importing anything: where a size that takes too
 * long to build again spends its search time.
 *
 *   npx tsx bench/latency/profile.ts <dir holding memory.db> [timed calls, default 50]
 *   SKIP_STARTUP=1 keeps the keyword index's file (otherwise it is deleted and rebuilt, then read back, and both timed)
 *   VECTOR_SPLIT_FROM=N the store's vectorSplitFrom (Infinity: the sign-code scan on one thread; default the store's)
 *
 * Queries are the latency benchmark's texts (keyword leg) with held-out questions' real vectors
 * (vector leg), as run.ts does for sizes with derived vectors.
 */
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { noopLogger } from '../../src/core/logger.js';
import { distinctWords } from '../../src/core/text/fts-query.js';
import { keywordExpr } from '../../test/helpers/fixtures.js';
import { LazyEmbedder } from '../../src/embed/embedder.js';
import { toHybridOptions } from '../../src/mcp/hybrid-options.js';
import { EmbeddingIndexer } from '../../src/service/embedding-indexer.js';
import { HYBRID_DEPTH, hybridSearch } from '../../src/service/search/hybrid-search.js';
import { evidenceMatch, keywordLeg } from '../../src/service/search/legs.js';
import { searchSemantic, semanticRequest } from '../../src/service/search/search-semantic.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { loadModel } from '../quality/harness.js';
import { queries } from './generate.js';
import { heldOutQueries, realTextVectors } from './pool-vectors.js';

const [dir = '.', runsArg = '50'] = process.argv.slice(2);
const RUNS = Number(runsArg);
const WARMUP = 5;
const path = join(dir, 'memory.db');
const model = await loadModel();
const qs = queries(WARMUP + 50);

if (process.env.SKIP_STARTUP === undefined) {
  rmSync(`${path}.keywords`, { force: true });
  const first = openSqliteStore({ path, vectors: false });
  let t0 = performance.now();
  await first.keywords.topK?.warm();
  const build = performance.now() - t0;
  const memory = first.keywords.topK?.memory();
  await first.close();
  const again = openSqliteStore({ path, vectors: false });
  t0 = performance.now();
  await again.keywords.topK?.warm();
  const load = performance.now() - t0;
  const entities = memory?.entities ?? NaN;
  console.log(
    `keyword index: build ${build.toFixed(0)} ms, read from file ${load.toFixed(0)} ms (${again.keywords.topK?.loadedFrom}), ` +
      `${((memory?.bytes ?? NaN) / entities).toFixed(0)} B/entity in memory, file ${(statSync(`${path}.keywords`).size / entities).toFixed(0)} B/entity, ${entities} entities`,
  );
  await again.close();
}

const { queries: held } = await realTextVectors(model, WARMUP + 50);
const embedder = heldOutQueries(
  model,
  qs.map((q) => q.text),
  held,
);
const splitFrom = process.env.VECTOR_SPLIT_FROM;
const store = openSqliteStore({ path, vectorSplitFrom: splitFrom === undefined ? undefined : Number(splitFrom) });
const indexer = new EmbeddingIndexer(store, new LazyEmbedder(async () => embedder), noopLogger, 64);
await store.requireVectors().warm();
await store.keywords.topK?.warm();
// From 200k vectors the sign codes are built after a load, in the background (searches scan int8
// meanwhile): a few seconds at 1M. One search starts the scan's worker, if any.
await store.requireVectors().search(held[0] as Float32Array, 10);
await new Promise((resolve) => setTimeout(resolve, 20_000));
const p50 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
async function time(label: string, fn: (i: number) => Promise<unknown>): Promise<void> {
  const xs: number[] = [];
  for (let i = 0; i < WARMUP + RUNS; i++) {
    const t0 = performance.now();
    await fn(i % qs.length);
    if (i >= WARMUP) xs.push(performance.now() - t0);
  }
  console.log(`${label.padEnd(34)} p50 ${p50(xs).toFixed(2)} ms`);
}
const deps = { store, indexer, reranker: undefined };
const now = Date.now();
const text = (i: number): string => qs[i]?.text ?? '';
const vector = (i: number): Float32Array => held[i % held.length] as Float32Array;
const matches = await Promise.all(
  qs.map(async (q) => (await evidenceMatch(store.keywords, distinctWords(q.text))).expr ?? keywordExpr('x')),
);
await time('hybrid_search', (i) => hybridSearch(deps, toHybridOptions({ query: text(i), limit: 10 }), now));
await time('search_semantic', (i) => searchSemantic(deps, text(i), 10, now));
await time('search_semantic, no context stage', (i) => searchSemantic(deps, text(i), 10, now, { context: undefined }));
await time('keyword leg (termStats + search)', (i) => keywordLeg(store.keywords, semanticRequest(text(i), 10), HYBRID_DEPTH));
await time('termStats alone', (i) => store.keywords.termStats(distinctWords(text(i))));
await time('keyword search alone', (i) => store.keywords.search(matches[i] ?? keywordExpr('x'), HYBRID_DEPTH));
await time('vector leg (k = 150)', (i) => store.requireVectors().search(vector(i), HYBRID_DEPTH));
await time('both legs, nothing else', async (i) => {
  await keywordLeg(store.keywords, semanticRequest(text(i), 10), HYBRID_DEPTH);
  await store.requireVectors().search(vector(i), HYBRID_DEPTH);
});
const stages: Record<string, number[]> = {};
for (let i = 0; i < 30; i++) {
  const answer = (await hybridSearch(deps, toHybridOptions({ query: text(i), limit: 10, explain_query: true }), now)) as {
    stats?: { stages_ms?: Record<string, number>; execution_time_ms?: number };
  };
  for (const [stage, ms] of Object.entries(answer.stats?.stages_ms ?? {})) (stages[stage] ??= []).push(ms);
  (stages.total ??= []).push(answer.stats?.execution_time_ms ?? NaN);
}
console.log(
  'hybrid_search stages, p50 ms over 30 calls:',
  Object.fromEntries(Object.entries(stages).map(([k, v]) => [k, Number(p50(v).toFixed(2))])),
);
await time('hybrid_search, again after the rest', (i) => hybridSearch(deps, toHybridOptions({ query: text(i), limit: 10 }), now));
console.log(`top-k index answered ${store.keywords.topKAnswers} searches and ${store.keywords.termStatsFromIndex} termStats calls`);
await store.close();
process.exit(0);
