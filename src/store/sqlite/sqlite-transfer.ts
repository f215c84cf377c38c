/**
 * The transfer capability on SQLite (limbic migrate): whole entities read out page by page, and
 * merged in with their times, statuses, kinds, superseded observations, relations' end, usage
 * signals and vectors. See transfer-store.ts.
 *
 * Entities and observations go in through the graph's own importBatch, so the keyword, substring
 * and queue rows are kept exactly as every other write keeps them; what importBatch does not carry
 * (the source's times and kinds) is set afterwards on the rows it added, and vectors go through the
 * vector index's put, which also tells every process's vector cache.
 */
import { mayNotFitOneVector } from '../../core/text/entity-text.js';
import { asEntityId, statusFromStored } from '../../core/types.js';
import type {
  CoOccurrenceRecord,
  EntityRecord,
  RelationRecord,
  SupersededRecord,
  TransferPage,
  TransferStore,
  TransferWriteCounts,
} from '../transfer-store.js';
import { toCoOccurrenceRecord, toRelationRecord, type CoOccurrenceRecordRow, type RelationRecordRow } from '../rows.js';
import { json, type SqliteConnection } from './sqlite-connection.js';
import type { SqliteGraph } from './sqlite-graph.js';
import type { SqliteVectorIndex } from './sqlite-vectors.js';

const page = <T>(records: T[], limit: number, next: number): TransferPage<T> => ({
  records,
  next: records.length < limit ? undefined : next,
});

export class SqliteTransfer implements TransferStore {
  constructor(
    private readonly conn: SqliteConnection,
    private readonly graph: SqliteGraph,
    private readonly vectors: SqliteVectorIndex | undefined,
  ) {}

  async vectorModel(): Promise<{ readonly model: string; readonly dims: number } | undefined> {
    const model = this.conn.metaGet('vector_model');
    const dims = Number(this.conn.metaGet('vector_dims'));
    return model === undefined || !(dims > 0) || !this.hasVectors() ? undefined : { model, dims };
  }

  async readEntities(cursor: number, limit: number): Promise<TransferPage<EntityRecord>> {
    const rows = this.conn
      .stmt<
        [number, number],
        {
          id: number;
          name: string;
          entity_type: string;
          status: string;
          created_at: number;
          updated_at: number;
          project: string | null;
          access_count: number | null;
          last_access: number | null;
        }
      >(
        `SELECT e.*, a.access_count, a.last_access FROM entities e LEFT JOIN entity_access a ON a.entity_id = e.id
          WHERE e.id > ? ORDER BY e.id LIMIT ?`,
      )
      .all(cursor, limit);
    const ids = json(rows.map((r) => r.id));
    const obs = new Map<number, { content: string; kind: string; createdAt: number }[]>();
    for (const o of this.conn
      .stmt<[string], { entity_id: number; content: string; kind: string; created_at: number }>(
        'SELECT entity_id, content, kind, created_at FROM observations WHERE entity_id IN (SELECT value FROM json_each(?)) ORDER BY entity_id, id',
      )
      .iterate(ids)) {
      const list = obs.get(o.entity_id) ?? [];
      list.push({ content: o.content, kind: o.kind, createdAt: o.created_at });
      obs.set(o.entity_id, list);
    }
    const superseded = new Map<number, SupersededRecord[]>();
    for (const s of this.conn
      .stmt<
        [string],
        { entity_id: number; content: string; kind: string; created_at: number; superseded_at: number; superseded_by: string }
      >(
        `SELECT entity_id, content, kind, created_at, superseded_at, superseded_by FROM superseded_observations
          WHERE entity_id IN (SELECT value FROM json_each(?)) ORDER BY entity_id, id`,
      )
      .iterate(ids)) {
      const list = superseded.get(s.entity_id) ?? [];
      list.push({
        content: s.content,
        kind: s.kind,
        createdAt: s.created_at,
        supersededAt: s.superseded_at,
        supersededBy: s.superseded_by,
      });
      superseded.set(s.entity_id, list);
    }
    const days = new Map<number, string[]>();
    for (const d of this.conn
      .stmt<[string], { entity_id: number; day: string }>(
        'SELECT entity_id, day FROM entity_access_days WHERE entity_id IN (SELECT value FROM json_each(?)) ORDER BY entity_id, day',
      )
      .iterate(ids)) {
      days.set(d.entity_id, [...(days.get(d.entity_id) ?? []), d.day]);
    }
    const vectors = new Map<number, Float32Array>();
    if (this.hasVectors()) {
      for (const v of this.conn
        .stmt<[string], { id: number; embedding: Buffer }>(
          'SELECT rowid AS id, embedding FROM entity_embeddings WHERE rowid IN (SELECT value FROM json_each(?))',
        )
        .iterate(ids)) {
        vectors.set(
          v.id,
          new Float32Array(v.embedding.buffer.slice(v.embedding.byteOffset, v.embedding.byteOffset + v.embedding.byteLength)),
        );
      }
    }
    const records = rows.map((r) => ({
      name: r.name,
      entityType: r.entity_type,
      status: r.status,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
      ...(r.project === null ? {} : { project: r.project }),
      observations: obs.get(r.id) ?? [],
      superseded: superseded.get(r.id) ?? [],
      access: r.access_count === null ? undefined : { count: r.access_count, lastAccess: r.last_access ?? 0, days: days.get(r.id) ?? [] },
      vector: vectors.get(r.id),
    }));
    return page(records, limit, rows.at(-1)?.id ?? cursor);
  }

  async readRelations(cursor: number, limit: number): Promise<TransferPage<RelationRecord>> {
    const rows = this.conn
      .stmt<[number, number], RelationRecordRow>(
        'SELECT id, from_name, to_name, relation_type, context, created_at, ended_at FROM relations WHERE id > ? ORDER BY id LIMIT ?',
      )
      .all(cursor, limit);
    return page(rows.map(toRelationRecord), limit, rows.at(-1)?.id ?? cursor);
  }

  async readCoOccurrences(cursor: number, limit: number): Promise<TransferPage<CoOccurrenceRecord>> {
    const rows = this.conn
      .stmt<[number, number], CoOccurrenceRecordRow>(
        `SELECT ea.name AS a, eb.name AS b, c.co_count, c.last_co FROM co_occurrences c
         JOIN entities ea ON ea.id = c.entity_a_id JOIN entities eb ON eb.id = c.entity_b_id
        ORDER BY c.entity_a_id, c.entity_b_id LIMIT ? OFFSET ?`,
      )
      .all(limit, cursor);
    return page(rows.map(toCoOccurrenceRecord), limit, cursor + rows.length);
  }

  async writeEntities(records: readonly EntityRecord[], vectors: boolean): Promise<TransferWriteCounts> {
    if (records.length === 0) return { entities: 0, observations: 0, superseded: 0, vectors: 0 };
    const names = json(records.map((r) => r.name));
    const existing = new Set(
      this.conn
        .stmt<[string], { name: string }>('SELECT name FROM entities WHERE name IN (SELECT value FROM json_each(?))')
        .all(names)
        .map((r) => r.name),
    );
    // importBatch stamps what it adds with this time: the rows to give their source's kind and time.
    const stamp = Date.now();
    const counts = await this.graph.importBatch(
      {
        entities: records.map((r) => ({
          name: r.name,
          entityType: r.entityType,
          status: statusFromStored(r.status),
          observations: r.observations.map((o) => o.content),
        })),
        relations: [],
      },
      stamp,
    );
    const idOf = new Map(
      this.conn
        .stmt<[string], { id: number; name: string }>('SELECT id, name FROM entities WHERE name IN (SELECT value FROM json_each(?))')
        .all(names)
        .map((r) => [r.name, r.id]),
    );
    const grown = new Set<number>();
    let history = 0;
    this.conn.write(() => {
      const times = this.conn.stmt('UPDATE entities SET created_at = ?, updated_at = ? WHERE id = ?');
      // A project is carried to an entity that has none here.
      const project = this.conn.stmt('UPDATE entities SET project = ? WHERE id = ? AND project IS NULL');
      // Only rows importBatch just added carry its stamp; older rows keep their own kind and time.
      const obs = this.conn.stmt('UPDATE observations SET kind = ?, created_at = ? WHERE entity_id = ? AND content = ? AND created_at = ?');
      for (const r of records) {
        const id = idOf.get(r.name);
        if (id === undefined) continue;
        if (!existing.has(r.name)) times.run(r.createdAt, r.updatedAt, id);
        if (r.project !== undefined) project.run(r.project, id);
        for (const o of r.observations) {
          if (obs.run(o.kind, o.createdAt, id, o.content, stamp).changes > 0 && existing.has(r.name)) grown.add(id);
        }
      }
      const access = this.conn.stmt(
        `INSERT INTO entity_access (entity_id, access_count, last_access) VALUES (?, ?, ?)
         ON CONFLICT(entity_id) DO UPDATE SET access_count = max(access_count, excluded.access_count), last_access = max(last_access, excluded.last_access)`,
      );
      // History the target lacks; a record it holds already (same text, time and successor) is skipped.
      const keep = this.conn.stmt(
        `INSERT INTO superseded_observations (entity_id, content, kind, created_at, superseded_at, superseded_by)
         SELECT @id, @content, @kind, @createdAt, @supersededAt, @supersededBy WHERE NOT EXISTS (SELECT 1 FROM superseded_observations
           WHERE entity_id = @id AND superseded_at = @supersededAt AND content = @content AND superseded_by = @supersededBy)`,
      );
      for (const r of records) {
        const id = idOf.get(r.name);
        if (id === undefined) continue;
        for (const s of r.superseded) history += keep.run({ id, ...s }).changes;
      }
      const day = this.conn.stmt('INSERT INTO entity_access_days (entity_id, day) VALUES (?, ?) ON CONFLICT DO NOTHING');
      for (const r of records) {
        const id = idOf.get(r.name);
        if (id === undefined || r.access === undefined) continue;
        access.run(id, r.access.count, r.access.lastAccess);
        for (const d of r.access.days) day.run(id, d);
      }
    });
    let copied = 0;
    if (vectors && this.vectors !== undefined) {
      // A vector is copied for an entity whose text is what it was made from: new here, or unchanged;
      // one that may need observation vectors too (which are not copied) is left queued, to be made here.
      const ready = records.filter(
        (r) =>
          r.vector !== undefined &&
          idOf.has(r.name) &&
          !grown.has(idOf.get(r.name) as number) &&
          !mayNotFitOneVector(r.observations.map((o) => o.content)),
      );
      const have = this.hasVectors()
        ? new Set(
            this.conn
              .stmt<[string], { id: number }>('SELECT rowid AS id FROM entity_embeddings WHERE rowid IN (SELECT value FROM json_each(?))')
              .all(json(ready.map((r) => idOf.get(r.name))))
              .map((r) => r.id),
          )
        : new Set<number>();
      const version = this.conn.stmt<[number], { version: number }>('SELECT version FROM embedding_queue WHERE entity_id = ?');
      const results = ready
        .filter((r) => !have.has(idOf.get(r.name) as number))
        .map((r) => {
          const id = idOf.get(r.name) as number;
          return { id: asEntityId(id), version: version.get(id)?.version ?? 0, vector: r.vector as Float32Array };
        });
      await this.vectors.put(results);
      copied = results.length;
    }
    return { entities: counts.entitiesAdded, observations: counts.observationsAdded, superseded: history, vectors: copied };
  }

  async writeRelations(records: readonly RelationRecord[]): Promise<number> {
    // The endpoints' vectors were made with these relations in their text: nothing is re-queued.
    return this.conn.write(() => {
      const insert = this.conn.stmt(
        'INSERT INTO relations (from_name, to_name, relation_type, created_at, ended_at, context) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
      );
      return records.reduce(
        (n, r) => n + insert.run(r.from, r.to, r.relationType, r.createdAt, r.endedAt ?? null, r.context ?? null).changes,
        0,
      );
    });
  }

  async writeCoOccurrences(records: readonly CoOccurrenceRecord[]): Promise<number> {
    return this.conn.write(() => {
      const idOf = this.conn.stmt<[string], { id: number }>('SELECT id FROM entities WHERE name = ?');
      const upsert = this.conn.stmt(
        `INSERT INTO co_occurrences (entity_a_id, entity_b_id, co_count, last_co) VALUES (?, ?, ?, ?)
         ON CONFLICT(entity_a_id, entity_b_id) DO UPDATE SET co_count = max(co_count, excluded.co_count), last_co = max(last_co, excluded.last_co)`,
      );
      let n = 0;
      for (const r of records) {
        const a = idOf.get(r.a)?.id;
        const b = idOf.get(r.b)?.id;
        if (a === undefined || b === undefined || a === b) continue;
        n += upsert.run(Math.min(a, b), Math.max(a, b), r.count, r.lastCo).changes;
      }
      return n;
    }, false);
  }

  private hasVectors(): boolean {
    return this.conn.vectorsLoaded && this.conn.tableExists('entity_embeddings');
  }
}
