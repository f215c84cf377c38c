/**
 * The server's periodic tune (LIMBIC_AUTO_TUNE_MINUTES, off by default) on a real SQLite file: it
 * applies nothing below the spec's minimum of searches with feedback, applies the better values
 * once the minimum is met and a cell beats the values in force, keeps them when nothing does, and
 * its timer runs the tune on schedule. Under serve --http every namespace tunes on its own log.
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { noopLogger } from '../../src/core/logger.js';
import { BETA_SAL } from '../../src/core/rank/constants.js';
import { MIN_EVENTS } from '../../src/core/tune/tuner.js';
import { LazyEmbedder } from '../../src/embed/embedder.js';
import { NamespaceRegistry } from '../../src/http/namespaces.js';
import { autoTuneMinutes, startAutoTune, type AutoTune } from '../../src/service/tuning.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../helpers/fixtures.js';
import { frequentVsRelevant, SHADOW_T0 } from '../helpers/shadow-events.js';

const T0 = SHADOW_T0;

describe('autoTuneMinutes', () => {
  it('is off unless set; reads whole minutes; a bad value says how to fix it', () => {
    expect(autoTuneMinutes({})).toBeUndefined();
    expect(autoTuneMinutes({ LIMBIC_AUTO_TUNE_MINUTES: '0' })).toBeUndefined();
    expect(autoTuneMinutes({ LIMBIC_AUTO_TUNE_MINUTES: '30' })).toBe(30);
    expect(() => autoTuneMinutes({ LIMBIC_AUTO_TUNE_MINUTES: 'hourly' })).toThrow(/not a number of minutes of at least 1; unset it/);
  });
});

describe('startAutoTune', () => {
  const tmp = tempDir();
  afterAll(() => tmp.cleanup());
  let store: SqliteStore;
  let auto: AutoTune | undefined;
  const logged: string[] = [];
  const log = { info: (m: string) => logged.push(m), warn: noopLogger.warn };
  beforeEach(() => {
    store = openSqliteStore({ path: join(tmp.dir, `memory-${Date.now()}-${Math.random()}.db`), vectors: false });
    logged.length = 0;
  });
  afterEach(async () => {
    auto?.stop();
    vi.useRealTimers();
    await store.close();
  });
  const append = async (from: number, count: number): Promise<void> => {
    for (let i = from; i < from + count; i++) await store.tuning?.appendShadow(frequentVsRelevant(i, 3));
  };

  it('applies nothing below the minimum, then the better values once it is met, then keeps them', async () => {
    auto = startAutoTune(store, 60, log, () => T0 + 1_000);
    await append(0, MIN_EVENTS - 1);
    expect((await auto.tick())?.status).toBe('skipped');
    expect(await store.tuning?.parameters()).toBeUndefined();

    await append(MIN_EVENTS, 10);
    const tuned = await auto.tick();
    expect(tuned?.status).toBe('tuned');
    expect(tuned?.gain).toBeGreaterThan(0);
    const applied = await store.tuning?.parameters();
    expect(applied).toMatchObject({ source: 'tuned', tunedAt: T0 + 1_000 });
    expect(applied?.betaSal).toBeLessThan(BETA_SAL);
    expect(logged.join('\n')).toMatch(/periodic tune applied .*BETA_SAL/);

    // The values in force now rank every logged search as well as any cell: nothing moves.
    const again = await auto.tick();
    expect(again?.status).toBe('kept');
    expect(again?.applied).toBeUndefined();
    expect(await store.tuning?.parameters()).toEqual(applied);
  });

  it('runs on its timer', async () => {
    vi.useFakeTimers();
    await append(0, MIN_EVENTS + 5);
    auto = startAutoTune(store, 5, log, () => T0);
    await vi.advanceTimersByTimeAsync(4 * 60_000);
    expect(await store.tuning?.parameters()).toBeUndefined();
    await vi.advanceTimersByTimeAsync(60_000);
    await vi.waitFor(async () => expect((await store.tuning?.parameters())?.source).toBe('tuned'));
  });
});

describe('periodic tune under serve --http (NamespaceRegistry)', () => {
  const tmp = tempDir();
  afterAll(() => tmp.cleanup());

  const registry = (autoTuneMinutes: number | undefined): NamespaceRegistry =>
    new NamespaceRegistry({
      dbPath: join(tmp.dir, `memory-${Math.random()}.db`),
      openStore: (path) => openSqliteStore({ path, vectors: false }),
      embedder: new LazyEmbedder(() => Promise.reject(new Error('no model in this test (keyword search only)'))),
      logger: noopLogger,
      clock: () => T0 + 1_000,
      autoTuneMinutes,
    });

  it('tunes each open namespace on its own shadow log, and none when the variable is unset', async () => {
    const on = registry(60);
    try {
      const busy = on.service('work').store;
      on.service('home');
      for (let i = 0; i < MIN_EVENTS + 10; i++) await busy.tuning?.appendShadow(frequentVsRelevant(i, 3));
      expect((await on.autoTune('work')?.tick())?.status).toBe('tuned');
      expect((await busy.tuning?.parameters())?.source).toBe('tuned');
      // "home" logged no search: its tune has nothing to learn from and changes nothing.
      expect((await on.autoTune('home')?.tick())?.status).toBe('skipped');
      expect(await on.service('home').store.tuning?.parameters()).toBeUndefined();
    } finally {
      await on.close();
    }
    const off = registry(undefined);
    try {
      off.service('work');
      expect(off.autoTune('work')).toBeUndefined();
    } finally {
      await off.close();
    }
  });
});
