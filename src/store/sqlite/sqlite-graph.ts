/**
 * The graph on SQLite: writes, and the index rows kept in step with them in the same transaction
 * (keyword and substring rows, the embedding queue, vector deletions). Reads: sqlite-graph-reads.ts.
 */
import { randomInt } from 'node:crypto';
import { foldAccents } from '../../core/text/fold.js';
import { entityNotFound } from '../../core/errors.js';
import {
  asEntityId,
  DEFAULT_OBSERVATION_KIND,
  type Entity,
  type EntityId,
  type EntityStatus,
  type NewEntity,
  type ObservationAddition,
  type ObservationAdditionResult,
  type ObservationDeletion,
  type Relation,
  STORED_STATUS,
} from '../../core/types.js';
import type { GraphStore, ImportBatch, ImportCounts } from '../graph-store.js';
import { json, LOG_NONCE_SQL, NOW_MS_SQL } from './sqlite-connection.js';
import { withContext, type EntityRow } from '../rows.js';
import { SqliteGraphReads } from './sqlite-graph-reads.js';
import { deleteObservationVectors } from './sqlite-vectors.js';
import { keywordObservation } from '../../core/text/entity-text.js';

/** Entity text is joined with this separator in the FTS index (docs/ranking.md, "Legs"). */
const OBS_SEPARATOR = ' | ';

const newQueueVersion = (): number => randomInt(1, 2 ** 47);

export class SqliteGraph extends SqliteGraphReads implements GraphStore {
  async createEntities(entities: readonly NewEntity[], now: number): Promise<Entity[]> {
    return this.conn.write(() => {
      const added: Entity[] = [];
      for (const entity of entities) {
        const id = this.insertEntity(entity, now);
        if (id === undefined) continue;
        for (const content of entity.observations) this.insertObservation(id, content, DEFAULT_OBSERVATION_KIND, now);
        this.syncEntity(id);
        added.push({ name: entity.name, entityType: entity.entityType, observations: [...entity.observations] });
      }
      return added;
    });
  }

  async createRelations(relations: readonly Relation[], now: number): Promise<Relation[]> {
    return this.conn.write(() => {
      const added: Relation[] = [];
      const touched = new Set<string>();
      // Creating a relation that end_relation ended makes it current again (and counts as added);
      // a relation that exists keeps its context.
      const insert = this.conn.stmt(
        'INSERT INTO relations (from_name, to_name, relation_type, created_at, context) VALUES (?, ?, ?, ?, ?) ON CONFLICT(from_name, to_name, relation_type) DO UPDATE SET ended_at = NULL, context = coalesce(excluded.context, context) WHERE ended_at IS NOT NULL',
      );
      // Without a context of its own, a relation made current again shows the one it had.
      const storedContext = this.conn.stmt<[string, string, string], { context: string | null }>(
        'SELECT context FROM relations WHERE from_name = ? AND to_name = ? AND relation_type = ?',
      );
      for (const r of relations) {
        if (insert.run(r.from, r.to, r.relationType, now, r.context ?? null).changes === 0) continue;
        const context = r.context ?? storedContext.get(r.from, r.to, r.relationType)?.context;
        added.push(withContext(r.from, r.to, r.relationType, context));
        touched.add(r.from).add(r.to);
      }
      this.resyncNames(touched, now);
      return added;
    });
  }

  async addObservations(items: readonly ObservationAddition[], now: number): Promise<ObservationAdditionResult[]> {
    return this.conn.write(() => {
      const results: ObservationAdditionResult[] = [];
      for (const item of items) {
        const id = this.idOf(item.entityName);
        if (id === undefined) throw entityNotFound(item.entityName);
        const addedObservations: string[] = [];
        for (const content of item.contents) {
          if (this.insertObservation(id, content, item.kind ?? DEFAULT_OBSERVATION_KIND, now)) addedObservations.push(content);
        }
        if (addedObservations.length > 0) this.touch(id, now);
        results.push({ entityName: item.entityName, addedObservations });
      }
      return results;
    });
  }

  async deleteEntities(names: readonly string[]): Promise<void> {
    this.conn.write(() => {
      const neighbours = new Set<string>();
      const relationsOf = this.conn.stmt<[string, string], { from_name: string; to_name: string }>(
        'SELECT from_name, to_name FROM relations WHERE from_name = ? OR to_name = ?',
      );
      const deleteRelations = this.conn.stmt('DELETE FROM relations WHERE from_name = ? OR to_name = ?');
      for (const name of new Set(names)) {
        for (const r of relationsOf.all(name, name)) neighbours.add(r.from_name).add(r.to_name);
        deleteRelations.run(name, name);
        const id = this.idOf(name);
        if (id === undefined) continue;
        this.deleteIndexes(id);
        this.conn.stmt('DELETE FROM entities WHERE id = ?').run(id);
        this.countEntities(-1);
      }
      for (const name of names) neighbours.delete(name);
      this.resyncNames(neighbours, undefined);
    });
  }

  async deleteObservations(deletions: readonly ObservationDeletion[], now: number): Promise<void> {
    this.conn.write(() => {
      const remove = this.conn.stmt('DELETE FROM observations WHERE entity_id = ? AND content IN (SELECT value FROM json_each(?))');
      for (const d of deletions) {
        const id = this.idOf(d.entityName);
        if (id === undefined) continue;
        if (remove.run(id, json(d.observations)).changes > 0) this.touch(id, now);
      }
    });
  }

  async deleteRelations(relations: readonly Relation[], now: number): Promise<void> {
    this.conn.write(() => {
      const remove = this.conn.stmt('DELETE FROM relations WHERE from_name = ? AND to_name = ? AND relation_type = ?');
      const touched = new Set<string>();
      for (const r of relations) {
        if (remove.run(r.from, r.to, r.relationType).changes > 0) touched.add(r.from).add(r.to);
      }
      this.resyncNames(touched, now);
    });
  }

  async setStatus(name: string, status: EntityStatus, now: number): Promise<boolean> {
    return this.conn.write(
      () =>
        this.conn.stmt('UPDATE entities SET status = ?, updated_at = ? WHERE name = ?').run(STORED_STATUS[status], now, name).changes > 0,
    );
  }

  async importBatch(batch: ImportBatch, now: number): Promise<ImportCounts> {
    return this.conn.write(() => {
      let entitiesAdded = 0;
      let observationsAdded = 0;
      let relationsAdded = 0;
      for (const entity of batch.entities) {
        let id = this.insertEntity(entity, now);
        if (id === undefined) id = this.idOf(entity.name);
        else entitiesAdded++;
        if (id === undefined) continue;
        let changed = false;
        for (const content of entity.observations) {
          if (this.insertObservation(id, content, DEFAULT_OBSERVATION_KIND, now)) {
            observationsAdded++;
            changed = true;
          }
        }
        if (changed) this.touch(id, now);
      }
      // A relation the file marks ended (limbic export's ended_at) is added ended.
      const insert = this.conn.stmt(
        'INSERT INTO relations (from_name, to_name, relation_type, created_at, ended_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
      );
      const touched = new Set<string>();
      for (const r of batch.relations) {
        if (insert.run(r.from, r.to, r.relationType, now, r.ended_at === undefined ? null : Date.parse(r.ended_at)).changes === 0) continue;
        relationsAdded++;
        touched.add(r.from).add(r.to);
      }
      this.resyncNames(touched, now);
      return { entitiesAdded, observationsAdded, relationsAdded };
    });
  }

  /** An index that is empty while entities exist is rebuilt. */
  backfillIndexes(): void {
    const entities = this.conn.count('entities');
    if (entities === 0 || (this.conn.count('entity_trigram') > 0 && this.conn.count('entity_fts') > 0)) return;
    this.conn.write(() => {
      for (const r of this.conn.stmt<[], { id: number }>('SELECT id FROM entities').all()) this.syncEntity(asEntityId(r.id));
    });
  }

  private insertEntity(entity: NewEntity, now: number): EntityId | undefined {
    // run() + lastInsertRowid: RETURNING made this insert about 20x slower inside transactions that
    // also write FTS5 tables (found with bench/latency's import).
    const result = this.conn
      .stmt('INSERT INTO entities (name, entity_type, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT(name) DO NOTHING')
      .run(entity.name, entity.entityType, STORED_STATUS[entity.status ?? 'active'], now, now);
    if (result.changes === 0) return undefined;
    this.countEntities(1);
    return asEntityId(Number(result.lastInsertRowid));
  }

  private insertObservation(id: EntityId, content: string, kind: string, now: number): boolean {
    return (
      this.conn
        .stmt('INSERT INTO observations (entity_id, content, kind, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING')
        .run(id, content, kind, now).changes > 0
    );
  }

  private countEntities(delta: number): void {
    this.conn.stmt("UPDATE meta SET value = CAST(value AS INTEGER) + ? WHERE key = 'entity_count'").run(delta);
  }

  /** Marks an entity changed: new updated_at, fresh keyword rows, vector queued. */
  private touch(id: EntityId, now: number | undefined): void {
    if (now !== undefined) this.conn.stmt('UPDATE entities SET updated_at = ? WHERE id = ?').run(now, id);
    this.syncEntity(id);
  }

  /** Relations changed: keyword rows are unaffected, the text made for embedding is not. */
  private resyncNames(names: ReadonlySet<string>, now: number | undefined): void {
    for (const name of names) {
      const id = this.idOf(name);
      if (id === undefined) continue;
      if (now !== undefined) this.conn.stmt('UPDATE entities SET updated_at = ? WHERE id = ?').run(now, id);
      this.queueEmbedding(id);
    }
  }

  /**
   * Queued even when this process has no vector index: the file may be shared with one that has,
   * and it embeds the backlog. An entity already queued keeps its place (and any claim on it: the
   * process embedding it sees the new version at put and queues it again, sqlite-vectors.ts).
   */
  private queueEmbedding(id: EntityId): void {
    this.conn
      .stmt(
        `INSERT INTO embedding_queue (entity_id, version, queued_at) VALUES (?, ?, ${NOW_MS_SQL})
         ON CONFLICT(entity_id) DO UPDATE SET version = excluded.version`,
      )
      .run(id, newQueueVersion());
  }

  /**
   * Rebuild the keyword rows from the entity's current state.
   * Public for sqlite-maintenance.ts, whose writes (supersede, split) run in the caller's transaction.
   */
  syncEntity(id: EntityId, queueVector = true): void {
    const row = this.conn.stmt<[number], EntityRow>('SELECT * FROM entities WHERE id = ?').get(id);
    if (row === undefined) return;
    const observations = this.conn
      .stmt<[number], { content: string; kind: string }>('SELECT content, kind FROM observations WHERE entity_id = ? ORDER BY id')
      .all(id);
    // Keywords find an observation by its kind too; the substring test of search_nodes does not.
    const text = {
      entity_fts: observations.map((o) => keywordObservation(o.content, o.kind)).join(OBS_SEPARATOR),
      entity_trigram: observations.map((o) => o.content).join(OBS_SEPARATOR),
    };
    this.conn.noteKeywordChange(id);
    // The substring index holds the text folded (fold.ts), as search_nodes compares it.
    this.conn.deleteKeywordRow(id);
    this.conn.stmt('DELETE FROM entity_trigram WHERE rowid = ?').run(id);
    for (const [table, fold] of [
      ['entity_fts', (t: string) => t],
      ['entity_trigram', foldAccents],
    ] as const) {
      this.conn
        .stmt(`INSERT INTO ${table} (rowid, name, entity_type, obs_text) VALUES (?, ?, ?, ?)`)
        .run(id, fold(row.name), fold(row.entity_type), fold(text[table]));
    }
    if (queueVector) this.queueEmbedding(id);
  }

  /**
   * Keyword rows written before kinds were indexed: the migration that began indexing them listed
   * the entities with a kind other than generic in keyword_resync; they are rebuilt once (their
   * vectors are unaffected), then the list goes.
   */
  resyncListedKeywords(): void {
    if (!this.conn.tableExists('keyword_resync')) return;
    this.conn.write(() => {
      if (!this.conn.tableExists('keyword_resync')) return; // another process did it meanwhile
      const listed = this.conn.db.prepare('SELECT entity_id FROM keyword_resync').all() as { entity_id: number }[];
      for (const r of listed) this.syncEntity(asEntityId(r.entity_id), false);
      this.conn.db.exec('DROP TABLE keyword_resync');
    });
  }

  private deleteIndexes(id: EntityId): void {
    this.conn.noteKeywordChange(id);
    this.conn.deleteKeywordRow(id);
    this.conn.stmt('DELETE FROM entity_trigram WHERE rowid = ?').run(id);
    // The vec0 table can be written only with sqlite-vec loaded; the log entry tells every
    // process's in-memory vector cache (vector-cache.ts) to drop the vector.
    if (this.conn.vectorsLoaded && this.conn.tableExists('entity_embeddings')) {
      this.conn.stmt('DELETE FROM entity_embeddings WHERE rowid = ?').run(BigInt(id));
      this.conn.stmt(`INSERT INTO vector_log (entity_id, nonce) VALUES (?, ${LOG_NONCE_SQL})`).run(id);
    }
    deleteObservationVectors(this.conn, id);
  }
}
