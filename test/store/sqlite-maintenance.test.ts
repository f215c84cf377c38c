/**
 * The SQLite maintenance store beyond the MCP tests: schema 7 applied to a file written by schema 6
 * (data kept), an ended relation seen by another connection's ranking signals at once, and a failed
 * supersede or split leaving the file as it was.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { asEntityId } from '../../src/core/types.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir, keywordExpr } from '../helpers/fixtures.js';
import { expectMaintenanceOnUpgradedFacts } from '../helpers/maintenance-upgrade.js';

const T0 = Date.UTC(2026, 10, 23);

describe('SqliteMaintenance', () => {
  it('migrates a schema-6 file to 7 keeping its graph, then supersedes and ends relations in it', async () => {
    const tmp = tempDir();
    const path = join(tmp.dir, 'memory.db');
    const made = openSqliteStore({ path, vectors: false });
    await made.graph.createEntities([{ name: 'A', entityType: 't', observations: ['old fact', 'other'] }], T0);
    await made.graph.createRelations([{ from: 'A', to: 'B', relationType: 'knows' }], T0);
    await made.close();
    // Back to what schema 6 wrote: no history table, no ended_at (nor the shadow log's later columns and index).
    const db = new Database(path);
    db.exec('DROP TABLE superseded_observations; ALTER TABLE relations DROP COLUMN ended_at;');
    db.exec(
      'ALTER TABLE tuning_events DROP COLUMN reflection_boost; ALTER TABLE tuning_events DROP COLUMN reflections; ALTER TABLE tuning_candidates DROP COLUMN boosted; DROP INDEX IF EXISTS tuning_candidates_entity;',
    );
    db.exec('ALTER TABLE keyword_log DROP COLUMN nonce; ALTER TABLE vector_log DROP COLUMN nonce;');
    db.exec('ALTER TABLE relations DROP COLUMN context;');
    db.exec(
      'DROP INDEX embedding_queue_order; DROP INDEX embedding_queue_claims; ALTER TABLE embedding_queue DROP COLUMN queued_at; ALTER TABLE embedding_queue DROP COLUMN claimed_until; ALTER TABLE embedding_queue DROP COLUMN claimed_by;',
    ); // schema 13's
    db.exec('DROP INDEX entities_project; ALTER TABLE entities DROP COLUMN project;'); // schema 15's
    db.exec('DROP TABLE refind_pairs; ALTER TABLE tuning_candidates DROP COLUMN refind;'); // schema 17's
    db.pragma('user_version = 6');
    db.close();

    const store = openSqliteStore({ path, vectors: false });
    try {
      const check = new Database(path, { readonly: true });
      expect((check.pragma('table_info(relations)') as { name: string }[]).map((c) => c.name)).toContain('ended_at');
      check.close();
      expect((await store.graph.openNodes(['A'])).entities[0]?.observations).toEqual(['old fact', 'other']);
      await expectMaintenanceOnUpgradedFacts(store.maintenance, T0);
      // The keyword rows were rebuilt from the current observations.
      expect(await store.keywords.search(keywordExpr('old'), 10)).toEqual([]);
    } finally {
      await store.close();
      tmp.cleanup();
    }
  });

  it('migrates a schema-11 file (issue 25): its relations have no context, its kinds become keywords', async () => {
    const tmp = tempDir();
    const path = join(tmp.dir, 'memory.db');
    const made = openSqliteStore({ path, vectors: false, keywordTopK: false });
    await made.graph.createEntities([{ name: 'A', entityType: 't', observations: ['likes tea'] }], T0);
    await made.graph.addObservations([{ entityName: 'A', contents: ['dark roast'], kind: 'preference' }], T0);
    await made.graph.createRelations([{ from: 'A', to: 'B', relationType: 'knows' }], T0);
    await made.close();
    // Back to what schema 11 wrote: no context column, keyword rows without kinds.
    const db = new Database(path);
    db.exec('ALTER TABLE relations DROP COLUMN context;');
    db.exec(
      "DELETE FROM entity_fts WHERE rowid = 1; INSERT INTO entity_fts (rowid, name, entity_type, obs_text) VALUES (1, 'A', 't', 'likes tea | dark roast');",
    );
    db.exec(
      'DROP INDEX embedding_queue_order; DROP INDEX embedding_queue_claims; ALTER TABLE embedding_queue DROP COLUMN queued_at; ALTER TABLE embedding_queue DROP COLUMN claimed_until; ALTER TABLE embedding_queue DROP COLUMN claimed_by;',
    ); // schema 13's
    db.exec('DROP INDEX entities_project; ALTER TABLE entities DROP COLUMN project;'); // schema 15's
    db.exec('DROP TABLE refind_pairs; ALTER TABLE tuning_candidates DROP COLUMN refind;'); // schema 17's
    db.pragma('user_version = 11');
    db.close();

    const store = openSqliteStore({ path, vectors: false, keywordTopK: false });
    try {
      expect((await store.graph.readGraph()).relations).toEqual([{ from: 'A', to: 'B', relationType: 'knows' }]);
      expect((await store.keywords.search(keywordExpr('"preference"'), 10)).map((h) => h.id)).toEqual([asEntityId(1)]);
      const check = new Database(path, { readonly: true });
      expect(check.prepare("SELECT 1 FROM sqlite_master WHERE name = 'keyword_resync'").get()).toBeUndefined();
      expect(check.prepare('SELECT count(*) FROM embedding_queue').pluck().get()).toBe(1); // queued when made, not again
      check.close();
    } finally {
      await store.close();
      tmp.cleanup();
    }
  });

  it('another connection ranks without an ended relation at its next read', async () => {
    const tmp = tempDir();
    const path = join(tmp.dir, 'memory.db');
    const a = openSqliteStore({ path, vectors: false });
    const b = openSqliteStore({ path, vectors: false });
    try {
      await a.graph.createEntities(
        [
          { name: 'X', entityType: 't', observations: [] },
          { name: 'Y', entityType: 't', observations: [] },
        ],
        T0,
      );
      await a.graph.createRelations([{ from: 'X', to: 'Y', relationType: 'r' }], T0);
      const [x, y] = [asEntityId(1), asEntityId(2)];
      expect((await b.usage.signals([x, y])).degree.get(x)).toBe(1);
      expect(await b.graph.edgesTouching([x])).toEqual([{ from: x, to: y }]);
      await a.maintenance.endRelation({ from: 'X', to: 'Y', relationType: 'r' }, T0 + 1);
      expect((await b.usage.signals([x, y])).degree.get(x)).toBe(0);
      expect(await b.graph.edgesTouching([x])).toEqual([]);
      // Still in the graph, with when it ended (issue 33: the tools list it only when asked).
      expect((await b.graph.readGraph()).relations).toEqual([
        { from: 'X', to: 'Y', relationType: 'r', ended_at: new Date(T0 + 1).toISOString() },
      ]);
    } finally {
      await a.close();
      await b.close();
      tmp.cleanup();
    }
  });

  it('a refused supersede or split changes nothing', async () => {
    const tmp = tempDir();
    const store = openSqliteStore({ path: join(tmp.dir, 'memory.db'), vectors: false });
    try {
      await store.graph.createEntities([{ name: 'A', entityType: 't', observations: ['one', 'two'] }], T0);
      await expect(
        store.maintenance.supersede(
          [
            { entityName: 'A', contents: ['three'] },
            { entityName: 'A', contents: ['four'], supersedes: 'missing' },
          ],
          T0,
        ),
      ).rejects.toThrow(/observations\[1\]\.supersedes/);
      await expect(
        store.maintenance.executeSplit(
          {
            original: 'A',
            parent: 'A',
            children: [
              { name: 'A1', entityType: 't', observations: ['one'] },
              { name: 'A', entityType: 't', observations: ['two'] },
            ],
          },
          T0,
        ),
      ).rejects.toThrow(/exists already/);
      expect((await store.graph.readGraph()).entities).toEqual([{ name: 'A', entityType: 't', observations: ['one', 'two'] }]);
      expect((await store.stats()).entities).toBe(1);
    } finally {
      await store.close();
      tmp.cleanup();
    }
  });
});
