/** The vector capability: KNN by cosine distance and the queue of entities to embed. */
import { describe, expect, it } from 'vitest';
import type { Store, VectorIndex } from '../../../src/store/store.js';
import { seed, T0, useStore, type StoreFactory } from './fixture.js';

export function vectorConformance(name: string, makeStore: StoreFactory): void {
  describe(`Store conformance: ${name}: vector index`, () => {
    const store = useStore(makeStore, (s) =>
      s.vectors === undefined ? `${name} has no vector index (store.vectors is undefined)` : undefined,
    );
    const vectors = (): VectorIndex => indexOf(store());

    it('stores, finds and forgets vectors', async () => {
      const { graph } = store();
      await seed(graph);
      await vectors().configure('test-model', 3);
      const jobs = await vectors().takeJobs(10);
      expect(jobs.map((j) => j.entity.name).sort()).toEqual(['Acme', 'Alice', 'Bob']);
      expect(await vectors().countPending(2)).toBe(2); // bounded by upTo
      expect(await vectors().countPending(10)).toBe(3);
      const alice = jobs.find((j) => j.entity.name === 'Alice');
      expect(alice?.relations).toEqual([{ from: 'Alice', to: 'Acme', relationType: 'works_at' }]);
      const byName: Record<string, number[]> = { Alice: [1, 0, 0], Acme: [0, 1, 0], Bob: [0, 0, 1] };
      await vectors().put(jobs.map((j) => ({ id: j.id, version: j.version, vector: Float32Array.from(byName[j.entity.name] ?? []) })));
      expect(await vectors().status()).toMatchObject({ model: 'test-model', dims: 3, indexed: 3, pending: 0 });
      const hits = await vectors().search(Float32Array.from([0.9, 0.1, 0]), 2);
      expect(hits[0]?.id).toBe(alice?.id);
      expect(hits[0]?.distance).toBeLessThan(0.05);
      // A change re-queues; deletion removes the vector.
      await graph.addObservations([{ entityName: 'Acme', contents: ['Sells rockets'] }], T0);
      expect((await vectors().status()).pending).toBe(1);
      expect(await vectors().countPending(10)).toBe(1);
      await graph.deleteEntities(['Alice']);
      expect((await vectors().status()).indexed).toBe(2);
      // A new model drops old vectors and queues everything.
      expect(await vectors().configure('other-model', 4)).toEqual({ reset: true });
      expect(await vectors().status()).toMatchObject({ model: 'other-model', dims: 4, indexed: 0, pending: 2 });
    });

    it('keeps a change made while a job was being embedded queued', async () => {
      const { graph } = store();
      await seed(graph);
      await vectors().configure('test-model', 3);
      const jobs = await vectors().takeJobs(10);
      await graph.addObservations([{ entityName: 'Bob', contents: ['Changed meanwhile'] }], T0);
      await vectors().put(jobs.map((j) => ({ id: j.id, version: j.version, vector: Float32Array.from([1, 0, 0]) })));
      const pending = await vectors().takeJobs(10);
      expect(pending.map((j) => j.entity.name)).toEqual(['Bob']);
      expect(pending[0]?.entity.observations).toEqual(['Changed meanwhile']);
    });

    it('embeds again a job whose entity changed while it was embedded, behind the jobs waiting, not at the head', async () => {
      const { graph } = store();
      const note = (...names: string[]) => names.map((name) => ({ name, entityType: 'note', observations: [`about ${name}`] }));
      await vectors().configure('fake-model', 3);
      await graph.createEntities(note('Busy'), T0);
      const [busy] = await vectors().takeJobs(1);
      expect(busy?.entity.name).toBe('Busy');
      await graph.createEntities(note('New1', 'New2', 'New3'), T0);
      await graph.addObservations([{ entityName: 'Busy', contents: ['changed while embedded'] }], T0);
      await vectors().put(busy === undefined ? [] : [{ id: busy.id, version: busy.version, vector: Float32Array.from([1, 0, 0]) }]);
      // Busy has a vector (of its older text) and is queued again, behind the entities waiting (issue 26).
      expect(await vectors().status()).toMatchObject({ indexed: 1, pending: 4 });
      const next = await vectors().takeJobs(10);
      expect(next.map((j) => j.entity.name)).toEqual(['New1', 'New2', 'New3', 'Busy']);
      expect(next[3]?.entity.observations).toContain('changed while embedded');
      await vectors().put(next.map((j) => ({ id: j.id, version: j.version, vector: Float32Array.from([0, 1, 0]) })));
      expect(await vectors().status()).toMatchObject({ indexed: 4, pending: 0 });
    });
  });
}

function indexOf(store: Store): VectorIndex {
  if (store.vectors === undefined) throw new Error('no vector index: the suite should have been skipped');
  return store.vectors;
}
