/**
 * Maintenance on SQLite (maintenance-store.ts): superseded observations move to their own table
 * (schema 7), ended relations keep their row with `ended_at`, and an entity split moves
 * observations into new entities. Every write is one transaction and rebuilds the keyword rows and
 * embedding queue of what it touched (SqliteGraph.syncEntity), so children get vectors like any
 * entity (the seed system left them without one).
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
import { json, type SqliteConnection } from './sqlite-connection.js';
import type { SqliteGraph } from './sqlite-graph.js';

export class SqliteMaintenance implements MaintenanceStore {
  constructor(
    private readonly conn: SqliteConnection,
    private readonly graph: SqliteGraph,
  ) {}

  async supersede(items: readonly Supersession[], now: number): Promise<SupersessionResult[]> {
    return this.conn.write(() => {
      const results: SupersessionResult[] = [];
      for (const [i, item] of items.entries()) {
        const id = this.idOf(item.entityName);
        if (id === undefined) throw entityNotFound(item.entityName);
        const addedObservations: string[] = [];
        const insert = this.conn.stmt(
          'INSERT INTO observations (entity_id, content, kind, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
        );
        const add = (): void => {
          for (const content of item.contents) {
            if (insert.run(id, content, item.kind ?? DEFAULT_OBSERVATION_KIND, now).changes > 0) addedObservations.push(content);
          }
        };
        if (item.supersedes === undefined) {
          add();
          if (addedObservations.length > 0) this.touch(id, now);
          results.push({ entityName: item.entityName, addedObservations });
          continue;
        }
        if (item.contents.includes(item.supersedes)) {
          throw supersedesItself(i);
        }
        const old = this.conn
          .stmt<[number, string], { id: number; content: string; kind: string; created_at: number }>(
            'SELECT id, content, kind, created_at FROM observations WHERE entity_id = ? AND content = ?',
          )
          .get(id, item.supersedes);
        if (old === undefined) {
          throw notCurrentObservation(i, item.supersedes, item.entityName);
        }
        add();
        this.conn
          .stmt(
            'INSERT INTO superseded_observations (entity_id, content, kind, created_at, superseded_at, superseded_by) VALUES (?, ?, ?, ?, ?, ?)',
          )
          .run(id, old.content, old.kind, old.created_at, now, item.contents.join(' | '));
        this.conn.stmt('DELETE FROM observations WHERE id = ?').run(old.id);
        this.touch(id, now);
        results.push({ entityName: item.entityName, addedObservations, superseded: old.content });
      }
      return results;
    });
  }

  async history(names: readonly string[]): Promise<History> {
    const superseded = new Map<string, SupersededObservation[]>();
    if (names.length === 0) return { superseded, endedRelations: [] };
    const list = json(names);
    for (const r of this.conn
      .stmt<[string], { name: string; content: string; kind: string; created_at: number; superseded_at: number; superseded_by: string }>(
        `SELECT e.name, s.content, s.kind, s.created_at, s.superseded_at, s.superseded_by
           FROM superseded_observations s JOIN entities e ON e.id = s.entity_id
          WHERE e.name IN (SELECT value FROM json_each(?)) ORDER BY s.id`,
      )
      .iterate(list)) {
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
    const endedRelations: EndedRelation[] = this.conn
      .stmt<[string, string], { from_name: string; to_name: string; relation_type: string; ended_at: number }>(
        `SELECT from_name, to_name, relation_type, ended_at FROM relations
          WHERE ended_at IS NOT NULL
            AND (from_name IN (SELECT value FROM json_each(?)) OR to_name IN (SELECT value FROM json_each(?))) ORDER BY id`,
      )
      .all(list, list)
      .map((r) => ({ from: r.from_name, to: r.to_name, relationType: r.relation_type, endedAt: r.ended_at }));
    return { superseded, endedRelations };
  }

  async endRelation(relation: Relation, now: number): Promise<EndRelationOutcome> {
    return this.conn.write(() => {
      const row = this.conn
        .stmt<[string, string, string], { id: number; ended_at: number | null }>(
          'SELECT id, ended_at FROM relations WHERE from_name = ? AND to_name = ? AND relation_type = ?',
        )
        .get(relation.from, relation.to, relation.relationType);
      if (row === undefined) return { state: 'missing' } as const;
      if (row.ended_at !== null) return { state: 'already-ended', endedAt: row.ended_at } as const;
      this.conn.stmt('UPDATE relations SET ended_at = ? WHERE id = ?').run(now, row.id);
      return { state: 'ended', endedAt: now } as const;
    });
  }

  async observationsOf(name: string): Promise<EntityObservations | undefined> {
    const entity = this.conn
      .stmt<[string], { id: number; entity_type: string; status: string }>('SELECT id, entity_type, status FROM entities WHERE name = ?')
      .get(name);
    if (entity === undefined) return undefined;
    const observations = this.conn
      .stmt<[number], { content: string; kind: string }>('SELECT content, kind FROM observations WHERE entity_id = ? ORDER BY id')
      .all(entity.id);
    return { name, entityType: entity.entity_type, status: statusFromStored(entity.status), observations };
  }

  async overview(): Promise<EntityOverview[]> {
    return this.conn
      .stmt<
        [],
        {
          name: string;
          entity_type: string;
          status: string;
          created_at: number;
          n: number;
          s: number;
          last_access: number | null;
          access_count: number | null;
        }
      >(
        `SELECT e.name, e.entity_type, e.status, e.created_at,
                (SELECT count(*) FROM observations o WHERE o.entity_id = e.id) AS n,
                (SELECT count(*) FROM superseded_observations s WHERE s.entity_id = e.id) AS s,
                a.last_access, a.access_count
           FROM entities e LEFT JOIN entity_access a ON a.entity_id = e.id ORDER BY e.id`,
      )
      .all()
      .map((r) => ({
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
    return this.conn.write(() => {
      const originalId = this.idOf(plan.original);
      if (originalId === undefined) throw entityNotFound(plan.original);
      const parentId = this.idOf(plan.parent);
      if (parentId === undefined) throw entityNotFound(plan.parent);
      const current = new Map(
        this.conn
          .stmt<[number], { id: number; content: string; kind: string; created_at: number }>(
            'SELECT id, content, kind, created_at FROM observations WHERE entity_id = ? ORDER BY id',
          )
          .all(originalId)
          .map((o) => [o.content, o] as const),
      );
      const existing = new Set(plan.children.map((c) => c.name).filter((name) => this.idOf(name) !== undefined));
      const claimed = checkSplitPlan(plan, current, existing);
      const insertEntity = this.conn.stmt(
        'INSERT INTO entities (name, entity_type, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
      );
      const insertObservation = this.conn.stmt(
        'INSERT INTO observations (entity_id, content, kind, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
      );
      const insertRelation = this.conn.stmt(
        'INSERT INTO relations (from_name, to_name, relation_type, created_at) VALUES (?, ?, ?, ?) ON CONFLICT(from_name, to_name, relation_type) DO UPDATE SET ended_at = NULL WHERE ended_at IS NOT NULL',
      );
      let moved = 0;
      let relationsCreated = 0;
      for (const child of plan.children) {
        const id = asEntityId(Number(insertEntity.run(child.name, child.entityType, STORED_STATUS.active, now, now).lastInsertRowid));
        this.conn.stmt("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'entity_count'").run();
        for (const content of child.observations) {
          const o = current.get(content);
          // Kind and creation time travel with the observation: it is the same fact, filed elsewhere.
          if (o !== undefined && insertObservation.run(id, o.content, o.kind, o.created_at).changes > 0) moved++;
        }
        relationsCreated += insertRelation.run(plan.parent, child.name, SPLIT_CONTAINS, now).changes;
        relationsCreated += insertRelation.run(child.name, plan.parent, SPLIT_PART_OF, now).changes;
        this.graph.syncEntity(id);
      }
      this.conn
        .stmt('DELETE FROM observations WHERE entity_id = ? AND content IN (SELECT value FROM json_each(?))')
        .run(originalId, json([...claimed.keys()]));
      const emptied = current.size === claimed.size && plan.summary !== undefined;
      if (emptied) insertObservation.run(originalId, plan.summary, 'generic', now);
      this.touch(originalId, now);
      if (parentId !== originalId) this.touch(parentId, now);
      return {
        newEntities: plan.children.map((c) => c.name),
        movedObservations: moved,
        relationsCreated,
        originalObservationsRemaining: current.size - claimed.size,
        ...(emptied && plan.summary !== undefined ? { summaryAdded: plan.summary } : {}),
      };
    });
  }

  private idOf(name: string): EntityId | undefined {
    const row = this.conn.stmt<[string], { id: number }>('SELECT id FROM entities WHERE name = ?').get(name);
    return row === undefined ? undefined : asEntityId(row.id);
  }

  private touch(id: EntityId, now: number): void {
    this.conn.stmt('UPDATE entities SET updated_at = ? WHERE id = ?').run(now, id);
    this.graph.syncEntity(id);
  }
}
