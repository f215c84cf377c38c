/**
 * The model in a worker thread (issue 10, "Never stall"): the same vectors as the engine on the
 * caller's thread, a query that never waits behind a drain, and tools that answer while it runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isMemoryError } from '../../src/core/errors.js';
import type { EntityInput } from '../../src/embed/embedder.js';
import { ThreadedEmbedder } from '../../src/embed/onnx/threaded-embedder.js';
import { harness, modelCacheDir, realEmbedder, tempDir } from '../helpers/fixtures.js';

const cosine = (a: Float32Array | undefined, b: Float32Array | undefined): number => {
  if (a === undefined || b === undefined) throw new Error('missing vector');
  return a.reduce((s, x, i) => s + x * (b[i] ?? 0), 0);
};

const sentence = (i: number): string =>
  `Observation ${i}: the team met on day ${i % 28} to review the archive, the garden plans, the budget for the library and the notes on memory ${i * 7}.`;

function entity(i: number, observations = 6): EntityInput {
  return {
    entity: { name: `entity-${i}`, entityType: 'note', observations: Array.from({ length: observations }, (_, k) => sentence(i * 10 + k)) },
    relations: [{ from: `entity-${i}`, to: `entity-${i + 1}`, relationType: 'follows' }],
  };
}

describe('ThreadedEmbedder (real model in a worker thread)', () => {
  let threaded: ThreadedEmbedder;
  beforeAll(async () => {
    const model = await realEmbedder();
    threaded = await ThreadedEmbedder.start({
      model: { modelDir: model.description.location, cacheDir: modelCacheDir(), modelId: model.id, allowRemote: false, threads: 1 },
    });
  });
  afterAll(async () => {
    await threaded.close();
  });

  it('gives the vectors the engine gives on the caller thread, for queries, passages and entities', async () => {
    const local = await realEmbedder();
    expect(threaded.id).toBe(local.id);
    expect(threaded.dims).toBe(local.dims);
    const texts = ['where did Ada work', 'la tetera es azul', 'memory'];
    for (const kind of ['query', 'passage'] as const) {
      const [mine, theirs] = [await threaded.embed(texts, kind), await local.embed(texts, kind)];
      texts.forEach((_, i) => expect(cosine(mine[i], theirs[i])).toBeGreaterThan(0.9999));
    }
    const items = [entity(1), entity(2, 80)]; // the second is over the token budget: fitted in the worker
    const [mine, theirs] = [await threaded.embedEntities(items), await local.embedEntities(items)];
    items.forEach((_, i) => expect(cosine(mine[i], theirs[i])).toBeGreaterThan(0.9999));
  });

  it('tells, by the model tokenizer in the worker, which entities do not fit one vector', async () => {
    const local = await realEmbedder();
    const items = [entity(1), entity(2, 80), entity(3, 14)];
    const fits = await threaded.fitsOneVector(items);
    expect(fits).toEqual(await local.fitsOneVector?.(items));
    expect(fits.slice(0, 2)).toEqual([true, false]); // 6 sentences fit 480 tokens, 80 do not
    expect(await threaded.fitsOneVector([])).toEqual([]);
  });

  it('answers a query before a drain that was asked first', async () => {
    const order: string[] = [];
    const drain = threaded.embedEntities(Array.from({ length: 12 }, (_, i) => entity(i))).then((v) => {
      order.push('drain');
      return v;
    });
    const query = threaded.embed(['who reviewed the garden plans'], 'query').then((v) => {
      order.push('query');
      return v;
    });
    const [vectors, [q]] = await Promise.all([drain, query]);
    expect(order).toEqual(['query', 'drain']);
    expect(vectors).toHaveLength(12);
    expect(q).toHaveLength(threaded.dims);
  });

  it('returns nothing for nothing', async () => {
    expect(await threaded.embed([], 'passage')).toEqual([]);
    expect(await threaded.embedEntities([])).toEqual([]);
  });

  it('fails to start with the reason the model could not load', async () => {
    const tmp = tempDir();
    try {
      const error = await ThreadedEmbedder.start({
        model: { modelDir: tmp.dir, cacheDir: tmp.dir, modelId: 'none', allowRemote: false },
      }).catch((e: unknown) => e);
      expect(isMemoryError(error)).toBe(true);
      expect((error as Error).message).toMatch(/tokenizer\.json.*--model-dir/);
    } finally {
      tmp.cleanup();
    }
  });

  it('closes after the batch under way, leaving the rest of a backlog queued for the next start', async () => {
    const tmp = tempDir();
    const path = `${tmp.dir}/memory.db`;
    const h = await harness({ embedder: threaded, path });
    try {
      const entities = Array.from({ length: 200 }, (_, i) => ({ name: `backlog-${i}`, entityType: 'note', observations: [sentence(i)] }));
      await h.ok('create_entities', { entities });
      h.service.warm();
      await new Promise((r) => setTimeout(r, 50));
      await h.client.close();
      await h.service.close(); // resolves without embedding the other ~200 entities
      const { openSqliteStore } = await import('../../src/store/sqlite/sqlite-store.js');
      const store = openSqliteStore({ path });
      expect((await store.requireVectors().status()).pending).toBeGreaterThan(0);
      await store.close();
    } finally {
      tmp.cleanup();
    }
    // The shared engine was closed with that service; start it again for the next test.
    const model = await realEmbedder();
    threaded = await ThreadedEmbedder.start({
      model: { modelDir: model.description.location, cacheDir: modelCacheDir(), modelId: model.id, allowRemote: false, threads: 1 },
    });
  });

  it('keeps answering other tools while the worker embeds a backlog', async () => {
    const h = await harness({ embedder: threaded });
    try {
      const entities = Array.from({ length: 40 }, (_, i) => {
        const { entity: e } = entity(i, 2);
        return { name: e.name, entityType: e.entityType, observations: [...e.observations] };
      });
      await h.ok('create_entities', { entities });
      const drained = h.service.drainEmbeddings();
      let answeredWhilePending = 0;
      for (let i = 0; i < 10; i++) {
        const found = await h.ok<{ entities: unknown[] }>('search_nodes', { query: `entity-${i * 3}` });
        expect(found.entities.length).toBeGreaterThan(0);
        await h.ok('open_nodes', { names: [`entity-${i}`] });
        if (((await h.store.vectors?.status())?.pending ?? 0) > 0) answeredWhilePending++;
      }
      // Ordering, not time: tool calls were answered while entities still waited for the model.
      expect(answeredWhilePending).toBeGreaterThan(0);
      await drained;
      const status = await h.store.vectors?.status();
      expect(status).toMatchObject({ pending: 0, indexed: 40 });
    } finally {
      await h.close();
    }
  });
});
