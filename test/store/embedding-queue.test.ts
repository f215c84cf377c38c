/**
 * The SQLite embedding queue shared by several processes (issue 26, item 3): two stores on one file
 * stand for two processes. Jobs are claimed under a lease, a lease that ran out is taken again, and a
 * killed process's jobs at once. (A job whose entity changed while it was embedded waits behind the
 * others: the vector conformance suite's, conformance/vectors.ts, on both backends.)
 * The three-process drain with real child processes is test/faults/queue-drain.test.ts.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EmbeddingJob } from '../../src/store/vector-index.js';
import { openSqliteStore, type SqliteStore, type SqliteStoreOptions } from '../../src/store/sqlite/sqlite-store.js';
import { REPO_ROOT, tempDir } from '../helpers/fixtures.js';

const NOW = Date.UTC(2026, 0, 1);
const names = (jobs: readonly EmbeddingJob[]): string[] => jobs.map((j) => j.entity.name);
const vector = (...xs: number[]): Float32Array => Float32Array.from(xs);
const results = (jobs: readonly EmbeddingJob[], v: Float32Array) => jobs.map((j) => ({ id: j.id, version: j.version, vector: v }));

describe('embedding queue shared by several processes (SQLite, issue 26)', () => {
  let tmp: ReturnType<typeof tempDir>;
  const stores: SqliteStore[] = [];
  /** Another process on the same file. */
  const open = (options: Partial<SqliteStoreOptions> = {}): SqliteStore => {
    const store = openSqliteStore({ path: join(tmp.dir, 'memory.db'), ...options });
    stores.push(store);
    return store;
  };
  const create = async (store: SqliteStore, ...entities: string[]): Promise<void> => {
    await store.graph.createEntities(
      entities.map((name) => ({ name, entityType: 'note', observations: [`about ${name}`] })),
      NOW,
    );
  };
  const tenEntities = Array.from({ length: 10 }, (_, i) => `E${i}`);

  beforeEach(() => {
    tmp = tempDir();
  });
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
    tmp.cleanup();
  });

  it('gives two processes different jobs while a lease holds, and both drain the queue', async () => {
    const a = open();
    const b = open();
    await a.requireVectors().configure('fake-model', 3);
    await create(a, ...tenEntities);
    const first = await a.requireVectors().takeJobs(4);
    const second = await b.requireVectors().takeJobs(10);
    expect(names(first)).toEqual(['E0', 'E1', 'E2', 'E3']);
    expect(names(second)).toEqual(['E4', 'E5', 'E6', 'E7', 'E8', 'E9']);
    expect(await a.requireVectors().countPending(100)).toBe(10); // claimed is still pending
    await a.requireVectors().put(results(first, vector(1, 0, 0)));
    await b.requireVectors().put(results(second, vector(0, 1, 0)));
    expect(await a.requireVectors().status()).toMatchObject({ indexed: 10, pending: 0 });
  });

  it('gives another process the jobs a closing one abandoned at once, not when their lease runs out (issue 35)', async () => {
    const closing = open();
    const other = open();
    await closing.requireVectors().configure('fake-model', 3);
    await create(closing, ...tenEntities);
    const abandoned = await closing.requireVectors().takeJobs(4);
    expect(names(await other.requireVectors().takeJobs(4))).toEqual(['E4', 'E5', 'E6', 'E7']); // held while claimed
    await closing.requireVectors().releaseJobs(abandoned.map((j) => j.id));
    expect(names(await other.requireVectors().takeJobs(10))).toEqual(['E0', 'E1', 'E2', 'E3', 'E4', 'E5', 'E6', 'E7', 'E8', 'E9']);
  });

  it('takes the jobs of a process whose lease ran out again, and its late answer does not overwrite the newer vector', async () => {
    // The lease of 0 ms has run out as soon as it was taken: a process killed mid-batch.
    const killed = open({ embeddingLeaseMs: 0 });
    const survivor = open();
    await survivor.requireVectors().configure('fake-model', 3);
    await create(survivor, ...tenEntities);
    const lost = await killed.requireVectors().takeJobs(4);
    expect(names(lost)).toEqual(['E0', 'E1', 'E2', 'E3']);
    await killed.graph.addObservations([{ entityName: 'E0', contents: ['changed after the first take'] }], NOW);
    const retaken = await survivor.requireVectors().takeJobs(10);
    expect(names(retaken)).toEqual(tenEntities);
    expect(retaken[0]?.entity.observations).toContain('changed after the first take');
    await survivor.requireVectors().put(results(retaken, vector(1, 0, 0)));
    // The first process answers late, with E0's older text: that vector is dropped.
    await killed.requireVectors().put(results(lost, vector(0, 1, 0)));
    const hits = await survivor.requireVectors().search(vector(1, 0, 0), 10);
    expect(hits).toHaveLength(10);
    expect(hits.every((h) => h.distance < 1e-6)).toBe(true);
    expect(await survivor.requireVectors().status()).toMatchObject({ indexed: 10, pending: 0 });
  });

  it('takes at once the jobs of a process that was killed, without waiting for its lease', async () => {
    const store = open();
    await store.requireVectors().configure('fake-model', 3);
    await create(store, ...tenEntities);
    const holder = spawn(
      process.execPath,
      ['--import', 'tsx', join(REPO_ROOT, 'test', 'store', 'queue-claim-holder.ts'), join(tmp.dir, 'memory.db'), '4'],
      {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const exited = once(holder, 'exit');
    try {
      await once(holder.stdout, 'data');
      expect(names(await store.requireVectors().takeJobs(2))).toEqual(['E4', 'E5']); // its four are held while it runs
    } finally {
      holder.kill('SIGKILL');
      await exited;
    }
    expect(names(await store.requireVectors().takeJobs(10))).toEqual(tenEntities);
  });

  it('lets a process take again at once the jobs it took and did not put (its embedding failed)', async () => {
    const store = open();
    const other = open();
    await store.requireVectors().configure('fake-model', 3);
    await create(store, 'E0', 'E1');
    expect(names(await store.requireVectors().takeJobs(10))).toEqual(['E0', 'E1']);
    expect(await other.requireVectors().takeJobs(10)).toEqual([]);
    expect(names(await store.requireVectors().takeJobs(10))).toEqual(['E0', 'E1']);
  });
});
