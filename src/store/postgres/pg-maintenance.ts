/**
 * Maintenance on PostgreSQL (maintenance-store.ts), as sqlite-maintenance.ts keeps it: superseded
 * observations move to their own table (migration 3), ended relations keep their row with
 * `ended_at`, and an entity split moves observations into new entities. Every write is one
 * transaction that rebuilds the keyword rows and queues the vectors of what it touched
 * (syncEntities). Several processes may run these at once: the row that moves is taken by the
 * statement that moves it (DELETE ... RETURNING, SELECT ... FOR UPDATE), so two supersedes of one
 * observation record it once and the second is refused.
 */
import { entityNotFound } from '../../core/errors.js';
import { DEFAULT_OBSERVATION_KIND, asEntityId, type EntityId, statusFromStored, STORED_STATUS, type Relation } from '../../core/types.js';
import type {
  EndRelationOutcome,
  EndedRelation,
  EntityObservations,
  EntityOverview,
  History,
  MaintenanceStore,
  SplitOutcome,
  SplitPlan,
  SupersededObservation,
  Supersession,
  SupersessionResult,
} from '../maintenance-store.js';
import { SPLIT_CONTAINS, SPLIT_PART_OF, checkSplitPlan, notCurrentObservation, supersedesItself } from '../maintenance-rules.js';
import type { PgConnection, Queryable } from './pg-connection.js';
import { syncEntities } from './pg-graph.js';

interface ObservationRow {
  id: number;
  content: string;
  kind: string;
  created_at: number;
}

export class PgMaintenance implements MaintenanceStore {
  constructor(private readonly conn: PgConnection) {}

  async supersede(items: readonly Supersession[], now: number): Promise<SupersessionResult[]> {
    return this.conn.write(async (db) => {
      const results: SupersessionResult[] = [];
      for (const [i, item] of items.entries()) {
        const id = await idOf(db, item.entityName);
        if (id === undefined) throw entityNotFound(item.entityName);
        if (item.supersedes !== undefined && item.contents.includes(item.supersedes)) {
          throw supersedesItself(i);
        }
        // Taken out first: a concurrent supersede of the same observation waits here and then finds nothing.
        const old =
          item.supersedes === undefined
            ? undefined
            : (
                await db.query<ObservationRow>(
                  `DELETE FROM observations WHERE entity_id = $1 AND md5(content) = md5($2) AND content = $2
                   RETURNING id, content, kind, created_at`,
                  [id, item.supersedes],
                )
              ).rows[0];
        if (item.supersedes !== undefined && old === undefined) {
          throw notCurrentObservation(i, item.supersedes, item.entityName);
        }
        const added = await db.query<{ content: string }>(
          `INSERT INTO observations (entity_id, content, kind, created_at)
           SELECT $1, c, $3, $4 FROM unnest($2::text[]) WITH ORDINALITY AS x(c, i) ORDER BY i
           ON CONFLICT (entity_id, md5(content)) DO NOTHING RETURNING content`,
          [id, item.contents, item.kind ?? DEFAULT_OBSERVATION_KIND, now],
        );
        const addedObservations = added.rows.map((r) => r.content);
        if (old !== undefined) {
          await db.query(
            `INSERT INTO superseded_observations (entity_id, content, kind, created_at, superseded_at, superseded_by)
             VALUES ($1, $2, $3, $4, $5, $6)`,
            [id, old.content, old.kind, old.created_at, now, item.contents.join(' | ')],
          );
        }
        if (old !== undefined || addedObservations.length > 0) await touch(db, [id], now);
        results.push(
          old === undefined
            ? { entityName: item.entityName, addedObservations }
            : { entityName: item.entityName, addedObservations, superseded: old.content },
        );
      }
      return results;
    });
  }

  async history(names: readonly string[]): Promise<History> {
    const superseded = new Map<string, SupersededObservation[]>();
    if (names.length === 0) return { superseded, endedRelations: [] };
    const list = [...new Set(names)];
    const [rows, ended] = await Promise.all([
      this.conn.query<{ name: string; content: string; kind: string; created_at: number; superseded_at: number; superseded_by: string }>(
        `SELECT e.name, s.content, s.kind, s.created_at, s.superseded_at, s.superseded_by
           FROM superseded_observations s JOIN entities e ON e.id = s.entity_id
          WHERE e.name = ANY($1) ORDER BY s.id`,
        [list],
      ),
      this.conn.query<{ from_name: string; to_name: string; relation_type: string; ended_at: number }>(
        `SELECT from_name, to_name, relation_type, ended_at FROM relations
          WHERE ended_at IS NOT NULL AND (from_name = ANY($1) OR to_name = ANY($1)) ORDER BY id`,
        [list],
      ),
    ]);
    for (const r of rows) {
      let entries = superseded.get(r.name);
      if (entries === undefined) superseded.set(r.name, (entries = []));
      entries.push({
        content: r.content,
        kind: r.kind,
        createdAt: r.created_at,
        supersededAt: r.superseded_at,
        supersededBy: r.superseded_by,
      });
    }
    const endedRelations: EndedRelation[] = ended.map((r) => ({
      from: r.from_name,
      to: r.to_name,
      relationType: r.relation_type,
      endedAt: r.ended_at,
    }));
    return { superseded, endedRelations };
  }

  async endRelation(relation: Relation, now: number): Promise<EndRelationOutcome> {
    return this.conn.write(async (db) => {
      const row = (
        await db.query<{ id: number; ended_at: number | null }>(
          'SELECT id, ended_at FROM relations WHERE from_name = $1 AND to_name = $2 AND relation_type = $3 FOR UPDATE',
          [relation.from, relation.to, relation.relationType],
        )
      ).rows[0];
      if (row === undefined) return { state: 'missing' } as const;
      if (row.ended_at !== null) return { state: 'already-ended', endedAt: row.ended_at } as const;
      await db.query('UPDATE relations SET ended_at = $1 WHERE id = $2', [now, row.id]);
      return { state: 'ended', endedAt: now } as const;
    });
  }

  async observationsOf(name: string): Promise<EntityObservations | undefined> {
    const [entity] = await this.conn.query<{ id: number; entity_type: string; status: string }>(
      'SELECT id, entity_type, status FROM entities WHERE name = $1',
      [name],
    );
    if (entity === undefined) return undefined;
    const observations = await this.conn.query<{ content: string; kind: string }>(
      'SELECT content, kind FROM observations WHERE entity_id = $1 ORDER BY id',
      [entity.id],
    );
    return { name, entityType: entity.entity_type, status: statusFromStored(entity.status), observations };
  }

  async overview(): Promise<EntityOverview[]> {
    const rows = await this.conn.query<{
      name: string;
      entity_type: string;
      status: string;
      created_at: number;
      n: number;
      s: number;
      last_access: number | null;
      access_count: number | null;
    }>(
      `SELECT e.name, e.entity_type, e.status, e.created_at,
              (SELECT count(*) FROM observations o WHERE o.entity_id = e.id) AS n,
              (SELECT count(*) FROM superseded_observations s WHERE s.entity_id = e.id) AS s,
              a.last_access, a.access_count
         FROM entities e LEFT JOIN entity_access a ON a.entity_id = e.id ORDER BY e.id`,
    );
    return rows.map((r) => ({
      name: r.name,
      entityType: r.entity_type,
      status: statusFromStored(r.status),
      observationCount: r.n,
      supersededCount: r.s,
      createdAt: r.created_at,
      lastAccess: r.last_access ?? undefined,
      accessCount: r.access_count ?? 0,
    }));
  }

  async executeSplit(plan: SplitPlan, now: number): Promise<SplitOutcome> {
    return this.conn.write(async (db) => {
      const originalId = await idOf(db, plan.original);
      if (originalId === undefined) throw entityNotFound(plan.original);
      const parentId = await idOf(db, plan.parent);
      if (parentId === undefined) throw entityNotFound(plan.parent);
      // Locked: another process's supersede or split of the same observations waits for this one.
      const current = new Map(
        (
          await db.query<ObservationRow>(
            'SELECT id, content, kind, created_at FROM observations WHERE entity_id = $1 ORDER BY id FOR UPDATE',
            [originalId],
          )
        ).rows.map((o) => [o.content, o] as const),
      );
      const taken = await db.query<{ name: string }>('SELECT name FROM entities WHERE name = ANY($1)', [plan.children.map((c) => c.name)]);
      const claimed = checkSplitPlan(plan, current, new Set(taken.rows.map((r) => r.name)));
      let moved = 0;
      let relationsCreated = 0;
      const childIds: EntityId[] = [];
      for (const child of plan.children) {
        const inserted = await db.query<{ id: number }>(
          `INSERT INTO entities (name, entity_type, status, created_at, updated_at) VALUES ($1, $2, '${STORED_STATUS.active}', $3, $3) RETURNING id`,
          [child.name, child.entityType, now],
        );
        const id = asEntityId(inserted.rows[0]?.id ?? 0);
        childIds.push(id);
        // Kind and creation time travel with the observation: it is the same fact, filed elsewhere.
        const obs = [...new Set(child.observations)].map((c) => current.get(c)).filter((o) => o !== undefined);
        const added = await db.query(
          `INSERT INTO observations (entity_id, content, kind, created_at)
           SELECT $1, c, k, t FROM unnest($2::text[], $3::text[], $4::bigint[]) WITH ORDINALITY AS x(c, k, t, i) ORDER BY i
           ON CONFLICT (entity_id, md5(content)) DO NOTHING`,
          [id, obs.map((o) => o.content), obs.map((o) => o.kind), obs.map((o) => o.created_at)],
        );
        moved += added.rowCount ?? 0;
        const links = await db.query(
          `INSERT INTO relations (from_name, to_name, relation_type, created_at)
           VALUES ($1, $2, $3, $5), ($2, $1, $4, $5)
           ON CONFLICT (md5(from_name), md5(to_name), md5(relation_type)) DO UPDATE SET ended_at = NULL WHERE relations.ended_at IS NOT NULL`,
          [plan.parent, child.name, SPLIT_CONTAINS, SPLIT_PART_OF, now],
        );
        relationsCreated += links.rowCount ?? 0;
      }
      await db.query('DELETE FROM observations WHERE entity_id = $1 AND id = ANY($2)', [
        originalId,
        [...claimed.keys()].map((c) => current.get(c)?.id),
      ]);
      const emptied = current.size === claimed.size && plan.summary !== undefined;
      if (emptied)
        await db.query(`INSERT INTO observations (entity_id, content, kind, created_at) VALUES ($1, $2, 'generic', $3)`, [
          originalId,
          plan.summary,
          now,
        ]);
      await touch(db, parentId === originalId ? [originalId] : [originalId, parentId], now);
      await syncEntities(db, childIds);
      return {
        newEntities: plan.children.map((c) => c.name),
        movedObservations: moved,
        relationsCreated,
        originalObservationsRemaining: current.size - claimed.size,
        ...(emptied && plan.summary !== undefined ? { summaryAdded: plan.summary } : {}),
      };
    });
  }
}

async function idOf(db: Queryable, name: string): Promise<EntityId | undefined> {
  const row = (await db.query<{ id: number }>('SELECT id FROM entities WHERE name = $1', [name])).rows[0];
  return row === undefined ? undefined : asEntityId(row.id);
}

/** Entities whose text changed: new updated_at, fresh keyword rows, vector queued. */
async function touch(db: Queryable, ids: readonly EntityId[], now: number): Promise<void> {
  await db.query('UPDATE entities SET updated_at = $1 WHERE id = ANY($2)', [now, ids]);
  await syncEntities(db, ids);
}
