/**
 * What one open_nodes of many names costs the main thread, the answer and the usage recording after
 * it (co-use pairs included): `npx tsx bench/open-nodes-couse.ts [--names 2000] [--runs 3]`.
 *
 * Each run: a fresh SQLite file (no model: meaning does not matter here), --names entities written,
 * then one open_nodes of all of them through the service. Reports the call's time, the main thread's
 * busy time from the call until its recording has settled (event-loop utilisation: what every other
 * request of the process waits behind), the longest single block of the event loop, and the
 * co-occurrence rows the open left.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { noopLogger } from '../src/core/logger.js';
import { LazyEmbedder } from '../src/embed/embedder.js';
import { MemoryService } from '../src/service/memory-service.js';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';

const text = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1];
};
const NAMES = Number(text('names') ?? 2000);
const RUNS = Number(text('runs') ?? 3);

const rows: string[] = [];
for (let run = 1; run <= RUNS; run++) {
  const dir = mkdtempSync(join(tmpdir(), 'limbic-open-couse-'));
  const path = join(dir, 'memory.db');
  const store = openSqliteStore({ path, vectors: false });
  const embedder = new LazyEmbedder(async () => {
    throw new Error('no model: keyword only');
  });
  const service = new MemoryService({ store, embedder, clock: Date.now, logger: noopLogger });
  const names = Array.from({ length: NAMES }, (_, i) => `entity ${i}`);
  for (let i = 0; i < NAMES; i += 500)
    await service.createEntities(
      names.slice(i, i + 500).map((name) => ({ name, entityType: 'note', observations: [`${name} is a note`] })),
    );
  await service.settled();

  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const elu = performance.eventLoopUtilization();
  const start = performance.now();
  const answer = await service.openNodes(names);
  const answered = performance.now() - start;
  await service.settled();
  const settled = performance.now() - start;
  const busy = performance.eventLoopUtilization(elu);
  delay.disable();
  await service.close();
  const db = new Database(path, { readonly: true });
  const pairs = (db.prepare('SELECT count(*) AS n FROM co_occurrences').get() as { n: number }).n;
  const accesses = (db.prepare('SELECT count(*) AS n FROM entity_access').get() as { n: number }).n;
  db.close();
  rmSync(dir, { recursive: true, force: true });
  if (answer.entities.length !== NAMES) throw new Error(`opened ${answer.entities.length} of ${NAMES}`);
  rows.push(
    `| ${run} | ${answered.toFixed(0)} | ${settled.toFixed(0)} | ${busy.active.toFixed(0)} | ${(delay.max / 1e6).toFixed(0)} | ${accesses} | ${pairs} |`,
  );
}
console.log(`open_nodes of ${NAMES} names (SQLite, no model), ${RUNS} runs\n`);
console.log(
  '| run | answered (ms) | recorded (ms) | main thread busy until recorded (ms) | longest block (ms) | entities used | co-use pairs |',
);
console.log('|---|---|---|---|---|---|---|');
for (const row of rows) console.log(row);
