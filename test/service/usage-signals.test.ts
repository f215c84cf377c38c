/**
 * Issue 24: what counts as use, and a store whose counters the old recording inflated. Keyword-only
 * (no model): which entity a search lists is decided by its words here, meaning does not matter.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { harness, tempDir, type Harness } from '../helpers/fixtures.js';

const T0 = Date.UTC(2026, 10, 25, 9);

interface Hybrid {
  results: { name: string }[];
}

interface Semantic {
  results: { name: string; limbic_score: number; scoring: { usage_lift: number; usage_places: number } }[];
}

describe('usage signals: being listed is not being used', () => {
  const open: Harness[] = [];
  let now = T0;
  const clock = (): number => now;
  const make = async (path?: string): Promise<Harness> => {
    const h = await harness(path === undefined ? { clock } : { clock, path });
    open.push(h);
    return h;
  };
  afterEach(async () => {
    for (const h of open.splice(0)) await h.close();
  });
  const signalsOf = async (h: Harness, names: string[]) => {
    const ids = await h.store.graph.idsByName(names);
    return { ids, signals: await h.store.usage.signals(ids) };
  };

  it('a search records no access and no co-occurrence; open_nodes, add_observations and create_relations do', async () => {
    const h = await make();
    await h.ok('create_entities', {
      entities: ['Ada', 'Bob', 'Cy', 'Dee'].map((name) => ({ name, entityType: 'person', observations: [`${name} likes tea`] })),
    });
    for (let i = 0; i < 5; i++) {
      now += 60_000;
      await h.ok('hybrid_search', { query: 'tea', limit: 4 });
      await h.ok('search_nodes', { query: 'tea' });
    }
    await h.settle();
    let { ids, signals } = await signalsOf(h, ['Ada', 'Bob', 'Cy', 'Dee']);
    expect(signals.access.size).toBe(0);
    expect(signals.coOccurrences).toEqual([]);

    await h.ok('open_nodes', { names: ['Ada', 'Bob'] });
    await h.ok('add_observations', { observations: [{ entityName: 'Cy', contents: ['Cy moved to Lima'] }] });
    // A relation to an entity that does not exist (allowed, as in the official server) uses the one that does.
    await h.ok('create_relations', {
      relations: [
        { from: 'Nobody', to: 'Dee', relationType: 'knows' },
        { from: 'Cy', to: 'Dee', relationType: 'knows' },
      ],
    });
    await h.settle();
    ({ ids, signals } = await signalsOf(h, ['Ada', 'Bob', 'Cy', 'Dee']));
    const [ada, bob, cy, dee] = ids;
    expect([ada, bob, dee].map((id) => signals.access.get(id!)?.accessCount)).toEqual([1, 1, 1]);
    expect(signals.access.get(cy!)?.accessCount).toBe(2); // extended, then related
    // Co-use: opened together, and the two ends of the relation; nothing else (not Ada with Cy).
    expect(signals.coOccurrences.map((p) => [p.a, p.b])).toEqual([
      [ada, bob],
      [cy, dee],
    ]);

    // Replacing an observation (supersedes) extends the entity: a use.
    await h.ok('add_observations', { observations: [{ entityName: 'Bob', contents: ['Bob likes coffee'], supersedes: 'Bob likes tea' }] });
    await h.settle();
    expect((await signalsOf(h, ['Bob'])).signals.access.get(bob!)?.accessCount).toBe(2);

    // An add_observations that adds nothing (a duplicate) uses nothing.
    await h.ok('add_observations', { observations: [{ entityName: 'Ada', contents: ['Ada likes tea'] }] });
    await h.settle();
    expect((await signalsOf(h, ['Ada'])).signals.access.get(ada!)?.accessCount).toBe(1);
  });

  it('a bulk write (more than 20 entities at once) is a load, not use', async () => {
    const h = await make();
    const names = Array.from({ length: 25 }, (_, i) => `e${i}`);
    await h.ok('create_entities', { entities: names.map((name) => ({ name, entityType: 't', observations: [] })) });
    await h.ok('add_observations', { observations: names.map((entityName) => ({ entityName, contents: ['x'] })) });
    await h.ok('create_relations', {
      relations: names.slice(1).map((to) => ({ from: 'e0', to, relationType: 'r' })),
    });
    await h.settle();
    const { signals } = await signalsOf(h, names);
    expect(signals.access.size).toBe(0);
    expect(signals.coOccurrences).toEqual([]);
  });

  it('an open_nodes of more than 20 entities uses each but records no co-use (not its n(n-1)/2 pairs); 20 record every pair', async () => {
    const h = await make();
    const names = Array.from({ length: 26 }, (_, i) => `e${i}`);
    await h.ok('create_entities', { entities: names.map((name) => ({ name, entityType: 't', observations: [] })) });
    await h.ok('open_nodes', { names: names.slice(0, 25) });
    await h.settle();
    let { ids, signals } = await signalsOf(h, names);
    expect(signals.access.size).toBe(25);
    // Before the bound: 300 pairs (and at bench:http's 1,900 names, 1.8M upserts of the main thread).
    expect(signals.coOccurrences).toHaveLength(0);

    await h.ok('open_nodes', { names: names.slice(6, 26) });
    await h.settle();
    ({ ids, signals } = await signalsOf(h, names));
    expect(signals.coOccurrences).toHaveLength((20 * 19) / 2);
    expect(signals.coOccurrences.every((p) => ids.indexOf(p.a) >= 6 && ids.indexOf(p.b) >= 6 && p.count === 1)).toBe(true);
  });

  it('a used entity is lifted among equal matches, and the answer says so', async () => {
    const h = await make();
    await h.ok('create_entities', {
      entities: ['Ada', 'Bob', 'Cy'].map((name) => ({ name, entityType: 'person', observations: [`${name} likes green tea`] })),
    });
    const before = await h.ok<Semantic>('search_semantic', { query: 'green tea', limit: 3 });
    expect(before.results.map((r) => r.name)).toEqual(['Ada', 'Bob', 'Cy']);
    expect(before.results.every((r) => r.scoring.usage_lift === 0 && r.scoring.usage_places === 0)).toBe(true);
    await h.ok('open_nodes', { names: ['Cy'] });
    await h.settle();
    const after = await h.ok<Semantic>('search_semantic', { query: 'green tea', limit: 3 });
    expect(after.results.map((r) => r.name)).toEqual(['Cy', 'Ada', 'Bob']);
    expect(after.results[0]!.scoring.usage_lift).toBeGreaterThan(0);
    expect(after.results.map((r) => r.scoring.usage_places)).toEqual([2, -1, -1]);
    expect(after.results[0]!.limbic_score).toBeCloseTo(before.results[0]!.limbic_score + after.results[0]!.scoring.usage_lift, 6);
  });

  it('heals a store whose counters the old recording inflated: they start over at the upgrade, and it ranks as a fresh one', async () => {
    const tmp = tempDir();
    const path = join(tmp.dir, 'memory.db');
    const fresh = await make();
    const entities = Array.from({ length: 12 }, (_, i) => ({
      name: `Note ${i}`,
      entityType: 'note',
      // Note 0 is the weakest match for "garden" and has the most exposure below.
      observations: [i === 0 ? 'garden' : `garden ${'garden '.repeat(i % 4)}tomatoes basil ${i}`],
    }));
    await fresh.ok('create_entities', { entities });
    // Today's code before the upgrade: every search counted an access for all it listed and a
    // co-occurrence for every pair of them (MemoryService.recordSearch). Replayed on a schema-9 file.
    const old = openSqliteStore({ path, vectors: false });
    await old.graph.createEntities(entities, T0);
    const ids = await old.graph.idsByName(entities.map((e) => e.name));
    for (let day = 0; day < 30; day++)
      for (let s = 0; s < 10; s++) await old.usage.recordAccess(ids.slice(0, 5), T0 + day * 86_400_000 + s);
    expect((await old.usage.signals(ids)).access.get(ids[0]!)?.accessCount).toBe(300);
    await old.close();
    const db = new Database(path);
    db.exec('ALTER TABLE keyword_log DROP COLUMN nonce; ALTER TABLE vector_log DROP COLUMN nonce;'); // schema 11's
    db.exec('ALTER TABLE relations DROP COLUMN context;'); // schema 12's
    db.exec(
      'DROP INDEX embedding_queue_order; DROP INDEX embedding_queue_claims; ALTER TABLE embedding_queue DROP COLUMN queued_at; ALTER TABLE embedding_queue DROP COLUMN claimed_until; ALTER TABLE embedding_queue DROP COLUMN claimed_by;',
    ); // schema 13's
    db.exec('DROP INDEX entities_project; ALTER TABLE entities DROP COLUMN project;'); // schema 15's
    db.exec('DROP TABLE refind_pairs; ALTER TABLE tuning_candidates DROP COLUMN refind;'); // schema 17's
    db.pragma('user_version = 9');
    db.close();

    const upgraded = await make(path);
    const names = async (h: Harness) => (await h.ok<Hybrid>('hybrid_search', { query: 'garden', limit: 12 })).results.map((r) => r.name);
    expect(await names(upgraded)).toEqual(await names(fresh));
    const { signals } = await signalsOf(
      upgraded,
      entities.map((e) => e.name),
    );
    expect(signals.access.size).toBe(0);
    expect(signals.coOccurrences).toEqual([]);
    tmp.cleanup();
  });
});
