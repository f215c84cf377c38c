/**
 * `npm run bench:queue`: how long until every entity has its vector when three processes write and a
 * fourth imports on one SQLite file, against one process doing all of that alone (issue 26). Each
 * writer creates its own entities and keeps changing the same 32 old ones (one observation added,
 * the previous removed, every `--churn-ms`), as agents sharing a memory do; the importer loads a
 * memory.jsonl as `limbic import` does. Every process drains the queue as a server does (the
 * service's background indexer, the model in a worker thread on one core fewer than the machine
 * has). Timed from the first process's start:
 *
 * - written: every process's writes and the import are in;
 * - drained: every entity but the 32 that keep changing has its vector (the stall of issue 26);
 * - all: the churn stopped at `drained`, every entity has its vector.
 *
 * Options: `--import N` (default 400), `--create N` per writer (default 40), `--churn-ms` (default
 * 1000), `--fake` (a fake embedder sleeping `--fake-batch-ms` per batch instead of the installed
 * model), `--deadline-s` (default 600: a scenario that has not drained by then is reported so).
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { writeMemoryFile } from '../test/faults/fault-harness.js';
import { tempDir } from '../test/helpers/fixtures.js';
import {
  drainState,
  killDrainWorker,
  openReader,
  startDrainWorker,
  type DrainWorker,
  type WorkerPlan,
} from '../test/helpers/queue-drain.js';

const { values } = parseArgs({
  options: {
    import: { type: 'string', default: '400' },
    create: { type: 'string', default: '40' },
    'churn-ms': { type: 'string', default: '1000' },
    fake: { type: 'boolean', default: false },
    'fake-batch-ms': { type: 'string', default: '200' },
    'deadline-s': { type: 'string', default: '600' },
  },
});
const IMPORTED = Number(values.import);
const CREATED = Number(values.create);
const CHURN_MS = Number(values['churn-ms']);
const DEADLINE_MS = Number(values['deadline-s']) * 1000;
const WRITERS = 3;
const OLD = Array.from({ length: 32 }, (_, i) => `Old ${i}`);
const embedder: WorkerPlan['embedder'] = values.fake ? 'fake' : 'real';
const fakeBatchMs = Number(values['fake-batch-ms']);

interface Timing {
  readonly written: number;
  readonly drained: number | undefined;
  readonly all: number | undefined;
  readonly entities: number;
}

/** Runs the plans on a fresh file seeded with the 32 old entities; times as described above. */
async function scenario(plans: (db: string, file: string) => WorkerPlan[]): Promise<Timing> {
  const tmp = tempDir('limbic-bench-queue-');
  const db = join(tmp.dir, 'memory.db');
  const file = join(tmp.dir, 'memory.jsonl');
  writeMemoryFile(file, IMPORTED, 26);
  const seed = openSqliteStore({ path: db });
  await seed.graph.createEntities(
    OLD.map((name) => ({ name, entityType: 'note', observations: [`${name} keeps changing`] })),
    Date.now(),
  );
  await seed.close();
  const reader = openReader(db);
  let workers: DrainWorker[] = [];
  try {
    const start = performance.now();
    const since = (): number => Math.round(performance.now() - start);
    const planned = plans(db, file);
    workers = planned.map(startDrainWorker);
    await Promise.all(workers.map((w) => w.said('written')));
    const written = since();
    const until = async (except: string | undefined): Promise<number | undefined> => {
      while (performance.now() - start < DEADLINE_MS) {
        const state = drainState(reader, except);
        if (state !== undefined && state.unembedded === 0) return since();
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      return undefined;
    };
    const drained = await until('Old ');
    const churners = workers.filter((_, i) => planned[i]?.churn !== undefined);
    for (const w of churners) w.send('stop-churn');
    await Promise.all(churners.map((w) => w.said('churn-stopped')));
    const all = drained === undefined ? undefined : await until(undefined);
    const entities = drainState(reader)?.entities ?? 0;
    for (const w of workers) w.send('exit');
    await Promise.all(workers.map((w) => w.exited));
    return { written, drained, all, entities };
  } finally {
    reader.close();
    await Promise.all(workers.map(killDrainWorker));
    tmp.cleanup();
  }
}

const churn = (tag: string, everyMs = CHURN_MS): WorkerPlan['churn'] => ({ names: OLD, everyMs, tag });
const base = (db: string): Pick<WorkerPlan, 'db' | 'embedder' | 'fakeBatchMs'> => ({ db, embedder, fakeBatchMs });

const seconds = (ms: number | undefined): string =>
  ms === undefined ? `not within ${DEADLINE_MS / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
const report = (name: string, t: Timing): void =>
  console.log(`${name}: ${t.entities} entities; written ${seconds(t.written)}, drained ${seconds(t.drained)}, all ${seconds(t.all)}`);

console.log(
  `queue drain: ${WRITERS} writers × ${CREATED} entities + an import of ${IMPORTED}, 32 entities changed every ${CHURN_MS} ms per writer; ` +
    `embedder ${embedder === 'fake' ? `fake (${fakeBatchMs} ms per batch)` : 'the installed model'}; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
);
const shared = await scenario((db, file) => [
  ...Array.from({ length: WRITERS }, (_, k) => ({
    ...base(db),
    create: { prefix: `W${k}-`, count: CREATED, batch: 5 },
    churn: churn(`w${k}`),
  })),
  { ...base(db), importFile: file },
]);
report('three writers and an importer', shared);
const alone = await scenario((db, file) => [
  // The same writes: the three writers' entities, and their changes as often as the three together.
  { ...base(db), create: { prefix: 'W-', count: WRITERS * CREATED, batch: 5 }, churn: churn('w', CHURN_MS / WRITERS), importFile: file },
]);
report('one process alone', alone);
const ratio = (a: number | undefined, b: number | undefined): string => (a === undefined || b === undefined ? 'n/a' : (a / b).toFixed(2));
console.log(`ratio (several / alone): drained ${ratio(shared.drained, alone.drained)}, all ${ratio(shared.all, alone.all)}`);
console.log(
  `load average after: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
