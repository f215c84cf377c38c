/**
 * `npm run bench:compaction`: the keyword-index compaction at the end of `limbic import`, FTS5's
 * one-transaction 'optimize' (what Limbic did before) against the incremental merge (what it does
 * now), on copies of one freshly imported graph, while a second process keeps writing.
 *
 * Measured for each, with the second process writing: total time, the longest single hold of the
 * write lock, the WAL's peak size (sampled by a third process, so a blocked event loop cannot hide
 * it), the other process's longest write (and how many took over 1 s or failed). Then alone, on
 * another copy: the time, the segments left, and keyword and substring query times afterwards.
 *
 *   --size 100000     entities in the generated graph
 *   --queries 200     timed keyword queries per method (substring queries: a quarter of that)
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { parseMemoryLine } from '../src/core/jsonl.js';
import type { NewEntity, Relation } from '../src/core/types.js';
import { HYBRID_DEPTH } from '../src/service/search/hybrid-search.js';
import { plainKeywordMatch } from '../src/service/search/legs.js';
import { decodeFts5Structure, pagesToMerge, segmentCount, STRUCTURE_ROWID } from '../src/store/sqlite/fts5/fts5-structure.js';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { queries, writeGraph } from './latency/generate.js';

const TABLES = ['entity_fts', 'entity_trigram'] as const;
const WRITE_EVERY_MS = 25;

interface WriterReport {
  readonly writes: number;
  readonly failed: number;
  readonly maxMs: number;
  readonly over1s: number;
  readonly p50Ms: number;
}

const role = process.argv[2];
if (role === 'writer') await writer(process.argv[3] ?? '');
else if (role === 'sampler') await sampler(process.argv[3] ?? '');
else await main();

/** Another Limbic process: one create_entities-sized write every 25 ms, each one timed. */
async function writer(path: string): Promise<void> {
  const store = openSqliteStore({ path, vectors: false });
  const times: number[] = [];
  let failed = 0;
  let stop = false;
  process.on('message', () => (stop = true));
  process.send?.('ready');
  for (let i = 0; !stop; i++) {
    const t0 = performance.now();
    try {
      await store.graph.createEntities(
        [{ name: `writer ${i}`, entityType: 'bench', observations: [`written by the second process, number ${i}`] }],
        Date.now(),
      );
      times.push(performance.now() - t0);
    } catch {
      failed++;
    }
    await new Promise((resolve) => setTimeout(resolve, WRITE_EVERY_MS));
  }
  await store.close();
  const sorted = [...times].sort((a, b) => a - b);
  const report: WriterReport = {
    writes: times.length,
    failed,
    maxMs: sorted.at(-1) ?? 0,
    over1s: times.filter((t) => t > 1000).length,
    p50Ms: sorted[Math.floor(sorted.length / 2)] ?? 0,
  };
  process.send?.(report, () => process.exit(0));
}

/** Samples the WAL's size every 5 ms until told to stop; replies with the peak in bytes. */
async function sampler(path: string): Promise<void> {
  let peak = 0;
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, statSync(`${path}-wal`).size);
    } catch {
      // no WAL at this instant
    }
  }, 5);
  process.on('message', () => {
    clearInterval(timer);
    process.send?.(peak, () => process.exit(0));
  });
  process.send?.('ready');
}

function child(kind: 'writer' | 'sampler', db: string): ChildProcess {
  return fork(import.meta.filename, [kind, db], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
}

async function stopChild<T>(c: ChildProcess): Promise<T> {
  const reply = once(c, 'message');
  c.send('stop');
  const [value] = (await reply) as [T];
  return value;
}

function structures(path: string): { segments: number; pagesLeft: number } {
  const db = new Database(path, { readonly: true });
  try {
    let segments = 0;
    let pagesLeft = 0;
    for (const table of TABLES) {
      const row = db.prepare<[number], { block: Buffer }>(`SELECT block FROM ${table}_data WHERE id = ?`).get(STRUCTURE_ROWID);
      if (row === undefined) continue;
      const s = decodeFts5Structure(row.block);
      segments += segmentCount(s);
      pagesLeft += pagesToMerge(s);
    }
    return { segments, pagesLeft };
  } finally {
    db.close();
  }
}

/** What Limbic did before: FTS5's 'optimize' on both tables in one IMMEDIATE transaction. */
async function legacyOptimize(path: string): Promise<{ longestLockMs: number; steps: number }> {
  const db = new Database(path);
  db.pragma('busy_timeout = 10000');
  db.pragma('cache_size = -65536');
  const t0 = performance.now();
  db.exec('BEGIN IMMEDIATE');
  for (const table of TABLES) db.exec(`INSERT INTO ${table} (${table}) VALUES ('optimize')`);
  db.exec('COMMIT');
  const longestLockMs = performance.now() - t0;
  db.close();
  return { longestLockMs, steps: 1 };
}

async function incremental(path: string): Promise<{ longestLockMs: number; steps: number }> {
  const store = openSqliteStore({ path, vectors: false });
  let longestLockMs = 0;
  let steps = 0;
  await store.keywords.optimize((p) => {
    longestLockMs = Math.max(longestLockMs, p.lockMs);
    if (p.lockMs > 0) steps++;
  });
  await store.close();
  return { longestLockMs, steps };
}

async function queryTimes(path: string, count: number): Promise<{ keywordP50: number; keywordP90: number; substringP50: number }> {
  // One connection: the two-core split would add its own variance to what the index changes.
  const store = openSqliteStore({ path, vectors: false, keywordSplitFrom: Infinity });
  const qs = queries(count + 10);
  const time = async (fn: () => Promise<unknown>): Promise<number> => {
    const t0 = performance.now();
    await fn();
    return performance.now() - t0;
  };
  // The keyword leg as hybrid_search runs it: common words pruned, then BM25 over the rest.
  const keyword: number[] = [];
  for (const [i, q] of qs.entries()) {
    const ms = await time(async () => {
      const match = await plainKeywordMatch(store.keywords, q.text);
      if (match !== undefined) await store.keywords.search(match, HYBRID_DEPTH);
    });
    if (i >= 10) keyword.push(ms); // the first ten warm the page cache
  }
  const substring: number[] = [];
  for (const q of qs.slice(0, Math.max(10, count / 4))) substring.push(await time(() => store.graph.searchNodes(q.substring)));
  await store.close();
  const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * p)] ?? NaN;
  return { keywordP50: pct(keyword, 0.5), keywordP90: pct(keyword, 0.9), substringP50: pct(substring, 0.5) };
}

async function importWithoutCompaction(jsonl: string, path: string): Promise<number> {
  const store = openSqliteStore({ path, vectors: false });
  const t0 = performance.now();
  let entities: NewEntity[] = [];
  let relations: Relation[] = [];
  const flush = async (): Promise<void> => {
    await store.graph.importBatch({ entities, relations }, Date.now());
    entities = [];
    relations = [];
  };
  for (const line of readFileSync(jsonl, 'utf8').split('\n')) {
    const parsed = parseMemoryLine(line);
    if (parsed.kind === 'entity') entities.push(parsed.entity);
    else if (parsed.kind === 'relation') relations.push(parsed.relation);
    if (entities.length + relations.length >= 2000) await flush(); // limbic import's batch size
  }
  await flush();
  await store.close();
  return (performance.now() - t0) / 1000;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const opt = (name: string, fallback: string): string => {
    const i = args.indexOf(name);
    return i >= 0 ? (args[i + 1] ?? fallback) : fallback;
  };
  const size = Number(opt('--size', '100000'));
  const queryCount = Number(opt('--queries', '200'));
  const log = (m: string): boolean => process.stderr.write(`bench: ${m}\n`);
  const dir = mkdtempSync(join(tmpdir(), 'limbic-compaction-'));
  try {
    const jsonl = join(dir, 'memory.jsonl');
    await writeGraph(jsonl, size);
    const base = join(dir, 'base.db');
    log(`imported ${size} entities without compaction in ${(await importWithoutCompaction(jsonl, base)).toFixed(1)} s`);
    const before = structures(base);
    log(`before: ${before.segments} segments, ${before.pagesLeft} pages to merge`);
    const uncompacted = await queryTimes(base, queryCount);

    const rows: string[] = [];
    for (const method of ['optimize', 'incremental'] as const) {
      const compact = (db: string) => (method === 'optimize' ? legacyOptimize(db) : incremental(db));
      // With a second process writing: time, lock holds, WAL, and how long that process waited.
      const db = join(dir, `${method}.db`);
      copyFileSync(base, db);
      const sampler = child('sampler', db);
      const writer = child('writer', db);
      await Promise.all([once(sampler, 'message'), once(writer, 'message')]);
      await new Promise((resolve) => setTimeout(resolve, 300)); // the writer's pace before
      const t0 = performance.now();
      const run = await compact(db);
      const seconds = (performance.now() - t0) / 1000;
      await new Promise((resolve) => setTimeout(resolve, 300)); // and after
      const report = await stopChild<WriterReport>(writer);
      const walPeak = await stopChild<number>(sampler);
      const check = new Database(db, { readonly: true });
      const visible = check.prepare<[], { n: number }>("SELECT count(*) AS n FROM entities WHERE entity_type = 'bench'").get()?.n ?? 0;
      check.close();
      log(
        `${method}: ${seconds.toFixed(2)} s, ${run.steps} steps, longest lock ${run.longestLockMs.toFixed(0)} ms, WAL peak ${(walPeak / 1e6).toFixed(1)} MB`,
      );
      log(
        `${method}: other process ${report.writes} writes (${visible} visible), ${report.failed} failed, longest ${report.maxMs.toFixed(0)} ms, ${report.over1s} over 1 s`,
      );
      // Alone, on another copy: what the compacted index is worth to searches.
      const alone = join(dir, `${method}-alone.db`);
      copyFileSync(base, alone);
      const t1 = performance.now();
      await compact(alone);
      const aloneSeconds = (performance.now() - t1) / 1000;
      const after = structures(alone);
      const times = await queryTimes(alone, queryCount);
      log(`${method} alone: ${aloneSeconds.toFixed(2)} s, ${after.segments} segments, keyword p50 ${times.keywordP50.toFixed(2)} ms`);
      rows.push(
        `| ${method} | ${seconds.toFixed(2)} | ${run.steps} | ${run.longestLockMs.toFixed(0)} | ${(walPeak / 1e6).toFixed(1)} | ` +
          `${report.writes} / ${visible} / ${report.failed} | ${report.maxMs.toFixed(0)} | ${report.over1s} | ${aloneSeconds.toFixed(2)} | ${after.segments} | ` +
          `${times.keywordP50.toFixed(2)} / ${times.keywordP90.toFixed(2)} | ${times.substringP50.toFixed(1)} |`,
      );
    }
    const date = new Date().toISOString().slice(0, 10);
    const text = [
      `# Keyword-index compaction at the end of an import, ${size} entities (${date})`,
      '',
      `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} at the end;`,
      `\`npm run bench:compaction -- --size ${size}\`. Every run starts from a copy of one imported graph whose two FTS5`,
      `indexes hold ${before.segments} segments. First with a second process writing one entity every ${WRITE_EVERY_MS} ms throughout`,
      '(busy timeout 10 s; its writes counted as made / visible afterwards / failed), then alone on another copy, which is',
      `then searched: the keyword leg as hybrid_search runs it (${queryCount} queries, top ${HYBRID_DEPTH}, one connection) and search_nodes.`,
      '',
      '| method | with writer: total s | steps | longest lock ms | WAL peak MB | other writes made / visible / failed | longest other write ms | other writes > 1 s | alone: total s | segments after | keyword p50 / p90 ms | substring p50 ms |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|',
      `| none (as imported) | | | | | | | | | ${before.segments} | ${uncompacted.keywordP50.toFixed(2)} / ${uncompacted.keywordP90.toFixed(2)} | ${uncompacted.substringP50.toFixed(1)} |`,
      ...rows,
      '',
    ].join('\n');
    const out = join(import.meta.dirname, 'results', `compaction-${date}.md`);
    writeFileSync(out, text);
    process.stdout.write(text);
    log(`wrote ${out}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
