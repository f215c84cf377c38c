/**
 * The SQLite tuning store beyond the conformance suite: the log's bound, and parameters applied by
 * one connection seen by another on the same file (another Limbic process) at its next read.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteTuning } from '../../src/store/sqlite/sqlite-tuning.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../helpers/fixtures.js';
import { shadowOf } from './conformance/tuning.js';

const T0 = Date.UTC(2026, 10, 23);

describe('SqliteTuning', () => {
  it('a second store on the same file sees an apply and a reset at its next read, without reopening', async () => {
    const tmp = tempDir();
    const path = join(tmp.dir, 'memory.db');
    const a = openSqliteStore({ path, vectors: false });
    const b = openSqliteStore({ path, vectors: false });
    try {
      expect(await b.tuning.parameters()).toBeUndefined(); // read once: b now holds a cached answer
      await a.tuning.setParameters({ gamma: 0.05, betaSal: 0.1, rrfK: 10 }, T0);
      expect(await b.tuning.parameters()).toMatchObject({ gamma: 0.05, betaSal: 0.1, rrfK: 10, source: 'tuned' });
      await a.tuning.setParameters({ gamma: 0.1, betaSal: 0.75, rrfK: 20 }, T0 + 1);
      expect(await b.tuning.parameters()).toMatchObject({ gamma: 0.1, betaSal: 0.75, rrfK: 20, tunedAt: T0 + 1 });
      await a.tuning.resetParameters();
      expect(await b.tuning.parameters()).toBeUndefined();
    } finally {
      await a.close();
      await b.close();
      tmp.cleanup();
    }
  });

  it('keeps at most its bound of searches, dropping the oldest with their candidates', async () => {
    const tmp = tempDir();
    const store = openSqliteStore({ path: join(tmp.dir, 'memory.db'), vectors: false });
    try {
      // The store's own connection, with a bound of 3.
      const conn = (store as unknown as { conn: ConstructorParameters<typeof SqliteTuning>[0] }).conn;
      const small = new SqliteTuning(conn, 3);
      for (let i = 0; i < 7; i++) await small.appendShadow(shadowOf(T0 + i, [1, 2, 3]));
      expect((await small.shadowEvents()).map((e) => e.at)).toEqual([T0 + 4, T0 + 5, T0 + 6]);
      const rows = conn.db.prepare('SELECT count(*) AS n FROM tuning_candidates').get() as { n: number };
      expect(rows.n).toBe(9);
    } finally {
      await store.close();
      tmp.cleanup();
    }
  });
});
