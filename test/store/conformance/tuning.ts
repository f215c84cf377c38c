/**
 * The tuning capability (optional): the shadow log with its implicit relevance, bounded in size, and
 * the applied parameters. Skipped for a store without it (`store.tuning` undefined).
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_PARAMETERS, type ShadowEvent } from '../../../src/core/tune/shadow.js';
import { asEntityId } from '../../../src/core/types.js';
import type { Store, TuningStore } from '../../../src/store/store.js';
import { T0, useStore, type StoreFactory } from './fixture.js';

const MINUTE = 60_000;

/** A logged search over entities 1..n, listed in that order. */
export function shadowOf(at: number, ids: readonly number[], extra: Partial<ShadowEvent> = {}): ShadowEvent {
  return {
    at,
    tool: 'hybrid_search',
    queryHash: `q${at}`,
    fusion: 'rrf',
    legs: 2,
    strategy: 'hybrid_balanced',
    offset: 0,
    shown: Math.min(2, ids.length),
    parameters: DEFAULT_PARAMETERS,
    rrfKPinned: false,
    reflectionBoost: 1,
    reflections: 'included',
    candidates: ids.map((n, i) => ({
      id: asEntityId(n),
      base: 1 / (i + 1),
      semanticRank: i + 1,
      keywordRank: i % 2 === 0 ? undefined : i,
      graphPart: 0.25,
      importance: 0.5,
      temporal: 0.9,
      cooc: 1.5,
      multiplier: 0.85,
      relevance: 0,
      boosted: false,
      refind: i * 0.25,
    })),
    ...extra,
  };
}

export function tuningConformance(name: string, makeStore: StoreFactory): void {
  describe(`Store conformance: ${name}: tuning`, () => {
    const store = useStore(makeStore, (s: Store) =>
      s.tuning === undefined ? `${name} keeps no shadow log (store.tuning is undefined)` : undefined,
    );
    const tuning = (): TuningStore => {
      const t = store().tuning;
      if (t === undefined) throw new Error('skipped above');
      return t;
    };

    it('has no parameters until some are set; set, read, reset', async () => {
      const t = tuning();
      expect(await t.parameters()).toBeUndefined();
      await t.setParameters({ gamma: 0.05, betaSal: 0.25, rrfK: 10 }, T0);
      expect(await t.parameters()).toEqual({ gamma: 0.05, betaSal: 0.25, rrfK: 10, source: 'tuned', tunedAt: T0 });
      await t.setParameters({ gamma: 0.001, betaSal: 1, rrfK: 30 }, T0 + 1);
      expect(await t.parameters()).toEqual({ gamma: 0.001, betaSal: 1, rrfK: 30, source: 'tuned', tunedAt: T0 + 1 });
      await t.resetParameters();
      expect(await t.parameters()).toBeUndefined();
    });

    it('logs searches whole and reads them back oldest first, every field kept', async () => {
      const t = tuning();
      const a = shadowOf(T0, [3, 1, 2]);
      const b = shadowOf(T0 + MINUTE, [2, 4], {
        tool: 'search_semantic',
        fusion: 'weighted',
        legs: 1,
        strategy: 'cosine_heavy',
        offset: 5,
        rrfKPinned: true,
        parameters: { gamma: 0.05, betaSal: 0.1, rrfK: 10 },
        reflectionBoost: 1.5,
        reflections: 'excluded',
      });
      const boosted = { ...b, candidates: b.candidates.map((c, i) => ({ ...c, boosted: i === 1 })) };
      await t.appendShadow(a);
      await t.appendShadow(boosted);
      const events = await t.shadowEvents();
      expect(events.map(({ id: _id, ...rest }) => rest)).toEqual([a, boosted]);
      expect(events[0]!.id).toBeLessThan(events[1]!.id!);
    });

    it('an open credits the latest search within the window that listed the entity, shown or not, and only that one', async () => {
      const t = tuning();
      await t.appendShadow(shadowOf(T0, [1, 2, 3]));
      await t.appendShadow(shadowOf(T0 + MINUTE, [2, 1]));
      await t.appendShadow(shadowOf(T0 + 2 * MINUTE, [4]));
      // 1 is in the first two searches: the second is the latest. 3 only in the first. 9 in none.
      expect(await t.recordFeedback([asEntityId(1), asEntityId(3), asEntityId(9), asEntityId(1)], T0 + 3 * MINUTE, 60 * MINUTE)).toBe(2);
      const rel = (await t.shadowEvents()).map((e) => e.candidates.filter((c) => c.relevance > 0).map((c) => c.id));
      expect(rel).toEqual([[asEntityId(3)], [asEntityId(1)], []]);
    });

    it('an open outside the window, or before the search, credits nothing', async () => {
      const t = tuning();
      await t.appendShadow(shadowOf(T0, [1, 2]));
      expect(await t.recordFeedback([asEntityId(1)], T0 + 61 * MINUTE, 60 * MINUTE)).toBe(0);
      expect(await t.recordFeedback([asEntityId(2)], T0 - 1, 60 * MINUTE)).toBe(0);
      expect((await t.shadowEvents())[0]!.candidates.every((c) => c.relevance === 0)).toBe(true);
    });

    it('prunes the oldest searches, keeping the newest', async () => {
      const t = tuning();
      for (let i = 0; i < 5; i++) await t.appendShadow(shadowOf(T0 + i, [i + 1, i + 2]));
      expect(await t.pruneShadow(2)).toBe(3);
      expect((await t.shadowEvents()).map((e) => e.at)).toEqual([T0 + 3, T0 + 4]);
      expect(await t.pruneShadow(2)).toBe(0);
    });
  });
}
