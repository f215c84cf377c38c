import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { SCHEMA_VERSION } from '../../src/store/sqlite/schema.js';
import { tempDir } from '../helpers/fixtures.js';
import { runStoreSuite } from './conformance.js';

runStoreSuite('sqlite', async () => {
  const tmp = tempDir();
  const store = openSqliteStore({ path: join(tmp.dir, 'memory.db') });
  return {
    store,
    cleanup: async () => {
      await store.close();
      tmp.cleanup();
    },
  };
});

runStoreSuite('sqlite without sqlite-vec', async () => {
  const tmp = tempDir();
  const store = openSqliteStore({ path: join(tmp.dir, 'memory.db'), vectors: false });
  return {
    store,
    cleanup: async () => {
      await store.close();
      tmp.cleanup();
    },
  };
});

describe('SqliteStore on disk', () => {
  it('creates the folder, uses WAL, foreign keys and the current schema version', async () => {
    const tmp = tempDir();
    const path = join(tmp.dir, 'nested', 'dir', 'memory.db');
    const store = openSqliteStore({ path });
    await store.createEntities([{ name: 'A', entityType: 't', observations: ['o'] }], 1);
    await store.close();
    const db = new Database(path, { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    db.close();
    tmp.cleanup();
  });

  it('keeps everything across a reopen', async () => {
    const tmp = tempDir();
    const path = join(tmp.dir, 'memory.db');
    const first = openSqliteStore({ path });
    await first.createEntities([{ name: 'Kept', entityType: 'fact', observations: ['survives restarts'] }], 1);
    await first.close();
    const second = openSqliteStore({ path });
    expect((await second.searchNodes('restarts')).entities.map((e) => e.name)).toEqual(['Kept']);
    await second.close();
    tmp.cleanup();
  });

  it('backfills an empty keyword index from existing entities', async () => {
    const tmp = tempDir();
    const path = join(tmp.dir, 'memory.db');
    const store = openSqliteStore({ path });
    await store.createEntities([{ name: 'Indexed', entityType: 'fact', observations: ['backfill me'] }], 1);
    await store.close();
    const db = new Database(path);
    db.exec('DELETE FROM entity_fts; DELETE FROM entity_trigram;');
    db.close();
    const reopened = openSqliteStore({ path });
    expect((await reopened.searchNodes('backfill')).entities.map((e) => e.name)).toEqual(['Indexed']);
    expect(await reopened.searchKeywords('"backfill"', 5)).toHaveLength(1);
    await reopened.close();
    tmp.cleanup();
  });

  it('refuses a database from a newer Limbic', async () => {
    const tmp = tempDir();
    const path = join(tmp.dir, 'memory.db');
    const db = new Database(path);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    expect(() => openSqliteStore({ path })).toThrow(/newer Limbic/);
    tmp.cleanup();
  });

  it('finds substrings in names, types and observations with unicode and short queries', async () => {
    const tmp = tempDir();
    const store = openSqliteStore({ path: join(tmp.dir, 'memory.db') });
    await store.createEntities(
      [
        { name: 'Sesión 2026-03-28', entityType: 'Sesión', observations: ['Revisión de ÑANDÚ'] },
        { name: 'dom-cachorroink', entityType: 'Skill', observations: ['x'] },
      ],
      1,
    );
    expect((await store.searchNodes('ñandú')).entities.map((e) => e.name)).toEqual(['Sesión 2026-03-28']);
    expect((await store.searchNodes('SESIÓN')).entities.map((e) => e.name)).toEqual(['Sesión 2026-03-28']);
    // Substring semantics: no accent folding here (the official contract is an exact substring).
    expect((await store.searchNodes('sesion')).entities).toEqual([]);
    expect((await store.searchNodes('-c')).entities.map((e) => e.name)).toEqual(['dom-cachorroink']);
    expect((await store.searchNodes('"; DROP TABLE entities; --')).entities).toEqual([]);
    expect((await store.readGraph()).entities).toHaveLength(2);
    await store.close();
    tmp.cleanup();
  });
});
