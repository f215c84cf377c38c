/**
 * The transfer capability on SQLite (limbic migrate): whole entities read out page by page, and
 * merged in with their times, statuses, kinds, superseded observations, relations' end, usage
 * signals and vectors. See transfer-store.ts.
 *
 * A page of entities goes in as one transaction: the rows with the source's times, statuses and
 * kinds, then the graph's own syncEntity for each new or grown entity, so its keyword, substring and
 * queue rows are made from the rows as stored, kinds included (issue 35: they were once made before
 * the kinds were set, and a kill between the two writes left the page half-copied for good).
 * Vectors go through the vector index's put afterwards, which also tells every process's vector
 * cache; one not put yet stays queued and is made or copied later.
 */
import { mayNeedMoreVectors } from '../../core/text/entity-text.js';
import { asEntityId, statusFromStored, STORED_STATUS } from '../../core/types.js';
import type {
  CoOccurrenceRecord,
  EntityRecord,
  RelationKey,
  RelationRecord,
  SupersededRecord,
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
import { json, type SqliteConnection } from './sqlite-connection.js';
import type { SqliteGraph } from './sqlite-graph.js';
import type { SqliteVectorIndex } from './sqlite-vectors.js';

interface EntityRow extends StoredEntityRow {
  access_count: number | null;
  last_access: number | null;
}

const ENTITY_ROWS = 'SELECT e.*, a.access_count, a.last_access FROM entities e LEFT JOIN entity_access a ON a.entity_id = e.id';

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
    const rows = this.conn.stmt<[number, number], EntityRow>(`${ENTITY_ROWS} WHERE e.id > ? ORDER BY e.id LIMIT ?`).all(cursor, limit);
    return page(this.records(rows), limit, rows.at(-1)?.id ?? cursor);
  }

  async readEntitiesNamed(names: readonly string[]): Promise<EntityRecord[]> {
    return this.records(
      this.conn.stmt<[string], EntityRow>(`${ENTITY_ROWS} WHERE e.name IN (SELECT value FROM json_each(?))`).all(json(names)),
    );
  }

  async readRelationsKeyed(keys: readonly RelationKey[]): Promise<RelationRecord[]> {
    return this.conn
      .stmt<[string], RelationRecordRow>(
        `SELECT r.id, r.from_name, r.to_name, r.relation_type, r.context, r.created_at, r.ended_at
           FROM json_each(?) k JOIN relations r
             ON r.from_name = k.value ->> 0 AND r.to_name = k.value ->> 1 AND r.relation_type = k.value ->> 2`,
      )
      .all(json(keys.map((k) => [k.from, k.to, k.relationType])))
      .map(toRelationRecord);
  }

  async counts(): Promise<TransferCounts> {
    const count = (table: string): number => this.conn.stmt<[], { n: number }>(`SELECT count(*) AS n FROM ${table}`).get()?.n ?? 0;
    return {
      entities: count('entities'),
      observations: count('observations'),
      superseded: count('superseded_observations'),
      relations: count('relations'),
      coOccurrences: count('co_occurrences'),
    };
  }

  /** Whole records of these entity rows: observations, history, usage and vectors read in one query each. */
  private records(rows: readonly EntityRow[]): EntityRecord[] {
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
    return rows.map((r) => ({
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
    // An entity that was here already and gained observations changed now, as any write changes it.
    const now = Date.now();
    // One transaction per page, as on PostgreSQL: a page is in the target whole (its entities with
    // their times and status, observations with their kind and time, keyword rows made from those
    // kinds) or not at all, so a migration killed half way and run again finds nothing half-written.
    const written = this.conn.write(() => {
      const insertEntity = this.conn.stmt(
        'INSERT INTO entities (name, entity_type, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT(name) DO NOTHING',
      );
      const idByName = this.conn.stmt<[string], { id: number }>('SELECT id FROM entities WHERE name = ?');
      const insertObservation = this.conn.stmt(
        'INSERT INTO observations (entity_id, content, kind, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
      );
      const touch = this.conn.stmt('UPDATE entities SET updated_at = ? WHERE id = ?');
      // A project is carried to an entity that has none here.
      const project = this.conn.stmt('UPDATE entities SET project = ? WHERE id = ? AND project IS NULL');
      const idOf = new Map<string, number>();
      const grown = new Set<number>();
      let entitiesAdded = 0;
      let observationsAdded = 0;
      for (const r of records) {
        // run() + lastInsertRowid, not RETURNING: see SqliteGraph.insertEntity.
        const inserted = insertEntity.run(r.name, r.entityType, STORED_STATUS[statusFromStored(r.status)], r.createdAt, r.updatedAt);
        const fresh = inserted.changes > 0;
        const id = fresh ? Number(inserted.lastInsertRowid) : idByName.get(r.name)?.id;
        if (id === undefined) continue;
        idOf.set(r.name, id);
        if (fresh) entitiesAdded++;
        let changed = false;
        for (const o of r.observations) {
          if (insertObservation.run(id, o.content, o.kind, o.createdAt).changes === 0) continue;
          observationsAdded++;
          changed = true;
        }
        if (changed && !fresh) {
          touch.run(now, id);
          grown.add(id);
        }
        if (r.project !== undefined) project.run(r.project, id);
        // Keyword rows from the rows as stored, kinds included; the entity is queued for its vector.
        if (fresh || changed) this.graph.syncEntity(asEntityId(id));
      }
      if (entitiesAdded > 0)
        this.conn.stmt("UPDATE meta SET value = CAST(value AS INTEGER) + ? WHERE key = 'entity_count'").run(entitiesAdded);
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
      let history = 0;
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
      return { idOf, grown, entitiesAdded, observationsAdded, history };
    });
    const { idOf, grown } = written;
    let copied = 0;
    if (vectors && this.vectors !== undefined) {
      // A vector is copied for an entity whose text is what it was made from: new here, or unchanged;
      // one that may need observation vectors too (which are not copied) is left queued, to be made here.
      const ready = records.filter(
        (r) =>
          r.vector !== undefined &&
          idOf.has(r.name) &&
          !grown.has(idOf.get(r.name) as number) &&
          !mayNeedMoreVectors(r.observations.map((o) => o.content)),
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
    return { entities: written.entitiesAdded, observations: written.observationsAdded, superseded: written.history, vectors: copied };
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
