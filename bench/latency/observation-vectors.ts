/**
 * What observation vectors cost the vector leg: 10,000 entities with their own vectors (held in
 * the in-memory int8 cache), plus L long entities of 50 observations each, whose observation
 * vectors sqlite-vec scans in full on every search (they are not in the cache). The vector search
 * at depth 150 (hybrid_search's), p50 and p95 over 200 queries, for L = 0 (no observation vectors:
 * nothing more is read), 20, 200 and 2,000 (1k, 10k and 100k observation vectors).
 * Vectors are random unit vectors: the scan's cost does not depend on them, only its answers do,
 * which tests/quality benches measure with the real model.
 *
 * `npx tsx bench/latency/observation-vectors.ts` (about 2 min) prints a markdown table.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EntityId, NewEntity } from '../../src/core/types.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { rng } from './generate.js';

const DIMS = 384;
const ENTITIES = 10_000;
const OBSERVATIONS = 50;
const QUERIES = 200;
const random = rng(18);

function unitVector(): Float32Array {
  const v = Float32Array.from({ length: DIMS }, () => random() - 0.5);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

const quantile = (xs: number[], q: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
};

const rows: string[] = [];
for (const long of [0, 20, 200, 2_000]) {
  const dir = mkdtempSync(join(tmpdir(), 'limbic-obs-bench-'));
  const store = openSqliteStore({ path: join(dir, 'memory.db') });
  try {
    const vectors = store.requireVectors();
    await vectors.configure('fake-random', DIMS);
    const entities: NewEntity[] = Array.from({ length: ENTITIES }, (_, i) => ({
      name: `e${i}`,
      entityType: 'note',
      observations: i < long ? Array.from({ length: OBSERVATIONS }, (_, k) => `o${k}`) : ['o'],
    }));
    for (let i = 0; i < entities.length; i += 1_000) await store.graph.createEntities(entities.slice(i, i + 1_000), 0);
    for (;;) {
      const jobs = await vectors.takeJobs(1_000);
      if (jobs.length === 0) break;
      await vectors.put(
        jobs.map((j) => ({
          id: j.id as EntityId,
          version: j.version,
          vector: unitVector(),
          ...(j.entity.observations.length > 1 ? { observations: j.entity.observations.map(() => unitVector()) } : {}),
        })),
      );
    }
    await vectors.warm();
    const times: number[] = [];
    for (let q = 0; q < QUERIES + 20; q++) {
      const query = unitVector();
      const t0 = performance.now();
      await vectors.search(query, 150);
      if (q >= 20) times.push(performance.now() - t0); // the first 20 warm the statements
    }
    rows.push(
      `| ${long} | ${(long * OBSERVATIONS).toLocaleString('en')} | ${quantile(times, 0.5).toFixed(2)} | ${quantile(times, 0.95).toFixed(2)} |`,
    );
    process.stderr.write(`${long} long entities done\n`);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log(
  [
    `Vector search at depth 150 over ${ENTITIES.toLocaleString('en')} entities (Node ${process.version}):`,
    '',
    '| long entities | observation vectors | p50 ms | p95 ms |',
    '|---|---|---|---|',
    ...rows,
  ].join('\n'),
);
