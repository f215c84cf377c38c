/**
 * A memory written before names were compared in NFC (issue 26) keeps working, through a real MCP
 * client, on SQLite and on PostgreSQL: decomposed names, relation ends and observations stored as
 * a client sent them, and the substring index as it was (lower-cased, not folded). The upgrade
 * (SQLite schema 12, PostgreSQL 9) brings them to NFC; two entities that differ only in form keep
 * apart as "Niño" and "Niño (2)".
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { openPgStore } from '../../src/store/postgres/pg-store.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { harness, tempDir, type Harness } from '../helpers/fixtures.js';
import { startPgServer } from '../helpers/pg-server.js';

const pgServer = await startPgServer();
afterAll(async () => {
  if ('url' in pgServer) await pgServer.stop();
});

const NFD = 'Cafe\u0301';
const NFC = 'Café';
const FILLERS = 1_500;

/** What an older Limbic stored: text exactly as sent, in whatever form. */
async function writeOldMemory(store: Store): Promise<void> {
  await store.graph.createEntities(
    [
      { name: NFD, entityType: 'place', observations: ['cre\u0300me bru\u0302le\u0301e', 'crème brûlée'] },
      { name: 'Ana', entityType: 'person', observations: ['Lives in Ma\u0301laga'] },
      { name: 'Nin\u0303o', entityType: 'person', observations: ['decomposed'] },
      { name: 'Niño', entityType: 'person', observations: ['composed'] },
      // More than one batch of the upgrade's substring index.
      ...Array.from({ length: FILLERS }, (_, i) => ({
        name: `Filler ${i}`,
        entityType: 'note',
        observations: [`re\u0301sume\u0301 ${i}`],
      })),
    ],
    1,
  );
  await store.graph.createRelations(
    [
      { from: 'Ana', to: NFD, relationType: 'visits' },
      { from: 'Ana', to: NFC, relationType: 'visits' },
      { from: 'Ana', to: 'Nin\u0303o', relationType: 'knows' },
    ],
    1,
  );
  await store.close();
}

interface Graph {
  entities: { name: string; observations: string[] }[];
  relations: { from: string; to: string; relationType: string }[];
}

async function checkUpgraded(h: Harness): Promise<void> {
  const graph = await h.ok<Graph>('read_graph');
  expect(graph.entities).toHaveLength(4 + FILLERS);
  expect(graph.entities.slice(0, 4).map((e) => [e.name, e.observations])).toEqual([
    [NFC, ['crème brûlée']],
    ['Ana', ['Lives in Málaga']],
    ['Niño (2)', ['decomposed']],
    ['Niño', ['composed']],
  ]);
  expect(graph.relations).toEqual([
    { from: 'Ana', to: NFC, relationType: 'visits' },
    { from: 'Ana', to: 'Niño (2)', relationType: 'knows' },
  ]);
  for (const name of [NFC, NFD]) expect((await h.ok<Graph>('open_nodes', { names: [name] })).entities.map((e) => e.name)).toEqual([NFC]);
  expect((await h.ok<Graph>('open_nodes', { names: ['Niño (2)'] })).entities[0]?.observations).toEqual(['decomposed']);
  expect(await h.ok('create_entities', { entities: [{ name: NFC, entityType: 'place', observations: [] }] })).toEqual({ entities: [] });
  expect(
    await h.ok('add_observations', { observations: [{ entityName: NFD, contents: ['cre\u0300me bru\u0302le\u0301e', 'new'] }] }),
  ).toEqual({
    results: [{ entityName: NFC, addedObservations: ['new'] }],
  });
  await h.ok('delete_observations', { deletions: [{ entityName: NFD, observations: ['cre\u0300me bru\u0302le\u0301e'] }] });
  expect((await h.ok<Graph>('open_nodes', { names: [NFC] })).entities[0]?.observations).toEqual(['new']);
  // The substring index was made again, folded: with whitespace (SQL on SQLite) and without.
  const found = async (query: string) => (await h.ok<Graph>('search_nodes', { query })).entities.map((e) => e.name);
  expect(await found('in malaga')).toEqual(['Ana']);
  expect(await found('malaga')).toEqual(['Ana']);
  expect(await found('cafe')).toEqual([NFC]);
  expect(await found('nino')).toEqual(['Niño', 'Niño (2)']); // the exact name first
  expect(await found('resume 1499')).toEqual(['Filler 1499']);
  expect(await found('RÉSUMÉ 1499')).toEqual(['Filler 1499']);
}

describe('a memory stored before NFC keeps working (issue 26)', () => {
  it('on SQLite', async () => {
    const tmp = tempDir();
    const path = join(tmp.dir, 'memory.db');
    try {
      await writeOldMemory(openSqliteStore({ path, vectors: false }));
      // The substring index as schema 13 wrote it (before NFC), and that schema's number.
      const db = new Database(path);
      const rows = db
        .prepare<[], { id: number; name: string; entity_type: string; obs: string }>(
          "SELECT e.id, e.name, e.entity_type, coalesce((SELECT group_concat(content, ' | ' ORDER BY id) FROM observations WHERE entity_id = e.id), '') AS obs FROM entities e",
        )
        .all();
      db.exec("INSERT INTO entity_trigram (entity_trigram) VALUES ('delete-all')");
      const insert = db.prepare('INSERT INTO entity_trigram (rowid, name, entity_type, obs_text) VALUES (?, ?, ?, ?)');
      for (const r of rows) insert.run(r.id, r.name, r.entity_type, r.obs);
      db.exec('DROP INDEX entities_project; ALTER TABLE entities DROP COLUMN project;'); // schema 15's
      db.exec('DROP TABLE refind_pairs; ALTER TABLE tuning_candidates DROP COLUMN refind;'); // schema 17's
      db.pragma('user_version = 13');
      db.close();
      const h = await harness({ path });
      try {
        await checkUpgraded(h);
      } finally {
        await h.close();
      }
    } finally {
      tmp.cleanup();
    }
  });

  it.skipIf(!('url' in pgServer))(`on PostgreSQL${'unavailable' in pgServer ? ` (skipped: ${pgServer.unavailable})` : ''}`, async () => {
    if (!('url' in pgServer)) return;
    const url = await pgServer.createDatabase();
    await writeOldMemory(openPgStore({ url, poolSize: 2 }));
    // The substring columns as schema 9 wrote them (lower-cased only), and that schema's number.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const rows = await client.query<{ id: number; name: string; entity_type: string; obs: string[] | null }>(
        'SELECT e.id, e.name, e.entity_type, (SELECT array_agg(content ORDER BY id) FROM observations WHERE entity_id = e.id) AS obs FROM entities e',
      );
      for (const r of rows.rows) {
        await client.query('UPDATE entity_keywords SET lname = $1, ltype = $2, lobs = $3 WHERE entity_id = $4', [
          r.name.toLowerCase(),
          r.entity_type.toLowerCase(),
          (r.obs ?? []).map((o) => o.toLowerCase()).join('\n'),
          r.id,
        ]);
      }
      // Schema 10's queue order rolled back too, so the upgrade runs 10 and 11 again.
      await client.query('DROP INDEX embedding_queue_order; ALTER TABLE embedding_queue DROP COLUMN queued_at');
      await client.query('DROP INDEX entities_project; ALTER TABLE entities DROP COLUMN project'); // schema 12's
      await client.query('DROP TABLE refind_pairs; ALTER TABLE tuning_candidates DROP COLUMN refind'); // schema 14's
      await client.query('DELETE FROM limbic_schema WHERE version >= 10');
    } finally {
      await client.end();
    }
    const h = await harness({ store: openPgStore({ url, poolSize: 2 }) });
    try {
      await checkUpgraded(h);
    } finally {
      await h.close();
    }
  });
});
