/** The keyword capability: BM25 search, document frequencies, and compaction that changes no answer. */
import { keywordExpr } from '../../helpers/fixtures.js';
import { describe, expect, it } from 'vitest';
import type { KeywordIndex, Store } from '../../../src/store/store.js';
import { seed, T0, useStore, type StoreFactory } from './fixture.js';

export function keywordConformance(name: string, makeStore: StoreFactory): void {
  describe(`Store conformance: ${name}: keyword index`, () => {
    const store = useStore(makeStore, (s) =>
      s.keywords === undefined ? `${name} has no keyword index (store.keywords is undefined)` : undefined,
    );
    const keywords = (): KeywordIndex => indexOf(store());

    it('finds keywords with BM25', async () => {
      await seed(store().graph);
      const hits = await keywords().search(keywordExpr('"anvils"'), 10);
      const [acme] = await store().graph.idsByName(['Acme']);
      expect(hits.map((h) => h.id)).toEqual([acme]);
    });

    it('reports how many entities contain each keyword term, and how many entities there are', async () => {
      await seed(store().graph);
      const stats = await keywords().termStats(['person', 'anvils', 'zebra']);
      expect(stats.total).toBe(3);
      expect(stats.terms).toEqual([
        { word: 'person', df: 2 },
        { word: 'anvils', df: 1 },
        { word: 'zebra', df: 0 },
      ]);
      await store().graph.deleteEntities(['Bob']);
      expect((await keywords().termStats(['person'])).terms[0]).toEqual({ word: 'person', df: 1 });
      expect((await keywords().termStats([])).total).toBe(2);
    });

    it('answers keyword and substring searches the same after optimizing its indexes, and keeps indexing writes', async () => {
      const { graph } = store();
      await seed(graph);
      const before = { keywords: await keywords().search(keywordExpr('"anvils" OR "spanish"'), 10), nodes: await graph.searchNodes('an') };
      await keywords().optimize();
      expect(await keywords().search(keywordExpr('"anvils" OR "spanish"'), 10)).toEqual(before.keywords);
      expect(await graph.searchNodes('an')).toEqual(before.nodes);
      await graph.createEntities([{ name: 'Carol', entityType: 'person', observations: ['Sells anvils'] }], T0 + 1);
      expect(await keywords().search(keywordExpr('"anvils"'), 10)).toHaveLength(2);
      expect((await graph.searchNodes('anvils')).entities.map((e) => e.name).sort()).toEqual(['Acme', 'Carol']);
    });
  });
}

function indexOf(store: Store): KeywordIndex {
  if (store.keywords === undefined) throw new Error('no keyword index: the suite should have been skipped');
  return store.keywords;
}
