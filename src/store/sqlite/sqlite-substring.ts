/**
 * search_nodes on SQLite: the official substring test (case-insensitive, on the name, the type or
 * any one observation), widened to accents (fold.ts: "Garcia" finds "García" and the other way
 * round; everything the official test finds is still found), ranked exact name, name prefix, name
 * substring, type, observation; ties in creation order, as the official server's file orders them.
 * The trigram index only narrows the candidates; the test itself is always the one below, applied
 * exactly.
 *
 * A query without whitespace is answered from memory once the connection's index is built
 * (substring-index.ts: the text and its words, kept in step with every process's writes); the rest
 * of this file is the SQL path, for other queries, graphs over its size and until it is built.
 *
 * The SQL path's cost follows what is returned: one statement reads the candidates' names and types (the
 * first four tiers need nothing else), one reads observations off the covering (entity_id, content)
 * index, in bulk and without building objects per row. A page tests the remaining candidates'
 * observations in SQL, which counts the total without carrying their text into JavaScript, and
 * reads in full only the entities on the page.
 */
import type Database from 'better-sqlite3';
import { foldedIncludes, substringTest, type SubstringTest } from '../../core/text/fold.js';
import { buildSubstringQuery } from '../../core/text/fts-query.js';
import type { Entity, Relation } from '../../core/types.js';
import type { Page } from '../graph-store.js';
import { json, type SqliteConnection, type Statement } from './sqlite-connection.js';
import { SubstringIndex, type HeldEntity } from './substring/substring-index.js';

/** The tier of the name and type tests; null when neither matches. */
function nameTier(name: string, type: string, t: SubstringTest): number | null {
  const n = t.prepare(name);
  const q = t.needle;
  if (n === q) return 0;
  if (n.startsWith(q)) return 1;
  if (n.includes(q)) return 2;
  if (t.prepare(type).includes(q)) return 3;
  return null;
}

/**
 * The observation test as an SQL function, so a page can count its matches in SQL: SQLite's lower()
 * folds ASCII only, and 'SESIÓN' must find 'Sesión' exactly as JavaScript's toLowerCase() has it.
 * Its arguments are the text, the needle, and 1 when the needle is folded (SubstringTest.folded).
 */
export function registerSubstringFunctions(db: Database.Database): void {
  db.function('limbic_contains', { deterministic: true }, (text: unknown, needle: unknown, folded: unknown) => {
    const t = String(text);
    const q = String(needle);
    return (folded === 1 ? foldedIncludes(t, q) : t.toLowerCase().includes(q)) ? 1 : 0;
  });
}

/** Statements that return arrays or single values, by connection and SQL text (see `shaped`). */
const shapedStatements = new WeakMap<SqliteConnection, Map<string, Database.Statement>>();

/**
 * A statement returning each row as an array ('raw') or its one value ('pluck'): a broad search
 * returns thousands of rows, and an object per row costs more than SQLite's work. Kept apart from
 * the connection's shared cache, where the mode would carry over to other users of the same SQL.
 */
export function shaped<P extends unknown[] | object, R>(conn: SqliteConnection, mode: 'raw' | 'pluck', sql: string): Statement<P, R> {
  let cache = shapedStatements.get(conn);
  if (cache === undefined) shapedStatements.set(conn, (cache = new Map()));
  const key = `${mode}:${sql}`;
  let statement = cache.get(key);
  if (statement === undefined) {
    statement = conn.db.prepare(sql);
    if (mode === 'raw') statement.raw(true);
    else statement.pluck(true);
    cache.set(key, statement);
  }
  return statement as unknown as Statement<P, R>;
}

/** Each connection's in-memory index (substring-index.ts), made on its first search. */
const indexes = new WeakMap<SqliteConnection, SubstringIndex>();

/** The in-memory index of this connection (for tests and diagnostics: `answered`). */
export function substringIndex(conn: SqliteConnection): SubstringIndex {
  let index = indexes.get(conn);
  if (index === undefined) indexes.set(conn, (index = new SubstringIndex(conn)));
  return index;
}

/** A candidate entity as read for the test: [id, name, entityType], in creation order. */
type Row = [number, string, string];

/**
 * The matches, best first, with their observations; `total` counts them all, on every page.
 * `relations` (those touching the entities returned, in creation order) when they were read from
 * memory; the caller reads them otherwise.
 */
export function substringSearch(
  conn: SqliteConnection,
  query: string,
  page?: Page,
): { entities: Entity[]; total: number; relations?: Relation[] } {
  const t = substringTest(query);
  const index = substringIndex(conn);
  // The index holds folded words: a query compared unfolded (combining marks alone) is left to SQL.
  const held = t.folded ? index.candidates(t.needle) : undefined;
  if (held !== undefined) {
    const answer = inMemory(held, t, page);
    return { ...answer, relations: index.relationsTouching(answer.entities.map((e) => e.name)) };
  }
  const { rows, scan } = candidates(conn, t);
  // Rows come in creation order, and the sort is stable: ties stay in creation order.
  const named: { row: Row; tier: number }[] = [];
  const rest: Row[] = [];
  for (const row of rows) {
    const tier = nameTier(row[1], row[2], t);
    if (tier === null) rest.push(row);
    else named.push({ row, tier });
  }
  named.sort((a, b) => a.tier - b.tier);
  const found = named.map((n) => n.row);
  if (page === undefined) {
    // Every match is returned, so every candidate's observations are read, once: for the test and
    // for the answer.
    const observations = observationsOf(conn, scan ? 'all' : rows.map((r) => r[0]));
    for (const row of rest) if (observations.get(row[0])?.some(t.matches) === true) found.push(row);
    return { entities: found.map((r) => entity(r, observations)), total: found.length };
  }
  const inObservations = rest.length === 0 ? new Set<number>() : observationMatches(conn, scan ? 'all' : rest.map((r) => r[0]), t);
  for (const row of rest) if (inObservations.has(row[0])) found.push(row);
  const shown = found.slice(page.offset, page.offset + page.limit);
  const observations = observationsOf(
    conn,
    shown.map((r) => r[0]),
  );
  return { entities: shown.map((r) => entity(r, observations)), total: found.length };
}

/** The same test and order on the in-memory index's candidates (their current text, name and type held folded). */
function inMemory(held: readonly HeldEntity[], t: SubstringTest, page: Page | undefined): { entities: Entity[]; total: number } {
  const q = t.needle;
  const named: { entity: Entity; tier: number }[] = [];
  const rest: Entity[] = [];
  for (const { entity, name, type, observations, replayed } of held) {
    const tier = name === q ? 0 : name.startsWith(q) ? 1 : name.includes(q) ? 2 : type.includes(q) ? 3 : null;
    if (tier !== null) named.push({ entity, tier });
    // A candidate the index listed from its current text only holds the query in an observation
    // (HeldEntity.replayed); one listed again after a change is tested. All-ASCII text (no folded
    // copy held) folds by lower-casing alone, for either kind of test.
    else if (
      !replayed ||
      (observations === undefined ? entity.observations.some((o) => o.toLowerCase().includes(q)) : observations.includes(q))
    )
      rest.push(entity);
  }
  named.sort((a, b) => a.tier - b.tier);
  const found = [...named.map((n) => n.entity), ...rest];
  return { entities: page === undefined ? found : found.slice(page.offset, page.offset + page.limit), total: found.length };
}

const entity = (row: Row, observations: ReadonlyMap<number, string[]>): Entity => ({
  name: row[1],
  entityType: row[2],
  observations: observations.get(row[0]) ?? [],
});

/**
 * The candidates' rows in creation order: those the trigram index finds, or every entity (`scan`)
 * when the query has no trigram to search. (Ordering them by BM25 cost half the time of a
 * 10k-entity search and changed nothing a tier did not already decide.)
 *
 * The index holds the text folded (sqlite-graph.ts syncEntity), so the folded needle's trigrams
 * find accented and unaccented spellings alike, and the Turkish 'İ', which JavaScript lower-cases
 * to 'i' and a combining dot that SQLite's case folding does not make, is an 'i' on both sides
 * (issue 26). A needle compared unfolded is not in that index's terms: it scans.
 */
function candidates(conn: SqliteConnection, t: SubstringTest): { rows: Row[]; scan: boolean } {
  const match = t.folded ? buildSubstringQuery(t.needle) : undefined;
  if (match !== undefined) {
    try {
      const rows = shaped<[string], Row>(
        conn,
        'raw',
        'SELECT id, name, entity_type FROM entities WHERE id IN (SELECT rowid FROM entity_trigram WHERE entity_trigram MATCH ?) ORDER BY id',
      ).all(match);
      return { rows, scan: false };
    } catch {
      // Text FTS5 cannot parse (a NUL character, say) falls back to the scan, which is always exact.
    }
  }
  return { rows: shaped<[], Row>(conn, 'raw', 'SELECT id, name, entity_type FROM entities ORDER BY id').all(), scan: true };
}

/**
 * Observations of these entities in their order. The covering (entity_id, content) index answers
 * without reading the table, in content order; each entity's few are put back in id order here,
 * which costs less than SQLite sorting every row ('all' scans the table in id order).
 */
function observationsOf(conn: SqliteConnection, ids: readonly number[] | 'all'): Map<number, string[]> {
  const byEntity = new Map<number, string[]>();
  if (ids !== 'all' && ids.length === 0) return byEntity;
  const rows =
    ids === 'all'
      ? shaped<[], [number, number, string]>(conn, 'raw', 'SELECT entity_id, id, content FROM observations ORDER BY id').all()
      : shaped<[string], [number, number, string]>(
          conn,
          'raw',
          'SELECT entity_id, id, content FROM observations WHERE entity_id IN (SELECT value FROM json_each(?))',
        ).all(json(ids));
  const runs = new Map<number, [number, number, string][]>();
  for (const row of rows) {
    const run = runs.get(row[0]);
    if (run === undefined) runs.set(row[0], [row]);
    else run.push(row);
  }
  for (const [owner, run] of runs) {
    // An entity has a few observations, so checking and sorting them here is cheap.
    if (run.some((r, i) => i > 0 && r[1] < (run[i - 1]?.[1] ?? 0))) run.sort((a, b) => a[1] - b[1]);
    byEntity.set(
      owner,
      run.map((r) => r[2]),
    );
  }
  return byEntity;
}

/**
 * Which of these entities have an observation that passes the test, tested in SQL: no text leaves
 * it, and EXISTS stops at an entity's first matching observation.
 */
function observationMatches(conn: SqliteConnection, ids: readonly number[] | 'all', t: SubstringTest): Set<number> {
  if (ids !== 'all' && ids.length === 0) return new Set();
  const q = t.needle;
  const folded = t.folded ? 1 : 0;
  const hasMatch = (id: string) =>
    `EXISTS (SELECT 1 FROM observations o WHERE o.entity_id = ${id} AND limbic_contains(o.content, @q, @folded))`;
  if (ids === 'all')
    return new Set(
      shaped<{ q: string; folded: number }, number>(conn, 'pluck', `SELECT e.id FROM entities e WHERE ${hasMatch('e.id')}`).all({
        q,
        folded,
      }),
    );
  const sql = `SELECT j.value FROM json_each(@ids) j WHERE ${hasMatch('j.value')}`;
  return new Set(shaped<{ ids: string; q: string; folded: number }, number>(conn, 'pluck', sql).all({ ids: json(ids), q, folded }));
}
