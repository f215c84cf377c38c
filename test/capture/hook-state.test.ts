/**
 * What hooks keep between events (issue 34): a transcript's offset per session and memory, a
 * per-session lock that a second hook waits for and a dead hook's lock that is taken over, a
 * bounded log, and old files pruned.
 */
import { existsSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HookState, LOG_MAX_BYTES, MARK_TTL_MS, STALE_LOCK_MS } from '../../src/capture/hook-state.js';
import { tempDir } from '../helpers/fixtures.js';

describe('HookState', () => {
  let tmp: ReturnType<typeof tempDir>;
  let state: HookState;
  beforeEach(() => {
    tmp = tempDir('limbic-hook-state-');
    state = new HookState(join(tmp.dir, 'hooks'));
  });
  afterEach(() => tmp.cleanup());

  it('keys differ by memory, session and transcript, and say nothing of them', () => {
    const a = HookState.key('/m.db#default', 's1', '/t/s1.jsonl');
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(
      new Set([
        a,
        HookState.key('/m.db#work', 's1', '/t/s1.jsonl'),
        HookState.key('/m.db#default', 's2', '/t/s1.jsonl'),
        HookState.key('/m.db#default', 's1', ''),
      ]).size,
    ).toBe(4);
  });

  it('keeps a mark (offset, and the first start seen) in a private file holding no text', () => {
    const key = HookState.key('postgres://u:pw@db/x#default', 's1', '/t/s1.jsonl');
    expect(state.mark(key)).toBeUndefined();
    state.setMark(key, { transcript: '/t/s1.jsonl', offset: 0, startedAt: 1_000 });
    state.setMark(key, { transcript: '/t/s1.jsonl', offset: 4096 });
    expect(state.mark(key)).toEqual({ transcript: '/t/s1.jsonl', offset: 4096, startedAt: 1_000 });
    const file = join(state.dir, `${key}.json`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).not.toMatch(/pw|postgres/);
    writeFileSync(file, '{"offset": -1, "transcript": "/t"}');
    expect(state.mark(key)).toBeUndefined();
    writeFileSync(file, 'half a fi');
    expect(state.mark(key)).toBeUndefined();
  });

  it('a second hook of the session waits for the first; its wait can run out', async () => {
    const key = HookState.key('m', 's', '');
    const release = await state.lock(key, 0);
    expect(release).toBeDefined();
    expect(await state.lock(key, 100)).toBeUndefined();
    const waiting = state.lock(key, 5_000);
    setTimeout(() => release?.(), 50);
    const second = await waiting;
    expect(second).toBeDefined();
    second?.();
    expect(readdirSync(state.dir).filter((f) => f.endsWith('.lock'))).toEqual([]);
  });

  it('takes over the lock of a hook that died', async () => {
    const key = HookState.key('m', 's', '');
    await state.lock(key, 0);
    const lock = join(state.dir, `${key}.lock`);
    const old = (Date.now() - STALE_LOCK_MS - 1_000) / 1000;
    utimesSync(lock, old, old);
    const release = await state.lock(key, 0);
    expect(release).toBeDefined();
    release?.();
  });

  it('logs one timestamped line per call, and keeps the log bounded', () => {
    state.log('stop claude-code: database is locked\nsecond line');
    const text = readFileSync(join(state.dir, 'hooks.log'), 'utf8');
    expect(text).toMatch(/^\d{4}-\d\d-\d\dT\S+Z stop claude-code: database is locked second line\n$/);
    for (let i = 0; i < 2_000; i++) state.log(`line ${i} ${'x'.repeat(200)}`);
    const size = statSync(join(state.dir, 'hooks.log')).size;
    expect(size).toBeLessThanOrEqual(LOG_MAX_BYTES);
    expect(readFileSync(join(state.dir, 'hooks.log'), 'utf8')).toMatch(/line 1999 x+\n$/);
  });

  it('prunes marks past their time and dead locks, and nothing else', () => {
    const fresh = HookState.key('m', 'fresh', '');
    const old = HookState.key('m', 'old', '');
    state.setMark(fresh, { transcript: '', offset: 0 });
    state.setMark(old, { transcript: '', offset: 0 });
    const then = (Date.now() - MARK_TTL_MS - 60_000) / 1000;
    utimesSync(join(state.dir, `${old}.json`), then, then);
    state.log('kept');
    state.prune();
    expect(existsSync(join(state.dir, `${fresh}.json`))).toBe(true);
    expect(existsSync(join(state.dir, `${old}.json`))).toBe(false);
    expect(existsSync(join(state.dir, 'hooks.log'))).toBe(true);
  });
});
