/** What every conformance suite shares: the store factory, a fresh store per test, and the seed graph. */
import { afterEach, beforeEach } from 'vitest';
import type { GraphStore, Store } from '../../../src/store/store.js';

export interface StoreFactory {
  (): Promise<{ store: Store; cleanup: () => Promise<void> }>;
}

export const T0 = Date.UTC(2026, 0, 1);

/**
 * A fresh store for each test of the enclosing describe, closed after it. `lacks` names what the
 * store is missing for this suite; each test is then skipped with that reason.
 */
export function useStore(makeStore: StoreFactory, lacks?: (store: Store) => string | undefined): () => Store {
  let store: Store | undefined;
  let cleanup: (() => Promise<void>) | undefined;
  beforeEach(async (ctx) => {
    ({ store, cleanup } = await makeStore());
    const reason = lacks?.(store);
    ctx.skip(reason !== undefined, reason);
  });
  afterEach(async () => {
    await cleanup?.();
    store = undefined;
    cleanup = undefined;
  });
  return () => {
    if (store === undefined) throw new Error('the store is only open inside a test');
    return store;
  };
}

/** Three entities (one without observations) and two relations. */
export async function seed(graph: GraphStore): Promise<void> {
  await graph.createEntities(
    [
      { name: 'Alice', entityType: 'person', observations: ['Speaks Spanish', 'Works at Acme'] },
      { name: 'Acme', entityType: 'company', observations: ['Makes anvils'] },
      { name: 'Bob', entityType: 'person', observations: [] },
    ],
    T0,
  );
  await graph.createRelations(
    [
      { from: 'Alice', to: 'Acme', relationType: 'works_at' },
      { from: 'Bob', to: 'Alice', relationType: 'knows' },
    ],
    T0,
  );
}
