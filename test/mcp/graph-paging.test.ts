/**
 * Bounded answers through a real MCP client: read_graph and search_nodes a page at a time, and
 * read_graph's compact form. A client that sends none of the new fields gets the official answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, textOf, type EraHarness } from '../helpers/fixtures.js';
import { ERAS } from '../helpers/mcp-eras.js';

interface Entity {
  name: string;
  entityType: string;
  observations?: string[];
  observationCount?: number;
}
interface Relation {
  from: string;
  to: string;
  relationType: string;
}
interface GraphAnswer {
  entities: Entity[];
  relations: Relation[];
  total?: number;
  offset?: number;
  limit?: number;
  next_offset?: number;
}

const key = (r: Relation): string => `${r.from}|${r.relationType}|${r.to}`;

/** Every page of one call, following next_offset from 0. */
async function allPages(h: EraHarness, tool: string, args: Record<string, unknown>, limit: number): Promise<GraphAnswer[]> {
  const pages: GraphAnswer[] = [];
  let offset: number | undefined = 0;
  while (offset !== undefined) {
    const page: GraphAnswer = await h.ok<GraphAnswer>(tool, { ...args, limit, offset });
    pages.push(page);
    expect(pages.length).toBeLessThan(100);
    offset = page.next_offset;
  }
  return pages;
}

describe.each(ERAS)('$name', ({ era }) => {
  describe('read_graph and search_nodes pages (issue 12)', () => {
    let h: EraHarness;
    beforeAll(async () => {
      h = await harness({ era });
      const entities = Array.from({ length: 23 }, (_, i) => ({
        name: `Node ${String(i).padStart(2, '0')}`,
        entityType: i % 3 === 0 ? 'harbour' : 'Note',
        observations: Array.from(
          { length: 1 + (i % 4) },
          (_, j) => `observation ${j} of node ${i}${i % 2 === 0 ? ' mentions the harbour' : ''}`,
        ),
      }));
      await h.ok('create_entities', { entities });
      await h.ok('create_relations', {
        relations: [
          ...entities.slice(1).map((e, i) => ({ from: e.name, to: entities[i]?.name ?? '', relationType: 'follows' })),
          { from: 'Nobody', to: 'Node 00', relationType: 'dangles' },
        ],
      });
    });
    afterAll(async () => {
      await h.close();
    });

    it('answers exactly as the official server when no page is asked for', async () => {
      const whole = await h.ok<GraphAnswer>('read_graph');
      expect(Object.keys(whole).sort()).toEqual(['entities', 'relations']);
      expect(whole.entities).toHaveLength(23);
      expect(whole.relations).toHaveLength(23);
      const found = await h.ok<GraphAnswer>('search_nodes', { query: 'harbour' });
      expect(Object.keys(found).sort()).toEqual(['entities', 'relations']);
    });

    it('search_nodes pages never repeat or skip an entity, keep the ranked order, and count the total', async () => {
      const whole = await h.ok<GraphAnswer>('search_nodes', { query: 'harbour' });
      expect(whole.entities.length).toBeGreaterThan(10);
      for (const limit of [1, 4, 7, 50]) {
        const pages = await allPages(h, 'search_nodes', { query: 'harbour' }, limit);
        expect(pages.flatMap((p) => p.entities.map((e) => e.name))).toEqual(whole.entities.map((e) => e.name));
        for (const p of pages) {
          expect(p.total).toBe(whole.entities.length);
          expect(p.limit).toBe(limit);
          // Relations with at least one endpoint on the page.
          const names = new Set(p.entities.map((e) => e.name));
          const expected = whole.relations
            .filter((r) => names.has(r.from) || names.has(r.to))
            .map(key)
            .sort();
          expect(p.relations.map(key).sort()).toEqual(expected);
        }
      }
    });

    it('read_graph pages hold every entity once and every relation exactly once, a dangling one included', async () => {
      const whole = await h.ok<GraphAnswer>('read_graph');
      const pages = await allPages(h, 'read_graph', {}, 5);
      expect(pages).toHaveLength(5);
      expect(pages.flatMap((p) => p.entities.map((e) => e.name)).sort()).toEqual(whole.entities.map((e) => e.name).sort());
      const relations = pages.flatMap((p) => p.relations.map(key));
      expect(relations.sort()).toEqual(whole.relations.map(key).sort());
      expect(new Set(relations).size).toBe(relations.length);
      expect(pages.every((p) => p.total === 23)).toBe(true);
    });

    it('an offset alone reads from there; past the end gives no entities and the total', async () => {
      const tail = await h.ok<GraphAnswer>('read_graph', { offset: 20 });
      expect(tail.entities.map((e) => e.name)).toEqual(['Node 20', 'Node 21', 'Node 22']);
      expect(tail.next_offset).toBeUndefined();
      const past = await h.ok<GraphAnswer>('search_nodes', { query: 'harbour', offset: 500, limit: 10 });
      expect(past.entities).toEqual([]);
      expect(past.total).toBeGreaterThan(10);
    });

    it('compact read_graph gives names, types and observation counts, paged the same way', async () => {
      const whole = await h.ok<GraphAnswer>('read_graph');
      const compact = await h.ok<GraphAnswer>('read_graph', { compact: true });
      expect(compact.entities).toEqual(
        whole.entities.map((e) => ({ name: e.name, entityType: e.entityType, observationCount: e.observations?.length })),
      );
      expect(compact.relations.map(key).sort()).toEqual(whole.relations.map(key).sort());
      const page = await h.ok<GraphAnswer>('read_graph', { compact: true, limit: 10, offset: 10 });
      expect(page.entities.map((e) => e.name)).toEqual(whole.entities.slice(10, 20).map((e) => e.name));
      expect(page.next_offset).toBe(20);
      expect(JSON.stringify(compact).length).toBeLessThan(JSON.stringify(whole).length);
    });

    it('refuses a page size out of range, naming the field and the range', async () => {
      for (const limit of [0, 1001, 2.5]) {
        const result = await h.call('search_nodes', { query: 'harbour', limit });
        expect(result.isError).toBe(true);
        expect(textOf(result)).toMatch(/limit must be a whole number from 1 to 1000/);
      }
      const negative = await h.call('read_graph', { offset: -1 });
      expect(negative.isError).toBe(true);
      expect(textOf(negative)).toMatch(/offset must be a whole number from 0/);
    });
  });

  describe("pages of each entity's observations (issue 26)", () => {
    let h: EraHarness;
    const notes = Array.from({ length: 12 }, (_, i) => `harbour note ${i}`);
    beforeAll(async () => {
      h = await harness({ era });
      await h.client.listTools(); // the client checks each answer against its outputSchema, as real clients do
      await h.ok('create_entities', {
        entities: [
          { name: 'Log', entityType: 'log', observations: notes },
          { name: 'Short', entityType: 'log', observations: ['one harbour note'] },
        ],
      });
    });
    afterAll(async () => {
      await h.close();
    });

    it('open_nodes, read_graph and search_nodes return one page of each entity, its count and the next offset', async () => {
      for (const [tool, args] of [
        ['open_nodes', { names: ['Log', 'Short'] }],
        ['read_graph', {}],
        ['search_nodes', { query: 'harbour' }],
      ] as const) {
        const page = await h.ok<GraphAnswer>(tool, { ...args, observations_offset: 5, observations_limit: 5 });
        const log = page.entities.find((e) => e.name === 'Log');
        expect(log, tool).toEqual({
          name: 'Log',
          entityType: 'log',
          observations: notes.slice(5, 10),
          observationCount: 12,
          next_observations_offset: 10,
        });
        expect(
          page.entities.find((e) => e.name === 'Short'),
          tool,
        ).toEqual({ name: 'Short', entityType: 'log', observations: [], observationCount: 1 });
      }
      const last = await h.ok<GraphAnswer>('open_nodes', { names: ['Log'], observations_offset: 10 });
      expect(last.entities[0]).toEqual({ name: 'Log', entityType: 'log', observations: notes.slice(10), observationCount: 12 });
    });

    it('refuses compact with an observations page, and a page size out of range', async () => {
      const both = await h.call('read_graph', { compact: true, observations_limit: 5 });
      expect(both.isError).toBe(true);
      expect(textOf(both)).toMatch(/compact: true carries no observations.*drop one or the other/);
      const zero = await h.call('open_nodes', { names: ['Log'], observations_limit: 0 });
      expect(zero.isError).toBe(true);
      expect(textOf(zero)).toMatch(/observations_limit must be a whole number from 1 to 1000/);
    });
  });
});
