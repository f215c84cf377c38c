/**
 * The indexer on a store shared with another process (issue 26): a search's catch-up waits for the
 * fresh entities another process has claimed and is embedding, as it waits for its own. And the
 * queue starts working the moment a model arrives (issue 33): what was written while the model was
 * being installed is embedded without waiting for another write.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { noopLogger } from '../../src/core/logger.js';
import { ERROR_CODES, MemoryError } from '../../src/core/errors.js';
import { LazyEmbedder, type Embedder } from '../../src/embed/embedder.js';
import { EmbeddingIndexer } from '../../src/service/embedding-indexer.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { FakeEmbedder, tempDir } from '../helpers/fixtures.js';

describe('EmbeddingIndexer on a store shared by two processes', () => {
  let tmp: ReturnType<typeof tempDir>;
  let here: SqliteStore;
  let other: SqliteStore;

  beforeEach(() => {
    tmp = tempDir();
    here = openSqliteStore({ path: join(tmp.dir, 'memory.db') });
    other = openSqliteStore({ path: join(tmp.dir, 'memory.db') });
  });
  afterEach(async () => {
    await Promise.all([here.close(), other.close()]);
    tmp.cleanup();
  });

  it("waits, before a search, for a fresh entity the other process claimed, until that one's vector is in", async () => {
    const fake = new FakeEmbedder();
    const indexer = new EmbeddingIndexer(here, new LazyEmbedder(async () => fake), noopLogger);
    await indexer.ready();
    await here.graph.createEntities([{ name: 'Fresh', entityType: 'note', observations: ['just written'] }], 1);
    // The other process took it first and is embedding it.
    const jobs = await other.requireVectors().takeJobs(10);
    expect(jobs.map((j) => j.entity.name)).toEqual(['Fresh']);
    const caughtUp = indexer.catchUp(60_000);
    await sleep(500);
    const [vector] = await fake.embed(['just written']);
    await other.requireVectors().put(jobs.map((j) => ({ id: j.id, version: j.version, vector: vector ?? new Float32Array(16) })));
    expect(await caughtUp).toEqual({ pending: 0 });
  });
});

/** Resolves when `done()` holds, checking every 20 ms; rejects after `ms` with what was last seen. */
async function eventually(done: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`still not true after ${ms} ms: ${what}`);
    await sleep(20);
  }
}

describe('EmbeddingIndexer when the model arrives after the writes (issue 33)', () => {
  let tmp: ReturnType<typeof tempDir>;
  let store: SqliteStore;
  beforeEach(() => {
    tmp = tempDir();
    store = openSqliteStore({ path: join(tmp.dir, 'memory.db') });
  });
  afterEach(async () => {
    await store.close();
    tmp.cleanup();
  });

  const write = (n: number, from = 0) =>
    store.graph.createEntities(
      Array.from({ length: n }, (_, i) => ({ name: `Note ${from + i}`, entityType: 'note', observations: [`written early ${from + i}`] })),
      1,
    );
  const pending = async () => (await store.requireVectors().status()).pending;

  it('embeds what was queued while the model was being installed, once it is ready, with no further write', async () => {
    let installed: () => void = () => undefined;
    const install = new Promise<void>((resolve) => (installed = resolve));
    const lazy = new LazyEmbedder(async (progress) => {
      progress('installing the model', true);
      await install;
      return new FakeEmbedder();
    });
    const indexer = new EmbeddingIndexer(store, lazy, noopLogger, 8);
    // A server's start and its first writes: each kicks a drain, which finds no engine yet.
    indexer.kick();
    await write(40);
    indexer.kick();
    await indexer.idle();
    expect(lazy.state()).toMatchObject({ state: 'loading', installing: true });
    expect(await pending()).toBe(40);
    installed();
    await eventually(async () => (await pending()) === 0, 10_000, 'the queue drained after the install');
    indexer.stop();
    await indexer.idle();
  });

  it('embeds the queue when a model appears after none could be loaded (another process installed it)', async () => {
    let modelThere = false;
    const lazy = new LazyEmbedder(
      async () => {
        if (!modelThere) throw new Error('no model installed');
        return new FakeEmbedder();
      },
      60_000, // a search would only retry after a minute: the watch must not wait for that
      Date.now,
      { fingerprint: () => (modelThere ? 'installed at t1' : undefined), everyMs: 20 },
    );
    const indexer = new EmbeddingIndexer(store, lazy, noopLogger);
    await write(10);
    indexer.kick();
    await indexer.idle();
    expect(lazy.state()).toMatchObject({ state: 'unavailable', why: 'failed' });
    expect(await pending()).toBe(10);
    modelThere = true;
    await eventually(async () => (await pending()) === 0, 10_000, 'the queue drained after the model appeared');
    expect(lazy.state().state).toBe('ready');
    indexer.stop();
    await indexer.idle();
  });

  it('runs another drain for a kick that came while a drain without an engine was ending', async () => {
    const installed: { engine?: Embedder } = {};
    const lazy = new LazyEmbedder(async () => installed.engine ?? Promise.reject(new Error('not yet')), 0);
    const indexer = new EmbeddingIndexer(store, lazy, noopLogger);
    await write(5);
    const first = indexer.drain(); // finds no engine
    installed.engine = new FakeEmbedder();
    indexer.kick(); // arrives while that drain runs
    expect(await first).toBe(0);
    await eventually(async () => (await pending()) === 0, 10_000, 'the kick that came during the drain was not lost');
    indexer.stop();
    await indexer.idle();
  });
});

/** FAKE: an engine that gives one vector fewer than the entities it was asked for. */
class ShortFakeEmbedder implements Embedder {
  readonly fake = new FakeEmbedder();
  readonly id = this.fake.id;
  readonly dims = this.fake.dims;
  embed(texts: readonly string[]): Promise<Float32Array[]> {
    return this.fake.embed(texts);
  }
  async embedEntities(items: Parameters<Embedder['embedEntities']>[0]): Promise<Float32Array[]> {
    return (await this.fake.embedEntities(items)).slice(0, -1);
  }
}

describe('EmbeddingIndexer when the engine gives fewer vectors than entities', () => {
  it('fails the batch with an internal error and stores no zero vector in the missing one’s place', async () => {
    const tmp = tempDir();
    const store = openSqliteStore({ path: join(tmp.dir, 'memory.db') });
    try {
      const indexer = new EmbeddingIndexer(store, new LazyEmbedder(async () => new ShortFakeEmbedder()), noopLogger);
      await indexer.ready();
      await store.graph.createEntities(
        [
          { name: 'Garden', entityType: 'place', observations: ['Tomatoes grow behind the house.'] },
          { name: 'Dentist', entityType: 'person', observations: ['Dr Martin, Tuesdays at nine.'] },
        ],
        1,
      );
      const failed = await indexer.drain().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failed).toBeInstanceOf(MemoryError);
      expect(failed).toMatchObject({ code: ERROR_CODES.INTERNAL });
      expect((failed as Error).message).toContain('gave 1 vectors for 2 entities');
      expect(await store.requireVectors().status()).toMatchObject({ indexed: 0, pending: 2 });
    } finally {
      await store.close();
      tmp.cleanup();
    }
  });
});
