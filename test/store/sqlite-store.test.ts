import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { SCHEMA_VERSION } from '../../src/store/sqlite/schema.js';
import { tempDir, keywordExpr } from '../helpers/fixtures.js';
import { runStoreSuite } from './conformance/index.js';

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
    await store.graph.createEntities([{ name: 'A', entityType: 't', observations: ['o'] }], 1);
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
    await first.graph.createEntities([{ name: 'Kept', entityType: 'fact', observations: ['survives restarts'] }], 1);
    await first.close();
    const second = openSqliteStore({ path });
    expect((await second.graph.searchNodes('restarts')).entities.map((e) => e.name)).toEqual(['Kept']);
    await second.close();
    tmp.cleanup();
  });

  it('backfills an empty keyword index from existing entities', async () => {
    const tmp = tempDir();
    const path = join(tmp.dir, 'memory.db');
    const store = openSqliteStore({ path });
    await store.graph.createEntities([{ name: 'Indexed', entityType: 'fact', observations: ['backfill me'] }], 1);
    await store.close();
    const db = new Database(path);
    db.exec('DELETE FROM entity_fts; DELETE FROM entity_trigram;');
    db.close();
    const reopened = openSqliteStore({ path });
    expect((await reopened.graph.searchNodes('backfill')).entities.map((e) => e.name)).toEqual(['Indexed']);
    expect(await reopened.keywords.search(keywordExpr('"backfill"'), 5)).toHaveLength(1);
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
    await store.graph.createEntities(
      [
        { name: 'Sesión 2026-03-28', entityType: 'Sesión', observations: ['Revisión de ÑANDÚ'] },
        { name: 'dom-cachorroink', entityType: 'Skill', observations: ['x'] },
      ],
      1,
    );
    expect((await store.graph.searchNodes('ñandú')).entities.map((e) => e.name)).toEqual(['Sesión 2026-03-28']);
    expect((await store.graph.searchNodes('SESIÓN')).entities.map((e) => e.name)).toEqual(['Sesión 2026-03-28']);
    // Accents folded on top of the official substring test (issue 25).
    expect((await store.graph.searchNodes('sesion')).entities.map((e) => e.name)).toEqual(['Sesión 2026-03-28']);
    expect((await store.graph.searchNodes('nandu')).entities.map((e) => e.name)).toEqual(['Sesión 2026-03-28']);
    expect((await store.graph.searchNodes('-c')).entities.map((e) => e.name)).toEqual(['dom-cachorroink']);
    expect((await store.graph.searchNodes('"; DROP TABLE entities; --')).entities).toEqual([]);
    expect((await store.graph.readGraph()).entities).toHaveLength(2);
    await store.close();
    tmp.cleanup();
  });
});

describe('keyword term pruning on SQLite', () => {
  it('maps words through the stemmer and leaves the ranking of informative matches unchanged', async () => {
    const { plainKeywordMatch } = await import('../../src/service/search/legs.js');
    const { keywordText } = await import('../../src/core/text/keyword-query.js');
    const tmp = tempDir();
    const store = openSqliteStore({ path: join(tmp.dir, 'memory.db') });
    const entities = Array.from({ length: 60 }, (_, i) => ({
      name: `Doc ${i}`,
      entityType: 'doc',
      observations: [`the running notes of the week ${i}`, i % 7 === 0 ? 'rare zebrafish sighting' : 'nothing special'],
    }));
    await store.graph.createEntities(entities, 1);
    const stats = await store.keywords.termStats(['Running', 'zebrafish']);
    expect(stats.terms).toEqual([
      { word: 'Running', df: 60 },
      { word: 'zebrafish', df: 9 },
    ]);
    const pruned = await plainKeywordMatch(store.keywords, 'the running zebrafish');
    expect(pruned === undefined ? undefined : keywordText(pruned)).toBe('"zebrafish"');
    const full = await store.keywords.search(keywordExpr('the running zebrafish'), 60);
    const kept = await store.keywords.search(pruned ?? keywordExpr('nothing'), 60);
    // Every entity with the informative term keeps its place; only zero-weight matches fall away.
    expect(full.slice(0, kept.length).map((h) => h.id)).toEqual(kept.map((h) => h.id));
    expect(kept).toHaveLength(9);
    await store.close();
    tmp.cleanup();
  });

  it('reuses a term count while fewer than 1% of the entities changed, and is never further off than that', async () => {
    const tmp = tempDir();
    const store = openSqliteStore({ path: join(tmp.dir, 'memory.db') });
    await store.graph.createEntities(
      Array.from({ length: 300 }, (_, i) => ({ name: `Doc ${i}`, entityType: 'doc', observations: [`note ${i}`] })),
      1,
    );
    const df = async () => (await store.keywords.termStats(['zebrafish'])).terms[0]?.df;
    expect(await df()).toBe(0);
    for (let i = 0; i < 8; i++) {
      await store.graph.addObservations([{ entityName: `Doc ${i}`, contents: ['a zebrafish'] }], 2);
      const seen = (await df()) ?? -1;
      // 300 entities: a count read at most 2 changes ago may be reused (2 × 100 < 300).
      expect(Math.abs(seen - (i + 1))).toBeLessThanOrEqual(2);
    }
    // A write from another connection counts too.
    const other = openSqliteStore({ path: join(tmp.dir, 'memory.db') });
    await other.graph.addObservations(
      Array.from({ length: 5 }, (_, i) => ({ entityName: `Doc ${100 + i}`, contents: ['zebrafish again'] })),
      3,
    );
    expect(await df()).toBe(13);
    await other.close();
    await store.close();
    tmp.cleanup();
  });

  it('keeps facts between searches, and sees graph changes and usage made through another connection', async () => {
    const tmp = tempDir();
    const path = join(tmp.dir, 'memory.db');
    const reader = openSqliteStore({ path });
    const writer = openSqliteStore({ path });
    await writer.graph.createEntities(
      [
        { name: 'A', entityType: 't', observations: ['x'] },
        { name: 'B', entityType: 't', observations: ['y'] },
      ],
      1,
    );
    const [a, b] = await reader.graph.idsByName(['A', 'B']);
    if (a === undefined || b === undefined) throw new Error('missing');
    const first = await reader.usage.signals([a, b]);
    expect(first.facts.get(a)).toMatchObject({ status: 'active', updatedAt: 1 });
    expect(first.degree.get(a)).toBe(0);
    await writer.graph.setStatus('A', 'archived', 2);
    await writer.graph.createRelations([{ from: 'A', to: 'B', relationType: 'knows' }], 3);
    await writer.usage.recordAccess([a], 4);
    const second = await reader.usage.signals([a, b]);
    expect(second.facts.get(a)).toMatchObject({ status: 'archived' });
    expect(second.degree.get(a)).toBe(1);
    expect(second.access.get(a)).toEqual({ accessCount: 1, lastAccess: 4, accessDays: 1 });
    await writer.graph.deleteEntities(['B']);
    expect((await reader.usage.signals([a, b])).facts.has(b)).toBe(false);
    await reader.close();
    await writer.close();
    tmp.cleanup();
  });
});
