/**
 * Issue 26, item 3: several processes on one SQLite file stalled the embedding queue. Three real
 * processes write (each its own entities, and each keeps changing the same 32 old ones) while a
 * fourth imports a memory.jsonl; every new and imported entity must end with its vector while the
 * old ones keep changing, and every entity once they stop. Before the queue was claimed and fair,
 * every process took the same head (the 32 old entities, lowest ids), each changed while it was
 * embedded and stayed at the head, and nothing else was ever embedded.
 *
 * The embedder is a fake that sleeps per batch as a model takes time: what is checked is that the
 * queue drains, not what the vectors mean. Completion is asserted with generous deadlines; no
 * timing is (bench/queue-drain.ts measures the time).
 */
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../helpers/fixtures.js';
import { drainState, killDrainWorker, openReader, startDrainWorker, type DrainWorker } from '../helpers/queue-drain.js';
import { waitFor, writeMemoryFile } from './fault-harness.js';

const OLD = Array.from({ length: 32 }, (_, i) => `Old ${i}`);
const WRITERS = 3;
const CREATED_EACH = 100;
const IMPORTED = 1_500;
/** Per batch of up to 32, longer than the old entities go unchanged: each changes while it is embedded. */
const FAKE_BATCH_MS = 200;
const CHURN_EVERY_MS = 150;

describe('three processes writing and one importing on one SQLite file (issue 26)', () => {
  let tmp: ReturnType<typeof tempDir>;
  let workers: DrainWorker[] = [];
  let reader: Database.Database | undefined;

  beforeEach(() => {
    tmp = tempDir('limbic-queue-drain-');
  });
  afterEach(async () => {
    reader?.close();
    reader = undefined;
    await Promise.all(workers.map(killDrainWorker));
    workers = [];
    tmp.cleanup();
  });

  it('embeds every entity: the new and imported ones while old ones keep changing, then all of them', { timeout: 600_000 }, async () => {
    const db = join(tmp.dir, 'memory.db');
    const seed = openSqliteStore({ path: db });
    await seed.graph.createEntities(
      OLD.map((name) => ({ name, entityType: 'note', observations: [`${name} keeps changing`] })),
      Date.now(),
    );
    await seed.close();
    const file = join(tmp.dir, 'memory.jsonl');
    writeMemoryFile(file, IMPORTED, 26);

    const writers = Array.from({ length: WRITERS }, (_, k) =>
      startDrainWorker({
        db,
        embedder: 'fake',
        fakeBatchMs: FAKE_BATCH_MS,
        create: { prefix: `W${k}-`, count: CREATED_EACH, batch: 5 },
        churn: { names: OLD, everyMs: CHURN_EVERY_MS, tag: `w${k}` },
      }),
    );
    const importer = startDrainWorker({ db, embedder: 'fake', fakeBatchMs: FAKE_BATCH_MS, importFile: file });
    workers = [...writers, importer];
    await Promise.all(workers.map((w) => w.said('written')));

    const open = openReader(db);
    reader = open;
    const total = OLD.length + WRITERS * CREATED_EACH + IMPORTED;
    // Deadlines far beyond the few seconds this takes, for a loaded machine; the old queue never got there.
    const explain = (): string => `still unembedded: ${JSON.stringify(drainState(open, 'Old '))}`;
    await waitFor(
      () => {
        const state = drainState(open, 'Old ');
        return state !== undefined && state.unembedded === 0 ? state : undefined;
      },
      240_000,
      250,
    ).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}; ${explain()}`);
    });
    expect(drainState(open, 'Old ')).toEqual({ entities: total, unembedded: 0 });

    for (const w of writers) w.send('stop-churn');
    await Promise.all(writers.map((w) => w.said('churn-stopped')));
    await waitFor(
      () => {
        const state = drainState(open);
        return state !== undefined && state.unembedded === 0 ? state : undefined;
      },
      120_000,
      250,
    );
    expect(drainState(open)).toEqual({ entities: total, unembedded: 0 });

    for (const w of workers) w.send('exit');
    expect(await Promise.all(workers.map((w) => w.exited))).toEqual(workers.map(() => 0));
  });
});
