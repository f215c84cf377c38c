/** Issue 33: a search's note about entities still being embedded agrees with their number. */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { noopLogger } from '../../src/core/logger.js';
import { LazyEmbedder } from '../../src/embed/embedder.js';
import { EmbeddingIndexer } from '../../src/service/embedding-indexer.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { FakeEmbedder, tempDir } from '../helpers/fixtures.js';

describe('the catch-up note', () => {
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

  it('says "1 recently written entity is", and "2 … entities are"', async () => {
    const indexer = new EmbeddingIndexer(here, new LazyEmbedder(async () => new FakeEmbedder()), noopLogger);
    await indexer.ready();
    await here.graph.createEntities([{ name: 'Fresh', entityType: 'note', observations: ['just written'] }], 1);
    // Another process holds it and does not finish within the wait: it stays pending.
    await other.requireVectors().takeJobs(10);
    expect((await indexer.catchUp(50)).note).toBe(
      '1 recently written entity is still being embedded in the background; until it is, only the keyword leg can find it.',
    );
    await here.graph.createEntities([{ name: 'Also fresh', entityType: 'note', observations: ['written next'] }], 2);
    await other.requireVectors().takeJobs(10);
    expect((await indexer.catchUp(50)).note).toBe(
      '2 recently written entities are still being embedded in the background; until they are, only the keyword leg can find them.',
    );
  });
});
