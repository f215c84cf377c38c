/**
 * search_nodes on SQLite against the contract written out in plain JavaScript, on random graphs:
 * the trigram candidates, the bulk reads and the SQL test of a page must never change an answer.
 * The alphabet mixes case, spaces, the observation separator's '|', and the characters whose
 * lower case differs between engines ('İ', the Kelvin sign, 'ß', 'É'), and accents composed and
 * decomposed, which search_nodes folds (issue 25); observations are added in several calls, so an
 * entity's observations are not in the (entity, content) index's order.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Entity, Relation } from '../../src/core/types.js';
import type { Store } from '../../src/store/store.js';
import { SqliteConnection } from '../../src/store/sqlite/sqlite-connection.js';
import { SqliteGraph } from '../../src/store/sqlite/sqlite-graph.js';
import { substringIndex } from '../../src/store/sqlite/sqlite-substring.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../helpers/fixtures.js';
import { rng } from '../helpers/rng.js';

const ALPHABET = ['a', 'b', 'e', 'k', 'K', 'i', 'I', 'l', 'o', ' ', '|', 'İ', '\u212a', 'ß', 'É', 'é', '\u0301', 'ñ'];

/**
 * Limbic's test and tiers, without any index: what every answer must equal. The official test
 * (lower-cased text contains the lower-cased query) widened to accents: both sides lower-cased,
 * decomposed and stripped of combining marks; a query of marks alone is compared lower-cased only.
 */
function expected(entities: readonly Entity[], relations: readonly Relation[], query: string) {
  const strip = (s: string) => s.toLowerCase().normalize('NFD').replace(/\p{M}/gu, '');
  const folds = query === '' || strip(query) !== '';
  const fold = folds ? strip : (s: string) => s.toLowerCase();
  const q = fold(query);
  const tier = (e: Entity): number | undefined => {
    const name = fold(e.name);
    if (name === q) return 0;
    if (name.startsWith(q)) return 1;
    if (name.includes(q)) return 2;
    if (fold(e.entityType).includes(q)) return 3;
    return e.observations.some((o) => fold(o).includes(q)) ? 4 : undefined;
  };
  const found = entities
    .map((e, order) => ({ e, order, tier: tier(e) }))
    .filter((x): x is { e: Entity; order: number; tier: number } => x.tier !== undefined)
    .sort((a, b) => a.tier - b.tier || a.order - b.order)
    .map((x) => x.e);
  // Everything the official server's test finds is among them.
  const official = (e: Entity) => [e.name, e.entityType, ...e.observations].some((t) => t.toLowerCase().includes(query.toLowerCase()));
  expect(entities.filter(official).every((e) => found.includes(e))).toBe(true);
  const names = new Set(found.map((e) => e.name));
  return { entities: found, relations: relations.filter((r) => names.has(r.from) || names.has(r.to)), total: found.length };
}

describe('search_nodes on SQLite equals the contract on random graphs', () => {
  let store: Store;
  let cleanup: () => void;
  beforeEach(() => {
    const tmp = tempDir();
    store = openSqliteStore({ path: join(tmp.dir, 'memory.db') });
    cleanup = tmp.cleanup;
  });
  afterEach(async () => {
    await store.close();
    cleanup();
  });

  for (const seed of [1, 2, 3]) {
    it(`seed ${seed}: whole answers and every page`, async () => {
      const random = rng(seed);
      const word = (min: number, max: number) =>
        Array.from({ length: min + Math.floor(random() * (max - min + 1)) }, () => ALPHABET[Math.floor(random() * ALPHABET.length)]).join(
          '',
        );
      const entities: Entity[] = [];
      const names = new Set<string>();
      while (entities.length < 60) {
        const name = word(2, 8);
        if (names.has(name) || name.trim() === '') continue;
        names.add(name);
        entities.push({
          name,
          entityType: word(2, 6),
          observations: [...new Set(Array.from({ length: Math.floor(random() * 3) }, () => word(3, 14)))],
        });
      }
      await store.graph.createEntities(entities, 1);
      // Later observations: each entity's list is in the order written, not in content order.
      for (const e of entities) {
        const more = [...new Set(Array.from({ length: Math.floor(random() * 3) }, () => word(3, 14)))].filter(
          (o) => !e.observations.includes(o),
        );
        if (more.length === 0) continue;
        await store.graph.addObservations([{ entityName: e.name, contents: more }], 2);
        (e.observations as string[]).push(...more);
      }
      const relations: Relation[] = [];
      for (let i = 0; i < 40; i++) {
        const from = entities[Math.floor(random() * entities.length)]?.name ?? '';
        const to = random() < 0.2 ? 'Nobody' : (entities[Math.floor(random() * entities.length)]?.name ?? '');
        if (!relations.some((r) => r.from === from && r.to === to)) relations.push({ from, to, relationType: 'r' });
      }
      await store.graph.createRelations(relations, 3);

      // Pieces of stored text (upper-cased too) and random strings, of every length from 1.
      const texts = entities.flatMap((e) => [e.name, e.entityType, ...e.observations]);
      const queries = ['', 'İ', 'i', 'k', 'ss', 'é', 'e', '\u0301', 'É\u0301', '|', ' | '];
      for (let i = 0; i < 40; i++) {
        const text = texts[Math.floor(random() * texts.length)] ?? '';
        const start = Math.floor(random() * text.length);
        const piece = text.slice(start, start + 1 + Math.floor(random() * 6));
        queries.push(piece, piece.toUpperCase(), word(1, 5));
      }
      for (const query of queries) {
        const want = expected(entities, relations, query);
        const whole = await store.graph.searchNodes(query);
        expect({ query, ...whole }).toEqual({ query, ...want });
        for (const limit of [1, 7]) {
          const seen: Entity[] = [];
          for (let offset = 0; offset < want.total + limit; offset += limit) {
            const page = await store.graph.searchNodes(query, { limit, offset });
            expect({ query, offset, total: page.total }).toEqual({ query, offset, total: want.total });
            const onPage = new Set(page.entities.map((e) => e.name));
            expect(page.relations).toEqual(want.relations.filter((r) => onPage.has(r.from) || onPage.has(r.to)));
            seen.push(...page.entities);
          }
          expect({ query, limit, seen }).toEqual({ query, limit, seen: want.entities });
        }
      }
    });
  }
});

/**
 * The in-memory index (substring-index.ts) answers queries without whitespace; another connection's
 * writes reach it through keyword_log. A reader's graph on its own connection, a writer's store on
 * another, one file: every answer must equal the contract on the writer's current graph.
 */
describe('search_nodes and the Turkish İ (issue 26)', () => {
  it("finds what the contract's lower-case test finds, with whitespace in the query (answered in SQL) or without", async () => {
    const tmp = tempDir();
    const store = openSqliteStore({ path: join(tmp.dir, 'memory.db'), vectors: false });
    try {
      const texts = ['Ciudad de İstanbul grande', 'İzmir Port', 'plain i\u0307 already decomposed', 'Izmir without a dot'];
      await store.graph.createEntities(
        texts.map((t, i) => ({ name: `E${i}`, entityType: 't', observations: [t] })),
        Date.UTC(2026, 10, 25),
      );
      for (const query of ['de i̇stanbul', 'i̇stanbul gr', 'i̇zmir port', 'DE İSTANBUL', 'i̇stanbul', 'plain i̇ already', 'izmir with']) {
        const expected = texts.flatMap((t, i) => (t.toLowerCase().includes(query.toLowerCase()) ? [`E${i}`] : []));
        const got = (await store.graph.searchNodes(query)).entities.map((e) => e.name).sort();
        expect(got, query).toEqual(expected.sort());
      }
    } finally {
      await store.close();
      tmp.cleanup();
    }
  });
});

describe('search_nodes through the in-memory index, with writes from another connection', () => {
  const setup = (entities: number) => {
    const tmp = tempDir();
    const path = join(tmp.dir, 'memory.db');
    const writer = openSqliteStore({ path, vectors: false });
    const conn = new SqliteConnection({ path, busyTimeoutMs: 10_000, vectors: false });
    const reader = new SqliteGraph(conn);
    const seed: Entity[] = Array.from({ length: entities }, (_, i) => ({
      name: `Ent ${i}`,
      entityType: i % 2 === 0 ? 'Person' : 'Place',
      observations: [`word${i % 97} shared ÉCOLE İstanbul`, `n${i}x tail-${i % 13}`],
    }));
    const done = async () => {
      await writer.close();
      conn.close();
      tmp.cleanup();
    };
    return { writer, conn, reader, seed, done };
  };
  const check = async (writer: Store, reader: SqliteGraph, queries: readonly string[]) => {
    const graph = await writer.graph.readGraph();
    for (const query of queries) {
      const want = expected(graph.entities, graph.relations, query);
      expect({ query, ...(await reader.searchNodes(query)) }).toEqual({ query, ...want });
      const page = await reader.searchNodes(query, { limit: 3, offset: 1 });
      expect({ query, total: page.total, entities: page.entities }).toEqual({
        query,
        total: want.total,
        entities: want.entities.slice(1, 4),
      });
    }
  };

  it('answers a small graph at once and follows adds, renames by replacement, and deletes', async () => {
    const { writer, conn, reader, seed, done } = setup(60);
    try {
      await writer.graph.createEntities(seed, 1);
      await writer.graph.createRelations(
        [
          { from: 'Ent 1', to: 'Ent 2', relationType: 'knows' },
          { from: 'Ent 3', to: 'Ent 1', relationType: 'likes' },
          { from: 'Ent 5', to: 'Ent 5', relationType: 'self' },
          { from: 'Ent 6', to: 'Nobody', relationType: 'dangling' },
        ],
        1,
      );
      const queries = [
        'word1',
        'WORD5',
        'école',
        'istanbul',
        'İstanbul',
        'i̇stanbul',
        'ent 1',
        'tail-1',
        'n4',
        'x',
        'é',
        'person',
        'zyxw',
        'fresh',
      ];
      await check(writer, reader, queries);
      const index = substringIndex(conn);
      const before = index.answered;
      expect(before).toBeGreaterThan(0); // queries without whitespace went through the in-memory index
      // The relations are read into memory off the answer's path, then answer from there.
      await new Promise((resolve) => setImmediate(resolve));
      await check(writer, reader, queries);
      const relationAnswers = index.relationAnswers;
      expect(relationAnswers).toBeGreaterThan(0);

      await writer.graph.deleteRelations([{ from: 'Ent 3', to: 'Ent 1', relationType: 'likes' }], 2);
      await writer.graph.createRelations([{ from: 'Ent 7', to: 'Ent 8', relationType: 'new' }], 2);
      await check(writer, reader, ['word1', 'word7', 'n8x', 'tail-3']); // stale: SQL answers
      await new Promise((resolve) => setImmediate(resolve));
      await check(writer, reader, ['word1', 'word7', 'n8x', 'tail-3']);
      expect(index.relationAnswers).toBeGreaterThan(relationAnswers);

      await writer.graph.addObservations([{ entityName: 'Ent 7', contents: ['a FRESH zyxwvu word'] }], 2);
      await writer.graph.createEntities([{ name: 'Newcomer', entityType: 'Thing', observations: ['fresh start'] }], 2);
      await writer.graph.deleteObservations([{ entityName: 'Ent 3', observations: ['n3x tail-3'] }], 2);
      await writer.graph.deleteEntities(['Ent 4', 'Ent 59']); // 59 is the last id: a new entity may reuse it
      await writer.graph.createEntities([{ name: 'Reused', entityType: 'Thing', observations: ['word58 again'] }], 3);
      await check(writer, reader, [...queries, 'n3x', 'n4x', 'reused', 'word58', 'n59x']);
      await new Promise((resolve) => setImmediate(resolve));
      await check(writer, reader, [...queries, 'n3x', 'n4x', 'reused', 'word58', 'n59x']);
      expect(index.answered).toBeGreaterThan(before);
    } finally {
      await done();
    }
  });

  it('builds a larger graph in steps, the trigram index answering meanwhile', async () => {
    const { writer, conn, reader, seed, done } = setup(2_500);
    try {
      await writer.graph.createEntities(seed, 1);
      await check(writer, reader, ['word12', 'tail-7']);
      expect(substringIndex(conn).answered).toBe(0); // not built yet: the trigram index answered
      for (let i = 0; i < 100 && substringIndex(conn).answered === 0; i++) {
        await new Promise((resolve) => setImmediate(resolve));
        await reader.searchNodes('word3');
      }
      expect(substringIndex(conn).answered).toBeGreaterThan(0);
      await writer.graph.addObservations([{ entityName: 'Ent 2400', contents: ['qwertyuiop'] }], 2);
      await check(writer, reader, ['word12', 'tail-7', 'qwerty', 'n2400x', 'ent 24']);
    } finally {
      await done();
    }
  });

  it('starts building at warmSearch (a server at start), before any search', async () => {
    const { writer, conn, reader, seed, done } = setup(1_200);
    try {
      await writer.graph.createEntities(seed, 1);
      await reader.warmSearch();
      await check(writer, reader, ['word12', 'tail-7', 'n1100x']);
      expect(substringIndex(conn).answered).toBeGreaterThan(0);
    } finally {
      await done();
    }
  });
});
