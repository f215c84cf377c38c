/**
 * The re-finding lookup (pipeline.ts refindingStage) reads the candidates' pairs only when the store
 * holds any: a memory nobody used after a search answers without that read, exactly as with it,
 * and a pair recorded later (by this process or another sharing the file) is read from then on.
 * The fake embedder: identical texts give identical vectors, which is all re-finding needs here.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { harness, tempDir, type Harness } from '../helpers/fixtures.js';

interface Semantic {
  results: { name: string; scoring: { usage_lift_refinding: number } }[];
}

const GRAPH = [
  { name: 'Garden', entityType: 'Place', observations: ['Tomatoes and basil grow in the backyard'] },
  { name: 'Balcony', entityType: 'Place', observations: ['Pots of herbs and a small lemon tree'] },
  { name: 'Commute', entityType: 'Habit', observations: ['Drives to the office every morning'] },
];
const QUERY = 'where do the tomatoes and basil grow';

describe('the re-finding lookup', () => {
  let tmp: ReturnType<typeof tempDir>;
  let h: Harness;
  let now = Date.UTC(2026, 10, 28, 9);
  beforeEach(async () => {
    tmp = tempDir();
    h = await harness({ embedder: 'fake', clock: () => now, path: join(tmp.dir, 'memory.db') });
    await h.ok('create_entities', { entities: GRAPH });
    await h.service.drainEmbeddings();
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await h.close();
    tmp.cleanup();
  });

  const semantic = async (): Promise<Semantic> => {
    const r = await h.ok<Semantic>('search_semantic', { query: QUERY, limit: 3 });
    await h.settle();
    return r;
  };

  it('is skipped while the memory holds no pair, with the same answer as when it is read', async () => {
    const read = vi.spyOn(h.store.usage, 'refinding');
    const skipped = await semantic();
    expect(skipped.results.map((r) => r.name)).toContain('Garden');
    expect(read).not.toHaveBeenCalled();
    // The same search at the same time, the lookup forced: the same answer, after a read.
    const holds = vi.spyOn(h.store.usage, 'holdsRefinding').mockResolvedValue(true);
    const forced = await semantic();
    expect(read).toHaveBeenCalledTimes(1);
    expect(forced).toEqual(skipped);
    holds.mockRestore();
  });

  it('reads the pairs once a use has followed a search, and lifts what they name', async () => {
    await semantic();
    now += 60_000;
    await h.ok('open_nodes', { names: ['Garden'] });
    await h.settle();
    expect(await h.store.usage.holdsRefinding()).toBe(true);
    const read = vi.spyOn(h.store.usage, 'refinding');
    now += 60_000;
    const lifted = await semantic();
    expect(read).toHaveBeenCalledTimes(1);
    expect(lifted.results.find((r) => r.name === 'Garden')?.scoring.usage_lift_refinding).toBeGreaterThan(0);
  });

  it('sees a pair another process sharing the file recorded after this one found none', async () => {
    expect(await h.store.usage.holdsRefinding()).toBe(false);
    const other = openSqliteStore({ path: join(tmp.dir, 'memory.db') });
    try {
      const [garden] = await other.graph.idsByName(['Garden']);
      if (garden === undefined) throw new Error('Garden missing');
      await other.usage.recordRefinding([
        { entityId: garden, model: 'fake-hash-embedder', vector: new Float32Array(16).fill(0.25), at: now },
      ]);
    } finally {
      await other.close();
    }
    const read = vi.spyOn(h.store.usage, 'refinding');
    await semantic();
    expect(read).toHaveBeenCalledTimes(1);
  });
});
