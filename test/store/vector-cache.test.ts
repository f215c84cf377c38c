/** The in-memory vector cache: same answers as sqlite-vec, and in step with writes from another connection. */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import usearch from 'usearch';
import { describe, expect, it } from 'vitest';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { VectorCache, type ExactSearch } from '../../src/store/sqlite/vector-cache/vector-cache.js';
import { tempDir } from '../helpers/fixtures.js';

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

async function fill(store: SqliteStore, n: number, dims: number): Promise<void> {
  await store.graph.createEntities(
    Array.from({ length: n }, (_, i) => ({ name: `e${i}`, entityType: 't', observations: [] })),
    1,
  );
  const index = store.requireVectors();
  await index.configure('fake-model', dims);
  const jobs = await index.takeJobs(n);
  const vs = vectors(n, dims);
  await index.put(jobs.map((j, i) => ({ id: j.id, version: j.version, vector: vs[i] ?? new Float32Array(dims) })));
}

describe('vector cache', () => {
  it('returns exactly what sqlite-vec returns (recall@30 = 1)', async () => {
    const tmp = tempDir();
    const path = join(tmp.dir, 'memory.db');
    const cached = openSqliteStore({ path });
    await fill(cached, 2000, 32);
    const plain = openSqliteStore({ path, vectorCache: false });
    for (const q of vectors(20, 32, 99)) {
      const a = await cached.requireVectors().search(q, 30);
      const b = await plain.requireVectors().search(q, 30);
      expect(a.map((h) => h.id)).toEqual(b.map((h) => h.id));
      a.forEach((h, i) => expect(h.distance).toBeCloseTo(b[i]?.distance ?? NaN, 5));
    }
    await cached.close();
    await plain.close();
    tmp.cleanup();
  });

  it('past 4,096 vectors scans int8 and re-scores on float32: recall@30 >= 0.99 against sqlite-vec, exact distances', async () => {
    const tmp = tempDir();
    const path = join(tmp.dir, 'memory.db');
    const cached = openSqliteStore({ path });
    await fill(cached, 6000, 48);
    const plain = openSqliteStore({ path, vectorCache: false });
    let found = 0;
    let wanted = 0;
    for (const q of vectors(25, 48, 77)) {
      const a = await cached.requireVectors().search(q, 30);
      const b = await plain.requireVectors().search(q, 30);
      expect(a).toHaveLength(30);
      const exact = new Map(b.map((h) => [h.id, h.distance]));
      found += a.filter((h) => exact.has(h.id)).length;
      wanted += b.length;
      // Whatever is returned carries its exact float32 distance, best first.
      for (const h of a) if (exact.has(h.id)) expect(h.distance).toBeCloseTo(exact.get(h.id) ?? NaN, 5);
      expect(a.map((h) => h.distance)).toEqual([...a.map((h) => h.distance)].sort((x, y) => x - y));
    }
    expect(found / wanted).toBeGreaterThanOrEqual(0.99);
    // A vector written later with a component beyond the int8 scale is clamped there, and still found first.
    const spike = new Float32Array(48);
    spike[3] = 1;
    await cached.graph.createEntities([{ name: 'spike', entityType: 't', observations: [] }], 2);
    const [job] = (await cached.requireVectors().takeJobs(10)).filter((j) => j.entity.name === 'spike');
    if (job === undefined) throw new Error('no job for spike');
    await cached.requireVectors().put([{ id: job.id, version: job.version, vector: spike }]);
    const [top] = await cached.requireVectors().search(spike, 5);
    expect(top?.id).toBe(job.id);
    expect(top?.distance).toBeCloseTo(0, 5);
    await cached.close();
    await plain.close();
    tmp.cleanup();
  });

  it('sees vectors written and deleted through another connection (another process)', async () => {
    const tmp = tempDir();
    const path = join(tmp.dir, 'memory.db');
    const reader = openSqliteStore({ path });
    const writer = openSqliteStore({ path });
    await fill(writer, 50, 8);
    const probe = vectors(1, 8, 7)[0] ?? new Float32Array(8);
    expect(await reader.requireVectors().search(probe, 100)).toHaveLength(50); // loads the cache
    // The writer adds an entity whose vector is the probe itself, and deletes another.
    await writer.graph.createEntities([{ name: 'twin', entityType: 't', observations: [] }], 2);
    const [job] = (await writer.requireVectors().takeJobs(10)).filter((j) => j.entity.name === 'twin');
    if (job === undefined) throw new Error('no job for twin');
    await writer.requireVectors().put([{ id: job.id, version: job.version, vector: probe }]);
    await writer.graph.deleteEntities(['e0']);
    const hits = await reader.requireVectors().search(probe, 100);
    expect(hits).toHaveLength(50);
    expect(hits[0]?.id).toBe(job.id);
    expect(hits[0]?.distance).toBeCloseTo(0, 5);
    const [e0] = await reader.graph.idsByName(['e0']);
    expect(e0).toBeUndefined();
    await reader.close();
    await writer.close();
    tmp.cleanup();
  });

  it('reloads when the model changes size', async () => {
    const tmp = tempDir();
    const path = join(tmp.dir, 'memory.db');
    const reader = openSqliteStore({ path });
    const writer = openSqliteStore({ path });
    await fill(writer, 20, 8);
    expect(await reader.requireVectors().search(vectors(1, 8)[0] ?? new Float32Array(8), 5)).toHaveLength(5);
    await writer.requireVectors().configure('bigger-model', 16);
    const jobs = await writer.requireVectors().takeJobs(100);
    const vs = vectors(jobs.length, 16, 3);
    await writer.requireVectors().put(jobs.map((j, i) => ({ id: j.id, version: j.version, vector: vs[i] ?? new Float32Array(16) })));
    const hits = await reader.requireVectors().search(vs[4] ?? new Float32Array(16), 3);
    expect(hits[0]?.id).toBe(jobs[4]?.id);
    expect(hits[0]?.distance).toBeCloseTo(0, 5);
    await reader.close();
    await writer.close();
    tmp.cleanup();
  });

  it("reads sqlite-vec's chunks directly, in one go or in the background, exactly as through the table", async () => {
    const tmp = tempDir();
    const path = join(tmp.dir, 'memory.db');
    const store = openSqliteStore({ path, vectorCache: false });
    await fill(store, 3000, 16);
    // Holes (deleted entities) and moved slots (vectors written again).
    await store.graph.deleteEntities(Array.from({ length: 100 }, (_, i) => `e${i * 7}`));
    await store.graph.addObservations(
      Array.from({ length: 50 }, (_, i) => ({ entityName: `e${i * 7 + 1}`, contents: ['changed'] })),
      2,
    );
    const jobs = await store.requireVectors().takeJobs(100);
    const fresh = vectors(jobs.length, 16, 5);
    await store.requireVectors().put(jobs.map((j, i) => ({ id: j.id, version: j.version, vector: fresh[i] ?? new Float32Array(16) })));
    await store.close();

    const db = new Database(path);
    sqliteVec.load(db);
    const exact = usearch.exactSearch as unknown as ExactSearch;
    const rows = VectorCache.load(db, exact, 16, false);
    const chunks = VectorCache.load(db, exact, 16);
    const background = await VectorCache.loadInBackground(db, exact, 16);
    expect([rows.loadedFrom, chunks.loadedFrom, background.loadedFrom]).toEqual(['rows', 'chunks', 'chunks']);
    expect(rows.size).toBe(2900);
    expect(chunks.size).toBe(2900);
    expect(background.size).toBe(2900);
    for (const q of [...vectors(10, 16, 11), ...fresh.slice(0, 5)]) {
      const want = rows.search(q, 50);
      expect(chunks.search(q, 50)).toEqual(want);
      expect(background.search(q, 50)).toEqual(want);
    }
    db.close();
    tmp.cleanup();
  });
});
