/**
 * The conformance suite every Store backend runs (STYLE.md rule 1): one suite per capability, each a
 * function of a factory of fresh, empty stores. A backend's test file calls runStoreSuite; a suite
 * whose capability the store lacks (`store.keywords` or `store.vectors` undefined) is skipped, each
 * test saying why.
 */
import { describe, expect, it } from 'vitest';
import { captureConformance } from './capture.js';
import { graphConformance } from './graph.js';
import { graphPagingConformance } from './graph-paging.js';
import { keywordConformance } from './keywords.js';
import { maintenanceConformance } from './maintenance.js';
import { tuningConformance } from './tuning.js';
import { usageConformance } from './usage.js';
import { vectorConformance } from './vectors.js';
import { useStore, type StoreFactory } from './fixture.js';

export type { StoreFactory } from './fixture.js';

export function runStoreSuite(name: string, makeStore: StoreFactory): void {
  describe(`Store conformance: ${name}`, () => {
    const store = useStore(makeStore);
    it('declares its capabilities by their presence: a graph and usage always, an index or undefined for keywords and vectors', () => {
      const s = store();
      expect(typeof s.graph.readGraph).toBe('function');
      expect(typeof s.usage.signals).toBe('function');
      expect(s.keywords === undefined || typeof s.keywords.search === 'function').toBe(true);
      expect(s.vectors === undefined || typeof s.vectors.search === 'function').toBe(true);
    });
  });
  graphConformance(name, makeStore);
  graphPagingConformance(name, makeStore);
  usageConformance(name, makeStore);
  keywordConformance(name, makeStore);
  vectorConformance(name, makeStore);
  tuningConformance(name, makeStore);
  maintenanceConformance(name, makeStore);
  captureConformance(name, makeStore);
}
