/**
 * The transfer capability on PostgreSQL (limbic migrate): whole entities read out page by page, and
 * merged in with their times, statuses, kinds, superseded observations, relations' end, usage
 * signals and vectors. See transfer-store.ts.
 */
import { mayNeedMoreVectors } from '../../core/text/entity-text.js';
import { asEntityId, type EntityId } from '../../core/types.js';
import type {
  CoOccurrenceRecord,
  EntityRecord,
  RelationKey,
  RelationRecord,
  TransferCounts,
  TransferPage,
  TransferStore,
  TransferWriteCounts,
} from '../transfer-store.js';
import {
  toCoOccurrenceRecord,
  toRelationRecord,
  type CoOccurrenceRecordRow,
  type EntityRow as StoredEntityRow,
  type RelationRecordRow,
} from '../rows.js';
import { decodeText, type PgConnection } from './pg-connection.js';
import { syncEntities } from './pg-graph.js';

interface EntityRow extends StoredEntityRow {
  obs: { c: string; k: string; t: number }[] | null;
  sup: { c: string; k: string; t: number; s: number; b: string }[] | null;
  access_count: number | null;
  last_access: number | null;
  days: string[] | null;
  vector: string | null;
}

const toEntityRecord = (r: EntityRow): EntityRecord => ({
  name: r.name,
  entityType: r.entity_type,
  status: r.status,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  ...(r.project === null ? {} : { project: r.project }),
  observations: (r.obs ?? []).map((o) => ({ content: decodeText(o.c), kind: decodeText(o.k), createdAt: Number(o.t) })),
  superseded: (r.sup ?? []).map((o) => ({
    content: decodeText(o.c),
    kind: decodeText(o.k),
    createdAt: Number(o.t),
    supersededAt: Number(o.s),
    supersededBy: decodeText(o.b),
  })),
  access: r.access_count === null ? undefined : { count: r.access_count, lastAccess: r.last_access ?? 0, days: r.days ?? [] },
  vector: r.vector === null ? undefined : Float32Array.from(JSON.parse(r.vector) as number[]),
});

const page = <T>(records: T[], limit: number, next: number): TransferPage<T> => ({
  records,
  next: records.length < limit ? undefined : next,
});

export class PgTransfer implements TransferStore {
  constructor(private readonly conn: PgConnection) {}

  async vectorModel(): Promise<{ readonly model: string; readonly dims: number } | undefined> {
    const model = await this.conn.metaGet('vector_model');
    const dims = Number(await this.conn.metaGet('vector_dims'));
    return model === undefined || !(dims > 0) || !(await this.hasVectors()) ? undefined : { model, dims };
  }

  async readEntities(cursor: number, limit: number): Promise<TransferPage<EntityRecord>> {
    const rows = await this.entityRows('e.id > $1 ORDER BY e.id LIMIT $2', [cursor, limit]);
    return page(rows.map(toEntityRecord), limit, rows.at(-1)?.id ?? cursor);
  }

  async readEntitiesNamed(names: readonly string[]): Promise<EntityRecord[]> {
    if (names.length === 0) return [];
    return (await this.entityRows('e.name = ANY($1)', [names])).map(toEntityRecord);
  }

  async readRelationsKeyed(keys: readonly RelationKey[]): Promise<RelationRecord[]> {
    if (keys.length === 0) return [];
    const rows = await this.conn.query<RelationRecordRow>(
      `SELECT r.id, r.from_name, r.to_name, r.relation_type, r.context, r.created_at, r.ended_at
         FROM unnest($1::text[], $2::text[], $3::text[]) AS k(f, t, ty)
         JOIN relations r ON r.from_name = k.f AND r.to_name = k.t AND r.relation_type = k.ty`,
      [keys.map((k) => k.from), keys.map((k) => k.to), keys.map((k) => k.relationType)],
    );
    return rows.map(toRelationRecord);
  }

  async counts(): Promise<TransferCounts> {
    const [row] = await this.conn.query<Record<keyof TransferCounts, string>>(
      `SELECT (SELECT count(*) FROM entities) AS entities, (SELECT count(*) FROM observations) AS observations,
              (SELECT count(*) FROM superseded_observations) AS superseded, (SELECT count(*) FROM relations) AS relations,
              (SELECT count(*) FROM co_occurrences) AS "coOccurrences"`,
    );
    return {
      entities: Number(row?.entities ?? 0),
      observations: Number(row?.observations ?? 0),
      superseded: Number(row?.superseded ?? 0),
      relations: Number(row?.relations ?? 0),
      coOccurrences: Number(row?.coOccurrences ?? 0),
    };
  }

  /** Entity rows with their observations, history, usage and vector, for the rows `where` picks. */
  private async entityRows(where: string, values: unknown[]): Promise<EntityRow[]> {
    const vectors = await this.hasVectors();
    return this.conn.query<EntityRow>(
      `SELECT e.id, e.name, e.entity_type, e.status, e.created_at, e.updated_at, e.project,
              (SELECT json_agg(json_build_object('c', o.content, 'k', o.kind, 't', o.created_at) ORDER BY o.id) FROM observations o WHERE o.entity_id = e.id) AS obs,
              (SELECT json_agg(json_build_object('c', s.content, 'k', s.kind, 't', s.created_at, 's', s.superseded_at, 'b', s.superseded_by) ORDER BY s.id)
                 FROM superseded_observations s WHERE s.entity_id = e.id) AS sup,
              a.access_count, a.last_access,
              (SELECT array_agg(d.day::text ORDER BY d.day) FROM entity_access_days d WHERE d.entity_id = e.id) AS days,
              ${vectors ? '(SELECT v.embedding::text FROM entity_embeddings v WHERE v.entity_id = e.id)' : 'NULL'} AS vector
         FROM entities e LEFT JOIN entity_access a ON a.entity_id = e.id
        WHERE ${where}`,
      values,
    );
  }

  async readRelations(cursor: number, limit: number): Promise<TransferPage<RelationRecord>> {
    const rows = await this.conn.query<RelationRecordRow>(
      'SELECT id, from_name, to_name, relation_type, context, created_at, ended_at FROM relations WHERE id > $1 ORDER BY id LIMIT $2',
      [cursor, limit],
    );
    return page(rows.map(toRelationRecord), limit, rows.at(-1)?.id ?? cursor);
  }

  async readCoOccurrences(cursor: number, limit: number): Promise<TransferPage<CoOccurrenceRecord>> {
    const rows = await this.conn.query<CoOccurrenceRecordRow>(
      `SELECT ea.name AS a, eb.name AS b, c.co_count, c.last_co FROM co_occurrences c
         JOIN entities ea ON ea.id = c.entity_a_id JOIN entities eb ON eb.id = c.entity_b_id
        ORDER BY c.entity_a_id, c.entity_b_id LIMIT $2 OFFSET $1`,
      [cursor, limit],
    );
    return page(rows.map(toCoOccurrenceRecord), limit, cursor + rows.length);
  }

  async writeEntities(records: readonly EntityRecord[], vectors: boolean): Promise<TransferWriteCounts> {
    if (records.length === 0) return { entities: 0, observations: 0, superseded: 0, vectors: 0 };
    return this.conn.write(async (db) => {
      const fresh = await db.query<{ id: number; name: string }>(
        `INSERT INTO entities (name, entity_type, status, created_at, updated_at)
         SELECT n, t, s, c, u FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[]) WITH ORDINALITY AS x(n, t, s, c, u, i) ORDER BY i
         ON CONFLICT (name) DO NOTHING RETURNING id, name`,
        [
          records.map((r) => r.name),
          records.map((r) => r.entityType),
          records.map((r) => r.status),
          records.map((r) => r.createdAt),
          records.map((r) => r.updatedAt),
        ],
      );
      const freshIds = new Set(fresh.rows.map((r) => r.id));
      // A project is carried to an entity that has none.
      const projected = records.filter((r) => r.project !== undefined);
      await db.query(
        'UPDATE entities e SET project = x.p FROM unnest($1::text[], $2::text[]) AS x(n, p) WHERE e.name = x.n AND e.project IS NULL',
        [projected.map((r) => r.name), projected.map((r) => r.project)],
      );
      const idOf = new Map(
        (
          await db.query<{ id: number; name: string }>('SELECT id, name FROM entities WHERE name = ANY($1)', [records.map((r) => r.name)])
        ).rows.map((r) => [r.name, r.id]),
      );
      const obs = records.flatMap((r) => r.observations.map((o) => ({ id: idOf.get(r.name) as number, ...o })));
      const added = await db.query<{ entity_id: number }>(
        `INSERT INTO observations (entity_id, content, kind, created_at)
         SELECT e, c, k, t FROM unnest($1::int[], $2::text[], $3::text[], $4::bigint[]) WITH ORDINALITY AS x(e, c, k, t, i) ORDER BY i
         ON CONFLICT (entity_id, md5(content)) DO NOTHING RETURNING entity_id`,
        [obs.map((o) => o.id), obs.map((o) => o.content), obs.map((o) => o.kind), obs.map((o) => o.createdAt)],
      );
      const grown = new Set(added.rows.map((r) => r.entity_id));
      // History the target lacks; a record it holds already (same text, time and successor) is skipped.
      const sup = records.flatMap((r) => r.superseded.map((s) => ({ id: idOf.get(r.name) as number, ...s })));
      const history = await db.query(
        `INSERT INTO superseded_observations (entity_id, content, kind, created_at, superseded_at, superseded_by)
         SELECT e, c, k, t, s, b FROM unnest($1::int[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::text[])
                WITH ORDINALITY AS x(e, c, k, t, s, b, i)
          WHERE NOT EXISTS (SELECT 1 FROM superseded_observations h
                             WHERE h.entity_id = x.e AND h.superseded_at = x.s AND h.content = x.c AND h.superseded_by = x.b)
          ORDER BY i`,
        [
          sup.map((s) => s.id),
          sup.map((s) => s.content),
          sup.map((s) => s.kind),
          sup.map((s) => s.createdAt),
          sup.map((s) => s.supersededAt),
          sup.map((s) => s.supersededBy),
        ],
      );
      await syncEntities(db, [...new Set([...freshIds, ...grown])].map(asEntityId));
      const withAccess = records.filter((r) => r.access !== undefined && idOf.has(r.name));
      await db.query(
        `INSERT INTO entity_access (entity_id, access_count, last_access) SELECT * FROM unnest($1::int[], $2::int[], $3::bigint[])
         ON CONFLICT (entity_id) DO UPDATE SET access_count = greatest(entity_access.access_count, excluded.access_count),
                                               last_access = greatest(entity_access.last_access, excluded.last_access)`,
        [withAccess.map((r) => idOf.get(r.name)), withAccess.map((r) => r.access?.count), withAccess.map((r) => r.access?.lastAccess)],
      );
      const days = withAccess.flatMap((r) => (r.access?.days ?? []).map((day) => ({ id: idOf.get(r.name) as number, day })));
      await db.query('INSERT INTO entity_access_days (entity_id, day) SELECT * FROM unnest($1::int[], $2::date[]) ON CONFLICT DO NOTHING', [
        days.map((d) => d.id),
        days.map((d) => d.day),
      ]);
      // A vector is copied for an entity whose text is what it was made from: new here, or unchanged.
      let copied = 0;
      if (vectors) {
        const ready = records.filter(
          (r) =>
            r.vector !== undefined &&
            idOf.has(r.name) &&
            !(grown.has(idOf.get(r.name) as number) && !freshIds.has(idOf.get(r.name) as number)) &&
            // One that may need observation vectors too (not copied) is left queued, to be made here.
            !mayNeedMoreVectors(r.observations.map((o) => o.content)),
        );
        const ids = ready.map((r) => idOf.get(r.name) as EntityId);
        const inserted = await db.query(
          `INSERT INTO entity_embeddings (entity_id, embedding) SELECT id, v::vector FROM unnest($1::int[], $2::text[]) AS x(id, v)
           ON CONFLICT (entity_id) DO NOTHING`,
          [ids, ready.map((r) => `[${Array.from(r.vector ?? []).join(',')}]`)],
        );
        copied = inserted.rowCount ?? 0;
        await db.query('DELETE FROM embedding_queue WHERE entity_id = ANY($1) AND NOT entity_id = ANY($2)', [
          ids,
          [...grown].filter((id) => !freshIds.has(id)),
        ]);
      }
      return { entities: freshIds.size, observations: added.rows.length, superseded: history.rowCount ?? 0, vectors: copied };
    });
  }

  async writeRelations(records: readonly RelationRecord[]): Promise<number> {
    if (records.length === 0) return 0;
    // The endpoints' vectors were made with these relations in their text: nothing is re-queued.
    const rows = await this.conn.query(
      `INSERT INTO relations (from_name, to_name, relation_type, created_at, ended_at, context)
       SELECT f, t, ty, c, x.e, x.ctx FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::text[]) WITH ORDINALITY AS x(f, t, ty, c, e, ctx, i) ORDER BY i
       ON CONFLICT DO NOTHING RETURNING id`,
      [
        records.map((r) => r.from),
        records.map((r) => r.to),
        records.map((r) => r.relationType),
        records.map((r) => r.createdAt),
        records.map((r) => r.endedAt ?? null),
        records.map((r) => r.context ?? null),
      ],
    );
    return rows.length;
  }

  async writeCoOccurrences(records: readonly CoOccurrenceRecord[]): Promise<number> {
    if (records.length === 0) return 0;
    const rows = await this.conn.query(
      `INSERT INTO co_occurrences (entity_a_id, entity_b_id, co_count, last_co)
       SELECT least(ea.id, eb.id), greatest(ea.id, eb.id), x.c, x.l FROM unnest($1::text[], $2::text[], $3::int[], $4::bigint[]) AS x(a, b, c, l)
         JOIN entities ea ON ea.name = x.a JOIN entities eb ON eb.name = x.b WHERE ea.id <> eb.id
       ON CONFLICT (entity_a_id, entity_b_id) DO UPDATE SET co_count = greatest(co_occurrences.co_count, excluded.co_count),
                                                           last_co = greatest(co_occurrences.last_co, excluded.last_co)
       RETURNING 1`,
      [records.map((r) => r.a), records.map((r) => r.b), records.map((r) => r.count), records.map((r) => r.lastCo)],
    );
    return rows.length;
  }

  private async hasVectors(): Promise<boolean> {
    return (await this.conn.query<{ e: boolean }>("SELECT to_regclass('entity_embeddings') IS NOT NULL AS e"))[0]?.e === true;
  }
}
