/**
 * Graph reads on SQLite: read_graph and its compact outline, search_nodes (ranked in
 * sqlite-substring.ts), open_nodes, and the hydration of search results. A page is cut in SQL
 * (LIMIT/OFFSET over ids in a fixed order), so only the entities on it are read in full.
 */
import { asEntityId, type EntityId, type KnowledgeGraph, type Relation } from '../../core/types.js';
import type { EntityOutline, GraphOutline, GraphPage, Page, RelationCount, RelationWindow, StoredEntity } from '../graph-store.js';
import {
  cleanPage,
  pagedRelations,
  publicEntity,
  toRelation,
  toStoredEntity,
  withContext,
  type EntityRow,
  type RelationRow,
} from '../rows.js';
import { json, type SqliteConnection } from './sqlite-connection.js';
import { registerSubstringFunctions, shaped, substringIndex, substringSearch } from './sqlite-substring.js';

const RELATION_COLUMNS = 'from_name, to_name, relation_type, context, ended_at';

/**
 * A window of relations is read in id order, without the endpoint indexes, when those asked for are
 * at least one in this many of the table's (a hub's): the scan stops once the page is full.
 */
const DENSE_SHARE = 20;

/** No LIMIT in SQLite's terms, for the unpaged form of a paged query. */
const WHOLE: Page = { limit: -1, offset: 0 };

/**
 * Reads shared by the graph and the vector queue. SqliteGraph adds the writes; the split keeps each
 * file to one concern while `store.graph` stays one object.
 */
export class SqliteGraphReads {
  constructor(protected readonly conn: SqliteConnection) {
    registerSubstringFunctions(conn.db);
  }

  async readGraph(page?: Page, relations?: RelationWindow): Promise<GraphPage> {
    if (page === undefined) return this.wholeGraph(relations);
    const { limit, offset } = cleanPage(page);
    const total = this.conn.count('entities');
    const rows = this.conn.stmt<[number, number], EntityRow>('SELECT * FROM entities ORDER BY id LIMIT ? OFFSET ?').all(limit, offset);
    const observations = new Map<number, string[]>();
    for (const o of this.conn
      .stmt<[string], { entity_id: number; content: string }>(
        'SELECT entity_id, content FROM observations WHERE entity_id IN (SELECT value FROM json_each(?)) ORDER BY entity_id, id',
      )
      .iterate(json(rows.map((r) => r.id)))) {
      push(observations, o.entity_id, o.content);
    }
    return {
      entities: rows.map((r) => ({ name: r.name, entityType: r.entity_type, observations: observations.get(r.id) ?? [] })),
      ...this.pageRelations(
        rows.map((r) => r.name),
        { limit, offset },
        total,
        relations,
      ),
      total,
    };
  }

  async outline(page?: Page, window?: RelationWindow): Promise<GraphOutline> {
    const { limit, offset } = page === undefined ? WHOLE : cleanPage(page);
    const rows = this.conn
      .stmt<[number, number], { name: string; entity_type: string; n: number }>(
        `SELECT e.name, e.entity_type, (SELECT count(*) FROM observations o WHERE o.entity_id = e.id) AS n
           FROM entities e ORDER BY e.id LIMIT ? OFFSET ?`,
      )
      .all(limit, offset);
    const entities: EntityOutline[] = rows.map((r) => ({ name: r.name, entityType: r.entity_type, observationCount: r.n }));
    if (page === undefined) return { entities, ...this.allRelations(window), total: entities.length };
    const total = this.conn.count('entities');
    return {
      entities,
      ...this.pageRelations(
        rows.map((r) => r.name),
        { limit, offset },
        total,
        window,
      ),
      total,
    };
  }

  /** The official substring test, ranked (sqlite-substring.ts); relations with an endpoint in the answer. */
  async searchNodes(query: string, page?: Page, window?: RelationWindow): Promise<GraphPage> {
    const { entities, total, relations } = substringSearch(this.conn, query, page === undefined ? undefined : cleanPage(page));
    // The in-memory index holds every relation already: its answer is cut there, not read again.
    const touching =
      relations === undefined
        ? this.relationsTouching(
            entities.map((e) => e.name),
            window,
          )
        : window === undefined
          ? { relations }
          : pagedRelations(relations, window);
    return { entities, ...touching, total };
  }

  /** Builds search_nodes' in-memory index in steps (substring-index.ts), so the first searches find it ready. */
  warmSearch(): Promise<void> {
    return substringIndex(this.conn).warm();
  }

  async openNodes(names: readonly string[], window?: RelationWindow): Promise<KnowledgeGraph & RelationCount> {
    const ids = this.conn
      .stmt<[string], { id: number }>('SELECT id FROM entities WHERE name IN (SELECT value FROM json_each(?)) ORDER BY id')
      .all(json(names))
      .map((r) => r.id);
    const entities = hydrate(this.conn, ids);
    const found = ids.map((id) => entities.get(asEntityId(id))).filter((e): e is StoredEntity => e !== undefined);
    return {
      entities: found.map(publicEntity),
      ...this.relationsTouching(
        found.map((e) => e.name),
        window,
      ),
    };
  }

  async idsByName(names: readonly string[]): Promise<EntityId[]> {
    const ids: EntityId[] = [];
    for (const name of names) {
      const id = this.idOf(name);
      if (id !== undefined) ids.push(id);
    }
    return ids;
  }

  async entitiesById(ids: readonly EntityId[]): Promise<Map<EntityId, StoredEntity>> {
    return hydrate(this.conn, ids);
  }

  async edgesTouching(ids: readonly EntityId[]): Promise<{ readonly from: EntityId; readonly to: EntityId }[]> {
    if (ids.length === 0) return [];
    return (
      this.conn
        // Each side through its own index (the UNIQUE's from_name prefix, relations_to): an OR across
        // the two joins made SQLite scan every relation, 70 ms at 100k entities for 300 candidates.
        .stmt<[string], { a: number; b: number }>(
          `WITH c(name) AS (SELECT name FROM entities WHERE id IN (SELECT value FROM json_each(?))),
              hit(id) AS (SELECT r.id FROM c JOIN relations r ON r.from_name = c.name
                          UNION SELECT r.id FROM c JOIN relations r ON r.to_name = c.name)
         SELECT ef.id AS a, et.id AS b FROM hit
           JOIN relations r ON r.id = hit.id
           JOIN entities ef ON ef.name = r.from_name
           JOIN entities et ON et.name = r.to_name
          WHERE r.ended_at IS NULL -- an ended relation (end_relation) no longer boosts
          ORDER BY r.id`,
        )
        .all(json(ids))
        .map((r) => ({ from: asEntityId(r.a), to: asEntityId(r.b) }))
    );
  }

  async edgesAmong(ids: readonly EntityId[]): Promise<{ readonly from: EntityId; readonly to: EntityId }[]> {
    if (ids.length === 0) return [];
    return (
      this.conn
        // One index seek per entity (the UNIQUE's from_name prefix); the other end is looked up in
        // the set itself, so a relation to an entity outside it costs no name lookup.
        .stmt<[string], { a: number; b: number }>(
          `WITH c(id, name) AS MATERIALIZED (SELECT id, name FROM entities WHERE id IN (SELECT value FROM json_each(?)))
         SELECT cf.id AS a, ct.id AS b FROM c cf
           JOIN relations r ON r.from_name = cf.name
           JOIN c ct ON ct.name = r.to_name
          WHERE r.ended_at IS NULL -- an ended relation (end_relation) no longer boosts
          ORDER BY r.id`,
        )
        .all(json(ids))
        .map((r) => ({ from: asEntityId(r.a), to: asEntityId(r.b) }))
    );
  }

  protected idOf(name: string): EntityId | undefined {
    const row = this.conn.stmt<[string], { id: number }>('SELECT id FROM entities WHERE name = ?').get(name);
    return row === undefined ? undefined : asEntityId(row.id);
  }

  /** read_graph as the official contract has it: every entity in creation order, every relation. */
  private wholeGraph(window: RelationWindow | undefined): GraphPage {
    const rows = this.conn.stmt<[], EntityRow>('SELECT * FROM entities ORDER BY id').all();
    const observations = new Map<number, string[]>();
    for (const o of this.conn
      .stmt<[], { entity_id: number; content: string }>('SELECT entity_id, content FROM observations ORDER BY entity_id, id')
      .iterate()) {
      push(observations, o.entity_id, o.content);
    }
    return {
      entities: rows.map((r) => ({ name: r.name, entityType: r.entity_type, observations: observations.get(r.id) ?? [] })),
      ...this.allRelations(window),
      total: rows.length,
    };
  }

  private allRelations(window: RelationWindow | undefined): { relations: Relation[] } & RelationCount {
    return this.windowed({ where: '1' }, [], window);
  }

  /**
   * Relations of one page of the graph: those leaving its entities, and on the last page those
   * leaving a name that is no entity (the contract allows them, after the others), so every
   * relation is on one page.
   */
  private pageRelations(
    names: readonly string[],
    page: Page,
    total: number,
    window: RelationWindow | undefined,
  ): { relations: Relation[] } & RelationCount {
    const leaving = 'from_name IN (SELECT value FROM json_each(?))';
    const last = page.limit > 0 && (page.offset < total ? page.offset + page.limit >= total : page.offset === 0);
    if (!last) return this.windowed({ where: leaving }, [json(names)], window);
    // A scan of the relations, paid once per walk through the graph, by its last page.
    const dangling = 'NOT EXISTS (SELECT 1 FROM entities e WHERE e.name = relations.from_name)';
    return this.windowed({ where: `${leaving} OR ${dangling}`, after: dangling }, [json(names)], window);
  }

  private relationsTouching(names: readonly string[], window: RelationWindow | undefined): { relations: Relation[] } & RelationCount {
    if (names.length === 0) return window === undefined ? { relations: [] } : { relations: [], relationCount: 0 };
    const list = json(names);
    if (window !== undefined) {
      return this.windowed(
        { where: 'from_name IN (SELECT value FROM json_each(?)) OR to_name IN (SELECT value FROM json_each(?))' },
        [list, list],
        window,
      );
    }
    // Rows as arrays: a broad search_nodes returns thousands of relations.
    const relations = shaped<[string, string], [string, string, string, string | null, number | null]>(
      this.conn,
      'raw',
      `SELECT ${RELATION_COLUMNS} FROM relations
        WHERE from_name IN (SELECT value FROM json_each(?)) OR to_name IN (SELECT value FROM json_each(?)) ORDER BY id`,
    )
      .all(list, list)
      .map((r) => withContext(r[0], r[1], r[2], r[3], r[4]));
    return { relations };
  }

  /**
   * The relations `where` selects, in creation order (those `after` holds after the others): all
   * of them without a window; with one, how many there are and that window, cut in SQL (issue 35:
   * a hub's 150,000 are never read for one page). The query plan is chosen by the count: when the
   * relations asked for are a good share of all, the table is read in id order until the page is
   * full, which costs about the page; else through the endpoint indexes, whose matches are sorted.
   */
  private windowed(
    source: { readonly where: string; readonly after?: string },
    params: readonly string[],
    window: RelationWindow | undefined,
  ): { relations: Relation[] } & RelationCount {
    const where = `(${source.where})${window === undefined || window.includeEnded ? '' : ' AND ended_at IS NULL'}`;
    const order = source.after === undefined ? 'id' : `(${source.after}), id`;
    if (window === undefined) {
      return {
        relations: this.conn
          .stmt<unknown[], RelationRow>(`SELECT ${RELATION_COLUMNS} FROM relations WHERE ${where} ORDER BY ${order}`)
          .all(...params)
          .map(toRelation),
      };
    }
    const relationCount =
      this.conn.stmt<unknown[], { n: number }>(`SELECT count(*) AS n FROM relations WHERE ${where}`).get(...params)?.n ?? 0;
    if (window.limit === 0 || window.offset >= relationCount) return { relations: [], relationCount };
    const last = this.conn.stmt<[], { id: number | null }>('SELECT max(id) AS id FROM relations').get()?.id ?? 0;
    const dense = relationCount * DENSE_SHARE >= last;
    const rows = this.conn
      .stmt<unknown[], RelationRow>(
        `SELECT ${RELATION_COLUMNS} FROM relations${dense ? ' NOT INDEXED' : ''} WHERE ${where} ORDER BY ${order} LIMIT ? OFFSET ?`,
      )
      .all(...params, window.limit, window.offset);
    return { relations: rows.map(toRelation), relationCount };
  }
}

/** Full entities with status, kinds and metadata share, in no particular order. */
export function hydrate(conn: SqliteConnection, ids: readonly number[]): Map<EntityId, StoredEntity> {
  const result = new Map<EntityId, StoredEntity>();
  if (ids.length === 0) return result;
  const list = json(ids);
  const rows = conn.stmt<[string], EntityRow>('SELECT * FROM entities WHERE id IN (SELECT value FROM json_each(?))').all(list);
  const observations = new Map<number, { content: string; kind: string }[]>();
  for (const o of conn
    .stmt<[string], { entity_id: number; content: string; kind: string }>(
      'SELECT entity_id, content, kind FROM observations WHERE entity_id IN (SELECT value FROM json_each(?)) ORDER BY entity_id, id',
    )
    .iterate(list)) {
    push(observations, o.entity_id, o);
  }
  for (const r of rows) {
    const obs = observations.get(r.id) ?? [];
    result.set(
      asEntityId(r.id),
      toStoredEntity(
        r,
        obs.map((o) => o.content),
        obs.map((o) => o.kind),
      ),
    );
  }
  return result;
}

function push<T>(map: Map<number, T[]>, key: number, value: T): void {
  let list = map.get(key);
  if (list === undefined) map.set(key, (list = []));
  list.push(value);
}
