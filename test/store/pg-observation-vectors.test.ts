/**
 * Observation vectors on PostgreSQL (pg-vectors.ts): their own table and HNSW index, replaced with
 * the entity's vector, deleted with the entity, made by an upgraded memory, which queues the
 * entities that may need them, and never copied by limbic migrate. Hand-made vectors (the
 * mechanics; meaning is test/mcp/long-entities.test.ts's, run on PostgreSQL by on-postgres.test.ts).
 * Skipped, saying why, when no server starts.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateMemory } from '../../src/cli/migrate.js';
import { ASIDE_DISTANCE, ASIDE_PULL } from '../../src/core/text/entity-text.js';
import type { EntityId } from '../../src/core/types.js';
import { openPgStore } from '../../src/store/postgres/pg-store.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { EmbeddingJob } from '../../src/store/vector-index.js';
import { tempDir } from '../helpers/fixtures.js';
import { startPgServer, type PgServer } from '../helpers/pg-server.js';

const started = await startPgServer();
const server: PgServer | undefined = 'unavailable' in started ? undefined : started;
afterAll(async () => {
  await server?.stop();
});

const unit = (...xs: number[]): Float32Array => {
  const norm = Math.hypot(...xs);
  return Float32Array.from(xs, (x) => x / norm);
};
const NOW = Date.UTC(2026, 0, 1);

if (server === undefined) {
  describe('observation vectors (PostgreSQL)', () => {
    it.skip(`skipped: ${'unavailable' in started ? started.unavailable : ''}`, () => undefined);
  });
} else {
  describe('observation vectors (PostgreSQL)', () => {
    it('are merged, replaced, deleted, made on upgrade, and left to be made again by migrate', async () => {
      const url = await server.createDatabase();
      const store = openPgStore({ url, poolSize: 2 });
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const rows = async (): Promise<number> =>
        Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM observation_embeddings')).rows[0]?.n);
      const jobs = async (): Promise<Map<string, EmbeddingJob>> =>
        new Map((await store.requireVectors().takeJobs(10)).map((j) => [j.entity.name, j]));
      try {
        const vectors = store.requireVectors();
        await vectors.configure('fake-model', 4);
        await store.graph.createEntities(
          [
            { name: 'Long', entityType: 'notes', observations: ['x'.repeat(600), 'y'.repeat(600)] },
            { name: 'Short', entityType: 'notes', observations: ['only'] },
          ],
          NOW,
        );
        const [long, short] = (await store.graph.idsByName(['Long', 'Short'])) as EntityId[];
        const queued = await jobs();
        await vectors.put([
          {
            id: long as EntityId,
            version: queued.get('Long')?.version ?? 0,
            vector: unit(1, 0, 0, 0),
            observations: [unit(0, 0, 1, 0), unit(0, 1, 0, 0)],
          },
          { id: short as EntityId, version: queued.get('Short')?.version ?? 0, vector: unit(1, 1, 0, 0) },
        ]);
        expect(await rows()).toBe(2);
        // Read back in observation order, for a search to show the nearest first (issue 33); Short has none.
        const read = await vectors.observationVectors?.([long as EntityId, short as EntityId]);
        expect(read?.has(short as EntityId)).toBe(false);
        expect((read?.get(long as EntityId) ?? []).map((v) => Array.from(v, (x) => Math.round(x)))).toEqual([
          [0, 0, 1, 0],
          [0, 1, 0, 0],
        ]);
        // Each entity once, at its nearest vector: Long through its second observation.
        const hits = await vectors.search(unit(0, 1, 0, 0), 2);
        expect(hits.map((h) => h.id)).toEqual([long, short]);
        expect(hits[0]?.distance).toBeCloseTo(0, 5);
        expect((await vectors.status()).indexed).toBe(2);

        // Embedded again as fitting one vector: its observation vectors go.
        await store.graph.addObservations([{ entityName: 'Long', contents: ['z'] }], NOW);
        const again = (await jobs()).get('Long');
        await vectors.put([{ id: long as EntityId, version: again?.version ?? 0, vector: unit(1, 0, 0, 0) }]);
        expect(await rows()).toBe(0);
        expect((await vectors.search(unit(0, 1, 0, 0), 2)).map((h) => h.id)).toEqual([short, long]);

        // limbic migrate into SQLite copies Short's vector and leaves Long (over 1,000 characters) queued there.
        const tmp = tempDir();
        const target = openSqliteStore({ path: `${tmp.dir}/target.db` });
        try {
          expect((await migrateMemory(store, target)).vectorsCopied).toBe(1);
          expect((await target.requireVectors().takeJobs(10)).map((j) => j.entity.name)).toEqual(['Long']);
        } finally {
          await target.close();
          tmp.cleanup();
        }

        // A memory made before observation vectors: no table of its own; configure makes it and queues Long only.
        // (A put answers a queued job: one is queued by hand, as the embedder would have taken it.)
        await client.query(
          'INSERT INTO embedding_queue (entity_id, version) VALUES ($1, 0) ON CONFLICT (entity_id) DO UPDATE SET version = 0',
          [long],
        );
        await vectors.put([{ id: long as EntityId, version: 0, vector: unit(1, 0, 0, 0), observations: [unit(0, 1, 0, 0)] }]);
        expect(await rows()).toBe(1);
        await client.query('DROP TABLE observation_embeddings');
        expect(await vectors.countPending(10)).toBe(0);
        expect((await vectors.search(unit(0, 1, 0, 0), 2)).map((h) => h.id)).toEqual([short, long]); // its entity vectors still answer
        expect((await vectors.configure('fake-model', 4)).reset).toBe(false);
        expect([...(await jobs()).keys()]).toEqual(['Long']);
        expect(await rows()).toBe(0);

        // Deleted with their entity.
        // (A put answers a queued job: one is queued by hand, as the embedder would have taken it.)
        await client.query(
          'INSERT INTO embedding_queue (entity_id, version) VALUES ($1, 0) ON CONFLICT (entity_id) DO UPDATE SET version = 0',
          [long],
        );
        await vectors.put([{ id: long as EntityId, version: 0, vector: unit(1, 0, 0, 0), observations: [unit(0, 1, 0, 0)] }]);
        expect(await rows()).toBe(1);
        await store.graph.deleteEntities(['Long']);
        expect(await rows()).toBe(0);
      } finally {
        await client.end();
        await store.close();
        await server.dropDatabase(url);
      }
    });

    it('an upgraded memory made before entity text 3 queues, once, the entities whose language a note had set', async () => {
      const url = await server.createDatabase();
      const store = openPgStore({ url, poolSize: 2 });
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const jobs = async (): Promise<Map<string, EmbeddingJob>> =>
        new Map((await store.requireVectors().takeJobs(10)).map((j) => [j.entity.name, j]));
      try {
        const vectors = store.requireVectors();
        await vectors.configure('fake-model', 4);
        const note = 'Der Nutzer hat mich gefragt, wie oft ich die Pflanzen gießen soll, und die Antwort steht hier.';
        await store.graph.createEntities(
          [
            // A few words of English, then a German note: before, the note set the entity's language and went into its vector.
            { name: 'Ferns', entityType: 'note', observations: ['they need water twice a week', note] },
            { name: 'Bike', entityType: 'thing', observations: ['the back tyre is flat', 'it was bought in Utrecht in the spring'] },
          ],
          NOW,
        );
        for (const j of (await jobs()).values()) await vectors.put([{ id: j.id, version: j.version, vector: unit(1, 0, 0, 0) }]);
        await client.query("UPDATE meta SET value = '2' WHERE key = 'entity_text'"); // as the version before left it
        expect(await vectors.countPending(10)).toBe(0);
        await vectors.configure('fake-model', 4);
        expect([...(await jobs()).keys()]).toEqual(['Ferns']);
        await vectors.configure('fake-model', 4);
        expect(await vectors.countPending(10)).toBe(1);
      } finally {
        await client.end();
        await store.close();
        await server.dropDatabase(url);
      }
    });

    it("answer an entity at an aside's distance plus ASIDE_DISTANCE, apart from its observations, and an upgraded memory queues the entities with asides once", async () => {
      const url = await server.createDatabase();
      const store = openPgStore({ url, poolSize: 2 });
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const jobs = async (): Promise<Map<string, EmbeddingJob>> =>
        new Map((await store.requireVectors().takeJobs(10)).map((j) => [j.entity.name, j]));
      try {
        const vectors = store.requireVectors();
        await vectors.configure('fake-model', 4);
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
            {
              name: 'Abuelo',
              entityType: 'persona',
              observations: ['Nació en un pueblo de Galicia.', 'Le gusta mucho el café de la mañana.'],
            },
          ],
          NOW,
        );
        const [marisol, abuelo] = (await store.graph.idsByName(['Marisol', 'Abuelo'])) as EntityId[];
        const queued = await jobs();
        await vectors.put([
          {
            id: marisol as EntityId,
            version: queued.get('Marisol')?.version ?? 0,
            vector: unit(1, 1, 0, 0),
            asides: [unit(0, 0.99, 0.141, 0)],
          },
          { id: abuelo as EntityId, version: queued.get('Abuelo')?.version ?? 0, vector: unit(0.2, 1, 0, 0) },
        ]);
        // Marisol's aside points nearly at the query, nearer than Abuelo's vector; handicapped, and at most
        // ASIDE_PULL nearer than her own vector's, she is farther.
        const hits = await vectors.search(unit(0, 1, 0, 0), 2);
        const aside = 1 - 0.99 / Math.hypot(0.99, 0.141);
        expect(hits.map((h) => h.id)).toEqual([abuelo, marisol]);
        expect(aside + ASIDE_DISTANCE).toBeLessThan(1 - Math.SQRT1_2 - ASIDE_PULL);
        expect(hits[1]?.distance).toBeCloseTo(1 - Math.SQRT1_2 - ASIDE_PULL, 5);
        // An own vector nearly as near as the aside: the aside's distance plus the handicap.
        const requeue = () => client.query('INSERT INTO embedding_queue (entity_id, version) VALUES ($1, 1)', [marisol]); // put writes queued jobs only
        await requeue();
        await vectors.put([
          {
            id: marisol as EntityId,
            version: 1,
            vector: unit(0.3, 1, 0, 0),
            asides: [unit(0, 0.99, 0.141, 0)],
          },
        ]);
        const nearHits = await vectors.search(unit(0, 1, 0, 0), 2);
        expect(1 - 1 / Math.hypot(0.3, 1) - ASIDE_PULL).toBeLessThan(aside + ASIDE_DISTANCE);
        expect(nearHits.find((h) => h.id === marisol)?.distance).toBeCloseTo(aside + ASIDE_DISTANCE, 5);
        await requeue();
        await vectors.put([
          {
            id: marisol as EntityId,
            version: 1,
            vector: unit(1, 1, 0, 0),
            asides: [unit(0, 0.99, 0.141, 0)],
          },
        ]);
        expect((await vectors.observationVectors?.([marisol as EntityId]))?.has(marisol as EntityId)).toBe(false);

        // A memory whose vectors were made before asides: configure queues Marisol, once.
        await client.query("DELETE FROM meta WHERE key = 'entity_text'");
        expect(await vectors.countPending(10)).toBe(0);
        expect((await vectors.configure('fake-model', 4)).reset).toBe(false);
        expect([...(await jobs()).keys()]).toEqual(['Marisol']);
        await vectors.configure('fake-model', 4);
        expect(await vectors.countPending(10)).toBe(1);

        // A memory whose observation table was made before aside keys gains text_hash; keyless asides give none back.
        expect((await vectors.asideVectors?.([marisol as EntityId]))?.has(marisol as EntityId)).toBe(false);
        await client.query('ALTER TABLE observation_embeddings DROP COLUMN text_hash');
        expect((await vectors.asideVectors?.([marisol as EntityId]))?.size).toBe(0);
        await vectors.configure('fake-model', 4);
        const again = await jobs();
        await vectors.put([
          {
            id: marisol as EntityId,
            version: again.get('Marisol')?.version ?? 0,
            vector: unit(1, 1, 0, 0),
            asides: [unit(0, 1, 0, 0)],
            asideKeys: ['k1'],
          },
        ]);
        expect((await vectors.asideVectors?.([marisol as EntityId]))?.get(marisol as EntityId)).toEqual(
          new Map([['k1', unit(0, 1, 0, 0)]]),
        );
      } finally {
        await client.end();
        await store.close();
        await server.dropDatabase(url);
      }
    });
  });
}
