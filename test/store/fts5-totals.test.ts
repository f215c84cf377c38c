/**
 * FTS5's corpus totals on SQLite (src/store/sqlite/fts5/fts5-totals.ts): a keyword row rewritten
 * or deleted must leave bm25()'s row count and average length as they are for the rows the table
 * holds, so that a memory that was edited scores as the same memory written at once (and as
 * PostgreSQL, whose totals are exact). A contentless_delete table never took deleted rows off its
 * totals; a database written that way is recounted once when it is opened (migration 16).
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { keywordExpr, tempDir } from '../helpers/fixtures.js';

const MEMORY = [
  { name: 'Cafe Lisbon', entityType: 'place', observations: ['Serves cafe con leche', 'Open on Sundays'] },
  { name: 'Orchard', entityType: 'farm', observations: ['Grows apples and pears'] },
  { name: 'Baker', entityType: 'person', observations: ['Bakes apple pies'] },
  { name: 'River', entityType: 'place', observations: ['Blue river stones', 'Cold water'] },
  { name: 'Gone', entityType: 'note', observations: ['A note to be deleted with many many words in it'] },
];
const QUERIES = ['cafe', 'apples OR pears', '"apple pies"', 'river', 'stones OR cafe OR orchard'];

let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

type Store = ReturnType<typeof openSqliteStore>;

async function scores(store: Store): Promise<string[]> {
  const rows: string[] = [];
  for (const q of QUERIES) {
    const hits = await store.keywords.search(keywordExpr(q), 10);
    rows.push(`${q}: ${hits.map((h) => `${h.id} ${h.bm25.toFixed(9)}`).join(', ')}`);
  }
  return rows;
}

/** The memory after edits, and the same memory written at once: the edits touch every entity. */
async function editAndWriteFresh(dir: string): Promise<{ edited: Store; fresh: Store }> {
  const edited = openSqliteStore({ path: join(dir, 'edited.db'), keywordTopK: false, vectors: false });
  await edited.graph.createEntities(MEMORY, 0);
  await edited.graph.addObservations([{ entityName: 'Orchard', contents: ['Picked in the fall'], kind: 'decision' }], 0);
  await edited.graph.addObservations(
    MEMORY.filter((e) => e.name !== 'Gone').map((e) => ({ entityName: e.name, contents: ['Seen again'] })),
    0,
  );
  await edited.graph.deleteObservations([{ entityName: 'River', observations: ['Cold water'] }], 0);
  await edited.graph.deleteEntities(['Gone']);
  const fresh = openSqliteStore({ path: join(dir, 'fresh.db'), keywordTopK: false, vectors: false });
  await fresh.graph.createEntities(
    MEMORY.filter((e) => e.name !== 'Gone').map((e) => ({
      ...e,
      observations: [...e.observations.filter((o) => o !== 'Cold water'), ...(e.name === 'Orchard' ? [] : ['Seen again'])],
    })),
    0,
  );
  await fresh.graph.addObservations([{ entityName: 'Orchard', contents: ['Picked in the fall'], kind: 'decision' }], 0);
  await fresh.graph.addObservations([{ entityName: 'Orchard', contents: ['Seen again'] }], 0);
  // Ids differ by the deleted entity's place only if it came first; it came last.
  return { edited, fresh };
}

describe('FTS5 totals on SQLite', () => {
  it('scores an edited memory as the same memory written at once (rewrites and deletes leave no trace in BM25)', async () => {
    const tmp = tempDir();
    cleanup = tmp.cleanup;
    const { edited, fresh } = await editAndWriteFresh(tmp.dir);
    try {
      const want = await scores(fresh);
      expect(want.every((row) => row.includes(' -'))).toBe(true); // every query finds something
      expect(await scores(edited)).toEqual(want);
    } finally {
      await Promise.all([edited.close(), fresh.close()]);
    }
  });

  it('recounts the totals of a database whose deletes were never taken off (opened by this version)', async () => {
    const tmp = tempDir();
    cleanup = tmp.cleanup;
    const { edited, fresh } = await editAndWriteFresh(tmp.dir);
    const want = await scores(fresh);
    await Promise.all([edited.close(), fresh.close()]);
    // What earlier versions left: every rewrite counted again. A contentless delete and insert of a
    // row, as they did, outside Limbic's bookkeeping, then the schema version before the recount.
    const raw = new Database(join(tmp.dir, 'edited.db'));
    raw.exec(`DELETE FROM entity_fts WHERE rowid = 1;
      INSERT INTO entity_fts (rowid, name, entity_type, obs_text) VALUES (1, 'Cafe Lisbon', 'place', 'Serves cafe con leche | Open on Sundays | Seen again');`);
    // Schema 16 recounts; what schema 17 added goes too, as that version had none of it.
    raw.exec('DROP TABLE refind_pairs; ALTER TABLE tuning_candidates DROP COLUMN refind;');
    raw.pragma('user_version = 15');
    raw.close();
    const drifted = openSqliteStore({ path: join(tmp.dir, 'edited.db'), keywordTopK: false, vectors: false });
    try {
      expect(await scores(drifted)).toEqual(want);
    } finally {
      await drifted.close();
    }
  });
});
