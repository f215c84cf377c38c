/**
 * Paged graph answers (issue 12): read_graph, its outline and search_nodes cut into pages. Walking
 * the pages of one answer gives every entity once, in the unpaged order, and every relation the
 * contract puts on a page; each page carries the whole answer's size.
 */
import { describe, expect, it } from 'vitest';
import type { Relation } from '../../../src/core/types.js';
import type { GraphPage, GraphStore, Page } from '../../../src/store/store.js';
import { T0, useStore, type StoreFactory } from './fixture.js';

const PAGE_SIZES = [1, 2, 3, 5, 8, 100] as const;

/**
 * 24 entities matching 'kal' in every tier (exact name, name prefix, name substring, type,
 * observation, in either case) or not at all, with ties spread over the creation order; relations
 * inside the graph, to a name that is no entity, and from one (dangling).
 */
async function seedForPaging(graph: GraphStore): Promise<void> {
  const entities = [
    { name: 'Kalo 1', entityType: 'note', observations: ['first'] },
    { name: 'Other 1', entityType: 'note', observations: ['nothing here'] },
    { name: 'the kalo', entityType: 'note', observations: [] },
    { name: 'Typed 1', entityType: 'KALorie', observations: ['x', 'y'] },
    { name: 'Obs 1', entityType: 'note', observations: ['mentions kal once', 'twice KAL'] },
    { name: 'kal', entityType: 'note', observations: ['exact'] },
    { name: 'Other 2', entityType: 'note', observations: ['k a l'] },
    { name: 'kalo 2', entityType: 'note', observations: [] },
    { name: 'Obs 2', entityType: 'note', observations: ['no', 'still no', 'there: Kal'] },
    { name: 'Typed 2', entityType: 'kal-type', observations: [] },
    { name: 'a KAL b', entityType: 'note', observations: ['z'] },
    { name: 'Other 3', entityType: 'thing', observations: ['w'] },
  ];
  // The same shapes again, created later, so every tier has ties far apart in creation order.
  await graph.createEntities(entities, T0);
  await graph.createEntities(
    entities.map((e) => ({ ...e, name: `${e.name} bis` })),
    T0 + 1,
  );
  await graph.createRelations(
    [
      { from: 'Kalo 1', to: 'Other 1', relationType: 'links' },
      { from: 'Other 2', to: 'Obs 2', relationType: 'links' },
      { from: 'Obs 1 bis', to: 'Nobody', relationType: 'points_at' },
      { from: 'Ghost', to: 'kal', relationType: 'haunts' },
      { from: 'Ghost', to: 'Nobody', relationType: 'haunts' },
      { from: 'Other 3 bis', to: 'Kalo 1', relationType: 'links' },
    ],
    T0 + 2,
  );
}

/** Every page of one answer, from offset 0 until a page starts at or past the total. */
async function walk(read: (page: Page) => Promise<GraphPage>, limit: number): Promise<GraphPage[]> {
  const pages: GraphPage[] = [];
  for (let offset = 0; ; offset += limit) {
    const page = await read({ limit, offset });
    pages.push(page);
    expect(page.entities.length).toBeLessThanOrEqual(limit);
    if (offset + limit >= page.total) return pages;
  }
}

const key = (r: Relation): string => JSON.stringify([r.from, r.to, r.relationType]);
const sortedKeys = (relations: readonly Relation[]): string[] => relations.map(key).sort();

export function graphPagingConformance(name: string, makeStore: StoreFactory): void {
  describe(`Store conformance: ${name}: graph pages`, () => {
    const store = useStore(makeStore);
    const graph = () => store().graph;

    it('search_nodes pages never repeat or skip an entity: together they are the unpaged answer, in its order', async () => {
      await seedForPaging(graph());
      // 'kal' goes through the substring index, 'ka' (under 3 characters) scans; '' matches everything.
      for (const query of ['kal', 'KAL', 'ka', '', 'bis', 'zzz']) {
        const whole = await graph().searchNodes(query);
        expect(whole.total).toBe(whole.entities.length);
        for (const limit of PAGE_SIZES) {
          const pages = await walk((page) => graph().searchNodes(query, page), limit);
          for (const page of pages) {
            expect(page.total).toBe(whole.total);
            // Relations with at least one endpoint in the page, as the unpaged answer has them.
            const names = new Set(page.entities.map((e) => e.name));
            const touching = whole.relations.filter((r) => names.has(r.from) || names.has(r.to));
            expect(sortedKeys(page.relations)).toEqual(sortedKeys(touching));
          }
          expect(pages.flatMap((p) => p.entities)).toEqual(whole.entities);
        }
      }
      // Best first: the exact name, then prefixes, substrings, types and observations.
      const ranked = (await graph().searchNodes('kal')).entities.map((e) => e.name);
      expect(ranked.slice(0, 6)).toEqual(['kal', 'Kalo 1', 'kalo 2', 'Kalo 1 bis', 'kal bis', 'kalo 2 bis']);
      expect(ranked.slice(-4)).toEqual(['Obs 1', 'Obs 2', 'Obs 1 bis', 'Obs 2 bis']);
      expect(ranked).toHaveLength(18);
    });

    it('search_nodes reports the total on an empty page past the end or of size 0', async () => {
      await seedForPaging(graph());
      const whole = await graph().searchNodes('kal');
      expect(await graph().searchNodes('kal', { limit: 5, offset: 500 })).toEqual({ entities: [], relations: [], total: whole.total });
      expect(await graph().searchNodes('kal', { limit: 0, offset: 0 })).toEqual({ entities: [], relations: [], total: whole.total });
      expect(await graph().searchNodes('zzz', { limit: 5, offset: 0 })).toEqual({ entities: [], relations: [], total: 0 });
    });

    it('read_graph pages hold every entity once in creation order and every relation exactly once, dangling ones too', async () => {
      await seedForPaging(graph());
      const whole = await graph().readGraph();
      expect(whole.total).toBe(24);
      for (const limit of PAGE_SIZES) {
        const pages = await walk((page) => graph().readGraph(page), limit);
        expect(pages.every((p) => p.total === 24)).toBe(true);
        expect(pages.flatMap((p) => p.entities)).toEqual(whole.entities);
        const relations = pages.flatMap((p) => p.relations);
        expect(relations).toHaveLength(whole.relations.length);
        expect(sortedKeys(relations)).toEqual(sortedKeys(whole.relations));
        // A relation sits on the page of its `from` entity; one from no entity on the last page.
        const entityNames = new Set(whole.entities.map((e) => e.name));
        pages.forEach((page, i) => {
          const names = new Set(page.entities.map((e) => e.name));
          for (const r of page.relations) expect(names.has(r.from) || (!entityNames.has(r.from) && i === pages.length - 1)).toBe(true);
        });
      }
      expect(await graph().readGraph({ limit: 10, offset: 100 })).toEqual({ entities: [], relations: [], total: 24 });
    });

    it('read_graph of a graph with no entity puts its dangling relations on the first page', async () => {
      await graph().createRelations([{ from: 'Ghost', to: 'Nobody', relationType: 'haunts' }], T0);
      expect(await graph().readGraph({ limit: 10, offset: 0 })).toEqual({
        entities: [],
        relations: [{ from: 'Ghost', to: 'Nobody', relationType: 'haunts' }],
        total: 0,
      });
      expect(await graph().readGraph()).toEqual({
        entities: [],
        relations: [{ from: 'Ghost', to: 'Nobody', relationType: 'haunts' }],
        total: 0,
      });
    });

    it('the outline gives names, types and observation counts, paged like read_graph', async () => {
      await seedForPaging(graph());
      const whole = await graph().readGraph();
      const outline = await graph().outline();
      expect(outline.total).toBe(24);
      expect(outline.entities).toEqual(
        whole.entities.map((e) => ({ name: e.name, entityType: e.entityType, observationCount: e.observations.length })),
      );
      expect(outline.relations).toEqual(whole.relations);
      expect(outline.entities.find((e) => e.name === 'Obs 2')?.observationCount).toBe(3);
      expect(outline.entities.find((e) => e.name === 'the kalo')?.observationCount).toBe(0);
      for (const limit of PAGE_SIZES) {
        let relations: Relation[] = [];
        for (let offset = 0; offset < 24; offset += limit) {
          const page = await graph().outline({ limit, offset });
          const full = await graph().readGraph({ limit, offset });
          expect(page.total).toBe(24);
          expect(page.entities.map((e) => e.name)).toEqual(full.entities.map((e) => e.name));
          expect(page.relations).toEqual(full.relations);
          relations = relations.concat(page.relations);
        }
        expect(sortedKeys(relations)).toEqual(sortedKeys(whole.relations));
      }
    });
  });
}
