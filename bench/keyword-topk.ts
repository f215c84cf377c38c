/**
 * The keyword leg: FTS5 (one core, and split over two as the store does from 5,000 entities)
 * against the in-memory top-k index (src/store/sqlite/keyword-topk/keyword-topk.ts), in the same run, on the
 * latency benchmark's graphs and queries, and on broad queries (common words, matching far more).
 * Every index answer is checked against FTS5's (ids in order, scores within 1e-9 relative).
 *
 *   node --expose-gc --import tsx bench/keyword-topk.ts [sizes, default 10000,100000]
 *   (QUERIES and REPEATS in the environment: 150 and 3 by default)
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { distinctWords } from '../src/core/text/fts-query.js';
import { keywordText, type KeywordExpr } from '../src/core/text/keyword-query.js';
import { evidenceMatch } from '../src/service/search/legs.js';
import { keywordFilePath } from '../src/store/sqlite/keyword-topk/keyword-topk-file.js';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { TYPES, Vocabulary, entityName, queries, rng } from './latency/generate.js';

const sizes = (process.argv[2] ?? '10000,100000').split(',').map(Number);
const QUERIES = Number(process.env.QUERIES ?? 150);
const REPEATS = Number(process.env.REPEATS ?? 3);

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : ((s[(s.length - 1) >> 1] as number) + (s[s.length >> 1] as number)) / 2;
};
const p95 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)] ?? NaN;
const fmt = (x: number): string => x.toFixed(x < 1 ? 3 : 2);
const log = (s: string): void => void process.stderr.write(`${s}\n`);
/** With node --expose-gc the memory figures leave garbage out. */
const gc = (globalThis as { gc?: () => void }).gc;

async function benchSize(size: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), `limbic-topk-${size}-`));
  const path = join(dir, 'memory.db');
  // The latency benchmark's graph (bench/latency/generate.ts writeGraph), written straight in.
  const store = openSqliteStore({ path, vectors: false });
  const random = rng(42);
  const vocab = new Vocabulary(20_000, 1.07, random);
  log(`${size}: importing`);
  for (let start = 0; start < size; start += 5000) {
    const entities = [];
    for (let i = start; i < Math.min(size, start + 5000); i++) {
      const observations = Array.from({ length: 5 }, () => vocab.sentence(random, 8, 24));
      entities.push({ name: entityName(i), entityType: TYPES[Math.floor(random() * TYPES.length)] ?? 'note', observations });
    }
    await store.graph.importBatch({ entities, relations: [] }, 1);
  }
  await store.keywords.optimize(); // FTS5 at its best: one segment
  const single = openSqliteStore({ path, vectors: false, keywordTopK: false, keywordSplitFrom: Infinity });
  const split = openSqliteStore({ path, vectors: false, keywordTopK: false, keywordSplitFrom: 1 });

  // Start-up: built from FTS5's vocabulary (no file yet), then read from the file it saved, twice each.
  const raw = new Database(path, { readonly: true });
  const builds: number[] = [];
  const loads: number[] = [];
  let perEntity = 0;
  let heapPerEntity = 0;
  for (let i = 0; i < 2; i++) {
    rmSync(keywordFilePath(path), { force: true });
    gc?.();
    const before = process.memoryUsage();
    const fresh = openSqliteStore({ path, vectors: false });
    let t = performance.now();
    await fresh.keywords.topK?.warm();
    builds.push(performance.now() - t);
    gc?.();
    const after = process.memoryUsage();
    perEntity = (fresh.keywords.topK?.memory()?.bytes ?? 0) / size;
    if (i === 0) heapPerEntity = (after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers) / size;
    await fresh.close(); // the file is saved by now
    const again = openSqliteStore({ path, vectors: false });
    t = performance.now();
    await again.keywords.topK?.warm();
    loads.push(performance.now() - t);
    if (again.keywords.topK?.loadedFrom !== 'file') throw new Error('the saved index file was not used');
    await again.close();
  }
  const fileBytes = statSync(keywordFilePath(path)).size;
  await store.keywords.topK?.warm();

  // Queries: the benchmark's (as the pipeline turns them into OR expressions) and broad ones.
  const benchTexts = queries(QUERIES).map((q) => q.text);
  const broadRandom = rng(size + 3);
  const broadTexts = Array.from({ length: QUERIES }, () =>
    Array.from({ length: 4 }, () => vocab.words[16 + Math.floor(broadRandom() * 100)] ?? 'kalo').join(' '),
  );
  for (const [label, texts] of [
    ['bench', benchTexts],
    ['broad', broadTexts],
  ] as const) {
    const matches: KeywordExpr[] = [];
    const textOf = new Map<KeywordExpr, string>();
    for (const t of texts) {
      const m = (await evidenceMatch(single.keywords, distinctWords(t))).expr;
      if (m === undefined) continue;
      matches.push(m);
      textOf.set(m, t);
    }
    const count = raw.prepare<[string], { n: number }>('SELECT count(*) AS n FROM entity_fts WHERE entity_fts MATCH ?');
    const matchShare = median(matches.map((m) => (count.get(keywordText(m))?.n ?? 0) / size));
    for (const k of [150, 30]) {
      const times = { fts: [] as number[], split: [] as number[], topk: [] as number[], legSplit: [] as number[], legTopk: [] as number[] };
      let mismatches = 0;
      for (let rep = 0; rep < REPEATS; rep++) {
        for (const m of matches) {
          let t = performance.now();
          const a = await single.keywords.search(m, k);
          times.fts.push(performance.now() - t);
          t = performance.now();
          await split.keywords.search(m, k);
          times.split.push(performance.now() - t);
          t = performance.now();
          const b = await store.keywords.search(m, k);
          times.topk.push(performance.now() - t);
          // The whole keyword leg (term statistics, then search) as the pipeline runs it.
          const text = textOf.get(m) ?? '';
          t = performance.now();
          await split.keywords.search((await evidenceMatch(split.keywords, distinctWords(text))).expr ?? m, k);
          times.legSplit.push(performance.now() - t);
          t = performance.now();
          await store.keywords.search((await evidenceMatch(store.keywords, distinctWords(text))).expr ?? m, k);
          times.legTopk.push(performance.now() - t);
          if (rep === 0) {
            const same =
              a.length === b.length &&
              a.every((h, i) => h.id === b[i]?.id && Math.abs(h.bm25 - (b[i]?.bm25 ?? 0)) <= 1e-9 * Math.abs(h.bm25));
            if (!same) mismatches++;
          }
        }
      }
      const f = median(times.fts);
      const s = median(times.split);
      const x = median(times.topk);
      console.log(
        `| ${size} | ${label} (${(matchShare * 100).toFixed(0)}% match) | ${k} | ${fmt(f)} / ${fmt(p95(times.fts))} | ${fmt(s)} / ${fmt(p95(times.split))} | ${fmt(x)} / ${fmt(p95(times.topk))} | ${(f / x).toFixed(1)}x | ${(s / x).toFixed(1)}x | ${fmt(median(times.legSplit))} / ${fmt(median(times.legTopk))} | ${mismatches}/${matches.length} |`,
      );
    }
  }
  console.log(
    `| ${size} | start-up: build from FTS5 vocabulary ${builds.map(fmt).join(', ')} ms; read from file ${loads.map(fmt).join(', ')} ms (file ${(fileBytes / size).toFixed(0)} B/entity) | index ${perEntity.toFixed(0)} B/entity (typed arrays), heap+arrayBuffers delta ${heapPerEntity.toFixed(0)} B/entity |`,
  );
  raw.close();
  await single.close();
  await split.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}

console.log(
  '| entities | queries | k | FTS5 1 core p50 / p95 ms | FTS5 2 cores p50 / p95 | top-k index p50 / p95 | vs 1 core | vs 2 cores | leg p50 (stats+search) 2 cores / index | answers differing |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const size of sizes) await benchSize(size);
