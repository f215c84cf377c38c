/**
 * search_nodes on SQLite: the official substring test (case-insensitive, on the name, the type or
 * any one observation), ranked exact name, name prefix, name substring, type, observation; ties in
 * creation order, as the official server's file orders them. The trigram index only narrows the
 * candidates; the test itself is always the one below, applied exactly.
 *
 * Two ways to the same order: the whole answer reads every candidate once and ranks in JavaScript
 * (the fastest way when every match is returned anyway); a page ranks in SQL with the same test
 * registered as functions, and reads in full only the entities on the page.
 */
import type Database from 'better-sqlite3';
import { buildSubstringQuery } from '../../core/text/fts-query.js';
import { asEntityId, type Entity, type EntityId } from '../../core/types.js';
import type { Page, StoredEntity } from '../graph-store.js';
import type { SqliteConnection } from './sqlite-connection.js';

/** The tier of the name and type tests for a lower-cased query; null when neither matches. */
function nameTier(name: string, type: string, q: string): number | null {
  const n = name.toLowerCase();
  if (n === q) return 0;
  if (n.startsWith(q)) return 1;
  if (n.includes(q)) return 2;
  if (type.toLowerCase().includes(q)) return 3;
  return null;
}

const contains = (text: string, q: string): boolean => text.toLowerCase().includes(q);

/**
 * The test as SQL functions, for ranking a page in SQL: SQLite's lower() folds ASCII only, and
 * 'SESIÓN' must find 'Sesión' exactly as JavaScript's toLowerCase() has it.
 */
export function registerSubstringFunctions(db: Database.Database): void {
  db.function('limbic_name_tier', { deterministic: true }, (name: unknown, type: unknown, q: unknown) =>
    nameTier(String(name), String(type), String(q)),
  );
  db.function('limbic_contains', { deterministic: true }, (text: unknown, q: unknown) => (contains(String(text), String(q)) ? 1 : 0));
}

/**
 * Candidates for a substring query in creation order: the trigram index for 3+ characters, else
 * every entity. (Ordering them by BM25 cost half the time of a 10k-entity search and changed
 * nothing a tier did not already decide.)
 */
export function substringCandidates(conn: SqliteConnection, query: string): number[] {
  return overCandidates(query, (candidates) =>
    candidates === 'trigram'
      ? conn
          .stmt<[string], { id: number }>('SELECT rowid AS id FROM entity_trigram WHERE entity_trigram MATCH ? ORDER BY rowid')
          .all(buildSubstringQuery(query) ?? '')
          .map((r) => r.id)
      : conn
          .stmt<[], { id: number }>('SELECT id FROM entities ORDER BY id')
          .all()
          .map((r) => r.id),
  );
}

/** The hydrated candidates that match, best first (`candidates` in creation order). */
export function rankMatches(entities: ReadonlyMap<EntityId, StoredEntity>, candidates: readonly number[], query: string): StoredEntity[] {
  const q = query.toLowerCase();
  const ranked: { entity: StoredEntity; tier: number; order: number }[] = [];
  candidates.forEach((id, order) => {
    const entity = entities.get(asEntityId(id));
    if (entity === undefined) return;
    const tier = substringTier(entity, q);
    if (tier !== undefined) ranked.push({ entity, tier, order });
  });
  ranked.sort((a, b) => a.tier - b.tier || a.order - b.order);
  return ranked.map((r) => r.entity);
}

function substringTier(entity: Entity, q: string): number | undefined {
  return nameTier(entity.name, entity.entityType, q) ?? (entity.observations.some((o) => contains(o, q)) ? 4 : undefined);
}

/** One page of the matches' ids, best first, and how many match in all. */
export function pageOfMatches(conn: SqliteConnection, query: string, page: Page): { ids: number[]; total: number } {
  const q = query.toLowerCase();
  const params = (candidates: 'trigram' | 'all') => (candidates === 'trigram' ? { q, match: buildSubstringQuery(query) ?? '' } : { q });
  const rows = overCandidates(query, (candidates) =>
    conn
      .stmt<{ q: string; match?: string; limit: number; offset: number }, { id: number; total: number }>(
        `SELECT id, count(*) OVER () AS total FROM (${tierSql(candidates)}) WHERE tier IS NOT NULL ORDER BY tier, id LIMIT @limit OFFSET @offset`,
      )
      .all({ ...params(candidates), limit: page.limit, offset: page.offset }),
  );
  const ids = rows.map((r) => r.id);
  // Every row carries the count. An empty page from the start means nothing matched; any other
  // empty page (past the end, or of size 0) counts on its own.
  if (rows[0] !== undefined) return { ids, total: rows[0].total };
  if (page.offset === 0 && page.limit !== 0) return { ids, total: 0 };
  const total = overCandidates(
    query,
    (candidates) =>
      conn
        .stmt<{ q: string; match?: string }, { n: number }>(`SELECT count(*) AS n FROM (${tierSql(candidates)}) WHERE tier IS NOT NULL`)
        .get(params(candidates))?.n ?? 0,
  );
  return { ids, total };
}

/** Each candidate with its tier, NULL when it does not match: substringTier in SQL. */
function tierSql(candidates: 'trigram' | 'all'): string {
  const where = candidates === 'trigram' ? 'WHERE e.id IN (SELECT rowid FROM entity_trigram WHERE entity_trigram MATCH @match)' : '';
  return `SELECT e.id, coalesce(limbic_name_tier(e.name, e.entity_type, @q),
            CASE WHEN EXISTS (SELECT 1 FROM observations o WHERE o.entity_id = e.id AND limbic_contains(o.content, @q)) THEN 4 END) AS tier
            FROM entities e ${where}`;
}

/** Runs over the trigram index's candidates when the query has a trigram to search, else over all. */
function overCandidates<T>(query: string, run: (candidates: 'trigram' | 'all') => T): T {
  if (buildSubstringQuery(query) !== undefined) {
    try {
      return run('trigram');
    } catch {
      // Text FTS5 cannot parse (a NUL character, say) falls back to the scan, which is always exact.
    }
  }
  return run('all');
}
