/**
 * The conformance suite every Store backend must pass (STYLE.md rule 1). A backend's test file
 * calls runStoreSuite with a factory of fresh, empty stores.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asEntityId } from '../../src/core/types.js';
import type { Store } from '../../src/store/store.js';

export interface StoreFactory {
  (): Promise<{ store: Store; cleanup: () => Promise<void> }>;
}

const T0 = Date.UTC(2026, 0, 1);

export function runStoreSuite(name: string, makeStore: StoreFactory): void {
  describe(`Store conformance: ${name}`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ store, cleanup } = await makeStore());
    });
    afterEach(async () => {
      await cleanup();
    });

    const seed = async () => {
      await store.createEntities(
        [
          { name: 'Alice', entityType: 'person', observations: ['Speaks Spanish', 'Works at Acme'] },
          { name: 'Acme', entityType: 'company', observations: ['Makes anvils'] },
          { name: 'Bob', entityType: 'person', observations: [] },
        ],
        T0,
      );
      await store.createRelations(
        [
          { from: 'Alice', to: 'Acme', relationType: 'works_at' },
          { from: 'Bob', to: 'Alice', relationType: 'knows' },
        ],
        T0,
      );
    };

    it('declares its capabilities', () => {
      expect(typeof store.capabilities.fts).toBe('boolean');
      expect(typeof store.capabilities.vector).toBe('boolean');
    });

    it('creates entities, skips names that exist, and reads them back in creation order', async () => {
      await seed();
      const added = await store.createEntities(
        [
          { name: 'Alice', entityType: 'robot', observations: ['ignored'] },
          { name: 'Carol', entityType: 'person', observations: ['New'] },
        ],
        T0,
      );
      expect(added).toEqual([{ name: 'Carol', entityType: 'person', observations: ['New'] }]);
      const graph = await store.readGraph();
      expect(graph.entities.map((e) => e.name)).toEqual(['Alice', 'Acme', 'Bob', 'Carol']);
      expect(graph.entities[0]).toEqual({ name: 'Alice', entityType: 'person', observations: ['Speaks Spanish', 'Works at Acme'] });
    });

    it('creates relations once per exact triple and allows missing endpoints', async () => {
      await seed();
      const added = await store.createRelations(
        [
          { from: 'Alice', to: 'Acme', relationType: 'works_at' },
          { from: 'Alice', to: 'Nobody', relationType: 'admires' },
        ],
        T0,
      );
      expect(added).toEqual([{ from: 'Alice', to: 'Nobody', relationType: 'admires' }]);
      expect((await store.readGraph()).relations).toHaveLength(3);
    });

    it('adds only new observations and reports them', async () => {
      await seed();
      const results = await store.addObservations([{ entityName: 'Alice', contents: ['Speaks Spanish', 'Likes tea'] }], T0);
      expect(results).toEqual([{ entityName: 'Alice', addedObservations: ['Likes tea'] }]);
    });

    it('saves nothing from add_observations when one entity is missing', async () => {
      await seed();
      await expect(
        store.addObservations(
          [
            { entityName: 'Alice', contents: ['Should not stay'] },
            { entityName: 'Ghost', contents: ['x'] },
          ],
          T0,
        ),
      ).rejects.toThrow(/Ghost not found/);
      const alice = (await store.openNodes(['Alice'])).entities[0];
      expect(alice?.observations).not.toContain('Should not stay');
    });

    it('deletes entities with their relations, ignoring unknown names', async () => {
      await seed();
      await store.deleteEntities(['Alice', 'Unknown']);
      const graph = await store.readGraph();
      expect(graph.entities.map((e) => e.name)).toEqual(['Acme', 'Bob']);
      expect(graph.relations).toEqual([]);
    });

    it('deletes observations and relations by exact value', async () => {
      await seed();
      await store.deleteObservations([{ entityName: 'Alice', observations: ['Speaks Spanish', 'not there'] }, { entityName: 'Nope', observations: ['x'] }], T0);
      await store.deleteRelations([{ from: 'Bob', to: 'Alice', relationType: 'knows' }, { from: 'Bob', to: 'Alice', relationType: 'other' }], T0);
      const graph = await store.readGraph();
      expect(graph.entities[0]?.observations).toEqual(['Works at Acme']);
      expect(graph.relations).toEqual([{ from: 'Alice', to: 'Acme', relationType: 'works_at' }]);
    });

    it('searches by case-insensitive substring of name, type or observation, best first', async () => {
      await seed();
      const byObs = await store.searchNodes('SPANISH');
      expect(byObs.entities.map((e) => e.name)).toEqual(['Alice']);
      // Relations with at least one endpoint in the set.
      expect(byObs.relations).toHaveLength(2);
      const byType = await store.searchNodes('person');
      expect(byType.entities.map((e) => e.name).sort()).toEqual(['Alice', 'Bob']);
      const ranked = await store.searchNodes('ac');
      // 'Acme' matches by name, Alice only by an observation ('Works at Acme').
      expect(ranked.entities.map((e) => e.name)).toEqual(['Acme', 'Alice']);
      expect((await store.searchNodes('')).entities).toHaveLength(3);
      expect((await store.searchNodes('zzz-not-there')).entities).toEqual([]);
    });

    it('opens nodes by exact name with relations touching them', async () => {
      await seed();
      const graph = await store.openNodes(['Acme', 'alice', 'Missing']);
      expect(graph.entities.map((e) => e.name)).toEqual(['Acme']);
      expect(graph.relations).toEqual([{ from: 'Alice', to: 'Acme', relationType: 'works_at' }]);
    });

    it('imports idempotently, merging observations of existing entities', async () => {
      await seed();
      const batch = {
        entities: [
          { name: 'Alice', entityType: 'person', observations: ['Speaks Spanish', 'Plays chess'] },
          { name: 'Dan', entityType: 'person', observations: ['Imported'] },
        ],
        relations: [{ from: 'Dan', to: 'Alice', relationType: 'knows' }],
      };
      expect(await store.importBatch(batch, T0)).toEqual({ entitiesAdded: 1, observationsAdded: 2, relationsAdded: 1 });
      expect(await store.importBatch(batch, T0)).toEqual({ entitiesAdded: 0, observationsAdded: 0, relationsAdded: 0 });
    });

    it('sets status and reports missing entities', async () => {
      await seed();
      expect(await store.setStatus('Alice', 'archivado', T0)).toBe(true);
      expect(await store.setStatus('Ghost', 'archivado', T0)).toBe(false);
      const [id] = await store.idsByName(['Alice']);
      const alice = (await store.entitiesById([id ?? asEntityId(0)])).get(id ?? asEntityId(0));
      expect(alice?.status).toBe('archivado');
    });

    it('finds keywords with BM25 when it has the fts capability', async () => {
      if (!store.capabilities.fts) return;
      await seed();
      const hits = await store.searchKeywords('"anvils"', 10);
      const [acme] = await store.idsByName(['Acme']);
      expect(hits.map((h) => h.id)).toEqual([acme]);
    });

    it('reports how many entities contain each keyword term, and how many entities there are', async () => {
      await seed();
      const stats = await store.keywordTermStats(['person', 'anvils', 'zebra']);
      expect(stats.total).toBe(3);
      expect(stats.terms).toEqual([
        { word: 'person', df: 2 },
        { word: 'anvils', df: 1 },
        { word: 'zebra', df: 0 },
      ]);
      await store.deleteEntities(['Bob']);
      expect((await store.keywordTermStats(['person'])).terms[0]).toEqual({ word: 'person', df: 1 });
      expect((await store.keywordTermStats([])).total).toBe(2);
    });

    it('records access, access days and co-occurrences in canonical order', async () => {
      await seed();
      const ids = await store.idsByName(['Acme', 'Alice']);
      await store.recordAccess(ids, T0);
      await store.recordAccess(ids, T0 + 86_400_000);
      const signals = await store.rankSignals(ids);
      for (const id of ids) {
        expect(signals.access.get(id)).toEqual({ accessCount: 2, lastAccess: T0 + 86_400_000, accessDays: 2 });
      }
      expect(signals.coOccurrences).toHaveLength(1);
      const pair = signals.coOccurrences[0];
      expect(pair && pair.a < pair.b).toBe(true);
      expect(pair?.count).toBe(2);
      const [alice] = await store.idsByName(['Alice']);
      expect(signals.degree.get(alice ?? asEntityId(0))).toBe(2);
    });

    it('gives each candidate\'s facts with its signals, without reading observations, and none for a deleted id', async () => {
      await seed();
      await store.addObservations([{ entityName: 'Acme', contents: ['source: crm', 'id: 42', 'imported 2026'], kind: 'metadata' }], T0 + 5);
      await store.setStatus('Bob', 'archivado', T0 + 6);
      const [alice, acme, bob] = await store.idsByName(['Alice', 'Acme', 'Bob']);
      if (alice === undefined || acme === undefined || bob === undefined) throw new Error('seed missing');
      await store.deleteEntities(['Alice']);
      const { facts } = await store.rankSignals([alice, acme, bob]);
      expect(facts.has(alice)).toBe(false);
      expect(facts.get(acme)).toEqual({ id: acme, name: 'Acme', entityType: 'company', status: 'activo', createdAt: T0, updatedAt: T0 + 5, metadataRatio: 3 / 4 });
      expect(facts.get(bob)).toMatchObject({ name: 'Bob', status: 'archivado', metadataRatio: 0 });
    });

    it('answers keyword and substring searches the same after optimizing its indexes, and keeps indexing writes', async () => {
      await seed();
      const before = { keywords: await store.searchKeywords('"anvils" OR "spanish"', 10), nodes: await store.searchNodes('an') };
      await store.optimizeIndexes();
      expect(await store.searchKeywords('"anvils" OR "spanish"', 10)).toEqual(before.keywords);
      expect(await store.searchNodes('an')).toEqual(before.nodes);
      await store.createEntities([{ name: 'Carol', entityType: 'person', observations: ['Sells anvils'] }], T0 + 1);
      expect((await store.searchKeywords('"anvils"', 10)).length).toBe(store.capabilities.fts ? 2 : 0);
      expect((await store.searchNodes('anvils')).entities.map((e) => e.name).sort()).toEqual(['Acme', 'Carol']);
    });

    it('stores, finds and forgets vectors when it has the vector capability', async () => {
      if (!store.capabilities.vector) return;
      await seed();
      await store.configureVectors('test-model', 3);
      const jobs = await store.takeEmbeddingJobs(10);
      expect(jobs.map((j) => j.entity.name).sort()).toEqual(['Acme', 'Alice', 'Bob']);
      expect(await store.countPendingEmbeddings(2)).toBe(2); // bounded by upTo
      expect(await store.countPendingEmbeddings(10)).toBe(3);
      const alice = jobs.find((j) => j.entity.name === 'Alice');
      expect(alice?.relations).toEqual([{ from: 'Alice', to: 'Acme', relationType: 'works_at' }]);
      const vectors: Record<string, number[]> = { Alice: [1, 0, 0], Acme: [0, 1, 0], Bob: [0, 0, 1] };
      await store.putEmbeddings(jobs.map((j) => ({ id: j.id, version: j.version, vector: Float32Array.from(vectors[j.entity.name] ?? []) })));
      expect(await store.vectorStatus()).toMatchObject({ model: 'test-model', dims: 3, indexed: 3, pending: 0 });
      const hits = await store.searchVectors(Float32Array.from([0.9, 0.1, 0]), 2);
      expect(hits[0]?.id).toBe(alice?.id);
      expect(hits[0]?.distance).toBeLessThan(0.05);
      // A change re-queues; deletion removes the vector.
      await store.addObservations([{ entityName: 'Acme', contents: ['Sells rockets'] }], T0);
      expect((await store.vectorStatus()).pending).toBe(1);
      expect(await store.countPendingEmbeddings(10)).toBe(1);
      await store.deleteEntities(['Alice']);
      expect((await store.vectorStatus()).indexed).toBe(2);
      // A new model drops old vectors and queues everything.
      expect(await store.configureVectors('other-model', 4)).toEqual({ reset: true });
      expect(await store.vectorStatus()).toMatchObject({ model: 'other-model', dims: 4, indexed: 0, pending: 2 });
    });

    it('keeps a change made while a job was being embedded queued', async () => {
      if (!store.capabilities.vector) return;
      await seed();
      await store.configureVectors('test-model', 3);
      const jobs = await store.takeEmbeddingJobs(10);
      await store.addObservations([{ entityName: 'Bob', contents: ['Changed meanwhile'] }], T0);
      await store.putEmbeddings(jobs.map((j) => ({ id: j.id, version: j.version, vector: Float32Array.from([1, 0, 0]) })));
      const pending = await store.takeEmbeddingJobs(10);
      expect(pending.map((j) => j.entity.name)).toEqual(['Bob']);
      expect(pending[0]?.entity.observations).toEqual(['Changed meanwhile']);
    });
  });
}
