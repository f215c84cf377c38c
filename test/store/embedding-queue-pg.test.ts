/**
 * The PostgreSQL embedding queue shared by several processes (issue 26, item 3), as
 * embedding-queue.test.ts checks SQLite's: two stores on one database stand for two processes. A
 * late answer never overwrites the vector another process wrote for a newer version. (That a job
 * whose entity changed while it was embedded waits behind the others is the vector conformance
 * suite's, run on both backends: conformance/vectors.ts.)
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openPgStore, type PgStore } from '../../src/store/postgres/pg-store.js';
import type { EmbeddingJob } from '../../src/store/vector-index.js';
import { skipNote, startPgServer, type PgServer } from '../helpers/pg-server.js';

const started = await startPgServer();
const server: PgServer | undefined = 'url' in started ? started : undefined;
afterAll(async () => {
  await server?.stop();
});

const NOW = Date.UTC(2026, 0, 1);
const names = (jobs: readonly EmbeddingJob[]): string[] => jobs.map((j) => j.entity.name);
const vector = (...xs: number[]): Float32Array => Float32Array.from(xs);
const results = (jobs: readonly EmbeddingJob[], v: Float32Array) => jobs.map((j) => ({ id: j.id, version: j.version, vector: v }));

describe.runIf(server !== undefined)(`embedding queue shared by several processes (PostgreSQL, issue 26)${skipNote(started)}`, () => {
  let url: string;
  const stores: PgStore[] = [];
  const open = (): PgStore => {
    const store = openPgStore({ url, poolSize: 2 });
    stores.push(store);
    return store;
  };
  const create = async (store: PgStore, ...entities: string[]): Promise<void> => {
    await store.graph.createEntities(
      entities.map((name) => ({ name, entityType: 'note', observations: [`about ${name}`] })),
      NOW,
    );
  };

  beforeEach(async () => {
    url = await (server as PgServer).createDatabase();
  });
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
    await server?.dropDatabase(url);
  });

  it('gives another process the jobs a closing one abandoned at once, not when their lease runs out (issue 35)', async () => {
    const closing = open();
    const other = open();
    await closing.requireVectors().configure('fake-model', 3);
    await create(closing, 'E0', 'E1', 'E2', 'E3');
    const abandoned = await closing.requireVectors().takeJobs(2);
    expect(names(await other.requireVectors().takeJobs(10))).toEqual(['E2', 'E3']); // held while claimed
    await closing.requireVectors().releaseJobs(abandoned.map((j) => j.id));
    expect(names(await other.requireVectors().takeJobs(10))).toEqual(['E0', 'E1']);
  });

  it('drops a late answer for a job another process finished after the entity changed', async () => {
    const slow = open();
    const fast = open();
    await fast.requireVectors().configure('fake-model', 3);
    await create(fast, 'E0', 'E1');
    const taken = await slow.requireVectors().takeJobs(2);
    expect(names(taken)).toEqual(['E0', 'E1']);
    // E0 changes: its claim is cleared, so the other process takes and embeds the new text.
    await fast.graph.addObservations([{ entityName: 'E0', contents: ['the newer fact'] }], NOW);
    const retaken = await fast.requireVectors().takeJobs(10);
    expect(names(retaken)).toEqual(['E0']);
    await fast.requireVectors().put(results(retaken, vector(1, 0, 0)));
    // The first process answers late with E0's older text: E0 keeps the newer vector, E1 gets its own.
    await slow.requireVectors().put(results(taken, vector(0, 1, 0)));
    const nearNewer = await fast.requireVectors().search(vector(1, 0, 0), 1);
    expect(nearNewer[0]?.distance).toBeLessThan(1e-6);
    expect((await fast.graph.entitiesById([nearNewer[0]!.id])).get(nearNewer[0]!.id)?.name).toBe('E0');
    expect(await fast.requireVectors().status()).toMatchObject({ indexed: 2, pending: 0 });
  });
});
