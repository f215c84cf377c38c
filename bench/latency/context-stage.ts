/**
 * The context stage (src/service/search/context.ts) on a kept store of the latency benchmark's graph
 * (bench/latency/build-store.ts), opened read-only: nothing is written. It times the stage reading
 * the candidates' relations as it did before edgesAmong (`touching`: edgesTouching's SQL, every
 * relation touching a candidate) and as it does now (`among`: edgesAmong's SQL, relations between
 * two candidates), alternating, after checking both give the same boosts and scores for every query.
 * The two statements are copies of sqlite-graph-reads.ts's (a read-only connection, not the store's).
 *
 *   npx tsx bench/latency/context-stage.ts <dir holding memory.db> [rounds, default 4]
 */
import Database from 'better-sqlite3';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_CONTEXT_WEIGHTS } from '../../src/core/rank/context-boost.js';
import { asEntityId, type EntityId } from '../../src/core/types.js';
import type { EntityFacts } from '../../src/core/signals.js';
import { contextStage } from '../../src/service/search/context.js';
import type { Fused } from '../../src/service/search/fuse.js';
import type { GraphStore } from '../../src/store/graph-store.js';
import { queries } from './generate.js';

const [dir = '.', roundsArg = '4'] = process.argv.slice(2);
const db = new Database(join(dir, 'memory.db'), { readonly: true, fileMustExist: true });
db.pragma('cache_size = -65536'); // as sqlite-connection.ts
const touching = db.prepare(`WITH c(name) AS (SELECT name FROM entities WHERE id IN (SELECT value FROM json_each(?))),
              hit(id) AS (SELECT r.id FROM c JOIN relations r ON r.from_name = c.name
                          UNION SELECT r.id FROM c JOIN relations r ON r.to_name = c.name)
         SELECT ef.id AS a, et.id AS b FROM hit
           JOIN relations r ON r.id = hit.id
           JOIN entities ef ON ef.name = r.from_name
           JOIN entities et ON et.name = r.to_name
          WHERE r.ended_at IS NULL
          ORDER BY r.id`);
const among = db.prepare(`WITH c(id, name) AS MATERIALIZED (SELECT id, name FROM entities WHERE id IN (SELECT value FROM json_each(?)))
         SELECT cf.id AS a, ct.id AS b FROM c cf
           JOIN relations r ON r.from_name = cf.name
           JOIN c ct ON ct.name = r.to_name
          WHERE r.ended_at IS NULL
          ORDER BY r.id`);
const pairs = (rows: unknown[]): { from: EntityId; to: EntityId }[] =>
  (rows as { a: number; b: number }[]).map((r) => ({ from: asEntityId(r.a), to: asEntityId(r.b) }));
// The stage reads relations through edgesAmong only: `touching` serves it with the old statement.
const graphOf = (statement: typeof among): GraphStore =>
  ({ edgesAmong: async (ids: readonly EntityId[]) => pairs(statement.all(JSON.stringify(ids))) }) as unknown as GraphStore;
const graph = { touching: graphOf(touching), among: graphOf(among) };

// Candidates as hybrid_search's: the keyword leg's best 150 for the benchmark's queries, and 150
// vector hits (the store's vectors are derived, so its hits are entities spread over the store).
const qs = queries(30);
const fts = db.prepare('SELECT rowid AS id FROM entity_fts WHERE entity_fts MATCH ? ORDER BY rank LIMIT 150');
const ent = db.prepare('SELECT id, entity_type, created_at FROM entities WHERE id = ?');
let seed = 7;
const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const count = (db.prepare('SELECT max(id) AS n FROM entities').get() as { n: number }).n;
const cases = qs.map((q) => {
  const words = q.text.split(/\s+/).filter((w) => /^\p{L}+$/u.test(w));
  const ids = new Set<number>((fts.all(words.map((w) => `"${w}"`).join(' OR ')) as { id: number }[]).map((r) => r.id));
  while (ids.size < 300) ids.add(1 + Math.floor(rand() * count));
  const list = [...ids].map((id) => asEntityId(id));
  const facts = new Map<EntityId, EntityFacts>();
  for (const id of list) {
    const row = ent.get(id) as { entity_type: string; created_at: number } | undefined;
    if (row) facts.set(id, { createdAt: row.created_at, entityType: row.entity_type, metadataRatio: 0 } as unknown as EntityFacts);
  }
  const fused = {
    candidates: list.map((id, i) => ({ candidate: { id, rrfScore: 0 }, base: 1 / (1 + Math.exp(-(2 - (4 * i) / list.length))) })),
    weights: undefined,
    parts: new Map(),
    graph: undefined,
  } as unknown as Fused;
  return { text: q.text, fused, facts };
});
console.log(`${cases.length} queries, candidates per query ${cases[0]?.fused.candidates.length}`);
// Same answers: the boosts of both, every query.
for (const c of cases) {
  const a = await contextStage(graph.touching, c.text, c.fused, DEFAULT_CONTEXT_WEIGHTS, c.facts);
  const b = await contextStage(graph.among, c.text, c.fused, DEFAULT_CONTEXT_WEIGHTS, c.facts);
  if (JSON.stringify([...a.boosts]) !== JSON.stringify([...b.boosts]) || JSON.stringify(a.fused) !== JSON.stringify(b.fused))
    throw new Error(`different answer for ${c.text}`);
}
let edgesT = 0;
let edgesA = 0;
for (const c of cases) {
  const ids = c.fused.candidates.map((x) => x.candidate.id);
  edgesT += (await graph.touching.edgesAmong(ids)).length;
  edgesA += (await graph.among.edgesAmong(ids)).length;
}
console.log(
  `same boosts and scores for all ${cases.length}; relations read per query: touching ${(edgesT / cases.length).toFixed(1)}, among ${(edgesA / cases.length).toFixed(1)}`,
);
const p50 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
for (let round = 0; round < Number(roundsArg); round++) {
  const order = round % 2 === 0 ? (['touching', 'among'] as const) : (['among', 'touching'] as const);
  for (const label of order) {
    const xs: number[] = [];
    for (const c of cases) {
      const t0 = performance.now();
      await contextStage(graph[label], c.text, c.fused, DEFAULT_CONTEXT_WEIGHTS, c.facts);
      xs.push(performance.now() - t0);
    }
    console.log(`round ${round + 1} ${label.padEnd(8)} context stage p50 ${p50(xs).toFixed(2)} ms (load ${loadavg()[0]?.toFixed(1)})`);
  }
}
