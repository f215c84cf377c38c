/**
 * What observation vectors cost the vector leg: 10,000 entities with their own vectors (held in
 * the in-memory int8 cache), plus L long entities of 50 observations each, whose observation
 * vectors sqlite-vec scans in full on every search (they are not in the cache). The vector search
 * at depth 150 (hybrid_search's), p50 and p95 over 200 queries, for L = 0 (no observation vectors:
 * nothing more is read), 20, 200 and 2,000 (1k, 10k and 100k observation vectors).
 * Vectors are random unit vectors: the scan's cost does not depend on them, only its answers do,
 * which tests/quality benches measure with the real model.
 *
 * The same on PostgreSQL (pgvector HNSW, the observation vectors in a table and index of their own,
 * both read by one query), beside the query the store ran before, for entities only: L = 0 and 200.
 *
 * `npx tsx bench/latency/observation-vectors.ts` (about 3 min) prints markdown tables.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { EntityId, NewEntity } from '../../src/core/types.js';
import { openPgStore } from '../../src/store/postgres/pg-store.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import type { VectorIndex } from '../../src/store/vector-index.js';
import { startPgServer } from '../../test/helpers/pg-server.js';
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

/** 10,000 entities, the first `long` of them with 50 observations and a vector for each. */
async function fill(store: Store & { requireVectors(): VectorIndex }, long: number): Promise<void> {
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
}

/** p50 and p95 in ms of `search` over 200 random queries, after 20 that warm it. */
async function time(search: (query: Float32Array) => Promise<unknown>): Promise<[number, number]> {
  const times: number[] = [];
  for (let q = 0; q < QUERIES + 20; q++) {
    const query = unitVector();
    const t0 = performance.now();
    await search(query);
    if (q >= 20) times.push(performance.now() - t0);
  }
  return [quantile(times, 0.5), quantile(times, 0.95)];
}

const ms = (x: number): string => x.toFixed(2);
const rows: string[] = [];
for (const long of [0, 20, 200, 2_000]) {
  const dir = mkdtempSync(join(tmpdir(), 'limbic-obs-bench-'));
  const store = openSqliteStore({ path: join(dir, 'memory.db') });
  try {
    await fill(store, long);
    const [p50, p95] = await time((query) => store.requireVectors().search(query, 150));
    rows.push(`| ${long} | ${(long * OBSERVATIONS).toLocaleString('en')} | ${ms(p50)} | ${ms(p95)} |`);
    process.stderr.write(`SQLite: ${long} long entities done\n`);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const pgRows: string[] = [];
const pgServer = await startPgServer();
if ('url' in pgServer) {
  try {
    for (const long of [0, 200]) {
      const url = await pgServer.createDatabase();
      const store = openPgStore({ url, poolSize: 2 });
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await fill(store, long);
        // The query the store ran before observation vectors, at the ef_search the store sets for depth 150.
        await client.query("SET hnsw.ef_search = '300'");
        const before = await time((query) =>
          client.query(
            'SELECT entity_id AS id, embedding <=> $1::vector AS distance FROM entity_embeddings ORDER BY embedding <=> $1::vector LIMIT 150',
            [`[${query.join(',')}]`],
          ),
        );
        const now = await time((query) => store.requireVectors().search(query, 150));
        pgRows.push(
          `| ${long} | ${(long * OBSERVATIONS).toLocaleString('en')} | ${ms(before[0])} / ${ms(before[1])} | ${ms(now[0])} / ${ms(now[1])} |`,
        );
        process.stderr.write(`PostgreSQL: ${long} long entities done\n`);
      } finally {
        await client.end();
        await store.close();
        await pgServer.dropDatabase(url);
      }
    }
  } finally {
    await pgServer.stop();
  }
}

console.log(
  [
    `Vector search at depth 150 over ${ENTITIES.toLocaleString('en')} entities (Node ${process.version}):`,
    '',
    '| long entities | observation vectors | p50 ms | p95 ms |',
    '|---|---|---|---|',
    ...rows,
    '',
    'unavailable' in pgServer
      ? `PostgreSQL: not measured (${pgServer.unavailable})`
      : 'PostgreSQL, the same graph (p50 / p95 ms): entities only, the query before observation vectors; and the store now',
    '',
    ...(pgRows.length === 0 ? [] : ['| long entities | observation vectors | entities only | store now |', '|---|---|---|---|', ...pgRows]),
  ].join('\n'),
);
