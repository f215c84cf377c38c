/** The usage capability: what the re-ranker reads of candidates, and the accesses it learns from. */
import { describe, expect, it } from 'vitest';
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
  });
}
