/** The graph capability: the official memory server's contract plus statuses, import and hydration. */
import { describe, expect, it } from 'vitest';
import { asEntityId, type EntityId } from '../../../src/core/types.js';
import { seed, T0, useStore, type StoreFactory } from './fixture.js';

export function graphConformance(name: string, makeStore: StoreFactory): void {
  describe(`Store conformance: ${name}: graph`, () => {
    const store = useStore(makeStore);
    const graph = () => store().graph;

    it('creates entities, skips names that exist, and reads them back in creation order', async () => {
      await seed(graph());
      const added = await graph().createEntities(
        [
          { name: 'Alice', entityType: 'robot', observations: ['ignored'] },
          { name: 'Carol', entityType: 'person', observations: ['New'] },
        ],
        T0,
      );
      expect(added).toEqual([{ name: 'Carol', entityType: 'person', observations: ['New'] }]);
      const read = await graph().readGraph();
      expect(read.entities.map((e) => e.name)).toEqual(['Alice', 'Acme', 'Bob', 'Carol']);
      expect(read.entities[0]).toEqual({ name: 'Alice', entityType: 'person', observations: ['Speaks Spanish', 'Works at Acme'] });
      expect(read.total).toBe(4);
    });

    it('creates relations once per exact triple and allows missing endpoints', async () => {
      await seed(graph());
      const added = await graph().createRelations(
        [
          { from: 'Alice', to: 'Acme', relationType: 'works_at' },
          { from: 'Alice', to: 'Nobody', relationType: 'admires' },
        ],
        T0,
      );
      expect(added).toEqual([{ from: 'Alice', to: 'Nobody', relationType: 'admires' }]);
      expect((await graph().readGraph()).relations).toHaveLength(3);
    });

    it('adds only new observations and reports them', async () => {
      await seed(graph());
      const results = await graph().addObservations([{ entityName: 'Alice', contents: ['Speaks Spanish', 'Likes tea'] }], T0);
      expect(results).toEqual([{ entityName: 'Alice', addedObservations: ['Likes tea'] }]);
    });

    it('saves nothing from add_observations when one entity is missing', async () => {
      await seed(graph());
      await expect(
        graph().addObservations(
          [
            { entityName: 'Alice', contents: ['Should not stay'] },
            { entityName: 'Ghost', contents: ['x'] },
          ],
          T0,
        ),
      ).rejects.toThrow(/Ghost not found/);
      const alice = (await graph().openNodes(['Alice'])).entities[0];
      expect(alice?.observations).not.toContain('Should not stay');
    });

    it('deletes entities with their relations, ignoring unknown names', async () => {
      await seed(graph());
      await graph().deleteEntities(['Alice', 'Unknown']);
      const read = await graph().readGraph();
      expect(read.entities.map((e) => e.name)).toEqual(['Acme', 'Bob']);
      expect(read.relations).toEqual([]);
    });

    it('deletes observations and relations by exact value', async () => {
      await seed(graph());
      await graph().deleteObservations(
        [
          { entityName: 'Alice', observations: ['Speaks Spanish', 'not there'] },
          { entityName: 'Nope', observations: ['x'] },
        ],
        T0,
      );
      await graph().deleteRelations(
        [
          { from: 'Bob', to: 'Alice', relationType: 'knows' },
          { from: 'Bob', to: 'Alice', relationType: 'other' },
        ],
        T0,
      );
      const read = await graph().readGraph();
      expect(read.entities[0]?.observations).toEqual(['Works at Acme']);
      expect(read.relations).toEqual([{ from: 'Alice', to: 'Acme', relationType: 'works_at' }]);
    });

    it('searches by case-insensitive substring of name, type or observation, best first', async () => {
      await seed(graph());
      const byObs = await graph().searchNodes('SPANISH');
      expect(byObs.entities.map((e) => e.name)).toEqual(['Alice']);
      // Relations with at least one endpoint in the set.
      expect(byObs.relations).toHaveLength(2);
      expect(byObs.total).toBe(1);
      const byType = await graph().searchNodes('person');
      expect(byType.entities.map((e) => e.name).sort()).toEqual(['Alice', 'Bob']);
      const ranked = await graph().searchNodes('ac');
      // 'Acme' matches by name, Alice only by an observation ('Works at Acme').
      expect(ranked.entities.map((e) => e.name)).toEqual(['Acme', 'Alice']);
      expect((await graph().searchNodes('')).entities).toHaveLength(3);
      expect(await graph().searchNodes('zzz-not-there')).toEqual({ entities: [], relations: [], total: 0 });
    });

    it('opens nodes by exact name with relations touching them', async () => {
      await seed(graph());
      const read = await graph().openNodes(['Acme', 'alice', 'Missing']);
      expect(read.entities.map((e) => e.name)).toEqual(['Acme']);
      expect(read.relations).toEqual([{ from: 'Alice', to: 'Acme', relationType: 'works_at' }]);
    });

    it('imports idempotently, merging observations of existing entities', async () => {
      await seed(graph());
      const batch = {
        entities: [
          { name: 'Alice', entityType: 'person', observations: ['Speaks Spanish', 'Plays chess'] },
          { name: 'Dan', entityType: 'person', observations: ['Imported'] },
        ],
        relations: [{ from: 'Dan', to: 'Alice', relationType: 'knows' }],
      };
      expect(await graph().importBatch(batch, T0)).toEqual({ entitiesAdded: 1, observationsAdded: 2, relationsAdded: 1 });
      expect(await graph().importBatch(batch, T0)).toEqual({ entitiesAdded: 0, observationsAdded: 0, relationsAdded: 0 });
    });

    it('imports a relation marked ended as ended, and one marked ended revives none (issue 33)', async () => {
      await seed(graph());
      const ended = { from: 'Dan', to: 'Alice', relationType: 'knew', ended_at: new Date(T0 - 1000).toISOString() };
      expect(await graph().importBatch({ entities: [], relations: [ended] }, T0)).toMatchObject({ relationsAdded: 1 });
      expect((await graph().readGraph()).relations).toContainEqual(ended);
      // A current relation of the same triple in a file is no reason to end it, nor an ended one to revive it.
      await graph().importBatch({ entities: [], relations: [{ from: 'Dan', to: 'Alice', relationType: 'knew' }] }, T0);
      expect((await graph().readGraph()).relations).toContainEqual(ended);
    });

    it('sets status and reports missing entities', async () => {
      await seed(graph());
      expect(await graph().setStatus('Alice', 'archived', T0)).toBe(true);
      expect(await graph().setStatus('Ghost', 'archived', T0)).toBe(false);
      const [id] = await graph().idsByName(['Alice']);
      const alice = (await graph().entitiesById([id ?? asEntityId(0)])).get(id ?? asEntityId(0));
      expect(alice?.status).toBe('archived');
    });

    it('gives the edges touching a set as id pairs, leaving out relations to names that are no entity', async () => {
      await seed(graph());
      await graph().createRelations([{ from: 'Acme', to: 'Nobody', relationType: 'sues' }], T0);
      const [alice, acme, bob] = await graph().idsByName(['Alice', 'Acme', 'Bob']);
      expect(await graph().edgesTouching([])).toEqual([]);
      expect(await graph().edgesTouching([acme ?? asEntityId(0)])).toEqual([{ from: alice, to: acme }]);
      expect(await graph().edgesTouching([bob ?? asEntityId(0)])).toEqual([{ from: bob, to: alice }]);
    });

    it('gives the edges among a set as id pairs in the order made, leaving out relations to entities outside it and ended ones', async () => {
      await seed(graph());
      await graph().createRelations([{ from: 'Acme', to: 'Nobody', relationType: 'sues' }], T0);
      const ended = { from: 'Acme', to: 'Bob', relationType: 'employed', ended_at: new Date(T0 - 1000).toISOString() };
      await graph().importBatch({ entities: [], relations: [ended] }, T0);
      const [alice, acme, bob] = (await graph().idsByName(['Alice', 'Acme', 'Bob'])).map((id) => id ?? asEntityId(0));
      expect(await graph().edgesAmong([])).toEqual([]);
      expect(await graph().edgesAmong([acme as EntityId])).toEqual([]);
      expect(await graph().edgesAmong([acme as EntityId, alice as EntityId])).toEqual([{ from: alice, to: acme }]);
      expect(await graph().edgesAmong([bob as EntityId, acme as EntityId, alice as EntityId])).toEqual([
        { from: alice, to: acme },
        { from: bob, to: alice },
      ]);
      // The same pairs as edgesTouching's between two members of the set.
      const all = [alice, acme, bob] as EntityId[];
      const members = new Set<EntityId>(all);
      expect(await graph().edgesAmong(all)).toEqual(
        (await graph().edgesTouching(all)).filter((e) => members.has(e.from) && members.has(e.to)),
      );
    });
  });
}
