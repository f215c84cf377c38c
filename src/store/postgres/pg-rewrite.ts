/**
 * Stored text rewritten in place on PostgreSQL (rewrite-store.ts), for `limbic redact --apply`, as
 * on SQLite (sqlite-rewrite.ts): renamed entities kept apart as "Name (2)", relation ends following
 * their entity, duplicates made by the rewrite dropped; then the keyword and substring rows of the
 * entities touched are rebuilt (entity_keywords, and keyword_postings by its triggers).
 *
 * The purge: an UPDATE leaves the old row version in the table as a dead tuple until VACUUM, and a
 * plain VACUUM only marks its space reusable; VACUUM FULL writes each table touched anew, so no old
 * version of a row is left in the table's files. What PostgreSQL itself keeps beyond the tables,
 * Limbic cannot reach: the write-ahead log until its segments are recycled after a checkpoint
 * (a CHECKPOINT is asked for; it needs the pg_checkpoint role), WAL archives, replicas and backups.
 */
import type { Queryable } from './pg-connection.js';
import { decodeText, type PgConnection } from './pg-connection.js';
import { syncEntities } from './pg-graph.js';
import { asEntityId } from '../../core/types.js';
import type { TextRewriteOutcome, TextRewriteStore } from '../rewrite-store.js';

/** The tables a rewrite changes, directly or through the keyword rows' triggers. */
const TOUCHED_TABLES = [
  'entities',
  'observations',
  'superseded_observations',
  'relations',
  'entity_keywords',
  'keyword_postings',
  'keyword_totals',
  'embedding_queue',
] as const;

async function rows<R extends Record<string, unknown>>(db: Queryable, sql: string): Promise<R[]> {
  return (await db.query<R>(sql)).rows;
}

export class PgRewrite implements TextRewriteStore {
  constructor(private readonly conn: PgConnection) {}

  async rewriteTexts(changes: ReadonlyMap<string, string>, now: number): Promise<TextRewriteOutcome> {
    const change = (text: string): string | undefined => changes.get(decodeText(text));
    return this.conn.write(async (db) => {
      const touched = new Set<number>();
      const counts = { names: 0, types: 0, observations: 0, observationsMerged: 0, superseded: 0, relations: 0, relationsMerged: 0 };
      const renamedApart: string[] = [];

      const entities = await rows<{ id: number; name: string; entity_type: string }>(
        db,
        'SELECT id, name, entity_type FROM entities ORDER BY id',
      );
      const taken = new Set(entities.map((e) => decodeText(e.name)));
      const renames = new Map<string, string>();
      // In the order planned: a name is taken only once the entity holding it was renamed away.
      const planned: { id: number; name: string; type: string }[] = [];
      for (const e of entities) {
        const [current, wanted, type] = [decodeText(e.name), change(e.name), change(e.entity_type)];
        if (wanted === undefined && type === undefined) continue;
        let name = current;
        if (wanted !== undefined) {
          taken.delete(current);
          name = wanted;
          for (let k = 2; taken.has(name); k++) name = `${wanted} (${k})`;
          taken.add(name);
          renames.set(current, name);
          if (name !== wanted) renamedApart.push(name);
          counts.names++;
        }
        if (type !== undefined) counts.types++;
        planned.push({ id: e.id, name, type: type ?? decodeText(e.entity_type) });
        touched.add(e.id);
      }
      for (const p of planned)
        await db.query('UPDATE entities SET name = $1, entity_type = $2, updated_at = $3 WHERE id = $4', [p.name, p.type, now, p.id]);

      for (const o of await rows<{ id: string; entity_id: number; content: string }>(
        db,
        'SELECT id, entity_id, content FROM observations ORDER BY id',
      )) {
        const next = change(o.content);
        if (next === undefined) continue;
        const clash = await db.query('SELECT 1 FROM observations WHERE entity_id = $1 AND md5(content) = md5($2) AND id <> $3', [
          o.entity_id,
          next,
          o.id,
        ]);
        if ((clash.rowCount ?? 0) > 0) {
          await db.query('DELETE FROM observations WHERE id = $1', [o.id]);
          counts.observationsMerged++;
        } else {
          await db.query('UPDATE observations SET content = $1 WHERE id = $2', [next, o.id]);
          counts.observations++;
        }
        touched.add(o.entity_id);
      }

      for (const s of await rows<{ id: string; content: string; superseded_by: string }>(
        db,
        'SELECT id, content, superseded_by FROM superseded_observations',
      )) {
        const [content, by] = [change(s.content), change(s.superseded_by)];
        if (content === undefined && by === undefined) continue;
        await db.query('UPDATE superseded_observations SET content = $1, superseded_by = $2 WHERE id = $3', [
          content ?? decodeText(s.content),
          by ?? decodeText(s.superseded_by),
          s.id,
        ]);
        counts.superseded++;
      }

      const end = (name: string): string => renames.get(decodeText(name)) ?? change(name) ?? decodeText(name);
      const endpoints = new Set<string>();
      type RelationRow = { id: string; from_name: string; to_name: string; relation_type: string; context: string | null };
      for (const r of await rows<RelationRow>(db, 'SELECT id, from_name, to_name, relation_type, context FROM relations ORDER BY id')) {
        const next = [end(r.from_name), end(r.to_name), change(r.relation_type) ?? decodeText(r.relation_type)] as const;
        const before = [decodeText(r.from_name), decodeText(r.to_name), decodeText(r.relation_type)];
        const context = r.context === null ? null : (change(r.context) ?? decodeText(r.context));
        if (
          next[0] === before[0] &&
          next[1] === before[1] &&
          next[2] === before[2] &&
          context === (r.context === null ? null : decodeText(r.context))
        )
          continue;
        const clash = await db.query(
          'SELECT 1 FROM relations WHERE md5(from_name) = md5($1) AND md5(to_name) = md5($2) AND md5(relation_type) = md5($3) AND id <> $4',
          [...next, r.id],
        );
        if ((clash.rowCount ?? 0) > 0) {
          await db.query('DELETE FROM relations WHERE id = $1', [r.id]);
          counts.relationsMerged++;
        } else {
          await db.query('UPDATE relations SET from_name = $1, to_name = $2, relation_type = $3, context = $4 WHERE id = $5', [
            ...next,
            context,
            r.id,
          ]);
          counts.relations++;
        }
        endpoints.add(next[0]).add(next[1]);
      }
      if (endpoints.size > 0) {
        const ids = await db.query<{ id: number }>('SELECT id FROM entities WHERE name = ANY($1)', [[...endpoints]]);
        for (const { id } of ids.rows) touched.add(id);
      }
      await syncEntities(db, [...touched].map(asEntityId));
      return { entities: touched.size, ...counts, renamedApart };
    });
  }

  async purge(): Promise<string[]> {
    const steps: string[] = [];
    for (const table of TOUCHED_TABLES) await this.conn.query(`VACUUM (FULL, ANALYZE) ${table}`);
    steps.push(`tables written anew (VACUUM FULL): ${TOUCHED_TABLES.join(', ')}; no dead row version of the old text is left in them`);
    try {
      await this.conn.query('CHECKPOINT');
      steps.push('checkpoint done: the write-ahead log segments holding the old text are recycled as PostgreSQL reuses them');
    } catch (error) {
      steps.push(
        `no checkpoint (${(error as Error).message}): PostgreSQL keeps the old text in its write-ahead log until its next checkpoint recycles the segments`,
      );
    }
    steps.push('not reachable from Limbic: WAL archives, replicas and backups taken before this still hold the old text');
    return steps;
  }
}
