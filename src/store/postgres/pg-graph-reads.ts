/**
 * Graph reads on PostgreSQL: read_graph and its outline, search_nodes, open_nodes and the hydration
 * of search results. search_nodes is the official substring test widened to accents, on text folded
 * by JavaScript (fold.ts; entity_keywords' lname/ltype/lobs, so 'SESIÓN' finds 'Sesion' whatever
 * the server's locale), narrowed by LIKE (a pg_trgm index when the server has it) and ranked exact
 * name, name prefix, name substring, type, observation; ties in creation order, as on SQLite.
 */
import { substringTest, type SubstringTest } from '../../core/text/fold.js';
import { asEntityId, type Entity, type EntityId, type KnowledgeGraph, type Relation } from '../../core/types.js';
import type { EntityOutline, GraphOutline, GraphPage, Page, RelationCount, RelationWindow, StoredEntity } from '../graph-store.js';
import { SUBSTRING_TEXT } from './migrations.js';
import { cleanPage, publicEntity, toRelation, toStoredEntity, type EntityRow, type RelationRow } from '../rows.js';
import type { PgConnection } from './pg-connection.js';

const RELATION_COLUMNS = 'from_name, to_name, relation_type, context, ended_at';

export class PgGraphReads {
  constructor(protected readonly conn: PgConnection) {}

  async readGraph(page?: Page, window?: RelationWindow): Promise<GraphPage> {
    const { limit, offset } = page === undefined ? { limit: null, offset: 0 } : cleanPage(page);
    const rows = await this.conn.query<EntityRow & { obs: string[] | null }>(
      `SELECT e.name, e.entity_type, (SELECT array_agg(o.content ORDER BY o.id) FROM observations o WHERE o.entity_id = e.id) AS obs
         FROM entities e ORDER BY e.id LIMIT $1 OFFSET $2`,
      [limit, offset],
    );
    const entities = rows.map((r) => ({ name: r.name, entityType: r.entity_type, observations: r.obs ?? [] }));
    if (page === undefined) return { entities, ...(await this.allRelations(window)), total: entities.length };
    const total = await this.countEntities();
    return {
      entities,
      ...(await this.pageRelations(
        entities.map((e) => e.name),
        { limit: limit ?? 0, offset },
        total,
        window,
      )),
      total,
    };
  }

  async outline(page?: Page, window?: RelationWindow): Promise<GraphOutline> {
    const { limit, offset } = page === undefined ? { limit: null, offset: 0 } : cleanPage(page);
    const rows = await this.conn.query<{ name: string; entity_type: string; n: number }>(
      `SELECT e.name, e.entity_type, (SELECT count(*) FROM observations o WHERE o.entity_id = e.id) AS n
         FROM entities e ORDER BY e.id LIMIT $1 OFFSET $2`,
      [limit, offset],
    );
    const entities: EntityOutline[] = rows.map((r) => ({ name: r.name, entityType: r.entity_type, observationCount: r.n }));
    if (page === undefined) return { entities, ...(await this.allRelations(window)), total: entities.length };
    const total = await this.countEntities();
    return {
      entities,
      ...(await this.pageRelations(
        rows.map((r) => r.name),
        { limit: limit ?? 0, offset },
        total,
        window,
      )),
      total,
    };
  }

  async searchNodes(query: string, page?: Page, window?: RelationWindow): Promise<GraphPage> {
    const t = substringTest(query);
    const q = t.needle;
    const like = `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    // lobs joins observations with newlines: a query holding one could match across two of them,
    // so it is ranked observation by observation (the whole answer, then cut). A needle compared
    // unfolded (combining marks alone) is not in the folded columns: every entity is a candidate.
    if (page === undefined || q.includes('\n') || !t.folded) {
      const candidates = (
        await this.conn.query<{ id: number }>(
          t.folded
            ? `SELECT entity_id AS id FROM entity_keywords WHERE (${SUBSTRING_TEXT}) LIKE $1 ORDER BY entity_id`
            : 'SELECT id FROM entities ORDER BY id',
          t.folded ? [like] : [],
        )
      ).map((r) => r.id);
      const found = rankMatches(await hydrate(this.conn, candidates), candidates, t);
      const shown = page === undefined ? found : found.slice(cleanPage(page).offset, cleanPage(page).offset + cleanPage(page).limit);
      return {
        entities: shown.map(publicEntity),
        ...(await this.relationsTouching(
          shown.map((e) => e.name),
          window,
        )),
        total: found.length,
      };
    }
    const { limit, offset } = cleanPage(page);
    const tiered = `SELECT entity_id AS id, CASE WHEN lname = $1 THEN 0 WHEN starts_with(lname, $1) THEN 1 WHEN strpos(lname, $1) > 0 THEN 2
                            WHEN strpos(ltype, $1) > 0 THEN 3 WHEN strpos(lobs, $1) > 0 THEN 4 END AS tier
                       FROM entity_keywords WHERE (${SUBSTRING_TEXT}) LIKE $2`;
    const rows = await this.conn.query<{ id: number; total: number }>(
      `SELECT id, count(*) OVER () AS total FROM (${tiered}) t WHERE tier IS NOT NULL ORDER BY tier, id LIMIT $3 OFFSET $4`,
      [q, like, limit, offset],
    );
    const total =
      rows[0]?.total ??
      (offset === 0 && limit !== 0
        ? 0
        : ((await this.conn.query<{ n: number }>(`SELECT count(*) AS n FROM (${tiered}) t WHERE tier IS NOT NULL`, [q, like]))[0]?.n ?? 0));
    const ids = rows.map((r) => r.id);
    const entities = await hydrate(this.conn, ids);
    const found = ids.map((id) => entities.get(asEntityId(id))).filter((e): e is StoredEntity => e !== undefined);
    return {
      entities: found.map(publicEntity),
      ...(await this.relationsTouching(
        found.map((e) => e.name),
        window,
      )),
      total,
    };
  }

  async openNodes(names: readonly string[], window?: RelationWindow): Promise<KnowledgeGraph & RelationCount> {
    const ids = (await this.conn.query<{ id: number }>('SELECT id FROM entities WHERE name = ANY($1) ORDER BY id', [names])).map(
      (r) => r.id,
    );
    const entities = await hydrate(this.conn, ids);
    const found = ids.map((id) => entities.get(asEntityId(id))).filter((e): e is StoredEntity => e !== undefined);
    return {
      entities: found.map(publicEntity),
      ...(await this.relationsTouching(
        found.map((e) => e.name),
        window,
      )),
    };
  }

  async idsByName(names: readonly string[]): Promise<EntityId[]> {
    const rows = await this.conn.query<{ id: number }>(
      'SELECT e.id FROM unnest($1::text[]) WITH ORDINALITY AS x(name, i) JOIN entities e ON e.name = x.name ORDER BY x.i',
      [names],
    );
    return rows.map((r) => asEntityId(r.id));
  }

  async entitiesById(ids: readonly EntityId[]): Promise<Map<EntityId, StoredEntity>> {
    return hydrate(this.conn, ids);
  }

  async edgesTouching(ids: readonly EntityId[]): Promise<{ readonly from: EntityId; readonly to: EntityId }[]> {
    if (ids.length === 0) return [];
    const rows = await this.conn.query<{ a: number; b: number }>(
      // Each side through its own index, as on SQLite: an OR across the two joins scans every relation.
      `WITH c AS (SELECT name FROM entities WHERE id = ANY($1)),
            hit AS (SELECT r.id FROM c JOIN relations r ON r.from_name = c.name
                    UNION SELECT r.id FROM c JOIN relations r ON r.to_name = c.name)
       SELECT ef.id AS a, et.id AS b FROM hit
         JOIN relations r ON r.id = hit.id
         JOIN entities ef ON ef.name = r.from_name
         JOIN entities et ON et.name = r.to_name
        WHERE r.ended_at IS NULL -- an ended relation (end_relation) no longer boosts
        ORDER BY r.id`,
      [ids],
    );
    return rows.map((r) => ({ from: asEntityId(r.a), to: asEntityId(r.b) }));
  }

  async edgesAmong(ids: readonly EntityId[]): Promise<{ readonly from: EntityId; readonly to: EntityId }[]> {
    if (ids.length === 0) return [];
    const rows = await this.conn.query<{ a: number; b: number }>(
      // One index seek per entity (the UNIQUE's from_name prefix); the other end is looked up in the set.
      `WITH c AS MATERIALIZED (SELECT id, name FROM entities WHERE id = ANY($1))
       SELECT cf.id AS a, ct.id AS b FROM c cf
         JOIN relations r ON r.from_name = cf.name
         JOIN c ct ON ct.name = r.to_name
        WHERE r.ended_at IS NULL -- an ended relation (end_relation) no longer boosts
        ORDER BY r.id`,
      [ids],
    );
    return rows.map((r) => ({ from: asEntityId(r.a), to: asEntityId(r.b) }));
  }

  private async countEntities(): Promise<number> {
    return (await this.conn.query<{ n: number }>('SELECT count(*) AS n FROM entities'))[0]?.n ?? 0;
  }

  private async allRelations(window: RelationWindow | undefined): Promise<{ relations: Relation[] } & RelationCount> {
    return this.windowed({ where: 'true' }, [], window);
  }

  /** Relations leaving the page's entities; the last page also carries (after them) those leaving a name that is no entity. */
  private async pageRelations(
    names: readonly string[],
    page: Page,
    total: number,
    window: RelationWindow | undefined,
  ): Promise<{ relations: Relation[] } & RelationCount> {
    const leaving = 'from_name = ANY($1)';
    const last = page.limit > 0 && (page.offset < total ? page.offset + page.limit >= total : page.offset === 0);
    if (!last) return this.windowed({ where: leaving }, [names], window);
    const dangling = 'NOT EXISTS (SELECT 1 FROM entities e WHERE e.name = r.from_name)';
    return this.windowed({ where: `${leaving} OR ${dangling}`, after: dangling }, [names], window);
  }

  private async relationsTouching(
    names: readonly string[],
    window: RelationWindow | undefined,
  ): Promise<{ relations: Relation[] } & RelationCount> {
    if (names.length === 0) return window === undefined ? { relations: [] } : { relations: [], relationCount: 0 };
    return this.windowed({ where: 'from_name = ANY($1) OR to_name = ANY($1)' }, [names], window);
  }

  /**
   * The relations `where` selects (its parameters $1..$n), in creation order (those `after` holds
   * after the others): all of them without a window; with one, how many there are and that
   * window, cut in SQL (issue 35: a hub's 150,000 are never read for one page).
   */
  private async windowed(
    source: { readonly where: string; readonly after?: string },
    params: readonly unknown[],
    window: RelationWindow | undefined,
  ): Promise<{ relations: Relation[] } & RelationCount> {
    const where = `(${source.where})${window === undefined || window.includeEnded ? '' : ' AND r.ended_at IS NULL'}`;
    const order = source.after === undefined ? 'r.id' : `(${source.after}), r.id`;
    const select = `SELECT ${RELATION_COLUMNS} FROM relations r WHERE ${where} ORDER BY ${order}`;
    if (window === undefined) return { relations: (await this.conn.query<RelationRow>(select, [...params])).map(toRelation) };
    const n = params.length;
    const relationCount =
      (await this.conn.query<{ n: number }>(`SELECT count(*) AS n FROM relations r WHERE ${where}`, [...params]))[0]?.n ?? 0;
    if (window.limit === 0 || window.offset >= relationCount) return { relations: [], relationCount };
    const rows = await this.conn.query<RelationRow>(`${select} LIMIT $${n + 1} OFFSET $${n + 2}`, [...params, window.limit, window.offset]);
    return { relations: rows.map(toRelation), relationCount };
  }
}

/** Full entities with status, kinds and metadata share, in no particular order. */
export async function hydrate(conn: PgConnection, ids: readonly number[]): Promise<Map<EntityId, StoredEntity>> {
  const result = new Map<EntityId, StoredEntity>();
  if (ids.length === 0) return result;
  const sql = `SELECT e.*, o.contents, o.kinds FROM entities e
                 LEFT JOIN LATERAL (SELECT array_agg(content ORDER BY id) AS contents, array_agg(kind ORDER BY id) AS kinds
                                      FROM observations WHERE entity_id = e.id) o ON true
                WHERE e.id = ANY($1)`;
  const rows = await conn.query<EntityRow & { contents: string[] | null; kinds: string[] | null }>(sql, [ids]);
  for (const r of rows) result.set(asEntityId(r.id), toStoredEntity(r, r.contents ?? [], r.kinds ?? []));
  return result;
}

/** search_nodes' tier (fold.ts' test); undefined when it does not match. */
function substringTier(entity: Entity, t: SubstringTest): number | undefined {
  const n = t.prepare(entity.name);
  const q = t.needle;
  if (n === q) return 0;
  if (n.startsWith(q)) return 1;
  if (n.includes(q)) return 2;
  if (t.prepare(entity.entityType).includes(q)) return 3;
  return entity.observations.some(t.matches) ? 4 : undefined;
}

/** The hydrated candidates that match, best first (`candidates` in creation order). */
function rankMatches(entities: ReadonlyMap<EntityId, StoredEntity>, candidates: readonly number[], t: SubstringTest): StoredEntity[] {
  const ranked: { entity: StoredEntity; tier: number; order: number }[] = [];
  candidates.forEach((id, order) => {
    const entity = entities.get(asEntityId(id));
    const tier = entity === undefined ? undefined : substringTier(entity, t);
    if (entity !== undefined && tier !== undefined) ranked.push({ entity, tier, order });
  });
  ranked.sort((a, b) => a.tier - b.tier || a.order - b.order);
  return ranked.map((r) => r.entity);
}
