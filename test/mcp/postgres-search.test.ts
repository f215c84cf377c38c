/**
 * Search on PostgreSQL through a real MCP client and the real model (test/helpers/pg-server.ts
 * starts the server), and the keyword leg's BM25 next to SQLite's FTS5 on the same memory: the same
 * matches in the same order with the same scores (pg-keywords.ts computes FTS5's formula). Skipped, saying why, when no server starts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildKeywordQuery } from '../../src/core/text/keyword-query.js';
import { openPgStore } from '../../src/store/postgres/pg-store.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { harness, keywordExpr } from '../helpers/fixtures.js';
import { startPgServer } from '../helpers/pg-server.js';

const started = await startPgServer();
const server = 'url' in started ? started : undefined;

afterAll(async () => {
  await server?.stop();
});

const MEMORY = [
  {
    name: 'Alice',
    entityType: 'person',
    observations: ['Speaks Spanish fluently', 'Works at Acme as an engineer', 'Drinks café con leche'],
  },
  { name: 'Acme', entityType: 'company', observations: ['Makes anvils and rockets', 'Founded in 1949 in the desert'] },
  { name: 'Bob', entityType: 'person', observations: ['Teaches Spanish at the university', 'Plays chess on Sundays'] },
  {
    name: 'Sesión de trabajo',
    entityType: 'meeting',
    observations: ['Planificación del lanzamiento del cohete', 'Asistieron Alice y Bob'],
  },
  {
    name: 'Rocket engine',
    entityType: 'project',
    observations: ['Liquid fuel engine for the anvil delivery rocket', 'Tested in the desert'],
  },
  { name: 'Chess club', entityType: 'group', observations: ['Meets on Sundays', 'Bob runs the chess club'] },
  { name: 'Coffee', entityType: 'topic', observations: ['Alice prefers cafe over tea', 'Espresso machines at the office'] },
  { name: 'Desert test site', entityType: 'place', observations: ['Rockets are tested here', 'Hot and dry'] },
];

describe.skipIf(server === undefined)(
  `search on PostgreSQL${server === undefined ? ` (skipped: ${'unavailable' in started ? started.unavailable : ''})` : ''}`,
  () => {
    it('hybrid_search and search_semantic find by words and by meaning with the real model', async () => {
      const url = await (server as NonNullable<typeof server>).createDatabase();
      const h = await harness({ embedder: 'real', store: openPgStore({ url }) });
      try {
        await h.ok('create_entities', { entities: MEMORY });
        await h.ok('create_relations', { relations: [{ from: 'Alice', to: 'Acme', relationType: 'works_at' }] });
        const byWords = await h.ok<{ results: { name: string }[]; search_modes_used: string[] }>('hybrid_search', { query: 'anvils' });
        expect(byWords.search_modes_used.sort()).toEqual(['fts', 'semantic']);
        expect(byWords.results[0]?.name).toBe('Acme');
        // No shared word: found by meaning alone.
        const byMeaning = await h.ok<{ results: { name: string }[] }>('search_semantic', {
          query: 'a board game played on weekends',
          limit: 3,
        });
        expect(byMeaning.results.map((r) => r.name)).toContain('Chess club');
        // Accents folded both ways: "sesion" finds "Sesión", "café" finds "cafe".
        const folded = await h.ok<{ results: { name: string }[] }>('hybrid_search', { query: 'sesion', search_modes: ['fts'] });
        expect(folded.results.map((r) => r.name)).toEqual(['Sesión de trabajo']);
        const cafe = await h.ok<{ results: { name: string }[] }>('hybrid_search', { query: 'café', search_modes: ['fts'] });
        expect(cafe.results.map((r) => r.name).sort()).toEqual(['Alice', 'Coffee']);
      } finally {
        await h.close();
        await server?.dropDatabase(url);
      }
    });

    it('ranks keywords as SQLite does: the same matches in the same order with the same BM25 scores', async () => {
      const url = await (server as NonNullable<typeof server>).createDatabase();
      const dir = mkdtempSync(join(tmpdir(), 'limbic-bm25-'));
      const pg = openPgStore({ url });
      const sqlite = openSqliteStore({ path: join(dir, 'm.db'), keywordTopK: false });
      try {
        for (const store of [pg, sqlite]) await store.graph.createEntities(MEMORY, 0);
        const nameOf = new Map<number, string>();
        for (const store of [pg, sqlite]) {
          const ids = await store.graph.idsByName(MEMORY.map((e) => e.name));
          ids.forEach((id, i) => nameOf.set(id, MEMORY[i]?.name ?? ''));
        }
        const rows: string[] = [];
        for (const match of [
          '"spanish"',
          '"rockets" OR "desert"',
          '"chess" OR "sundays" OR "bob"',
          '"anvil"',
          '"cafe"',
          'name:"chess"',
          '"engine" AND "rocket"',
          '"test"*',
        ]) {
          const [p, s] = await Promise.all([pg.keywords.search(keywordExpr(match), 10), sqlite.keywords.search(keywordExpr(match), 10)]);
          expect(new Set(p.map((h) => h.id)), match).toEqual(new Set(s.map((h) => h.id)));
          expect(
            p.map((h) => h.id),
            match,
          ).toEqual(s.map((h) => h.id));
          for (const [i, hit] of s.entries()) {
            const other = p.find((x) => x.id === hit.id)?.bm25 ?? 0;
            expect(Math.abs(other - hit.bm25), `${match} ${nameOf.get(hit.id)}`).toBeLessThanOrEqual(1e-6 * Math.abs(hit.bm25));
            rows.push(
              `${match.padEnd(32)} ${String(i + 1).padStart(2)} ${nameOf.get(hit.id)?.padEnd(18)} fts5 ${hit.bm25.toFixed(3)}  pg ${other.toFixed(3)}`,
            );
          }
        }
        if (process.env.LIMBIC_PRINT_BM25 === '1') process.stdout.write(`${rows.join('\n')}\n`);
        // Expert syntax as core/text writes it for FTS5: the same entities match on PostgreSQL.
        for (const query of [
          'rocket NOT tested',
          '"chess club" OR anvil*',
          'type:person AND spanish',
          '(alice OR bob) NOT chess',
          'obs:"liquid fuel"',
          'name:sesion',
          'café AND leche',
        ]) {
          const match = buildKeywordQuery(query).match ?? '';
          const [p, s] = await Promise.all([pg.keywords.search(keywordExpr(query), 10), sqlite.keywords.search(keywordExpr(query), 10)]);
          expect(
            p.map((h) => nameOf.get(h.id)),
            `${query} → ${match}`,
          ).toEqual(s.map((h) => nameOf.get(h.id)));
          expect(s.length, query).toBeGreaterThan(0);
        }
        // A quote left open is closed by the query language, so both backends run the phrase; no backend parses text.
        expect(await pg.keywords.search(keywordExpr('"unterminated'), 10)).toEqual(
          await sqlite.keywords.search(keywordExpr('"unterminated'), 10),
        );
      } finally {
        await Promise.all([pg.close(), sqlite.close()]);
        await server?.dropDatabase(url);
        rmSync(dir, { recursive: true, force: true });
      }
    });
  },
);
