/**
 * Stored text rewritten in place on SQLite (rewrite-store.ts), for `limbic redact --apply`, in the
 * way schema migration 14 rewrote names into NFC: an entity whose new name another holds is kept
 * apart as "Name (2)", relation ends follow their entity, an observation or relation that equals
 * another once rewritten was the same one and is dropped.
 *
 * Then the purge: FTS5 keeps a deleted row's tokens in its segments until they are merged, so both
 * FTS5 tables are merged into one segment ('optimize'); VACUUM writes the database anew (no free
 * page or old cell survives, secure_delete zeroes what is freed before it); a TRUNCATE checkpoint
 * empties the write-ahead log; the side files (`<db>.keywords` holds words, `<db>.vectors` the
 * vectors of the old text) are deleted and made again from the database at the next start.
 */
import { unlink } from 'node:fs/promises';
import { asEntityId } from '../../core/types.js';
import type { TextRewriteOutcome, TextRewriteStore } from '../rewrite-store.js';
import { keywordFilePath } from './keyword-topk/keyword-topk-file.js';
import type { SqliteConnection } from './sqlite-connection.js';
import type { SqliteGraph } from './sqlite-graph.js';
import { vectorFilePath } from './vector-cache/vector-cache-file.js';

/** What holds the side files open: closed (saving what it owes) before the files are deleted. */
export interface SideFileOwner {
  close(): Promise<void>;
}

export class SqliteRewrite implements TextRewriteStore {
  constructor(
    private readonly conn: SqliteConnection,
    private readonly graph: SqliteGraph,
    private readonly sideFileOwners: readonly (SideFileOwner | undefined)[],
  ) {}

  async rewriteTexts(changes: ReadonlyMap<string, string>, now: number): Promise<TextRewriteOutcome> {
    // Cells freed from here on are zeroed, not left in free pages (VACUUM in purge drops those too).
    this.conn.db.pragma('secure_delete = ON');
    return this.conn.write(() => {
      const { db } = this.conn;
      const touched = new Set<number>();
      const counts = { names: 0, types: 0, observations: 0, observationsMerged: 0, superseded: 0, relations: 0, relationsMerged: 0 };
      const renamedApart: string[] = [];

      const entities = db
        .prepare<[], { id: number; name: string; entity_type: string }>('SELECT id, name, entity_type FROM entities ORDER BY id')
        .all();
      const taken = new Set(entities.map((e) => e.name));
      const renames = new Map<string, string>();
      const setEntity = db.prepare<[string, string, number, number]>(
        'UPDATE entities SET name = ?, entity_type = ?, updated_at = ? WHERE id = ?',
      );
      for (const e of entities) {
        const wanted = changes.get(e.name);
        const type = changes.get(e.entity_type);
        if (wanted === undefined && type === undefined) continue;
        let name = e.name;
        if (wanted !== undefined) {
          taken.delete(e.name);
          name = wanted;
          for (let k = 2; taken.has(name); k++) name = `${wanted} (${k})`;
          taken.add(name);
          renames.set(e.name, name);
          if (name !== wanted) renamedApart.push(name);
          counts.names++;
        }
        if (type !== undefined) counts.types++;
        setEntity.run(name, type ?? e.entity_type, now, e.id);
        touched.add(e.id);
      }

      const moveObservation = db.prepare<[string, number]>('UPDATE OR IGNORE observations SET content = ? WHERE id = ?');
      const dropObservation = db.prepare<[number]>('DELETE FROM observations WHERE id = ?');
      for (const o of db
        .prepare<[], { id: number; entity_id: number; content: string }>('SELECT id, entity_id, content FROM observations')
        .all()) {
        const next = changes.get(o.content);
        if (next === undefined) continue;
        if (moveObservation.run(next, o.id).changes === 0) {
          dropObservation.run(o.id);
          counts.observationsMerged++;
        } else counts.observations++;
        touched.add(o.entity_id);
      }

      const setSuperseded = db.prepare<[string, string, number]>(
        'UPDATE superseded_observations SET content = ?, superseded_by = ? WHERE id = ?',
      );
      for (const s of db
        .prepare<[], { id: number; content: string; superseded_by: string }>(
          'SELECT id, content, superseded_by FROM superseded_observations',
        )
        .all()) {
        const [content, by] = [changes.get(s.content), changes.get(s.superseded_by)];
        if (content === undefined && by === undefined) continue;
        setSuperseded.run(content ?? s.content, by ?? s.superseded_by, s.id);
        counts.superseded++;
      }

      const end = (name: string): string => renames.get(name) ?? changes.get(name) ?? name;
      const moveRelation = db.prepare<[string, string, string, string | null, number]>(
        'UPDATE OR IGNORE relations SET from_name = ?, to_name = ?, relation_type = ?, context = ? WHERE id = ?',
      );
      const dropRelation = db.prepare<[number]>('DELETE FROM relations WHERE id = ?');
      const endpoints = new Set<string>();
      type RelationRow = { id: number; from_name: string; to_name: string; relation_type: string; context: string | null };
      for (const r of db.prepare<[], RelationRow>('SELECT id, from_name, to_name, relation_type, context FROM relations').all()) {
        const next = [end(r.from_name), end(r.to_name), changes.get(r.relation_type) ?? r.relation_type] as const;
        const context = r.context === null ? null : (changes.get(r.context) ?? r.context);
        if (next[0] === r.from_name && next[1] === r.to_name && next[2] === r.relation_type && context === r.context) continue;
        if (moveRelation.run(...next, context, r.id).changes === 0) {
          dropRelation.run(r.id);
          counts.relationsMerged++;
        } else counts.relations++;
        endpoints.add(next[0]).add(next[1]);
      }
      // A relation is part of its ends' embedding text: their vectors are made again too.
      const idOf = db.prepare<[string], { id: number }>('SELECT id FROM entities WHERE name = ?');
      for (const name of endpoints) {
        const id = idOf.get(name)?.id;
        if (id !== undefined) touched.add(id);
      }
      for (const id of touched) this.graph.syncEntity(asEntityId(id));
      return { entities: touched.size, ...counts, renamedApart };
    });
  }

  async purge(): Promise<string[]> {
    const { db, path } = this.conn;
    const steps: string[] = [];
    this.conn.write(() => {
      db.exec("INSERT INTO entity_fts (entity_fts) VALUES ('optimize')");
      db.exec("INSERT INTO entity_trigram (entity_trigram) VALUES ('optimize')");
    }, false);
    steps.push('keyword and substring indexes merged into one segment each (FTS5 optimize): the old text’s tokens are gone');
    if (path !== ':memory:') {
      for (const owner of this.sideFileOwners) await owner?.close();
      for (const file of [keywordFilePath(path), vectorFilePath(path)]) {
        const removed = await unlink(file).then(
          () => true,
          (error: unknown) => ((error as { code?: string }).code === 'ENOENT' ? false : Promise.reject(error)),
        );
        if (removed) steps.push(`${file} deleted (made again from the database at the next start)`);
      }
    }
    db.pragma('secure_delete = ON');
    db.exec('VACUUM');
    steps.push('database rewritten (VACUUM): no free page or old cell holds the old text');
    const [checkpoint] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number; log: number; checkpointed: number }[];
    steps.push(
      checkpoint === undefined || checkpoint.busy === 0
        ? 'write-ahead log checkpointed and truncated to 0 bytes'
        : 'write-ahead log not truncated: another process is reading the database; stop every Limbic process using it and run "limbic redact --apply" again',
    );
    return steps;
  }
}
