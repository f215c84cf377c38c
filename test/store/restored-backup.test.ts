/**
 * Issue 26, item 1: a database restored from an older copy never reads a side file (`<db>.keywords`,
 * `<db>.vectors`) written by the newer timeline, even when it has since written as many rows, so
 * that the same entity ids stand at the same log positions. Reproduced as the issue describes: the
 * newer side files survive the restore (a process killed before it re-saved them). The fake embedder
 * stands in for the model: which entity a word's vector belongs to is all that matters here.
 */
import { copyFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { keywordFilePath } from '../../src/store/sqlite/keyword-topk/keyword-topk-file.js';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { vectorFilePath } from '../../src/store/sqlite/vector-cache/vector-cache-file.js';
import { harness, tempDir } from '../helpers/fixtures.js';

interface Hybrid {
  results: { name: string }[];
}
interface Semantic {
  results: { name: string; distance?: number }[];
}

const FILLERS = 1_000;

type Session = Awaited<ReturnType<typeof harness>>;
/** Both in-memory indexes built (from their files when those are taken), so searches go through them. */
const warm = async (h: Session): Promise<SqliteStore> => {
  const store = h.store as SqliteStore;
  await store.keywords.topK?.warm();
  await store.requireVectors().warm();
  return store;
};

describe('a restored backup and the side files of its newer timeline', () => {
  const tmp = tempDir();
  const path = join(tmp.dir, 'memory.db');
  afterAll(() => tmp.cleanup());

  /** One session: a harness on the file, the work, every queued vector embedded, closed. */
  const session = async (work: (h: Session) => Promise<void>) => {
    const h = await harness({ path, embedder: 'fake' });
    try {
      await work(h);
    } finally {
      await h.close();
    }
  };
  /** One entity of its own, then fillers alike in both timelines: only that entity tells them apart. */
  const load = async (h: Session, first: { name: string; word: string }) => {
    const filler = 'filler';
    await h.ok('create_entities', { entities: [{ name: first.name, entityType: 'note', observations: [`the ${first.word} note`] }] });
    for (let i = 0; i < FILLERS; i += 250)
      await h.ok('create_entities', {
        entities: Array.from({ length: 250 }, (_, j) => ({
          name: `${filler} ${i + j}`,
          entityType: 'note',
          observations: [`${filler} ${i + j}`],
        })),
      });
    await h.service.drainEmbeddings();
    // Both indexes catch up (and so owe their files a save at close).
    await warm(h);
    await h.ok('hybrid_search', { query: first.word, search_modes: ['fts'] });
    await h.ok('search_semantic', { query: first.word, limit: 3 });
  };

  it('reads neither the newer keyword file nor the newer vector file, and answers from this timeline', async () => {
    await session(async (h) => {
      await h.ok('create_entities', {
        entities: Array.from({ length: 300 }, (_, i) => ({ name: `base ${i}`, entityType: 'note', observations: [`base entity ${i}`] })),
      });
      await h.service.drainEmbeddings();
      await warm(h);
      await h.ok('hybrid_search', { query: 'base', search_modes: ['fts'] });
      await h.ok('search_semantic', { query: 'base entity', limit: 3 });
    });
    const backup = join(tmp.dir, 'backup.db');
    copyFileSync(path, backup);

    // The newer timeline: X with a word of its own, then fillers (so the vector file is re-saved).
    await session((h) => load(h, { name: 'X', word: 'xylophone' }));
    const newer = { keywords: readFileSync(keywordFilePath(path)), vectors: readFileSync(vectorFilePath(path)) };

    // Restore the older copy; the side files stay. The first start rejects and removes them…
    copyFileSync(backup, path);
    for (const suffix of ['-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
    await session(async (h) => {
      await warm(h);
      // Removed at once (the keyword index is rebuilt and saved at once too), not merely saved over later.
      expect(existsSync(keywordFilePath(path)) && readFileSync(keywordFilePath(path)).equals(newer.keywords)).toBe(false);
      expect(existsSync(vectorFilePath(path))).toBe(false);
      await h.ok('hybrid_search', { query: 'base', search_modes: ['fts'] });
      await h.ok('search_semantic', { query: 'base entity', limit: 3 });
    });

    // …and this timeline writes as many rows: Y gets X's id, its log rows X's positions.
    await session((h) => load(h, { name: 'Y', word: 'zeppelin' }));
    // A process killed before it re-saved them: the newer timeline's files are back.
    writeFileSync(keywordFilePath(path), newer.keywords);
    writeFileSync(vectorFilePath(path), newer.vectors);

    await session(async (h) => {
      const store = await warm(h);
      const words = async (q: string) =>
        (await h.ok<Hybrid>('hybrid_search', { query: q, search_modes: ['fts'] })).results.map((r) => r.name);
      expect(await words('zeppelin')).toEqual(['Y']);
      expect(await words('xylophone')).toEqual([]);
      const meaning = async (q: string) => (await h.ok<Semantic>('search_semantic', { query: q, limit: 3 })).results;
      expect((await meaning('zeppelin note'))[0]?.name).toBe('Y');
      const x = await meaning('xylophone note');
      // Nothing holds the word: whatever comes first is no near-copy of the query (X's vector would be).
      expect(x.every((r) => r.name !== 'Y' || (r.distance ?? 1) > 0.2)).toBe(true);
      // The answers came from the in-memory indexes (rebuilt), not from FTS5 around them.
      expect(store.keywords.topKAnswers).toBeGreaterThan(0);
    });
  }, 120_000);
});
