/** LazyEmbedder: loads once, never makes a search wait for an install, says what it is doing. */
import { describe, expect, it } from 'vitest';
import { LazyEmbedder, type LoadProgress } from '../../src/embed/embedder.js';
import { FakeEmbedder } from '../helpers/fixtures.js';

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve: (v: T) => void = () => undefined;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('LazyEmbedder', () => {
  it('loads once for concurrent callers', async () => {
    let loads = 0;
    const lazy = new LazyEmbedder(async () => {
      loads++;
      return new FakeEmbedder();
    });
    const [a, b] = await Promise.all([lazy.get(), lazy.get()]);
    expect(a).toBe(b);
    expect(loads).toBe(1);
    expect(lazy.state().state).toBe('ready');
  });

  it('answers undefined at once while the model is being installed, and the engine once it is', async () => {
    const gate = deferred<void>();
    let report: LoadProgress = () => undefined;
    const lazy = new LazyEmbedder(async (progress) => {
      report = progress;
      progress('installing e5: fetching the wheel', true);
      await gate.promise;
      progress('loading the model');
      return new FakeEmbedder();
    });
    // The caller that starts the load, and later callers, stop waiting when the install starts.
    expect(await lazy.get()).toBeUndefined();
    expect(await lazy.get()).toBeUndefined();
    expect(lazy.state()).toEqual({ state: 'loading', detail: 'installing e5: fetching the wheel', installing: true });
    report('installing e5: converting', true);
    expect(lazy.state()).toMatchObject({ detail: 'installing e5: converting' });
    gate.resolve();
    await new Promise((r) => setTimeout(r, 10));
    expect(lazy.state().state).toBe('ready');
    expect(await lazy.get()).toBeInstanceOf(FakeEmbedder);
  });

  it('does not wait for an install when closing', async () => {
    const never = new Promise<never>(() => undefined);
    const lazy = new LazyEmbedder(async (progress) => {
      progress('installing', true);
      return never;
    });
    await lazy.get();
    await expect(lazy.close()).resolves.toBeUndefined();
  });

  it('reports why a load failed and retries only after the pause', async () => {
    let now = 0;
    let loads = 0;
    const lazy = new LazyEmbedder(
      async () => {
        loads++;
        throw new Error('no model here');
      },
      1_000,
      () => now,
    );
    expect(await lazy.get()).toBeUndefined();
    expect(lazy.state()).toEqual({ state: 'unavailable', reason: 'no model here' });
    await lazy.get();
    expect(loads).toBe(1);
    now = 2_000;
    await lazy.get();
    expect(loads).toBe(2);
  });
});
