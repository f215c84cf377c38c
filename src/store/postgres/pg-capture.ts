/**
 * The capture capability on PostgreSQL (capture-store.ts), as SQLite's sqlite-capture.ts: captured
 * turns appended with their own kind and time, bounded per entity, skipped when held already; the
 * reads of the brief and of `limbic projects`. Writes keep the keyword rows and the queue through
 * pg-graph.ts syncEntities, in the same transaction.
 */
import { asEntityId, STORED_STATUS } from '../../core/types.js';
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
import { decodeText, type PgConnection } from './pg-connection.js';
import { syncEntities } from './pg-graph.js';

export class PgCapture implements CaptureStore {
  constructor(private readonly conn: PgConnection) {}

  async append(request: AppendRequest, now: number): Promise<AppendResult> {
    return this.conn.write(async (db) => {
      const started = Math.min(now, ...request.observations.map((o) => o.createdAt));
      // Taken FOR UPDATE (or made), so two hooks appending to one session count its size in turn.
      const inserted = await db.query<{ id: number }>(
        `INSERT INTO entities (name, entity_type, status, created_at, updated_at, project) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (name) DO NOTHING RETURNING id`,
        [request.name, request.entityType, STORED_STATUS.active, started, now, request.project ?? null],
      );
      const created = inserted.rows.length > 0;
      const row =
        inserted.rows[0] ?? (await db.query<{ id: number }>('SELECT id FROM entities WHERE name = $1 FOR UPDATE', [request.name])).rows[0];
      if (row === undefined) throw new Error(`entity ${request.name} vanished while it was appended to`);
      const id = asEntityId(row.id);
      const holders = [
        id,
        ...(await db.query<{ id: number }>('SELECT id FROM entities WHERE name = ANY($1)', [request.heldBy ?? []])).rows.map((r) => r.id),
      ];
      const contents = request.observations.map((o) => o.content);
      const heldRows = await db.query<{ content: string }>(
        'SELECT content FROM observations WHERE entity_id = ANY($1) AND md5(content) = ANY(SELECT md5(c) FROM unnest($2::text[]) AS c) AND content = ANY($2)',
        [holders, contents],
      );
      const heldAlready = new Set(heldRows.rows.map((r) => r.content));
      const [size] = (
        await db.query<{ n: string; bytes: string | null }>(
          'SELECT count(*) AS n, sum(octet_length(content)) AS bytes FROM observations WHERE entity_id = $1',
          [id],
        )
      ).rows;
      let count = Number(size?.n ?? 0);
      let bytes = Number(size?.bytes ?? 0);
      const added: DatedObservation[] = [];
      const overflow: DatedObservation[] = [];
      const seen = new Set<string>();
      let skipped = 0;
      for (const o of request.observations) {
        if (seen.has(o.content) || heldAlready.has(o.content)) {
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
        added.push(o);
        count++;
        bytes += length;
      }
      if (added.length > 0) {
        await db.query(
          `INSERT INTO observations (entity_id, content, kind, created_at)
           SELECT $1, c, k, t FROM unnest($2::text[], $3::text[], $4::bigint[]) WITH ORDINALITY AS x(c, k, t, i) ORDER BY i
           ON CONFLICT (entity_id, md5(content)) DO NOTHING`,
          [id, added.map((o) => o.content), added.map((o) => o.kind), added.map((o) => o.createdAt)],
        );
        if (!created) await db.query('UPDATE entities SET updated_at = $1 WHERE id = $2', [now, id]);
      }
      if (added.length > 0 || created) await syncEntities(db, [id]);
      return { created, added, held: skipped, overflow };
    });
  }

  async namesStartingWith(prefix: string, containing: string, limit: number): Promise<string[]> {
    const rows = await this.conn.query<{ name: string }>(
      'SELECT name FROM entities WHERE starts_with(name, $1) AND strpos(name, $2) > 0 ORDER BY name COLLATE "C" LIMIT $3',
      [prefix, containing, limit],
    );
    return rows.map((r) => r.name);
  }

  async projectEntities(
    project: string,
    options: { readonly entityType?: string | undefined; readonly kinds?: readonly string[] | undefined; readonly limit: number },
  ): Promise<ProjectEntity[]> {
    const kinds = options.kinds ?? [];
    const rows = await this.conn.query<
      EntityRow & {
        n: string;
        first: { c: string; k: string; t: number } | null;
        last: { c: string; k: string; t: number } | null;
      }
    >(
      `SELECT e.*, s.n, s.last_at,
              (SELECT json_build_object('c', content, 'k', kind, 't', created_at) FROM observations
                WHERE entity_id = e.id AND kind = ANY($3) ORDER BY id ASC LIMIT 1) AS first,
              (SELECT json_build_object('c', content, 'k', kind, 't', created_at) FROM observations
                WHERE entity_id = e.id AND kind = ANY($3) ORDER BY id DESC LIMIT 1) AS last
         FROM entities e
         CROSS JOIN LATERAL (SELECT count(*) AS n, max(created_at) AS last_at FROM observations o WHERE o.entity_id = e.id) s
        WHERE e.project = $1 AND ($2::text IS NULL OR e.entity_type = $2)
        ORDER BY coalesce(s.last_at, e.updated_at) DESC, e.id DESC LIMIT $4`,
      [project, options.entityType ?? null, kinds, options.limit],
    );
    const dated = (o: { c: string; k: string; t: number } | null): DatedObservation | undefined =>
      o === null ? undefined : { content: decodeText(o.c), kind: decodeText(o.k), createdAt: Number(o.t) };
    return rows.map((r) => ({
      ...toFacts(r, 0, Number(r.n)),
      observationCount: Number(r.n),
      first: dated(r.first),
      last: dated(r.last),
    }));
  }

  async observationsOfKinds(kinds: readonly string[], options: KindsScope): Promise<KindObservation[]> {
    if (kinds.length === 0 || (options.project === undefined && options.ids.length === 0)) return [];
    const rows = await this.conn.query<EntityRow & { o_content: string; o_kind: string; o_at: string }>(
      `SELECT e.*, o.content AS o_content, o.kind AS o_kind, o.created_at AS o_at
         FROM entities e JOIN observations o ON o.entity_id = e.id
        WHERE (e.id = ANY($1) OR e.project = $2) AND ($3::text IS NULL OR e.status = $3) AND o.kind = ANY($4)
        ORDER BY o.created_at DESC, o.id DESC LIMIT $5`,
      [options.ids, options.project ?? null, options.status === undefined ? null : STORED_STATUS[options.status], kinds, options.limit],
    );
    return rows.map((r) => ({
      entity: toFacts(r, 0, 0),
      observation: { content: r.o_content, kind: r.o_kind, createdAt: Number(r.o_at) },
    }));
  }

  async holdsOtherProjects(project: string): Promise<boolean> {
    return (await this.conn.query('SELECT 1 FROM entities WHERE project IS NOT NULL AND project <> $1 LIMIT 1', [project])).length > 0;
  }

  async projects(): Promise<ProjectSummary[]> {
    const rows = await this.conn.query<{ project: string; entities: string; observations: string; last: string }>(
      `SELECT e.project, count(*) AS entities, sum(s.n) AS observations, max(e.updated_at) AS last
         FROM entities e CROSS JOIN LATERAL (SELECT count(*) AS n FROM observations o WHERE o.entity_id = e.id) s
        WHERE e.project IS NOT NULL GROUP BY e.project ORDER BY last DESC, e.project`,
    );
    return rows.map((r) => ({
      project: r.project,
      entities: Number(r.entities),
      observations: Number(r.observations),
      lastUpdated: Number(r.last),
    }));
  }

  async moveProject(from: string, to: string): Promise<number> {
    if (from === to) return 0;
    return this.conn.write(async (db) => (await db.query('UPDATE entities SET project = $1 WHERE project = $2', [to, from])).rowCount ?? 0);
  }
}
