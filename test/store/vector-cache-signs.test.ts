/**
 * The vector cache's sign-code scan (large memories): the exact top-k where the pre-filter's
 * margin holds, the int8 scan below SIGN_FROM, and writes and deletes kept in the codes.
 */
import Database from 'better-sqlite3';
import usearch from 'usearch';
import { describe, expect, it } from 'vitest';
import { SignCodes } from '../../src/store/sqlite/vector-cache/sign-codes.js';
import { RESET_ALL, SIGN_FROM, VectorCache, type ExactSearch } from '../../src/store/sqlite/vector-cache/vector-cache.js';

const exact = usearch.exactSearch as unknown as ExactSearch;
const DIMS = 64;

/** Deterministic pseudo-random numbers in [0, 1). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
}

/**
 * Unit vectors in clusters around a shared direction, as text embeddings lie (meaning does not
 * matter here, the geometry does): `n` rows of DIMS, flat.
 */
function clustered(n: number, seed: number): Float32Array {
  const r = random(seed);
  const centres = Array.from({ length: 2000 }, () => Float32Array.from({ length: DIMS }, () => r() - 0.5));
  const out = new Float32Array(n * DIMS);
  for (let row = 0; row < n; row++) {
    const c = centres[Math.floor(r() * centres.length)] as Float32Array;
    let norm = 0;
    for (let j = 0; j < DIMS; j++) {
      const x = 0.3 + c[j]! + 0.15 * (r() - 0.5);
      out[row * DIMS + j] = x;
      norm += x * x;
    }
    for (let j = 0; j < DIMS; j++) out[row * DIMS + j] = out[row * DIMS + j]! / Math.sqrt(norm);
  }
  return out;
}

/** The same geometry in 384 dimensions (e5's), with clusters of a thousand: the nearest fifty are told apart by small differences, as real neighbours are. */
function clustered384(n: number, seed: number): Float32Array {
  const dims = 384;
  const r = random(seed);
  const centres = Array.from({ length: 20 }, () => Float32Array.from({ length: dims }, () => r() - 0.5));
  const out = new Float32Array(n * dims);
  for (let row = 0; row < n; row++) {
    const c = centres[Math.floor(r() * centres.length)] as Float32Array;
    let norm = 0;
    for (let j = 0; j < dims; j++) {
      const x = 0.3 + c[j]! + 0.3 * (r() - 0.5);
      out[row * dims + j] = x;
      norm += x * x;
    }
    for (let j = 0; j < dims; j++) out[row * dims + j] = out[row * dims + j]! / Math.sqrt(norm);
  }
  return out;
}

/** A database holding what the cache reads when it follows the log: the log and the vectors by id. */
function logDb(): Database.Database {
  const db = new Database(':memory:');
  db.exec(`CREATE TABLE vector_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, entity_id INTEGER NOT NULL, nonce INTEGER);
           CREATE TABLE entity_embeddings (rowid INTEGER PRIMARY KEY, embedding BLOB)`);
  return db;
}

const ids = (hits: { id: number }[]): number[] => hits.map((h) => h.id);

describe('vector cache: sign codes', () => {
  it("the kernel's Hamming distances select the same rows as a plain count of differing signs", () => {
    for (const dims of [64, 100, 384]) {
      const r = random(dims);
      const n = 3000;
      const data = Float32Array.from({ length: n * dims }, () => r() - 0.5);
      const centre = Float32Array.from({ length: dims }, () => 0.1 * (r() - 0.5));
      const codes = new SignCodes(dims, n);
      for (let row = 0; row < n; row++) codes.encode(row, data, centre, row * dims);
      const q = Float32Array.from({ length: dims }, () => r() - 0.5);
      const hamming = (row: number): number => {
        let d = 0;
        for (let j = 0; j < dims; j++) if (data[row * dims + j]! > centre[j]! !== q[j]! > centre[j]!) d++;
        return d;
      };
      const want = Array.from({ length: n }, (_, row) => row)
        .sort((a, b) => hamming(a) - hamming(b) || a - b)
        .slice(0, 200);
      expect([...codes.nearest(q, centre, n, 200)].sort((a, b) => a - b)).toEqual(want.sort((a, b) => a - b));
    }
  });

  it("the codes' estimate keeps the rows a plain computation of it ranks first", () => {
    const dims = 384;
    const n = 20_000;
    const all = clustered384(n, 5);
    const centre = new Float32Array(dims);
    for (let row = 0; row < n; row++) for (let j = 0; j < dims; j++) centre[j] = centre[j]! + all[row * dims + j]! / n;
    const codes = new SignCodes(dims, n);
    for (let row = 0; row < n; row++) codes.encode(row, all, centre, row * dims);
    // q·v - q·c, estimated from v's signs: |v - c|² / Σ|v - c| × Σ ±(q - c) + c·(v - c).
    const estimate = (row: number, q: Float32Array): number => {
      let squares = 0;
      let sum = 0;
      let onCentre = 0;
      let signed = 0;
      for (let j = 0; j < dims; j++) {
        const x = all[row * dims + j]! - centre[j]!;
        squares += x * x;
        sum += Math.abs(x);
        onCentre += centre[j]! * x;
        signed += x > 0 ? q[j]! - centre[j]! : centre[j]! - q[j]!;
      }
      return (squares / sum) * signed + onCentre;
    };
    const r = random(6);
    for (let probe = 0; probe < 5; probe++) {
      const from = Math.floor(r() * n);
      const q = all.slice(from * dims, (from + 1) * dims).map((x) => x + 0.02 * (r() - 0.5));
      const rows = Array.from({ length: n }, (_, row) => row);
      const scores = rows.map((row) => estimate(row, q));
      const cut = [...scores].sort((a, b) => b - a)[999]!;
      const chosen = [...codes.closest(q, centre, codes.nearest(q, centre, n, n), 1000)];
      expect(chosen).toHaveLength(1000);
      for (const row of chosen) expect(scores[row]!).toBeGreaterThanOrEqual(cut - 1e-4);
    }
  });

  it("keeps the estimate's factors with the codes when rows move and the codes grow", () => {
    const dims = 384;
    const n = 3000;
    const all = clustered384(n, 7);
    const centre = new Float32Array(dims).fill(0.01);
    const moved = new SignCodes(dims, n);
    for (let row = 0; row < n; row++) moved.encode(row, all, centre, row * dims);
    // Row 0's place takes the last row's vector, as a delete does; then the codes grow.
    moved.move(n - 1, 0);
    const grown = moved.grown(2 * n, n - 1);
    const fresh = new SignCodes(dims, n);
    const order = [n - 1, ...Array.from({ length: n - 2 }, (_, i) => i + 1)];
    order.forEach((from, row) => fresh.encode(row, all, centre, from * dims));
    const q = all.slice(10 * dims, 11 * dims);
    const pick = (codes: SignCodes): number[] =>
      [...codes.closest(q, centre, codes.nearest(q, centre, n - 1, 1500), 100)].sort((a, b) => a - b);
    expect(pick(grown)).toEqual(pick(fresh));
    expect(grown.codes.subarray(0, (n - 1) * grown.bytes)).toEqual(fresh.codes.subarray(0, (n - 1) * fresh.bytes));
    expect(grown.factors.subarray(0, 2 * (n - 1))).toEqual(fresh.factors.subarray(0, 2 * (n - 1)));
  });

  it('from SIGN_FROM vectors scans the sign codes and returns the exact top-k (where their margin holds); below, the int8 scan', () => {
    const n = SIGN_FROM + 1000;
    const vectors = clustered(n, 1);
    const all = Float64Array.from({ length: n }, (_, i) => i + 1);
    const db = logDb();
    const large = VectorCache.fromVectors(db, exact, DIMS, all, vectors);
    const small = VectorCache.fromVectors(db, exact, DIMS, all.subarray(0, SIGN_FROM - 1), vectors.subarray(0, (SIGN_FROM - 1) * DIMS));
    expect(large.scansSigns).toBe(true);
    expect(small.scansSigns).toBe(false);
    const r = random(9);
    for (let i = 0; i < 20; i++) {
      const row = Math.floor(r() * n);
      const q = vectors.slice(row * DIMS, (row + 1) * DIMS).map((x) => x + 0.05 * (r() - 0.5));
      const want = large.search(q, 30, { scan: 'float32' });
      const got = large.search(q, 30);
      expect(ids(got)).toEqual(ids(want));
      got.forEach((h, j) => expect(h.distance).toBeCloseTo(want[j]?.distance ?? NaN, 5));
      expect(ids(small.search(q, 30))).toEqual(ids(small.search(q, 30, { scan: 'float32' })));
    }
    db.close();
  }, 180_000); // 200k vectors: seconds on an idle machine, tens under load

  it('keeps the codes in step with written, moved and deleted vectors, and rebuilds them on a reset', () => {
    const n = SIGN_FROM + 10;
    const vectors = clustered(n, 2);
    const db = logDb();
    const insert = db.prepare<[number, Buffer]>('INSERT OR REPLACE INTO entity_embeddings (rowid, embedding) VALUES (?, ?)');
    const log = db.prepare<[number]>('INSERT INTO vector_log (entity_id, nonce) VALUES (?, 0)');
    const blob = (v: Float32Array): Buffer => Buffer.from(v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength));
    const all = Float64Array.from({ length: n }, (_, i) => i + 1);
    db.transaction(() => {
      for (let i = 0; i < n; i++) insert.run(i + 1, blob(vectors.subarray(i * DIMS, (i + 1) * DIMS)));
    })();
    const cache = VectorCache.fromVectors(db, exact, DIMS, all, vectors);
    const q = vectors.slice(123 * DIMS, 124 * DIMS);
    const before = ids(cache.search(q, 10));
    expect(before[0]).toBe(124);

    // Delete the best 5 (rows from the end move into their places), write the query itself under a
    // new id (the arrays grow past their spare room: 2,000 new rows), and move another vector to the query's twin.
    const extra = 2000 + (n >> 6);
    const fresh = clustered(extra, 3);
    db.transaction(() => {
      for (const id of before.slice(0, 5)) {
        db.prepare('DELETE FROM entity_embeddings WHERE rowid = ?').run(id);
        log.run(id);
      }
      for (let i = 0; i < extra; i++) {
        insert.run(n + 1 + i, blob(fresh.subarray(i * DIMS, (i + 1) * DIMS)));
        log.run(n + 1 + i);
      }
      insert.run(n + 1, blob(q));
      insert.run(7, blob(q.map((x, j) => (j === 0 ? x + 0.01 : x))));
      log.run(7);
    })();
    expect(cache.sync()).toBe(true);
    expect(cache.size).toBe(n - 5 + extra);
    expect(cache.scansSigns).toBe(true);
    const r = random(4);
    for (const probe of [q, ...Array.from({ length: 10 }, () => vectors.slice(Math.floor(r() * (n - 5)) * DIMS).subarray(0, DIMS))]) {
      expect(ids(cache.search(probe, 20))).toEqual(ids(cache.search(probe, 20, { scan: 'float32' })));
    }
    const top = ids(cache.search(q, 3));
    expect(top.slice(0, 2)).toEqual([n + 1, 7]);
    for (const id of before.slice(0, 5)) expect(top).not.toContain(id);

    // A reset (a new model) reloads: the codes are built again for what the table now holds.
    log.run(RESET_ALL);
    expect(cache.sync()).toBe(false);
    cache.reload();
    expect(cache.loadedFrom).toBe('rows');
    expect(cache.scansSigns).toBe(true);
    expect(ids(cache.search(q, 20))).toEqual(ids(cache.search(q, 20, { scan: 'float32' })));
    db.close();
  }, 180_000); // 200k vectors: seconds on an idle machine, tens under load
});
