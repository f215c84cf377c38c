/**
 * The indexer on a store shared with another process (issue 26): a search's catch-up waits for the
 * fresh entities another process has claimed and is embedding, as it waits for its own.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { noopLogger } from '../../src/core/logger.js';
import { LazyEmbedder } from '../../src/embed/embedder.js';
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
