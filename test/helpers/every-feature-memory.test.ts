/** The every-feature memory (every-feature-memory.ts) holds what its name says, on SQLite. */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { buildEveryFeatureMemory, EVERY_FEATURE_PARAMETERS, readMemorySnapshot, searchAnswers } from './every-feature-memory.js';
import { tempDir } from './fixtures.js';

const opened: { store: Store; cleanup: () => void }[] = [];
afterEach(async () => {
  for (const { store, cleanup } of opened.splice(0)) {
    await store.close();
    cleanup();
  }
});

describe('every-feature memory', () => {
  it('uses kinds, history, statuses, context, an ended relation, a reflection, a project and tuned parameters', async () => {
    const tmp = tempDir();
    const store = openSqliteStore({ path: join(tmp.dir, 'memory.db') });
    opened.push({ store, cleanup: tmp.cleanup });
    await buildEveryFeatureMemory(store, 'default');
    const m = await readMemorySnapshot(store);
    const kinds = new Set(m.entities.flatMap((e) => e.observations.map((o) => o.kind)));
    expect([...kinds].sort()).toEqual(
      expect.arrayContaining(['constraint', 'decision', 'fact', 'generic', 'metadata', 'reflection-meta', 'user']),
    );
    expect(m.entities.flatMap((e) => e.superseded.map((s) => s.content))).toEqual([
      'Alice Martin lives in Lyon',
      'Alice Martin lives in Berlin',
    ]);
    expect(new Set(m.entities.map((e) => e.status)).size).toBe(4);
    expect(m.entities.filter((e) => e.project !== null).map((e) => e.name)).toEqual(['Session Billing rewrite']);
    expect(m.entities.some((e) => e.entityType === 'Reflection')).toBe(true);
    expect(m.relations.filter((r) => r.endedAt !== null).map((r) => r.from)).toEqual(['Bob Keller']);
    expect(m.relations.filter((r) => r.context !== null)).toHaveLength(2);
    expect(m.tuning).toMatchObject(EVERY_FEATURE_PARAMETERS.default);
    expect(Object.keys(m.usage.access).length).toBeGreaterThan(0);
    const answers = await searchAnswers(store);
    for (const a of answers) expect(a.results.length, a.label).toBeGreaterThan(0);
  });
});
