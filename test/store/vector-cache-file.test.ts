/**
 * The vector cache file next to the database (issue 10, cold start): a restart reads it and replays
 * the log since, with the same answers as a load from sqlite-vec; a file that does not fit the
 * database is never trusted, and is replaced.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, readdirSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { describe, expect, it } from 'vitest';
import type { Logger } from '../../src/core/logger.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import {
  peekVectorFile,
  readVectorFile,
  vectorFilePath,
  writeVectorFile,
  type VectorFileBody,
} from '../../src/store/sqlite/vector-cache/vector-cache-file.js';
import { VectorCache } from '../../src/store/sqlite/vector-cache/vector-cache.js';
import { VectorCacheKeeper, refreshAfter } from '../../src/store/sqlite/vector-cache/vector-cache-keeper.js';
import { REPO_ROOT, tempDir } from '../helpers/fixtures.js';

const exec = promisify(execFile);
const DIMS = 16;

/** Deterministic pseudo-random unit vectors (meaning does not matter here). */
function vectors(n: number, dims: number, seed = 1): Float32Array[] {
  let s = seed;
  const rand = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32 - 0.5;
  return Array.from({ length: n }, () => {
    const v = Float32Array.from({ length: dims }, rand);
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  });
}

/** Gives every queued entity a vector. */
async function embedQueued(store: SqliteStore, dims: number, seed: number): Promise<number[]> {
  const jobs = await store.requireVectors().takeJobs(100_000);
  const vs = vectors(jobs.length, dims, seed);
  await store.requireVectors().put(jobs.map((j, i) => ({ id: j.id, version: j.version, vector: vs[i] ?? new Float32Array(dims) })));
  return jobs.map((j) => j.id);
}

async function fill(store: SqliteStore, n: number, dims: number, seed = 1): Promise<void> {
  await store.graph.createEntities(
    Array.from({ length: n }, (_, i) => ({ name: `e${i}`, entityType: 't', observations: [] })),
    1,
  );
  await store.requireVectors().configure('fake-model', dims);
  await embedQueued(store, dims, seed);
}

/** Keeps what the store reports, to assert on it. */
function recordingLogger(): Logger & { infos: string[]; warnings: string[] } {
  const infos: string[] = [];
  const warnings: string[] = [];
  return { infos, warnings, info: (m) => infos.push(m), warn: (m) => warnings.push(m) };
}

const QUERIES = vectors(4, DIMS, 99);

/** Full rankings (every vector's distance) and top-30 lists for QUERIES. */
async function answers(store: SqliteStore, all: number): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const q of QUERIES) out.push(await store.requireVectors().search(q, all), await store.requireVectors().search(q, 30));
  return out;
}

/** The same answers from a cache loaded from sqlite-vec's storage, with no file involved. */
async function reference(path: string, all: number): Promise<unknown[]> {
  const store = openSqliteStore({ path, vectorCacheFile: false });
  const out = await answers(store, all);
  expect(await store.requireVectors().cacheSource()).toBe('chunks');
  await store.close();
  return out;
}

/** A database of `n` vectors whose cache file was saved (at close, after a load from sqlite-vec). */
async function savedDatabase(dir: string, n = 2000, name = 'memory.db'): Promise<string> {
  const path = join(dir, name);
  const store = openSqliteStore({ path });
  await fill(store, n, DIMS);
  await store.requireVectors().warm();
  expect(await store.requireVectors().cacheSource()).toBe('chunks');
  await store.close();
  expect(existsSync(vectorFilePath(path))).toBe(true);
  return path;
}

/** Opens the store, loads its cache, and says where it came from. */
async function reopen(
  path: string,
  logger = recordingLogger(),
): Promise<{ store: SqliteStore; source: string | undefined; logger: typeof logger }> {
  const store = openSqliteStore({ path, logger });
  await store.requireVectors().warm();
  return { store, source: await store.requireVectors().cacheSource(), logger };
}

describe('vector cache file', () => {
  it('is saved at close and read back at the next start, answering exactly as a load from sqlite-vec', async () => {
    const tmp = tempDir();
    const path = join(tmp.dir, 'memory.db');
    const first = openSqliteStore({ path });
    // Past 4,096 vectors, so the int8 scan (and the saved int8 copy) is used; with holes and moved slots.
    await fill(first, 6000, 48);
    await first.graph.deleteEntities(Array.from({ length: 100 }, (_, i) => `e${i * 7}`));
    await first.graph.addObservations(
      Array.from({ length: 50 }, (_, i) => ({ entityName: `e${i * 7 + 1}`, contents: ['changed'] })),
      2,
    );
    await embedQueued(first, 48, 5);
    const queries = vectors(4, 48, 77);
    const expected: unknown[] = [];
    for (const q of queries) expected.push(await first.requireVectors().search(q, 6000), await first.requireVectors().search(q, 30));
    expect(await first.requireVectors().cacheSource()).toBe('chunks');
    await first.close();
    const header = await peekVectorFile(vectorFilePath(path));
    expect(header).toMatchObject({ dims: 48, count: 5900, model: 'fake-model' });

    const { store, source, logger } = await reopen(path);
    expect(source).toBe('file');
    for (const [i, q] of queries.entries()) {
      expect(await store.requireVectors().search(q, 6000)).toEqual(expected[2 * i]);
      expect(await store.requireVectors().search(q, 30)).toEqual(expected[2 * i + 1]);
    }
    expect(logger.warnings).toEqual([]);
    await store.close();
    tmp.cleanup();
  });

  it('replays what was written after it was saved, and is not rewritten for a few changes', async () => {
    const tmp = tempDir();
    const path = await savedDatabase(tmp.dir);
    const savedAt = (await peekVectorFile(vectorFilePath(path)))?.seq;
    // Another process adds an entity whose vector is the probe, deletes one, and changes another's vector.
    const writer = openSqliteStore({ path, vectorCacheFile: false });
    const probe = vectors(1, DIMS, 7)[0] ?? new Float32Array(DIMS);
    await writer.graph.createEntities([{ name: 'twin', entityType: 't', observations: [] }], 2);
    const [twin] = await writer.requireVectors().takeJobs(10);
    if (twin === undefined) throw new Error('no job for twin');
    await writer.requireVectors().put([{ id: twin.id, version: twin.version, vector: probe }]);
    const [gone] = await writer.graph.idsByName(['e0']);
    await writer.graph.deleteEntities(['e0']);
    await writer.graph.addObservations([{ entityName: 'e1', contents: ['changed'] }], 3);
    await embedQueued(writer, DIMS, 11);
    await writer.close();

    const { store, source } = await reopen(path);
    expect(source).toBe('file');
    expect(await answers(store, 3000)).toEqual(await reference(path, 3000));
    const hits = await store.requireVectors().search(probe, 2000);
    expect(hits).toHaveLength(2000);
    expect(hits[0]?.id).toBe(twin.id);
    expect(hits[0]?.distance).toBeCloseTo(0, 5);
    expect(hits.some((h) => h.id === gone)).toBe(false);
    await store.close();
    // Three log entries behind: replaying them costs less than rewriting the file.
    expect((await peekVectorFile(vectorFilePath(path)))?.seq).toBe(savedAt);
    tmp.cleanup();
  });

  it('is saved again once it falls refreshAfter() log entries behind: at close, and after a search (on a timer)', async () => {
    const tmp = tempDir();
    const path = await savedDatabase(tmp.dir);
    const file = vectorFilePath(path);
    const rewriteAll = async (seed: number): Promise<void> => {
      const writer = openSqliteStore({ path, vectorCacheFile: false });
      await writer.requireVectors().requeueAll();
      await embedQueued(writer, DIMS, seed);
      await writer.close();
    };
    expect(refreshAfter(2000)).toBe(1000);

    // 2,000 entries behind: the next start replays them, and its close saves the file again.
    await rewriteAll(21);
    const first = await reopen(path);
    expect(first.source).toBe('file');
    await first.store.close();
    const latest = (): number => {
      const reader = new Database(path, { readonly: true });
      const seq = reader.prepare<[], { seq: number }>("SELECT seq FROM sqlite_sequence WHERE name = 'vector_log'").get()?.seq ?? 0;
      reader.close();
      return seq;
    };
    expect((await peekVectorFile(file))?.seq).toBe(latest());

    // A running process: a search applies another 2,000 entries; the save follows on a timer, off the search.
    const db = new Database(path);
    sqliteVec.load(db);
    const { default: usearch } = await import('usearch');
    const keeper = new VectorCacheKeeper(db, file, recordingLogger(), { saveDelayMs: 20 });
    const cache = await keeper.load(usearch.exactSearch as never, DIMS);
    expect(cache.loadedFrom).toBe('file');
    await rewriteAll(22);
    const before = readFileSync(file);
    expect(cache.sync()).toBe(true);
    keeper.noteSynced(cache);
    expect(readFileSync(file).equals(before)).toBe(true); // nothing written on the search's path
    for (let i = 0; i < 200 && (await peekVectorFile(file))?.seq !== latest(); i++) await new Promise((r) => setTimeout(r, 25));
    expect((await peekVectorFile(file))?.seq).toBe(latest());
    await keeper.close();
    db.close();
    tmp.cleanup();
  });

  /** Each case spoils the file or the database; the store must load from sqlite-vec and say why. */
  const spoilers: { name: string; level: 'info' | 'warn'; reason: RegExp; spoil: (path: string, dir: string) => Promise<void> }[] = [
    {
      name: 'the log was pruned past its position',
      level: 'info',
      reason: /no longer reaches back/,
      spoil: async (path) => {
        const writer = openSqliteStore({ path, vectorCacheFile: false });
        await writer.graph.addObservations([{ entityName: 'e1', contents: ['changed'] }], 2);
        await embedQueued(writer, DIMS, 3);
        await writer.close();
        // What vectors.put() does past LOG_KEEP entries, without writing 100,000 of them.
        const db = new Database(path);
        db.exec('DELETE FROM vector_log WHERE seq < (SELECT max(seq) FROM vector_log)');
        db.close();
      },
    },
    {
      name: 'the vectors were reset after it was saved (a model change, then back)',
      level: 'info',
      reason: /reset/,
      spoil: async (path) => {
        const writer = openSqliteStore({ path, vectorCacheFile: false });
        await writer.requireVectors().configure('other-model', DIMS);
        await writer.requireVectors().configure('fake-model', DIMS);
        await embedQueued(writer, DIMS, 4);
        await writer.close();
      },
    },
    {
      name: 'it holds vectors of another size',
      level: 'info',
      reason: /16 dims/,
      spoil: async (path) => {
        const writer = openSqliteStore({ path, vectorCacheFile: false });
        await writer.requireVectors().configure('fake-model', DIMS * 2);
        await embedQueued(writer, DIMS * 2, 4);
        await writer.close();
      },
    },
    {
      name: 'it was copied next to another database (with the same vectors)',
      level: 'warn',
      reason: /another database/,
      spoil: async (path, dir) => {
        const other = await savedDatabase(dir, 2000, 'other.db');
        copyFileSync(vectorFilePath(other), vectorFilePath(path));
      },
    },
    {
      name: 'it comes from a copy of this database that went its own way',
      level: 'warn',
      reason: /differs/,
      spoil: async (path, dir) => {
        const copy = join(dir, 'copy.db');
        copyFileSync(path, copy);
        for (const [file, entity] of [
          [path, 'e5'],
          [copy, 'e6'],
        ] as const) {
          const s = openSqliteStore({ path: file, vectorCacheFile: file === copy });
          await s.graph.addObservations([{ entityName: entity, contents: ['changed'] }], 2);
          await embedQueued(s, DIMS, 9);
          await s.requireVectors().warm();
          await s.close();
        }
        // The copy's cache file was saved at close (a full load): put it next to the original.
        copyFileSync(vectorFilePath(copy), vectorFilePath(path));
      },
    },
    {
      name: "its vectors are not the database's, under sound checksums",
      level: 'warn',
      reason: /vector of entity \d+ differs from the database's/,
      spoil: async (path) => rewriteFile(path, (body) => ({ ...body, vectors: body.vectors.map((x) => -x) })),
    },
    {
      name: 'it lacks a vector, under sound checksums',
      level: 'warn',
      reason: /holds 1999 vectors once the log is replayed where the database holds 2000/,
      spoil: async (path) =>
        rewriteFile(path, (body) => ({
          ids: body.ids.subarray(1),
          vectors: body.vectors.subarray(DIMS),
          quantized: body.quantized.subarray(DIMS),
        })),
    },
    {
      name: 'it is truncated',
      level: 'warn',
      reason: /truncated/,
      spoil: async (path) => truncateSync(vectorFilePath(path), 70_000),
    },
    {
      name: 'a byte of a vector changed',
      level: 'warn',
      reason: /checksum/,
      spoil: async (path) => flipByte(vectorFilePath(path), 40_000),
    },
    {
      name: 'its header is damaged',
      level: 'warn',
      reason: /header/,
      spoil: async (path) => flipByte(vectorFilePath(path), 20),
    },
    {
      name: 'it is not a vector cache file at all',
      level: 'warn',
      reason: /not a Limbic vector cache file/,
      spoil: async (path) => writeFileSync(vectorFilePath(path), 'x'.repeat(4096)),
    },
  ];

  for (const { name, level, reason, spoil } of spoilers) {
    it(`is not used when ${name}: the vectors come from sqlite-vec and the file is saved again`, async () => {
      const tmp = tempDir();
      const path = await savedDatabase(tmp.dir);
      await spoil(path, tmp.dir);
      const dims = new Database(path).prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'vector_dims'").get()?.value;
      const all = 3000;

      const { store, source, logger } = await reopen(path);
      expect(source).toBe('chunks');
      const messages = level === 'warn' ? logger.warnings : logger.infos;
      expect(messages).toHaveLength(1);
      expect(messages[0]).toMatch(reason);
      if (Number(dims) === DIMS) expect(await answers(store, all)).toEqual(await reference(path, all));
      await store.close();

      const again = await reopen(path);
      expect(again.source).toBe('file');
      expect([...again.logger.warnings, ...again.logger.infos]).toEqual([]);
      if (Number(dims) === DIMS) expect(await answers(again.store, all)).toEqual(await reference(path, all));
      await again.store.close();
      tmp.cleanup();
    });
  }

  it('abandons a save when the cache changes during the write, leaving nothing behind', async () => {
    const tmp = tempDir();
    const path = await savedDatabase(tmp.dir);
    const file = vectorFilePath(path);
    const before = readFileSync(file);
    const db = new Database(path);
    sqliteVec.load(db);
    const { default: usearch } = await import('usearch');
    const cache = VectorCache.load(db, usearch.exactSearch as never, DIMS);
    const snapshot = cache.snapshot();
    if (snapshot === undefined) throw new Error('no snapshot');
    let asked = 0;
    const header = { ...snapshot.header, databaseId: 'x', model: 'fake-model' };
    expect(await writeVectorFile(file, header, snapshot.body, () => ++asked < 2)).toBe(false);
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(readdirSync(tmp.dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    db.close();
    tmp.cleanup();
  });

  it("removes temp files left by a writer that died, and keeps a live writer's", async () => {
    const tmp = tempDir();
    const path = await savedDatabase(tmp.dir);
    const dead = `${vectorFilePath(path)}.2147483646-00aa00aa00aa.tmp`;
    const live = `${vectorFilePath(path)}.${process.pid}-00bb00bb00bb.tmp`;
    writeFileSync(dead, 'left by a killed process');
    writeFileSync(live, 'being written');
    const { store, source } = await reopen(path);
    expect(source).toBe('file');
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(live)).toBe(true);
    await store.close();
    tmp.cleanup();
  });

  it('two processes writing it at once never leave a damaged or mixed file, and a reader never sees one', async () => {
    const tmp = tempDir();
    const path = await savedDatabase(tmp.dir, 6000);
    const file = vectorFilePath(path);
    const db = new Database(path);
    sqliteVec.load(db);
    const meta = (key: string): string =>
      db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?').get(key)?.value ?? '';
    const expect_ = { dims: DIMS, model: meta('vector_model'), databaseId: meta('database_id') };
    const writer = join(REPO_ROOT, 'test', 'helpers', 'vector-file-writer.ts');
    let running = 2;
    const writers = [1, 2].map(() =>
      exec(process.execPath, ['--import', 'tsx', writer, path, '20'], { cwd: REPO_ROOT }).finally(() => running--),
    );
    const kinds = new Map<string, number>();
    while (running > 0) {
      const read = await readVectorFile(file, expect_, (h) => VectorCache.replayableFrom(db, h.seq, h.seqEntity), VectorCache.allocate);
      const key = read.kind === 'rejected' ? `rejected: ${read.reason}` : read.kind;
      kinds.set(key, (kinds.get(key) ?? 0) + 1);
    }
    await Promise.all(writers);
    expect([...kinds.keys()]).toEqual(['read']);
    expect(kinds.get('read')).toBeGreaterThan(0);
    expect(readdirSync(tmp.dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    db.close();
    const { store, source } = await reopen(path);
    expect(source).toBe('file');
    expect(await answers(store, 6000)).toEqual(await reference(path, 6000));
    await store.close();
    tmp.cleanup();
  }, 60_000);
});

/** Writes the file again, validly framed and checksummed, with `edit` applied to what it holds. */
async function rewriteFile(path: string, edit: (body: VectorFileBody) => VectorFileBody): Promise<void> {
  const db = new Database(path);
  sqliteVec.load(db);
  const meta = (key: string): string =>
    db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?').get(key)?.value ?? '';
  const { default: usearch } = await import('usearch');
  const snapshot = VectorCache.load(db, usearch.exactSearch as never, DIMS).snapshot();
  if (snapshot === undefined) throw new Error('no snapshot');
  const body = edit(snapshot.body);
  const header = { ...snapshot.header, count: body.ids.length, databaseId: meta('database_id'), model: meta('vector_model') };
  expect(await writeVectorFile(vectorFilePath(path), header, body, () => true)).toBe(true);
  db.close();
}

function flipByte(file: string, offset: number): void {
  const bytes = readFileSync(file);
  bytes[offset] = (bytes[offset] ?? 0) ^ 0x40;
  writeFileSync(file, bytes);
}
