/**
 * The capture capability on SQLite (capture-store.ts): captured turns appended with their own kind
 * and time, bounded per entity, skipped when held already; the reads of the brief and of
 * `limbic projects`. Writes keep the keyword, substring and queue rows as every write does
 * (SqliteGraph.syncEntity), in the same transaction.
 */
import { asEntityId, STORED_STATUS, type EntityId } from '../../core/types.js';
import type {
  AppendRequest,
  AppendResult,
  CaptureStore,
  DatedObservation,
  KindObservation,
  KindsScope,
  ProjectEntity,
  ProjectSummary,
} from '../capture-store.js';
import { toFacts, type EntityRow } from '../rows.js';
import { json, type SqliteConnection } from './sqlite-connection.js';
import type { SqliteGraph } from './sqlite-graph.js';

/** The largest code point: a name range [prefix, prefix + this) holds every name starting with prefix (UTF-8 order). */
const MAX_CHAR = String.fromCodePoint(0x10ffff);

export class SqliteCapture implements CaptureStore {
  constructor(
    private readonly conn: SqliteConnection,
    private readonly graph: SqliteGraph,
  ) {}

  async append(request: AppendRequest, now: number): Promise<AppendResult> {
    return this.conn.write(() => {
      let id = this.idOf(request.name);
      const created = id === undefined;
      if (id === undefined) {
        // Created when the conversation began, where its turns say (a transcript read later keeps its dates).
        const started = Math.min(now, ...request.observations.map((o) => o.createdAt));
        const result = this.conn
          .stmt('INSERT INTO entities (name, entity_type, status, created_at, updated_at, project) VALUES (?, ?, ?, ?, ?, ?)')
          .run(request.name, request.entityType, STORED_STATUS.active, started, now, request.project ?? null);
        id = asEntityId(Number(result.lastInsertRowid));
        this.conn.stmt("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'entity_count'").run();
      }
      const holders = [id, ...(request.heldBy ?? []).flatMap((name) => this.idOf(name) ?? [])];
      const held = this.conn.stmt<[string, string], { n: number }>(
        'SELECT count(*) AS n FROM observations WHERE entity_id IN (SELECT value FROM json_each(?)) AND content = ?',
      );
      const holderList = json(holders);
      const size = this.conn
        .stmt<[number], { n: number; bytes: number | null }>(
          'SELECT count(*) AS n, sum(length(CAST(content AS BLOB))) AS bytes FROM observations WHERE entity_id = ?',
        )
        .get(id) ?? { n: 0, bytes: 0 };
      let count = size.n;
      let bytes = size.bytes ?? 0;
      const insert = this.conn.stmt(
        'INSERT INTO observations (entity_id, content, kind, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
      );
      const added: DatedObservation[] = [];
      const overflow: DatedObservation[] = [];
      const seen = new Set<string>();
      let skipped = 0;
      for (const o of request.observations) {
        if (seen.has(o.content) || (held.get(holderList, o.content)?.n ?? 0) > 0) {
          skipped++;
          continue;
        }
        seen.add(o.content);
        const length = Buffer.byteLength(o.content);
        // Once one does not fit, the rest go on in the next part, in order.
        if (overflow.length > 0 || count + 1 > request.maxObservations || bytes + length > request.maxBytes) {
          overflow.push(o);
          continue;
        }
        insert.run(id, o.content, o.kind, o.createdAt);
        added.push(o);
        count++;
        bytes += length;
      }
      if (added.length > 0 && !created) this.conn.stmt('UPDATE entities SET updated_at = ? WHERE id = ?').run(now, id);
      if (added.length > 0 || created) this.graph.syncEntity(id);
      return { created, added, held: skipped, overflow };
    }, true);
  }

  async namesStartingWith(prefix: string, containing: string, limit: number): Promise<string[]> {
    return this.conn
      .stmt<[string, string, string, number], { name: string }>(
        'SELECT name FROM entities WHERE name >= ? AND name < ? AND instr(name, ?) > 0 ORDER BY name LIMIT ?',
      )
      .all(prefix, prefix + MAX_CHAR, containing, limit)
      .map((r) => r.name);
  }

  async projectEntities(
    project: string,
    options: { readonly entityType?: string | undefined; readonly kinds?: readonly string[] | undefined; readonly limit: number },
  ): Promise<ProjectEntity[]> {
    const rows = this.conn
      .stmt<[string, string | null, string | null, number], EntityRow & { n: number; last_at: number | null }>(
        `SELECT e.*, (SELECT count(*) FROM observations o WHERE o.entity_id = e.id) AS n,
                (SELECT max(created_at) FROM observations o WHERE o.entity_id = e.id) AS last_at
           FROM entities e WHERE e.project = ? AND (? IS NULL OR e.entity_type = ?)
          ORDER BY coalesce(last_at, e.updated_at) DESC, e.id DESC LIMIT ?`,
      )
      .all(project, options.entityType ?? null, options.entityType ?? null, options.limit);
    const kinds = options.kinds === undefined || options.kinds.length === 0 ? undefined : json(options.kinds);
    const edge = (order: 'ASC' | 'DESC') =>
      this.conn.stmt<[number, string], { content: string; kind: string; created_at: number }>(
        `SELECT content, kind, created_at FROM observations WHERE entity_id = ? AND kind IN (SELECT value FROM json_each(?)) ORDER BY id ${order} LIMIT 1`,
      );
    const [first, last] = [edge('ASC'), edge('DESC')];
    const dated = (o: { content: string; kind: string; created_at: number } | undefined): DatedObservation | undefined =>
      o === undefined ? undefined : { content: o.content, kind: o.kind, createdAt: o.created_at };
    return rows.map((r) => ({
      ...toFacts(r, 0, r.n),
      observationCount: r.n,
      first: kinds === undefined ? undefined : dated(first.get(r.id, kinds)),
      last: kinds === undefined ? undefined : dated(last.get(r.id, kinds)),
    }));
  }

  async observationsOfKinds(kinds: readonly string[], options: KindsScope): Promise<KindObservation[]> {
    if (kinds.length === 0 || (options.project === undefined && options.ids.length === 0)) return [];
    // Entities first (by the project index, or by id), then their observations through (entity_id, …) indexes.
    const rows = this.conn
      .stmt<
        [string, string | null, string | null, string | null, string, number],
        EntityRow & { o_content: string; o_kind: string; o_at: number }
      >(
        `WITH chosen AS (SELECT id FROM entities WHERE id IN (SELECT value FROM json_each(?))
                         UNION SELECT id FROM entities WHERE project = ?)
         SELECT e.*, o.content AS o_content, o.kind AS o_kind, o.created_at AS o_at
           FROM chosen c JOIN entities e ON e.id = c.id JOIN observations o ON o.entity_id = e.id
          WHERE (? IS NULL OR e.status = ?) AND o.kind IN (SELECT value FROM json_each(?))
          ORDER BY o.created_at DESC, o.id DESC LIMIT ?`,
      )
      .all(
        json(options.ids),
        options.project ?? null,
        options.status === undefined ? null : STORED_STATUS[options.status],
        options.status === undefined ? null : STORED_STATUS[options.status],
        json(kinds),
        options.limit,
      );
    return rows.map((r) => ({
      entity: toFacts(r, 0, 0),
      observation: { content: r.o_content, kind: r.o_kind, createdAt: r.o_at },
    }));
  }

  async holdsOtherProjects(project: string): Promise<boolean> {
    return (
      this.conn
        .stmt<[string], { one: number }>('SELECT 1 AS one FROM entities WHERE project IS NOT NULL AND project <> ? LIMIT 1')
        .get(project) !== undefined
    );
  }

  async projects(): Promise<ProjectSummary[]> {
    return this.conn
      .stmt<[], { project: string; entities: number; observations: number; last: number }>(
        `SELECT project, count(*) AS entities, sum((SELECT count(*) FROM observations o WHERE o.entity_id = e.id)) AS observations,
                max(updated_at) AS last
           FROM entities e WHERE project IS NOT NULL GROUP BY project ORDER BY last DESC, project`,
      )
      .all()
      .map((r) => ({ project: r.project, entities: r.entities, observations: r.observations, lastUpdated: r.last }));
  }

  async moveProject(from: string, to: string): Promise<number> {
    if (from === to) return 0;
    return this.conn.write(() => this.conn.stmt('UPDATE entities SET project = ? WHERE project = ?').run(to, from).changes);
  }

  private idOf(name: string): EntityId | undefined {
    const row = this.conn.stmt<[string], { id: number }>('SELECT id FROM entities WHERE name = ?').get(name);
    return row === undefined ? undefined : asEntityId(row.id);
  }
}
