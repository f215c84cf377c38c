/**
 * Observation vectors on SQLite: an entity too long for one vector is answered at the nearest of
 * its own vector and its observations'. The vectors here are hand-made (the mechanics: merging,
 * replacing, deleting; meaning is the real-model test's, test/mcp/search-semantic.test.ts).
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrateMemory } from '../../src/cli/migrate.js';
import { ASIDE_DISTANCE, ASIDE_PULL } from '../../src/core/text/entity-text.js';
import type { EntityId } from '../../src/core/types.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { EmbeddingJob } from '../../src/store/vector-index.js';
import { tempDir } from '../helpers/fixtures.js';

const unit = (...xs: number[]): Float32Array => {
  const norm = Math.hypot(...xs);
  return Float32Array.from(xs, (x) => x / norm);
};
const NOW = Date.UTC(2026, 0, 1);

describe('observation vectors (SQLite)', () => {
  let tmp: ReturnType<typeof tempDir>;
  let store: SqliteStore;
  let ids: Map<string, EntityId>;
  const path = (): string => join(tmp.dir, 'memory.db');
  /** Rows of the observation tables, read by a second connection (plain tables: no sqlite-vec needed). */
  const rows = (): { keys: number; vectors: number } => {
    const db = new Database(path(), { readonly: true });
    try {
      const count = (table: string): number => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
      // Observation vectors are rows of entity_embeddings keyed from 2^32 up (sqlite-vectors.ts).
      return { keys: count('observation_vectors'), vectors: count('entity_embeddings_rowids WHERE rowid >= 4294967296') };
    } finally {
      db.close();
    }
  };
  const jobs = async (): Promise<Map<string, EmbeddingJob>> =>
    new Map((await store.requireVectors().takeJobs(10)).map((j) => [j.entity.name, j]));

  beforeEach(async () => {
    tmp = tempDir();
    store = openSqliteStore({ path: path() });
    await store.requireVectors().configure('fake-model', 4);
    await store.graph.createEntities(
      [
        { name: 'Long', entityType: 'notes', observations: ['first', 'second', 'third'] },
        { name: 'Short', entityType: 'notes', observations: ['only'] },
      ],
      NOW,
    );
    ids = new Map((await store.graph.idsByName(['Long', 'Short'])).map((id, i) => [i === 0 ? 'Long' : 'Short', id as EntityId]));
    const queued = await jobs();
    await store.requireVectors().put([
      // Long's own vector points away from the query below; its second observation points at it.
      {
        id: ids.get('Long') as EntityId,
        version: queued.get('Long')?.version ?? 0,
        vector: unit(1, 0, 0, 0),
        observations: [unit(0, 0, 1, 0), unit(0, 1, 0, 0), unit(0, 0, 0, 1)],
      },
      { id: ids.get('Short') as EntityId, version: queued.get('Short')?.version ?? 0, vector: unit(1, 1, 0, 0) },
    ]);
  });
  afterEach(async () => {
    await store.close();
    tmp.cleanup();
  });

  it("reads an entity's observation vectors back in observation order; one without them is absent (issue 33)", async () => {
    const found = await store.requireVectors().observationVectors?.([ids.get('Long') as EntityId, ids.get('Short') as EntityId]);
    expect(found?.has(ids.get('Short') as EntityId)).toBe(false);
    const long = found?.get(ids.get('Long') as EntityId) ?? [];
    expect(long.map((v) => Array.from(v, (x) => Math.round(x)))).toEqual([
      [0, 0, 1, 0],
      [0, 1, 0, 0],
      [0, 0, 0, 1],
    ]);
  });

  it('answers an entity at its nearest vector, its observations included', async () => {
    const hits = await store.requireVectors().search(unit(0, 1, 0, 0), 2);
    expect(hits.map((h) => h.id)).toEqual([ids.get('Long'), ids.get('Short')]);
    expect(hits[0]?.distance).toBeCloseTo(0, 5);
    expect(hits[1]?.distance).toBeCloseTo(1 - Math.SQRT1_2, 5);
    // Asked for one: the nearest entity, once, however many of its observations are near.
    expect((await store.requireVectors().search(unit(0, 1, 1, 1), 1)).map((h) => h.id)).toEqual([ids.get('Long')]);
    expect(rows()).toEqual({ keys: 3, vectors: 3 });
    // The count of indexed entities is of entities, not of vectors.
    expect((await store.requireVectors().status()).indexed).toBe(2);
  });

  it("is seen by another process's in-memory vector cache, which follows the log", async () => {
    const other = openSqliteStore({ path: path() });
    try {
      const query = unit(0.3, 0.3, 0, 1);
      expect((await other.requireVectors().search(query, 1)).map((h) => h.id)).toEqual([ids.get('Long')]); // through its third observation
      expect(await other.requireVectors().cacheSource()).toBeDefined(); // answered from the cache, not sqlite-vec
      await store.graph.deleteObservations([{ entityName: 'Long', observations: ['third'] }], NOW);
      const again = (await jobs()).get('Long');
      await store.requireVectors().put([
        {
          id: ids.get('Long') as EntityId,
          version: again?.version ?? 0,
          vector: unit(1, 0, 0, 0),
          observations: [unit(0, 0, 1, 0), unit(0, 1, 0, 0)],
        },
      ]);
      // Long's third observation, which was nearest, is gone from the other cache too: Short is nearer now.
      expect((await other.requireVectors().search(query, 2)).map((h) => h.id)).toEqual([ids.get('Short'), ids.get('Long')]);
    } finally {
      await other.close();
    }
  });

  it('replaces them when the entity is embedded again, and drops them when it now fits one vector', async () => {
    await store.graph.addObservations([{ entityName: 'Long', contents: ['fourth'] }], NOW);
    const again = (await jobs()).get('Long');
    await store
      .requireVectors()
      .put([{ id: ids.get('Long') as EntityId, version: again?.version ?? 0, vector: unit(1, 0, 0, 0), observations: [unit(0, 0, 0, 1)] }]);
    expect(rows()).toEqual({ keys: 1, vectors: 1 });
    await store.graph.deleteObservations([{ entityName: 'Long', observations: ['second', 'third', 'fourth'] }], NOW);
    const shorter = (await jobs()).get('Long');
    await store.requireVectors().put([{ id: ids.get('Long') as EntityId, version: shorter?.version ?? 0, vector: unit(1, 0, 0, 0) }]);
    expect(rows()).toEqual({ keys: 0, vectors: 0 });
    expect((await store.requireVectors().search(unit(0, 1, 0, 0), 2)).map((h) => h.id)).toEqual([ids.get('Short'), ids.get('Long')]);
  });

  it('queues the long entities of a memory made before observation vectors, once', async () => {
    await store.graph.createEntities([{ name: 'Diary', entityType: 'notes', observations: ['x'.repeat(600), 'y'.repeat(600)] }], NOW);
    for (const j of (await jobs()).values()) await store.requireVectors().put([{ id: j.id, version: j.version, vector: unit(1, 0, 0, 0) }]);
    await store.close();
    const db = new Database(path());
    db.exec('DROP TABLE observation_vectors'); // as a memory made before them has it
    db.close();
    store = openSqliteStore({ path: path() });
    expect(await store.requireVectors().countPending(10)).toBe(0);
    await store.requireVectors().configure('fake-model', 4);
    expect([...(await jobs()).keys()]).toEqual(['Diary']); // Long's 3 short observations are under 1,000 characters
    await store.requireVectors().configure('fake-model', 4);
    expect(await store.requireVectors().countPending(10)).toBe(1); // the same one: not queued again
  });

  it("answers an entity at an aside's distance plus ASIDE_DISTANCE, at most ASIDE_PULL nearer than its own vector's, and keeps asides apart from its observations' vectors", async () => {
    await store.graph.addObservations([{ entityName: 'Short', contents: ['Der Nutzer hat mich gefragt, wo der Garten ist.'] }], NOW);
    const job = (await jobs()).get('Short');
    // Short's aside points exactly at the query; Long's second observation is a little farther from it.
    const query = unit(0, 1, 0, 0);
    await store
      .requireVectors()
      .put([{ id: ids.get('Short') as EntityId, version: job?.version ?? 0, vector: unit(1, 1, 0, 0), asides: [unit(0, 0.99, 0.141, 0)] }]);
    const hits = await store.requireVectors().search(query, 2);
    const aside = 1 - 0.99 / Math.hypot(0.99, 0.141);
    // Long at 0; Short at its own vector's distance less ASIDE_PULL, as near as an aside may bring it (its aside is nearer still).
    expect(hits.map((h) => h.id)).toEqual([ids.get('Long'), ids.get('Short')]);
    expect(aside + ASIDE_DISTANCE).toBeLessThan(1 - Math.SQRT1_2 - ASIDE_PULL);
    expect(hits[1]?.distance).toBeCloseTo(1 - Math.SQRT1_2 - ASIDE_PULL, 5);
    expect(rows()).toEqual({ keys: 4, vectors: 4 });
    // An own vector nearly as near as the aside: the aside's distance plus the handicap, nearer than the own vector's.
    const near = (await jobs()).get('Short');
    await store
      .requireVectors()
      .put([
        { id: ids.get('Short') as EntityId, version: near?.version ?? 0, vector: unit(0.3, 1, 0, 0), asides: [unit(0, 0.99, 0.141, 0)] },
      ]);
    const nearHits = await store.requireVectors().search(query, 2);
    expect(1 - 1 / Math.hypot(0.3, 1) - ASIDE_PULL).toBeLessThan(aside + ASIDE_DISTANCE);
    expect(nearHits[1]?.distance).toBeCloseTo(aside + ASIDE_DISTANCE, 5);
    // Not an observation vector: a search's shown observations are ordered by those alone.
    expect((await store.requireVectors().observationVectors?.([ids.get('Short') as EntityId]))?.has(ids.get('Short') as EntityId)).toBe(
      false,
    );
    // Gone with the next embedding that has none.
    await store.graph.deleteObservations([{ entityName: 'Short', observations: ['Der Nutzer hat mich gefragt, wo der Garten ist.'] }], NOW);
    const again = (await jobs()).get('Short');
    await store.requireVectors().put([{ id: ids.get('Short') as EntityId, version: again?.version ?? 0, vector: unit(1, 1, 0, 0) }]);
    expect(rows()).toEqual({ keys: 3, vectors: 3 });
  });

  it('gives back aside vectors by the key they were put with; a memory made before aside keys gains the column, its asides keyless', async () => {
    await store.graph.addObservations([{ entityName: 'Short', contents: ['Der Nutzer hat mich gefragt, wo der Garten ist.'] }], NOW);
    const short = ids.get('Short') as EntityId;
    const put = async (keys?: string[]): Promise<void> => {
      const job = (await jobs()).get('Short');
      await store
        .requireVectors()
        .put([{ id: short, version: job?.version ?? 0, vector: unit(1, 1, 0, 0), asides: [unit(0, 1, 0, 0)], asideKeys: keys }]);
    };
    await put(['k1']);
    expect((await store.requireVectors().asideVectors?.([short]))?.get(short)).toEqual(new Map([['k1', unit(0, 1, 0, 0)]]));
    // A memory whose observation table has no text_hash yet (made before aside keys).
    await store.close();
    const db = new Database(path());
    db.exec('ALTER TABLE observation_vectors DROP COLUMN text_hash');
    db.close();
    store = openSqliteStore({ path: path() });
    expect((await store.requireVectors().configure('fake-model', 4)).reset).toBe(false);
    expect((await store.requireVectors().asideVectors?.([short]))?.has(short)).toBe(false);
    await store.graph.addObservations([{ entityName: 'Short', contents: ['Sie hat gesagt, dass der Garten im Sommer blüht.'] }], NOW);
    await put(['k2']);
    expect([...((await store.requireVectors().asideVectors?.([short]))?.get(short)?.keys() ?? [])]).toEqual(['k2']);
  });

  it('queues, once, the entities with asides of a memory whose vectors were made with them (before entity text 2)', async () => {
    await store.graph.createEntities(
      [
        {
          name: 'Marisol',
          entityType: 'persona',
          observations: [
            'Cultiva tomates y pimientos en el huerto detrás de su casa.',
            'Der Nutzer hat mich gefragt, wer das Gemüse anbaut.',
          ],
        },
        { name: 'Abuelo', entityType: 'persona', observations: ['Nació en un pueblo de Galicia.', 'Le gusta mucho el café de la mañana.'] },
      ],
      NOW,
    );
    for (const j of (await jobs()).values()) await store.requireVectors().put([{ id: j.id, version: j.version, vector: unit(1, 0, 0, 0) }]);
    await store.close();
    const db = new Database(path());
    db.exec("DELETE FROM meta WHERE key = 'entity_text'"); // as a memory made before asides has it
    db.close();
    store = openSqliteStore({ path: path() });
    expect(await store.requireVectors().countPending(10)).toBe(0);
    await store.requireVectors().configure('fake-model', 4);
    expect([...(await jobs()).keys()]).toEqual(['Marisol']);
    await store.requireVectors().configure('fake-model', 4);
    expect(await store.requireVectors().countPending(10)).toBe(1); // the same one: not queued again
  });

  it('queues, once, the entities whose language a note had set, of a memory whose vectors were made before entity text 3', async () => {
    const note = 'Der Nutzer hat mich gefragt, wie oft ich die Pflanzen gießen soll, und die Antwort steht hier.';
    await store.graph.createEntities(
      [
        // A few words of English, then a German note: before, the note set the entity's language and went into its vector.
        { name: 'Ferns', entityType: 'note', observations: ['they need water twice a week', note] },
        { name: 'Bike', entityType: 'thing', observations: ['the back tyre is flat', 'it was bought in Utrecht in the spring'] },
      ],
      NOW,
    );
    for (const j of (await jobs()).values()) await store.requireVectors().put([{ id: j.id, version: j.version, vector: unit(1, 0, 0, 0) }]);
    await store.close();
    const db = new Database(path());
    db.exec("UPDATE meta SET value = '2' WHERE key = 'entity_text'"); // as a memory made by the version before has it
    db.close();
    store = openSqliteStore({ path: path() });
    expect(await store.requireVectors().countPending(10)).toBe(0);
    await store.requireVectors().configure('fake-model', 4);
    expect([...(await jobs()).keys()]).toEqual(['Ferns']);
    await store.requireVectors().configure('fake-model', 4);
    expect(await store.requireVectors().countPending(10)).toBe(1);
  });

  it('is not copied by limbic migrate: an entity that may need them is left queued, to be embedded there', async () => {
    await store.graph.createEntities([{ name: 'Diary', entityType: 'notes', observations: ['x'.repeat(600), 'y'.repeat(600)] }], NOW);
    for (const j of (await jobs()).values()) await store.requireVectors().put([{ id: j.id, version: j.version, vector: unit(1, 0, 0, 0) }]);
    const target = openSqliteStore({ path: join(tmp.dir, 'target.db') });
    try {
      expect((await migrateMemory(store, target)).vectorsCopied).toBe(2); // Long (short text, under 1,000 characters) and Short
      expect([...(await target.requireVectors().takeJobs(10)).map((j) => j.entity.name)]).toEqual(['Diary']);
    } finally {
      await target.close();
    }
  });

  it('deletes them with their entity, and with every vector when the model changes', async () => {
    await store.graph.deleteEntities(['Long']);
    expect(rows()).toEqual({ keys: 0, vectors: 0 });
    expect((await store.requireVectors().search(unit(0, 1, 0, 0), 2)).map((h) => h.id)).toEqual([ids.get('Short')]);

    await store.graph.createEntities([{ name: 'Long again', entityType: 'notes', observations: ['a', 'b'] }], NOW);
    const job = (await jobs()).get('Long again');
    await store.requireVectors().put([
      {
        id: job?.id as EntityId,
        version: job?.version ?? 0,
        vector: unit(1, 0, 0, 0),
        observations: [unit(0, 1, 0, 0), unit(0, 0, 1, 0)],
      },
    ]);
    expect(rows()).toEqual({ keys: 2, vectors: 2 });
    expect((await store.requireVectors().configure('another-model', 4)).reset).toBe(true);
    expect(rows()).toEqual({ keys: 0, vectors: 0 });
  });
});
