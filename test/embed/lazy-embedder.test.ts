/** LazyEmbedder: loads once, never makes a search wait for an install, says what it is doing. */
import { describe, expect, it } from 'vitest';
import { LazyEmbedder, type Embedder, type LoadProgress } from '../../src/embed/embedder.js';
import { ModelAbsentError } from '../../src/embed/model-state.js';
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
    expect(lazy.state()).toEqual({ state: 'unavailable', reason: 'no model here', why: 'failed' });
    await lazy.get();
    expect(loads).toBe(1);
    now = 2_000;
    await lazy.get();
    expect(loads).toBe(2);
  });

  it('tells its subscribers when an engine becomes ready after an install (issue 33)', async () => {
    const gate = deferred<void>();
    const lazy = new LazyEmbedder(async (progress) => {
      progress('installing', true);
      await gate.promise;
      return new FakeEmbedder();
    });
    const seen: string[] = [];
    lazy.onReady((engine) => seen.push(engine.id));
    expect(await lazy.get()).toBeUndefined();
    gate.resolve();
    await new Promise((r) => setTimeout(r, 10));
    expect(seen).toEqual([new FakeEmbedder().id]);
  });

  it('waits through an install with loaded(), where get() answers at once', async () => {
    const gate = deferred<void>();
    const lazy = new LazyEmbedder(async (progress) => {
      progress('installing', true);
      await gate.promise;
      return new FakeEmbedder();
    });
    expect(await lazy.get()).toBeUndefined();
    const waiting = lazy.loaded();
    gate.resolve();
    expect(await waiting).toBeInstanceOf(FakeEmbedder);
  });

  it('loads again as soon as its watch sees a model arrive, not after the pause', async () => {
    const model: { fingerprint?: string } = {};
    let loads = 0;
    const lazy = new LazyEmbedder(
      async () => {
        loads++;
        if (model.fingerprint === undefined) throw new Error('nothing installed');
        return new FakeEmbedder();
      },
      3_600_000,
      Date.now,
      { fingerprint: () => model.fingerprint, everyMs: 10 },
    );
    expect(await lazy.get()).toBeUndefined();
    await new Promise((r) => setTimeout(r, 50));
    expect(loads).toBe(1); // nothing changed: no retry
    model.fingerprint = 'model@1';
    for (let i = 0; i < 200 && lazy.state().state !== 'ready'; i++) await new Promise((r) => setTimeout(r, 10));
    expect(lazy.state().state).toBe('ready');
    expect(loads).toBe(2);
    await lazy.close();
  });

  it('records a model that is absent (not installed, switched off) apart from a failure', async () => {
    const lazy = new LazyEmbedder(async () =>
      Promise.reject(new ModelAbsentError('not-installed', 'No embedding model is installed yet.')),
    );
    await lazy.get();
    expect(lazy.state()).toEqual({ state: 'unavailable', reason: 'No embedding model is installed yet.', why: 'not-installed' });
  });

  it('closes an engine whose load ends after close, and stops a loader that waits', async () => {
    const gate = deferred<void>();
    let closed = false;
    const engine: Embedder = Object.assign(new FakeEmbedder(), {
      close: async () => {
        closed = true;
      },
    });
    let aborted = false;
    const lazy = new LazyEmbedder(async (_progress, signal) => {
      signal.addEventListener('abort', () => (aborted = true));
      await gate.promise;
      return engine;
    });
    const got = lazy.get();
    const closing = lazy.close();
    expect(aborted).toBe(true);
    gate.resolve();
    await closing;
    expect(await got).toBeUndefined();
    expect(closed).toBe(true);
    expect(lazy.state().state).toBe('idle');
  });
});
