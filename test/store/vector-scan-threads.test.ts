/**
 * The sign-code scan on two threads (scan-helper.ts): a worker sharing the codes scans half the
 * rows; the rows chosen are the ones one thread chooses, a helper that is gone leaves the whole
 * scan to the caller, and a large cache starts its worker by itself and ends it on close.
 */
import Database from 'better-sqlite3';
import usearch from 'usearch';
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../helpers/fixtures.js';
import { ScanHelper } from '../../src/store/sqlite/vector-cache/scan-helper.js';
import { SignCodes } from '../../src/store/sqlite/vector-cache/sign-codes.js';
import { SIGN_FROM, VectorCache, type ExactSearch } from '../../src/store/sqlite/vector-cache/vector-cache.js';

const exact = usearch.exactSearch as unknown as ExactSearch;

/** Deterministic pseudo-random numbers in [0, 1). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
}

/** `n` vectors of `dims` around a few directions (meaning does not matter here, ties and margins do). */
function vectors(n: number, dims: number, seed: number): Float32Array {
  const r = random(seed);
  const centres = Array.from({ length: 50 }, () => Float32Array.from({ length: dims }, () => r() - 0.5));
  const out = new Float32Array(n * dims);
  for (let row = 0; row < n; row++) {
    const c = centres[Math.floor(r() * centres.length)] as Float32Array;
    for (let j = 0; j < dims; j++) out[row * dims + j] = 0.2 + c[j]! + 0.3 * (r() - 0.5);
  }
  return out;
}

const sorted = (rows: Uint32Array | undefined): number[] => [...(rows ?? [])].sort((a, b) => a - b);

describe('vector cache: the sign-code scan on two threads', () => {
  it('chooses the rows one thread chooses, for codes of one and of several words, and an odd count of rows', async () => {
    const helper = await ScanHelper.start();
    try {
      for (const dims of [64, 384]) {
        const n = 20_003;
        const data = vectors(n, dims, dims);
        const centre = new Float32Array(dims).fill(0.2);
        const alone = new SignCodes(dims, n);
        const shared = new SignCodes(dims, n, helper, 0);
        for (let row = 0; row < n; row++) {
          alone.encode(row, data, centre, row * dims);
          shared.encode(row, data, centre, row * dims);
        }
        const r = random(dims + 1);
        for (let probe = 0; probe < 5; probe++) {
          const q = data.slice(Math.floor(r() * n) * dims).subarray(0, dims);
          for (const want of [1, 700, 5000])
            expect(sorted(shared.nearest(q, centre, n, want))).toEqual(sorted(alone.nearest(q, centre, n, want)));
        }
        expect(shared.splits).toBe(15);
        expect(alone.splits).toBe(0);
      }
    } finally {
      helper.close();
    }
  });

  it('scans alone, with the same rows, once its helper is gone', async () => {
    const dims = 384;
    const n = 10_001;
    const data = vectors(n, dims, 3);
    const centre = new Float32Array(dims).fill(0.2);
    const helper = await ScanHelper.start();
    const alone = new SignCodes(dims, n);
    const shared = new SignCodes(dims, n, helper, 0);
    for (let row = 0; row < n; row++) {
      alone.encode(row, data, centre, row * dims);
      shared.encode(row, data, centre, row * dims);
    }
    const q = data.slice(5 * dims, 6 * dims);
    expect(sorted(shared.nearest(q, centre, n, 500))).toEqual(sorted(alone.nearest(q, centre, n, 500)));
    helper.close();
    expect(sorted(shared.nearest(q, centre, n, 500))).toEqual(sorted(alone.nearest(q, centre, n, 500)));
    expect(shared.splits).toBe(1);
  });

  it('a cache past its split size starts the worker itself, answers as on one thread, and ends the worker on close', async () => {
    const dims = 64;
    const n = SIGN_FROM + 1000;
    const data = vectors(n, dims, 5);
    const db = new Database(':memory:');
    db.exec('CREATE TABLE vector_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, entity_id INTEGER NOT NULL, nonce INTEGER)');
    const cache = VectorCache.fromVectors(
      db,
      exact,
      dims,
      Float64Array.from({ length: n }, (_, i) => i + 1),
      data,
    );
    const r = random(6);
    const probes = Array.from({ length: 10 }, () =>
      data
        .slice(Math.floor(r() * n) * dims)
        .subarray(0, dims)
        .map((x) => x + 0.05 * (r() - 0.5)),
    );
    const alone = probes.map((q) => cache.search(q, 30));
    expect(cache.scanThreads).toBe(1);
    cache.splitScanFrom(SIGN_FROM);
    cache.search(probes[0]!, 10); // starts the worker; this search scans alone
    for (let i = 0; i < 200 && cache.scanThreads === 1; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(cache.scanThreads).toBe(2);
    probes.forEach((q, i) => expect(cache.search(q, 30)).toEqual(alone[i]));
    expect(cache.splitScans).toBe(10);
    cache.close();
    expect(cache.scanThreads).toBe(1);
    db.close();
  }, 180_000); // 200k vectors: seconds on an idle machine, tens under load

  it('a store hands its vectorSplitFrom to the cache, whose first search past it starts the worker, and close ends it', async () => {
    const tmp = tempDir();
    const store = openSqliteStore({ path: join(tmp.dir, 'memory.db'), vectorSplitFrom: 3 });
    try {
      await store.graph.createEntities(
        Array.from({ length: 5 }, (_, i) => ({ name: `e${i}`, entityType: 't', observations: [] })),
        1,
      );
      const index = store.requireVectors();
      await index.configure('fake-model', 8);
      const jobs = await index.takeJobs(5);
      const data = vectors(5, 8, 9);
      await index.put(jobs.map((j, i) => ({ id: j.id, version: j.version, vector: data.slice(i * 8, (i + 1) * 8) })));
      expect(await index.search(data.slice(0, 8), 2)).toHaveLength(2);
      for (let i = 0; i < 200 && (await index.scanThreads()) === 1; i++) await new Promise((resolve) => setTimeout(resolve, 25));
      expect(await index.scanThreads()).toBe(2);
    } finally {
      await store.close();
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await store.requireVectors().scanThreads()).toBe(1);
    tmp.cleanup();
  });
});
