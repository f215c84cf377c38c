/** The keyword leg split over two cores answers exactly what one query answers. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/core/errors.js';
import { mergeRanges } from '../../src/store/sqlite/keyword-topk/keyword-split.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir, keywordExpr } from '../helpers/fixtures.js';

const WORDS = ['river', 'stone', 'lamp', 'orchard', 'violet', 'harbor', 'copper', 'meadow', 'the', 'of', 'and'];

/** Deterministic text: common words in most entities, rarer ones in a few. */
function text(i: number): string {
  const pick = (k: number) => WORDS[(i * 7 + k * 13 + ((i * k) % 5)) % WORDS.length] ?? 'the';
  return Array.from({ length: 6 + (i % 9) }, (_, k) => pick(k)).join(' ');
}

describe('keyword leg split over two cores', () => {
  it('returns the same entities with the same BM25 scores as one query, and sees new writes', async () => {
    const tmp = tempDir();
    const path = join(tmp.dir, 'memory.db');
    const split = openSqliteStore({ path, keywordSplitFrom: 1, keywordTopK: false });
    const single = openSqliteStore({ path, keywordSplitFrom: Infinity, keywordTopK: false });
    await split.graph.createEntities(
      Array.from({ length: 600 }, (_, i) => ({ name: `Note ${i}`, entityType: 'note', observations: [text(i), text(i + 1000)] })),
      1,
    );
    for (const [match, limit] of [
      ['"river" OR "lamp"', 150],
      ['"violet"', 10],
      ['"copper" OR "meadow" OR "the"', 37],
      ['"stone" AND "harbor"', 150],
      ['"nothing-matches-this"', 10],
    ] as const) {
      const a = await split.keywords.search(keywordExpr(match), limit);
      const b = await single.keywords.search(keywordExpr(match), limit);
      expect(a).toEqual(b);
      expect(a.length).toBeLessThanOrEqual(limit);
    }
    expect((await split.keywords.search(keywordExpr('"violet"'), 600)).length).toBeGreaterThan(10); // more matches than the page above
    expect(split.keywords.splits).toBe(6); // every search above went through the worker
    expect(single.keywords.splits).toBe(0);
    // A write through the splitting store is seen by its worker's connection at once.
    await split.graph.createEntities([{ name: 'Late', entityType: 'note', observations: ['a zeppelin over the orchard'] }], 2);
    const [late] = await split.graph.idsByName(['Late']);
    expect((await split.keywords.search(keywordExpr('"zeppelin"'), 10)).map((h) => h.id)).toEqual([late]);
    await split.close();
    await single.close();
    // The worker closed its connection too: the last one to close checkpointed and removed the WAL.
    expect(existsSync(`${path}-wal`)).toBe(false);
    tmp.cleanup();
  });

  it('reports an expression FTS5 cannot run as INVALID_QUERY, and keeps answering after it', async () => {
    const tmp = tempDir();
    const store = openSqliteStore({ path: join(tmp.dir, 'memory.db'), keywordSplitFrom: 1 });
    await store.graph.createEntities([{ name: 'A', entityType: 't', observations: ['river stone'] }], 1);
    // The query language never builds an empty OR (keyword-query.ts drops what has nothing in it);
    // built by hand, it is what reaches FTS5 as an empty MATCH.
    await expect(store.keywords.search({ kind: 'or', children: [] }, 10)).rejects.toMatchObject({ code: ERROR_CODES.INVALID_QUERY });
    expect(await store.keywords.search(keywordExpr('"river"'), 10)).toHaveLength(1);
    await store.close();
    tmp.cleanup();
  });

  it('merges best-first halves into the best limit, ties by rowid', () => {
    const merged = mergeRanges(
      [
        { id: 1, score: -5 },
        { id: 4, score: -2 },
      ],
      [
        { id: 9, score: -5 },
        { id: 7, score: -3 },
      ],
      3,
    );
    expect(merged).toEqual([
      { id: 1, score: -5 },
      { id: 9, score: -5 },
      { id: 7, score: -3 },
    ]);
  });
});
