/** The usage capability: what the re-ranker reads of candidates, and the accesses it learns from. */
import { describe, expect, it } from 'vitest';
import { REFIND_PAIRS_PER_ENTITY } from '../../../src/core/rank/constants.js';
import { asEntityId } from '../../../src/core/types.js';
import { seed, T0, useStore, type StoreFactory } from './fixture.js';

export function usageConformance(name: string, makeStore: StoreFactory): void {
  describe(`Store conformance: ${name}: usage`, () => {
    const store = useStore(makeStore);

    it('records access, access days and co-occurrences in canonical order', async () => {
      const { graph, usage } = store();
      await seed(graph);
      const ids = await graph.idsByName(['Acme', 'Alice']);
      await usage.recordAccess(ids, T0);
      await usage.recordAccess(ids, T0 + 86_400_000);
      const signals = await usage.signals(ids);
      for (const id of ids) {
        expect(signals.access.get(id)).toEqual({ accessCount: 2, lastAccess: T0 + 86_400_000, accessDays: 2 });
      }
      expect(signals.coOccurrences).toHaveLength(1);
      const pair = signals.coOccurrences[0];
      expect(pair && pair.a < pair.b).toBe(true);
      expect(pair?.count).toBe(2);
      const [alice] = await graph.idsByName(['Alice']);
      expect(signals.degree.get(alice ?? asEntityId(0))).toBe(2);
    });

    it('records every pair of a large access, written in several transactions on SQLite', async () => {
      const { graph, usage } = store();
      const n = 75; // 2,775 pairs: more than one of SQLite's bounded writes
      await graph.createEntities(
        Array.from({ length: n }, (_, i) => ({ name: `e${i}`, entityType: 'thing', observations: [] })),
        T0,
      );
      const ids = await graph.idsByName(Array.from({ length: n }, (_, i) => `e${i}`));
      await usage.recordAccess([...ids].reverse(), T0);
      const { coOccurrences } = await usage.signals(ids);
      expect(coOccurrences).toHaveLength((n * (n - 1)) / 2);
      expect(new Set(coOccurrences.map((p) => `${p.a}:${p.b}`)).size).toBe((n * (n - 1)) / 2);
      expect(coOccurrences.every((p) => p.a < p.b && p.count === 1 && p.lastCo === T0)).toBe(true);
    });

    it('records the pairs given (the ends of new relations) or none, with an access for every id', async () => {
      const { graph, usage } = store();
      await graph.createEntities(
        ['p', 'q', 'r', 's'].map((name) => ({ name, entityType: 'thing', observations: [] })),
        T0,
      );
      const [p, q, r, s] = await graph.idsByName(['p', 'q', 'r', 's']);
      if (p === undefined || q === undefined || r === undefined || s === undefined) throw new Error('seed missing');
      await usage.recordAccess([p, q, r, s], T0, [
        [s, r],
        [p, q],
        [q, p],
        [r, r],
      ]);
      await usage.recordAccess([s], T0 + 1, []);
      const signals = await usage.signals([p, q, r, s]);
      expect([p, q, r].map((id) => signals.access.get(id)?.accessCount)).toEqual([1, 1, 1]);
      expect(signals.access.get(s)?.accessCount).toBe(2);
      const pairs = signals.coOccurrences.map((c) => [c.a, c.b, c.count]).sort((x, y) => (x[0] as number) - (y[0] as number));
      expect(pairs).toEqual([
        [p, q, 1],
        [r, s, 1],
      ]);
    });

    it("gives each candidate's facts with its signals, without reading observations, and none for a deleted id", async () => {
      const { graph, usage } = store();
      await seed(graph);
      await graph.addObservations([{ entityName: 'Acme', contents: ['source: crm', 'id: 42', 'imported 2026'], kind: 'metadata' }], T0 + 5);
      await graph.setStatus('Bob', 'archived', T0 + 6);
      const [alice, acme, bob] = await graph.idsByName(['Alice', 'Acme', 'Bob']);
      if (alice === undefined || acme === undefined || bob === undefined) throw new Error('seed missing');
      await graph.deleteEntities(['Alice']);
      const { facts } = await usage.signals([alice, acme, bob]);
      expect(facts.has(alice)).toBe(false);
      expect(facts.get(acme)).toEqual({
        id: acme,
        name: 'Acme',
        entityType: 'company',
        status: 'active',
        createdAt: T0,
        updatedAt: T0 + 5,
        metadataRatio: 3 / 4,
      });
      expect(facts.get(bob)).toMatchObject({ name: 'Bob', status: 'archived', metadataRatio: 0 });
    });

    it('keeps re-finding pairs per model, newest first, at most REFIND_PAIRS_PER_ENTITY an entity, and clears them with the entity', async () => {
      const { graph, usage } = store();
      await seed(graph);
      const [alice, acme] = await graph.idsByName(['Alice', 'Acme']);
      if (alice === undefined || acme === undefined) throw new Error('seed missing');
      const vector = (x: number) => Float32Array.from([x, 1 - x, 0.5, -0.25]);
      const extra = 3;
      // A memory nobody used after a search holds none: a search then skips its read (pipeline.ts).
      expect(await usage.holdsRefinding()).toBe(false);
      await usage.recordRefinding([{ entityId: asEntityId(987_654), model: 'e5', vector: vector(0), at: T0 }]);
      expect(await usage.holdsRefinding()).toBe(false); // no such entity: nothing stored
      await usage.recordRefinding(
        Array.from({ length: REFIND_PAIRS_PER_ENTITY + extra }, (_, i) => ({
          entityId: alice,
          model: 'e5',
          vector: vector(i / 16),
          at: T0 + i,
        })),
      );
      await usage.recordRefinding([
        { entityId: acme, model: 'e5', vector: vector(0.75), at: T0 },
        { entityId: acme, model: 'minilm', vector: vector(0.5), at: T0 + 1 },
        // An entity that does not exist stores nothing.
        { entityId: asEntityId(987_654), model: 'e5', vector: vector(0), at: T0 },
      ]);
      const e5 = await usage.refinding([alice, acme, asEntityId(987_654)], 'e5');
      const kept = e5.get(alice) ?? [];
      expect(kept.map((p) => p.at)).toEqual(
        Array.from({ length: REFIND_PAIRS_PER_ENTITY }, (_, i) => T0 + REFIND_PAIRS_PER_ENTITY + extra - 1 - i),
      );
      expect([...(kept[0]?.vector ?? [])]).toEqual([...vector((REFIND_PAIRS_PER_ENTITY + extra - 1) / 16)]);
      expect(e5.get(acme)?.map((p) => [...p.vector])).toEqual([[...vector(0.75)]]);
      expect(e5.has(asEntityId(987_654))).toBe(false);
      expect(await usage.holdsRefinding()).toBe(true);
      expect((await usage.refinding([acme], 'minilm')).get(acme)?.map((p) => p.at)).toEqual([T0 + 1]);

      await graph.deleteEntities(['Alice']);
      expect((await usage.refinding([alice, acme], 'e5')).has(alice)).toBe(false);
      // A new entity given the deleted one's name inherits none of its pairs.
      await graph.createEntities([{ name: 'Alice', entityType: 'person', observations: [] }], T0 + 100);
      const again = await graph.idsByName(['Alice']);
      expect((await usage.refinding(again, 'e5')).size).toBe(0);
    });

    it('never exports re-finding pairs: the transfer reads carry entities, relations and use counts, not query vectors', async () => {
      const { graph, usage, transfer } = store();
      if (transfer === undefined) return;
      await seed(graph);
      const [alice] = await graph.idsByName(['Alice']);
      if (alice === undefined) throw new Error('seed missing');
      await usage.recordAccess([alice], T0);
      await usage.recordRefinding([{ entityId: alice, model: 'e5', vector: Float32Array.from([0.125, 0.5]), at: T0 }]);
      expect((await usage.refinding([alice], 'e5')).get(alice)).toHaveLength(1);
      const read = JSON.stringify([
        await transfer.readEntities(0, 100),
        await transfer.readRelations(0, 100),
        await transfer.readCoOccurrences(0, 100),
        await transfer.counts(),
      ]);
      expect(read).toContain('Alice');
      expect(read).not.toMatch(/refind|0\.125/i);
    });
  });
}
