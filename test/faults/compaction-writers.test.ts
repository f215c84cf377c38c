/**
 * Issue 10 ("Faults"): the keyword-index compaction at the end of an import used to hold the write
 * lock in one transaction, so a second Limbic process's write failed with STORE_BUSY. It now merges
 * in short steps: another process's write is acknowledged while it runs, and it still ends with
 * each index in one segment.
 */
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewEntity } from '../../src/core/types.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { CompactionProgress } from '../../src/store/store.js';
import { tempDir, keywordExpr } from '../helpers/fixtures.js';
import { databaseState, rng, sentence, startServer, type McpServer } from './fault-harness.js';

const ENTITIES = 8_000;

describe('keyword-index compaction while another process writes', () => {
  const tmp = tempDir('limbic-compaction-');
  const db = join(tmp.dir, 'memory.db');
  let store: SqliteStore;
  let server: McpServer;

  beforeAll(async () => {
    store = openSqliteStore({ path: db, vectors: false });
    // Imported as `limbic import` does, in 2,000-entity batches: many segments to merge.
    const random = rng(7);
    for (let start = 0; start < ENTITIES; start += 2_000) {
      const entities: NewEntity[] = Array.from({ length: 2_000 }, (_, i) => ({
        name: `Entity ${start + i}`,
        entityType: 'note',
        observations: Array.from({ length: 4 }, () => sentence(random, 6 + Math.floor(random() * 10))),
      }));
      await store.graph.importBatch({ entities, relations: [] }, 1_000);
    }
    server = await startServer(db, { model: false });
  });

  afterAll(async () => {
    await server.close();
    await store.close();
    tmp.cleanup();
  });

  it('acknowledges the other process write mid-compaction, then compacts to one segment per index', async () => {
    const before = databaseState(db, { integrity: false });
    expect(before?.pagesToMerge).toBeGreaterThan(0);
    const match = '"kaloren" OR "mitosa" OR "vidor"';
    const hitsBefore = await store.keywords.search(keywordExpr(match), 50);
    expect(hitsBefore.length).toBeGreaterThan(0);

    const events: string[] = [];
    const progress: CompactionProgress[] = [];
    let write: Promise<CallToolResult> | undefined;
    await store.keywords.optimize((p) => {
      progress.push(p);
      if (p.lockMs === 0) return; // the first and last reports
      events.push('step');
      // After the first step, the other process writes; this process's event loop must get its answer.
      write ??= server
        .call('create_entities', { entities: [{ name: 'Written meanwhile', entityType: 'note', observations: ['by the second process'] }] })
        .then((result) => {
          events.push('write acknowledged');
          return result;
        });
    });
    events.push('compaction done');

    const result = await write;
    expect(result?.isError).toBeFalsy();
    const acknowledged = events.indexOf('write acknowledged');
    expect(acknowledged).toBeGreaterThan(0);
    expect(acknowledged).toBeLessThan(events.indexOf('compaction done'));
    expect(events.slice(acknowledged).filter((e) => e === 'step').length).toBeGreaterThan(0); // compaction went on after it

    // Progress only grows and ends at its total.
    expect(progress.length).toBeGreaterThan(2);
    progress.forEach((p, i) => expect(p.done).toBeGreaterThanOrEqual(progress[i - 1]?.done ?? 0));
    expect(progress.at(-1)).toMatchObject({ done: progress[0]?.total });

    // The write is visible here, the answers are unchanged, and the file is sound.
    expect((await store.graph.openNodes(['Written meanwhile'])).entities).toHaveLength(1);
    // Same entities found (scores shift a little: the new entity changes BM25's document count).
    const ids = (hits: readonly { id: number }[]): number[] => hits.map((h) => h.id).sort((a, b) => a - b);
    expect(ids(await store.keywords.search(keywordExpr(match), 50))).toEqual(ids(hitsBefore));
    const after = databaseState(db);
    expect(after?.integrity).toBe('ok');
    // The other process's write may have added a small segment after the merge; a second run,
    // alone, leaves exactly one per index.
    expect(after?.segments).toBeLessThanOrEqual(4);
    await store.keywords.optimize();
    expect(databaseState(db, { integrity: false })).toMatchObject({ segments: 2, pagesToMerge: 0 });
  });
});
