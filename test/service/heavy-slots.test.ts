/** Issue 25, item 3: backpressure holds when the heavy call keeps the thread (no model: all synchronous work). */
import { describe, expect, it } from 'vitest';
import { HeavyBusyError, HeavySlots } from '../../src/service/heavy-slots.js';

/** Holds the thread for `ms`, as a heavy report without a model does. */
const hold = (ms: number): void => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

describe('HeavySlots', () => {
  it('answers busy to waiters whose wait ran out while the running call held the thread', async () => {
    const slots = new HeavySlots({ slots: 1, waitMs: 10 });
    const first = slots.run(async () => {
      await Promise.resolve(); // the others arrive and wait here
      hold(60); // their timers cannot fire meanwhile
      return 'first';
    });
    const others = [1, 2, 3].map(() => slots.run(async () => 'other'));
    const settled = await Promise.allSettled([first, ...others]);
    expect(settled[0]).toEqual({ status: 'fulfilled', value: 'first' });
    for (const s of settled.slice(1)) {
      expect(s.status).toBe('rejected');
      expect((s as PromiseRejectedResult).reason).toBeInstanceOf(HeavyBusyError);
    }
  });

  it('grants a freed slot to a waiter still within its wait', async () => {
    const slots = new HeavySlots({ slots: 1, waitMs: 5_000 });
    const first = slots.run(async () => {
      await new Promise((r) => setTimeout(r, 20));
      return 1;
    });
    const second = slots.run(async () => 2);
    expect(await Promise.all([first, second])).toEqual([1, 2]);
  });
});
