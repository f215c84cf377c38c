/**
 * The PostgreSQL keyword leg on a graph large enough for its pruning to matter (pg-keywords.ts):
 * plain-word queries read keyword_postings and skip the entities having only common words, and
 * must still give FTS5's exact top k (ids, order and BM25 scores) on the same memory. After
 * updates and deletes from several stores at once, the postings (kept by triggers) and the sharded
 * collection totals must agree with the tsvectors themselves: the GIN path, reached by the same
 * query in parentheses, recomputes every score from them. Skipped, saying why, when no server starts.
 */
import { keywordExpr } from '../helpers/fixtures.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openPgStore } from '../../src/store/postgres/pg-store.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';

type PgStore = ReturnType<typeof openPgStore>;
type SqliteStore = ReturnType<typeof openSqliteStore>;
import { startPgServer, type PgServer } from '../helpers/pg-server.js';
import { rng } from '../helpers/rng.js';

const started = await startPgServer();
const server: PgServer | undefined = 'unavailable' in started ? undefined : started;

afterAll(async () => {
  await server?.stop();
});

// Words with Zipf-like frequencies: the first few are in most entities, the last in a handful.
const VOCABULARY = Array.from({ length: 400 }, (_, i) => `w${i.toString(36)}x`);
const random = rng(7);
const word = (): string => VOCABULARY[Math.min(VOCABULARY.length - 1, Math.floor(VOCABULARY.length * random() ** 3))] as string;
const sentence = (n: number): string => Array.from({ length: n }, word).join(' ');
const ENTITIES = Array.from({ length: 800 }, (_, i) => ({
  name: `E${i}`,
  entityType: i % 3 === 0 ? 'note' : 'task',
  observations: Array.from({ length: 1 + (i % 4) }, () => sentence(4 + (i % 9))),
}));
/** Plain OR queries of 2-6 distinct words, mixing common and rare ones, as core/text writes them. */
const QUERIES = Array.from({ length: 25 }, () =>
  [...new Set(Array.from({ length: 2 + Math.floor(random() * 5) }, word))].map((w) => `"${w}"`).join(' OR '),
);

async function search(store: PgStore | SqliteStore, match: string, limit: number): Promise<{ name: string | undefined; bm25: number }[]> {
  const hits = await store.keywords.search(keywordExpr(match), limit);
  const entities = await store.graph.entitiesById(hits.map((h) => h.id));
  return hits.map((h) => ({ name: entities.get(h.id)?.name, bm25: h.bm25 }));
}

function expectSameRanking(got: { name: string | undefined; bm25: number }[], want: typeof got, label: string): void {
  expect(
    got.map((h) => h.name),
    label,
  ).toEqual(want.map((h) => h.name));
  for (const [i, hit] of want.entries()) {
    expect(Math.abs((got[i]?.bm25 ?? 0) - hit.bm25), `${label} #${i}`).toBeLessThanOrEqual(1e-9 * Math.abs(hit.bm25));
  }
}

describe.skipIf(server === undefined)(
  `PostgreSQL keyword postings${server === undefined ? ` (skipped: ${'unavailable' in started ? started.unavailable : ''})` : ''}`,
  () => {
    it("gives FTS5's exact top k for plain words on 800 entities, for small and large k", async () => {
      const url = await (server as PgServer).createDatabase();
      const dir = mkdtempSync(join(tmpdir(), 'limbic-pg-postings-'));
      const pg = openPgStore({ url });
      const sqlite = openSqliteStore({ path: join(dir, 'm.db'), keywordTopK: false, vectorCacheFile: false });
      try {
        for (const store of [pg, sqlite]) await store.graph.createEntities(ENTITIES, 0);
        await pg.keywords.optimize();
        for (const match of QUERIES) {
          for (const limit of [3, 20, 150]) {
            const [p, s] = await Promise.all([search(pg, match, limit), search(sqlite, match, limit)]);
            expect(s.length, match).toBeGreaterThan(0);
            expectSameRanking(p, s, `${match} k=${limit}`);
          }
        }
      } finally {
        await Promise.all([pg.close(), sqlite.close()]);
        await server?.dropDatabase(url);
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('keeps postings and totals in step through concurrent updates and deletes from three stores', async () => {
      const url = await (server as PgServer).createDatabase();
      const stores = [0, 1, 2].map(() => openPgStore({ url, poolSize: 4 }));
      const first = stores[0] as PgStore;
      try {
        await first.graph.createEntities(ENTITIES.slice(0, 300), 0);
        await Promise.all(
          stores.flatMap((store, s) =>
            Array.from({ length: 10 }, async (_, i) => {
              const n = s * 10 + i;
              await store.graph.createEntities([{ name: `New${n}`, entityType: 'note', observations: [sentence(12)] }], 1);
              await store.graph.addObservations([{ entityName: `E${n}`, contents: [sentence(20)] }], 2);
              await store.graph.deleteEntities([`E${100 + n}`]);
              await store.graph.deleteObservations(
                [{ entityName: `E${200 + n}`, observations: ENTITIES[200 + n]?.observations.slice(0, 1) ?? [] }],
                3,
              );
            }),
          ),
        );
        // 300 + 30 created - 30 deleted; the totals are the sum of several writers' shards.
        expect((await first.keywords.termStats(['note'])).total).toBe(300);
        for (const match of QUERIES) {
          // Parenthesised, the same query takes the GIN path: scores from the tsvectors themselves.
          const [postings, tsvectors] = await Promise.all([search(first, match, 40), search(first, `(${match})`, 40)]);
          expectSameRanking(postings, tsvectors, match);
        }
        expect((await search(first, '"note"', 400)).some((h) => h.name === 'E100')).toBe(false);
      } finally {
        await Promise.all(stores.map((s) => s.close()));
        await server?.dropDatabase(url);
      }
    });
  },
);
