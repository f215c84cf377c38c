/**
 * The top-k keyword index against FTS5 itself: on random graphs, changed at random by the graph
 * API, the index's best k for random plain OR queries are FTS5's `bm25()` ranking, ids in order and
 * scores within 1e-9 relative.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { orOfWords } from '../../src/core/text/fts-query.js';
import { KeywordTopKSync } from '../../src/store/sqlite/keyword-topk/keyword-topk-sync.js';
import { SqliteConnection } from '../../src/store/sqlite/sqlite-connection.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { REPO_ROOT, tempDir, keywordExpr } from '../helpers/fixtures.js';
import { keywordText } from '../../src/core/text/keyword-query.js';
import { rng } from '../helpers/rng.js';

const exec = promisify(execFile);

/** Stems shared (run/running/runs), accents folded (sesión/sesion), digits, case, and words no entity has. */
const WORDS = [
  'river',
  'rivers',
  'stone',
  'stones',
  'run',
  'running',
  'runs',
  'sesión',
  'sesion',
  'Café',
  'cafe',
  'lamp',
  'orchard',
  'violet',
  'harbor',
  'copper',
  'meadow',
  'zeta9',
  '42',
  'the',
  'and',
  'of',
  'kalo',
  'mirendor',
  'tisba',
  'quanto',
  'fenrir',
  'Halgo',
  'pone',
  'ruba',
  'cyto',
  'dorel',
  'elan',
  'vika',
  'sarento',
  'lomi',
  'absent',
  'nowhere',
];

/** Zipf-like: low indexes (common words) far more often; the last two words are never written. */
const pick = (r: () => number): string => WORDS[Math.floor((WORDS.length - 2) * r() ** 2.2)] ?? 'the';
const sentence = (r: () => number, max: number): string => Array.from({ length: Math.floor(r() * max) }, () => pick(r)).join(' ');

/** The expression a store searches for a match, as FTS5 text. */
const searched = (match: string): string => keywordText(keywordExpr(match));

const close = (a: number, b: number): boolean => Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));

interface Checker {
  checked: number;
  run(match: string, limit: number): Promise<void>;
}

/**
 * Compares one search path with FTS5 run directly on another connection to the same file, on the
 * expression the path searches: a store searches keywordExpr's (where a word written twice is once).
 */
function checker(
  fts: Database.Database,
  search: (match: string, limit: number) => Promise<{ id: number; score: number }[]>,
  label: string,
  expression: (match: string) => string = (match) => match,
): Checker {
  const sql = fts.prepare<[string, number], { id: number; score: number }>(
    'SELECT rowid AS id, bm25(entity_fts) AS score FROM entity_fts WHERE entity_fts MATCH ? ORDER BY score, rowid LIMIT ?',
  );
  const c: Checker = {
    checked: 0,
    async run(match, limit) {
      const want = sql.all(expression(match), limit);
      const got = await search(match, limit);
      const context = `${label}: ${match} LIMIT ${limit}`;
      expect(
        got.map((h) => h.id),
        context,
      ).toEqual(want.map((h) => h.id));
      got.forEach((h, i) => expect(close(h.score, want[i]?.score ?? NaN), `${context} #${i}: ${h.score} vs ${want[i]?.score}`).toBe(true));
      c.checked++;
    },
  };
  return c;
}

async function mutate(store: SqliteStore, r: () => number, names: string[], next: { n: number }, now: number): Promise<void> {
  const choice = r();
  const some = names[Math.floor(r() * names.length)];
  if (choice < 0.35 || some === undefined) {
    const fresh = Array.from({ length: 1 + Math.floor(r() * 4) }, () => `E${next.n++} ${pick(r)}`);
    await store.graph.createEntities(
      fresh.map((name) => ({
        name,
        entityType: pick(r),
        observations: Array.from({ length: Math.floor(r() * 4) }, () => sentence(r, 14)),
      })),
      now,
    );
    names.push(...fresh);
  } else if (choice < 0.65) {
    await store.graph.addObservations([{ entityName: some, contents: [sentence(r, 20), sentence(r, 6)] }], now);
  } else if (choice < 0.8) {
    const [entity] = (await store.graph.openNodes([some])).entities;
    const first = entity?.observations[0];
    if (first !== undefined) await store.graph.deleteObservations([{ entityName: some, observations: [first] }], now);
  } else {
    await store.graph.deleteEntities([some]);
    names.splice(names.indexOf(some), 1);
  }
}

const randomQuery = (r: () => number): string => {
  const words = Array.from(
    { length: 1 + Math.floor(r() * 6) },
    () => (r() < 0.1 ? WORDS[WORDS.length - 1 - Math.floor(r() * 2)] : pick(r)) as string,
  );
  return orOfWords(words) as string; // repeats kept: FTS5 counts a repeated phrase twice
};

describe('top-k keyword index', () => {
  it('ranks plain OR queries exactly as FTS5 bm25() does, on random graphs under random changes', async () => {
    const tmp = tempDir();
    let total = 0;
    for (let seed = 1; seed <= 8; seed++) {
      const r = rng(seed);
      const path = join(tmp.dir, `g${seed}.db`);
      const store = openSqliteStore({ path, vectors: false });
      const size = 40 + Math.floor(r() * 400);
      const names = Array.from({ length: size }, (_, i) => `E${i} ${pick(r)}`);
      await store.graph.createEntities(
        names.map((name) => ({
          name,
          entityType: pick(r),
          observations: Array.from({ length: Math.floor(r() * 5) }, () => sentence(r, 16)),
        })),
        1,
      );
      const fts = new Database(path, { readonly: true });
      // Three paths: the store's own, a store on the same file (another process's view), and a
      // private index that merges its delta after 5 changes (so merges happen in a small graph).
      const other = openSqliteStore({ path, vectors: false });
      const conn = new SqliteConnection({ path, busyTimeoutMs: 5000, vectors: false });
      const merging = new KeywordTopKSync(conn, { mergeMin: 5 });
      const own = checker(
        fts,
        (m, l) => store.keywords.search(keywordExpr(m), l).then((h) => h.map((x) => ({ id: x.id, score: x.bm25 }))),
        `seed ${seed} own`,
        searched,
      );
      const theirs = checker(
        fts,
        (m, l) => other.keywords.search(keywordExpr(m), l).then((h) => h.map((x) => ({ id: x.id, score: x.bm25 }))),
        `seed ${seed} other`,
        searched,
      );
      const merged = checker(fts, async (m, l) => merging.search(wordsTerms(m), l) ?? [], `seed ${seed} merging`);
      await store.keywords.topK?.warm();
      await other.keywords.topK?.warm();
      await merging.warm();
      const next = { n: size };
      // termStats (the pipeline's term pruning) counts from the index: FTS5's own counts, exactly.
      const vocabDf = fts.prepare<[string], { doc: number }>('SELECT doc FROM entity_fts_vocab WHERE term = ?');
      const statsRandom = rng(seed + 1000);
      let statsChecked = 0;
      for (let round = 0; round < 6; round++) {
        for (let q = 0; q < 12; q++) {
          const match = randomQuery(r);
          const limit = r() < 0.2 ? 1000 : 1 + Math.floor(r() * 40);
          await own.run(match, limit);
          await theirs.run(match, limit);
          await merged.run(match, limit);
        }
        for (let q = 0; q < 4; q++) {
          const words = Array.from({ length: 1 + Math.floor(statsRandom() * 6) }, () => pick(statsRandom));
          const want = words.map((word) => ({ word, df: Math.max(0, ...wordTerms(word).map((t) => vocabDf.get(t)?.doc ?? 0)) }));
          expect((await store.keywords.termStats(words)).terms, `seed ${seed} own: ${words.join(' ')}`).toEqual(want);
          expect((await other.keywords.termStats(words)).terms, `seed ${seed} other: ${words.join(' ')}`).toEqual(want);
          statsChecked++;
        }
        for (let m = 0; m < 4 + Math.floor(r() * 12); m++) await mutate(store, r, names, next, 2 + round);
      }
      expect(store.keywords.topKAnswers).toBe(own.checked); // every plain query took the index
      expect(other.keywords.topKAnswers).toBe(theirs.checked);
      expect(store.keywords.termStatsFromIndex).toBe(statsChecked);
      expect(other.keywords.termStatsFromIndex).toBe(statsChecked);
      total += own.checked + theirs.checked + merged.checked;
      fts.close();
      conn.db.close();
      await other.close();
      await store.close();
    }
    expect(total).toBe(8 * 6 * 12 * 3);
    tmp.cleanup();
  }, 120_000);

  it('sees entities changed while it was being built, step by step', async () => {
    const tmp = tempDir();
    const path = join(tmp.dir, 'memory.db');
    const store = openSqliteStore({ path, vectors: false });
    const r = rng(7);
    const names = Array.from({ length: 300 }, (_, i) => `B${i}`);
    await store.graph.createEntities(
      names.map((name) => ({ name, entityType: pick(r), observations: [sentence(r, 12), sentence(r, 12)] })),
      1,
    );
    const fts = new Database(path, { readonly: true });
    const conn = new SqliteConnection({ path, busyTimeoutMs: 5000, vectors: false });
    const index = new KeywordTopKSync(conn, { buildStep: 3 }); // a step per 3 terms: writes land between steps
    expect(index.search(['river'], 10)).toBeUndefined(); // starts the build
    const building = index.warm();
    const next = { n: 300 };
    for (let i = 0; i < 25; i++) {
      await mutate(store, r, names, next, 2);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    await building;
    expect(index.builds).toBe(1);
    expect(index.lastBuildReplayed).toBeGreaterThan(0); // writes did land between its steps
    const check = checker(fts, async (m, l) => index.search(wordsTerms(m), l) ?? [], 'built while written');
    for (let q = 0; q < 40; q++) await check.run(randomQuery(r), 1 + Math.floor(r() * 60));
    expect(check.checked).toBe(40);
    fts.close();
    conn.db.close();
    await store.close();
    tmp.cleanup();
  });

  it("sees another process's writes at the next search", async () => {
    const tmp = tempDir();
    const path = join(tmp.dir, 'memory.db');
    const store = openSqliteStore({ path, vectors: false });
    const r = rng(11);
    await store.graph.createEntities(
      Array.from({ length: 120 }, (_, i) => ({ name: `N${i}`, entityType: 'note', observations: [sentence(r, 12), sentence(r, 12)] })),
      1,
    );
    await store.keywords.topK?.warm();
    const fts = new Database(path, { readonly: true });
    const check = checker(
      fts,
      (m, l) => store.keywords.search(keywordExpr(m), l).then((h) => h.map((x) => ({ id: x.id, score: x.bm25 }))),
      'other process',
      searched,
    );
    await check.run('"zeppelin" OR "river"', 10);
    const writer = join(REPO_ROOT, 'test', 'store', 'keyword-topk-writer.ts');
    await exec(process.execPath, ['--import', 'tsx', writer, path, 'Late', 'zeppelin zeppelin river'], { cwd: REPO_ROOT });
    const [late, n1] = await store.graph.idsByName(['Late', 'N1']);
    const hits = await store.keywords.search(keywordExpr('"zeppelin" OR "river"'), 10);
    expect(hits.slice(0, 2).map((h) => h.id)).toEqual([late, n1]); // the new entity, then the one given the text
    await check.run('"zeppelin" OR "river"', 10);
    for (let q = 0; q < 20; q++) await check.run(randomQuery(r), 1 + Math.floor(r() * 30));
    expect(store.keywords.topKAnswers).toBe(1 + 1 + 1 + 20);
    fts.close();
    await store.close();
    tmp.cleanup();
  }, 60_000);

  it('is saved next to the database and read back at the next start, then replays what others wrote since', async () => {
    const tmp = tempDir();
    const path = join(tmp.dir, 'memory.db');
    const r = rng(5);
    const first = openSqliteStore({ path, vectors: false });
    await first.graph.createEntities(
      Array.from({ length: 150 }, (_, i) => ({ name: `N${i}`, entityType: 'note', observations: [sentence(r, 12), sentence(r, 12)] })),
      1,
    );
    await first.keywords.topK?.warm();
    expect(first.keywords.topK?.loadedFrom).toBe('build');
    await first.close(); // saves
    // Written while no Limbic with an index was running: the next start replays it from the log.
    const writer = openSqliteStore({ path, vectors: false, keywordTopK: false });
    await writer.graph.addObservations([{ entityName: 'N7', contents: ['river river stone lamp'] }], 2);
    await writer.graph.deleteEntities(['N8']);
    await writer.close();
    const fts = new Database(path);
    const start = async (): Promise<SqliteStore> => {
      const store = openSqliteStore({ path, vectors: false });
      await store.keywords.topK?.warm();
      const check = checker(
        fts,
        (m, l) => store.keywords.search(keywordExpr(m), l).then((h) => h.map((x) => ({ id: x.id, score: x.bm25 }))),
        'file',
        searched,
      );
      for (let q = 0; q < 20; q++) await check.run(randomQuery(r), 1 + Math.floor(r() * 30));
      expect(store.keywords.topKAnswers).toBe(20);
      return store;
    };
    const second = await start();
    expect(second.keywords.topK?.loadedFrom).toBe('file');
    expect(second.keywords.topK?.builds).toBe(0);
    await second.close();
    // Not used, and rebuilt, when it is damaged, foreign, or the log no longer reaches back to it.
    const file = `${path}.keywords`;
    const spoilers: [string, () => void][] = [
      [
        'damaged',
        () => {
          const bytes = readFileSync(file);
          bytes[bytes.length - 3] = (bytes[bytes.length - 3] ?? 0) ^ 0xff;
          writeFileSync(file, bytes);
        },
      ],
      ['foreign', () => fts.exec("UPDATE meta SET value = 'another' WHERE key = 'database_id'")],
      ['log pruned', () => fts.exec('DELETE FROM keyword_log')],
    ];
    for (const [label, spoil] of spoilers) {
      const reopened = openSqliteStore({ path, vectors: false });
      await reopened.keywords.topK?.warm();
      expect(reopened.keywords.topK?.loadedFrom, label).toBe('file'); // sound before spoiling
      await reopened.close();
      spoil();
      const rebuilt = await start();
      expect(rebuilt.keywords.topK?.loadedFrom, label).toBe('build');
      expect(rebuilt.keywords.topK?.fileRejected, label).toBeDefined();
      await rebuilt.close();
    }
    fts.close();
    tmp.cleanup();
  }, 60_000);

  it('rebuilds when the log no longer reaches back, and leaves expert syntax to FTS5', async () => {
    const tmp = tempDir();
    const path = join(tmp.dir, 'memory.db');
    const store = openSqliteStore({ path, vectors: false });
    const r = rng(99);
    await store.graph.createEntities(
      Array.from({ length: 200 }, (_, i) => ({ name: `N${i}`, entityType: 'note', observations: [sentence(r, 12), sentence(r, 12)] })),
      1,
    );
    const fts = new Database(path);
    const check = checker(
      fts,
      (m, l) => store.keywords.search(keywordExpr(m), l).then((h) => h.map((x) => ({ id: x.id, score: x.bm25 }))),
      'rebuild',
      searched,
    );
    await check.run('"river" OR "stone" OR "lamp"', 20); // FTS5 answers while the first build runs
    expect(store.keywords.topKAnswers).toBe(0);
    await store.keywords.topK?.warm();
    await check.run('"river" OR "stone" OR "lamp"', 20);
    expect(store.keywords.topKAnswers).toBe(1);
    const builds = store.keywords.topK?.builds;
    await store.graph.addObservations([{ entityName: 'N3', contents: ['river river river stone'] }], 2);
    fts.exec('DELETE FROM keyword_log'); // as if pruned while this process slept
    await check.run('"river" OR "stone" OR "lamp"', 20); // the index is set aside: FTS5 answers
    await store.keywords.topK?.warm();
    expect(store.keywords.topK?.builds).toBe((builds ?? 0) + 1);
    await check.run('"river" OR "stone" OR "lamp"', 20);
    expect(store.keywords.topKAnswers).toBe(2);
    const answered = store.keywords.topKAnswers;
    for (const expert of ['"river stone"', '"river" NOT "lamp"', 'riv*', 'name:"N3"', '"river" AND "stone"']) await check.run(expert, 50);
    expect(store.keywords.topKAnswers).toBe(answered); // none of those went to the index
    fts.close();
    await store.close();
    tmp.cleanup();
  });
});

/** The private index takes stored terms: the test tokenizes through FTS5 as the store does. */
let termDb: Database.Database | undefined;
function termTables(): Database.Database {
  termDb ??= new Database(':memory:');
  termDb.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS q USING fts5(t, tokenize = 'porter unicode61 remove_diacritics 2');
    CREATE VIRTUAL TABLE IF NOT EXISTS qv USING fts5vocab(q, 'instance'); DELETE FROM q;`);
  return termDb;
}

/** Every stored term one word tokenizes to. */
function wordTerms(word: string): string[] {
  const db = termTables();
  db.prepare('INSERT INTO q (rowid, t) VALUES (1, ?)').run(word);
  return db
    .prepare<[], { term: string }>('SELECT term FROM qv')
    .all()
    .map((row) => row.term);
}

function wordsTerms(match: string): string[] {
  termDb = termTables();
  const words = [...match.matchAll(/"((?:[^"]|"")*)"/g)].map((m) => (m[1] ?? '').replaceAll('""', '"'));
  const insert = termDb.prepare('INSERT INTO q (rowid, t) VALUES (?, ?)');
  words.forEach((w, i) => insert.run(i + 1, w));
  const rows = termDb.prepare<[], { term: string; doc: number }>('SELECT term, doc FROM qv').all();
  return words.map((_, i) => rows.find((x) => x.doc === i + 1)?.term ?? '');
}
