/**
 * The maintenance capability (optional): supersedes with their history, ended relations, the reads
 * of the tidying tools, and entity splits, each all or nothing. Skipped for a store without it
 * (`store.maintenance` undefined). The MCP side of the same tools is test/mcp/maintenance.test.ts.
 */
import { keywordExpr } from '../../helpers/fixtures.js';
import { describe, expect, it } from 'vitest';
import type { MaintenanceStore, Store } from '../../../src/store/store.js';
import { seed, T0, useStore, type StoreFactory } from './fixture.js';

export function maintenanceConformance(name: string, makeStore: StoreFactory): void {
  describe(`Store conformance: ${name}: maintenance`, () => {
    const store = useStore(makeStore, (s: Store) =>
      s.maintenance === undefined ? `${name} has no maintenance tools (store.maintenance is undefined)` : undefined,
    );
    const maintenance = (): MaintenanceStore => {
      const m = store().maintenance;
      if (m === undefined) throw new Error('skipped above');
      return m;
    };

    it('supersedes an observation: it leaves every read and the keyword index, and its history keeps it with what replaced it', async () => {
      const { graph, keywords } = store();
      const m = maintenance();
      await seed(graph);
      await graph.addObservations([{ entityName: 'Alice', contents: ['Lives in Lisbon'], kind: 'place' }], T0 + 1);
      const results = await m.supersede(
        [
          { entityName: 'Alice', contents: ['Lives in Oslo', 'Moved in May'], kind: 'place', supersedes: 'Lives in Lisbon' },
          { entityName: 'Acme', contents: ['Makes rockets'] },
        ],
        T0 + 2,
      );
      expect(results).toEqual([
        { entityName: 'Alice', addedObservations: ['Lives in Oslo', 'Moved in May'], superseded: 'Lives in Lisbon' },
        { entityName: 'Acme', addedObservations: ['Makes rockets'] },
      ]);
      const open = await graph.openNodes(['Alice']);
      expect(open.entities[0]?.observations).toEqual(['Speaks Spanish', 'Works at Acme', 'Lives in Oslo', 'Moved in May']);
      expect((await graph.searchNodes('lisbon')).entities).toEqual([]);
      const [alice] = await graph.idsByName(['Alice']);
      if (keywords !== undefined) {
        expect(await keywords.search(keywordExpr('"lisbon"'), 10)).toEqual([]);
        expect((await keywords.search(keywordExpr('"oslo"'), 10)).map((h) => h.id)).toEqual([alice]);
      }
      const history = await m.history(['Alice', 'Acme', 'Nobody']);
      expect(Object.fromEntries(history.superseded)).toEqual({
        Alice: [
          {
            content: 'Lives in Lisbon',
            kind: 'place',
            createdAt: T0 + 1,
            supersededAt: T0 + 2,
            supersededBy: 'Lives in Oslo | Moved in May',
          },
        ],
      });
      expect(history.endedRelations).toEqual([]);
      const overview = await m.overview();
      expect(overview.find((e) => e.name === 'Alice')).toMatchObject({ observationCount: 4, supersededCount: 1, accessCount: 0 });
      expect((await m.observationsOf('Alice'))?.observations).toContainEqual({ content: 'Lives in Oslo', kind: 'place' });
      expect(await m.observationsOf('Nobody')).toBeUndefined();
    });

    it('refuses a supersede of what is not current, of itself, or on a missing entity, saving nothing of the call', async () => {
      const { graph } = store();
      const m = maintenance();
      await seed(graph);
      const before = await graph.readGraph();
      await expect(
        m.supersede(
          [
            { entityName: 'Alice', contents: ['Speaks Basque'] },
            { entityName: 'Alice', contents: ['Works at Initech'], supersedes: 'Works at Globex' },
          ],
          T0 + 1,
        ),
      ).rejects.toThrow(/observations\[1\]\.supersedes: "Works at Globex" is not a current observation of Alice/);
      await expect(m.supersede([{ entityName: 'Alice', contents: ['Speaks Spanish'], supersedes: 'Speaks Spanish' }], T0)).rejects.toThrow(
        /cannot replace itself/,
      );
      await expect(m.supersede([{ entityName: 'Nobody', contents: ['x'], supersedes: 'y' }], T0)).rejects.toThrow(/Nobody/);
      expect(await graph.readGraph()).toEqual(before);
      expect((await m.history(['Alice'])).superseded.size).toBe(0);
    });

    it('lets two supersedes of one observation race: one replaces it, the other is refused, the history holds it once', async () => {
      const { graph } = store();
      const m = maintenance();
      await seed(graph);
      const outcomes = await Promise.allSettled(
        ['Speaks Catalan', 'Speaks Galician'].map((text, i) =>
          m.supersede([{ entityName: 'Alice', contents: [text], supersedes: 'Speaks Spanish' }], T0 + 1 + i),
        ),
      );
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      expect(outcomes.filter((o) => o.status === 'rejected')).toHaveLength(1);
      expect((await m.history(['Alice'])).superseded.get('Alice')).toHaveLength(1);
      expect((await m.observationsOf('Alice'))?.observations).toHaveLength(2);
    });

    it('ends a relation: listed still with ended_at, out of degree and graph edges, ended once; create_relations makes it current again', async () => {
      const { graph, usage } = store();
      const m = maintenance();
      await seed(graph);
      const [alice, acme] = await graph.idsByName(['Alice', 'Acme']);
      if (alice === undefined || acme === undefined) throw new Error('seed missing');
      const worksAt = { from: 'Alice', to: 'Acme', relationType: 'works_at' };
      expect(await m.endRelation(worksAt, T0 + 5)).toEqual({ state: 'ended', endedAt: T0 + 5 });
      expect(await m.endRelation(worksAt, T0 + 6)).toEqual({ state: 'already-ended', endedAt: T0 + 5 });
      expect(await m.endRelation({ ...worksAt, relationType: 'owns' }, T0 + 6)).toEqual({ state: 'missing' });
      // Still listed by the store, marked (issue 33): the tools leave it out unless asked.
      expect((await graph.readGraph()).relations).toContainEqual({ ...worksAt, ended_at: new Date(T0 + 5).toISOString() });
      expect((await graph.openNodes(['Acme'])).relations).toEqual([{ ...worksAt, ended_at: new Date(T0 + 5).toISOString() }]);
      expect((await usage.signals([alice])).degree.get(alice)).toBe(1); // Bob knows Alice, still current
      expect(await graph.edgesTouching([acme])).toEqual([]);
      expect((await m.history(['Acme'])).endedRelations).toEqual([{ ...worksAt, endedAt: T0 + 5 }]);
      expect(await graph.createRelations([worksAt, worksAt], T0 + 7)).toEqual([worksAt]);
      expect(await graph.createRelations([worksAt], T0 + 8)).toEqual([]);
      expect((await m.history(['Acme'])).endedRelations).toEqual([]);
      expect(await graph.edgesTouching([acme])).toEqual([{ from: alice, to: acme }]);
      expect((await graph.readGraph()).relations.filter((r) => r.relationType === 'works_at')).toEqual([worksAt]);
    });

    it('splits an entity: observations move with kind and time, children are linked and indexed, the original keeps the rest', async () => {
      const { graph, keywords } = store();
      const m = maintenance();
      await seed(graph);
      await graph.addObservations([{ entityName: 'Alice', contents: ['Plays chess', 'Chess rating 1800'], kind: 'hobby' }], T0 + 1);
      const outcome = await m.executeSplit(
        {
          original: 'Alice',
          parent: 'Acme',
          children: [
            { name: 'Alice chess', entityType: 'hobby', observations: ['Plays chess', 'Chess rating 1800'] },
            { name: 'Alice languages', entityType: 'skill', observations: ['Speaks Spanish'] },
          ],
        },
        T0 + 2,
      );
      expect(outcome).toEqual({
        newEntities: ['Alice chess', 'Alice languages'],
        movedObservations: 3,
        relationsCreated: 4,
        originalObservationsRemaining: 1,
      });
      const open = await graph.openNodes(['Alice', 'Alice chess', 'Alice languages']);
      expect(open.entities).toEqual([
        { name: 'Alice', entityType: 'person', observations: ['Works at Acme'] },
        { name: 'Alice chess', entityType: 'hobby', observations: ['Plays chess', 'Chess rating 1800'] },
        { name: 'Alice languages', entityType: 'skill', observations: ['Speaks Spanish'] },
      ]);
      expect(open.relations).toEqual(
        expect.arrayContaining([
          { from: 'Acme', to: 'Alice chess', relationType: 'contains' },
          { from: 'Alice chess', to: 'Acme', relationType: 'part_of' },
        ]),
      );
      const [chess] = await graph.idsByName(['Alice chess']);
      if (chess === undefined) throw new Error('child missing');
      expect((await graph.entitiesById([chess])).get(chess)).toMatchObject({
        kinds: ['hobby', 'hobby'],
        status: 'active',
        createdAt: T0 + 2,
      });
      if (keywords !== undefined) expect((await keywords.search(keywordExpr('"rating"'), 10)).map((h) => h.id)).toEqual([chess]);
      expect((await store().stats()).entities).toBe(5);
    });

    it('a split that moves every observation leaves the original its summary, in the same transaction, never empty (issue 33)', async () => {
      const { graph, keywords } = store();
      const m = maintenance();
      await seed(graph);
      const summary = 'Split on 2026-01-01 into Alice work and Alice languages, which hold its observations now (open_nodes reads them).';
      const outcome = await m.executeSplit(
        {
          original: 'Alice',
          parent: 'Alice',
          children: [
            { name: 'Alice work', entityType: 'person', observations: ['Works at Acme'] },
            { name: 'Alice languages', entityType: 'skill', observations: ['Speaks Spanish'] },
          ],
          summary,
        },
        T0 + 2,
      );
      expect(outcome).toMatchObject({ movedObservations: 2, originalObservationsRemaining: 0, summaryAdded: summary });
      const open = await graph.openNodes(['Alice']);
      expect(open.entities).toEqual([{ name: 'Alice', entityType: 'person', observations: [summary] }]);
      expect(open.relations).toEqual(expect.arrayContaining([{ from: 'Alice', to: 'Alice work', relationType: 'contains' }]));
      const [alice] = await graph.idsByName(['Alice']);
      if (keywords !== undefined) expect((await keywords.search(keywordExpr('"hold"'), 10)).map((h) => h.id)).toEqual([alice]);
      // A split that leaves the original something of its own adds no summary.
      await graph.createEntities([{ name: 'Carol', entityType: 'person', observations: ['Likes tea', 'Likes jazz'] }], T0 + 3);
      const partial = await m.executeSplit(
        {
          original: 'Carol',
          parent: 'Carol',
          children: [{ name: 'Carol tea', entityType: 'taste', observations: ['Likes tea'] }],
          summary,
        },
        T0 + 4,
      );
      expect(partial.summaryAdded).toBeUndefined();
      expect((await graph.openNodes(['Carol'])).entities[0]?.observations).toEqual(['Likes jazz']);
    });

    it('refuses a split that would overwrite, invent or double an observation, changing nothing', async () => {
      const { graph } = store();
      const m = maintenance();
      await seed(graph);
      const before = await graph.readGraph();
      const child = (name: string, observations: string[]) => ({ name, entityType: 't', observations });
      const attempts = [
        { children: [child('A1', ['Speaks Spanish']), child('Bob', ['Works at Acme'])], error: /exists already/ },
        { children: [child('A1', ['Speaks Spanish']), child('A1', ['Works at Acme'])], error: /given twice/ },
        { children: [child('A1', ['Flies planes'])], error: /"Flies planes" is not a current observation of Alice/ },
        { children: [child('A1', ['Speaks Spanish']), child('A2', ['Speaks Spanish'])], error: /given to both/ },
      ];
      for (const { children, error } of attempts) {
        await expect(m.executeSplit({ original: 'Alice', parent: 'Alice', children }, T0 + 1)).rejects.toThrow(error);
      }
      await expect(m.executeSplit({ original: 'Nobody', parent: 'Nobody', children: [] }, T0)).rejects.toThrow(/Nobody/);
      expect(await graph.readGraph()).toEqual(before);
      expect((await store().stats()).entities).toBe(3);
      expect(await graph.idsByName(['A1'])).toEqual([]);
    });
  });
}
