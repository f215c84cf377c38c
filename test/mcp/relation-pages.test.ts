/**
 * An entity with 150,000 relations stays readable (issue 35, item 6): open_nodes, search_nodes and
 * read_graph answer with a page of its relations, relationCount and next_relations_offset, and the
 * pages walk every relation exactly once (relations_offset, relations_limit). An answer still over
 * the bound is refused with the argument that shrinks it, and following that advice succeeds. The
 * hubs are written through the store's batch import (one call, not 150,000 tool calls); run on
 * PostgreSQL too by on-postgres.test.ts.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../src/core/limits.js';
import { harness, textOf, type Harness } from '../helpers/fixtures.js';

interface Relation {
  from: string;
  to: string;
  relationType: string;
}
interface Answer {
  entities: { name: string; observations?: string[]; observationCount?: number; next_observations_offset?: number }[];
  relations: Relation[];
  relationCount?: number;
  next_relations_offset?: number;
}

const HUB = 'Hub';
const HUB_RELATIONS = 150_000;
/** Another hub whose observations are as large as an entity's may be: its answer is over the bound whatever its relations. */
const HEAVY = 'Heavy hub';
const HEAVY_RELATIONS = 20_000;
const key = (r: Relation): string => `${r.from}|${r.relationType}|${r.to}`;

/** One observation of maxObservationChars that doubles in JSON: a list of grades, every other character a quote. */
const quoted = (i: number): string =>
  (`note ${i}: [` + '"A","B",'.repeat(LIMITS.maxObservationChars / 8)).slice(0, LIMITS.maxObservationChars);

/** The size of an answer as it travels. */
const bytesOf = (result: CallToolResult): number => Buffer.byteLength(JSON.stringify({ jsonrpc: '2.0', id: 0, result }));

describe("issue 35 item 6: a hub's relations are read a page at a time", () => {
  let h: Harness;
  const call = async (name: string, args: Record<string, unknown>): Promise<CallToolResult> => h.call(name, args);
  const answerOf = (result: CallToolResult): Answer => {
    expect(result.isError, textOf(result).slice(0, 400)).toBeFalsy();
    expect(bytesOf(result)).toBeLessThanOrEqual(LIMITS.maxAnswerBytes);
    return result.structuredContent as unknown as Answer;
  };

  /** Every relation of one call, following next_relations_offset from 0. */
  async function walk(tool: string, args: Record<string, unknown>): Promise<{ keys: string[]; counts: Set<number>; pages: number }> {
    const keys: string[] = [];
    const counts = new Set<number>();
    let offset: number | undefined = 0;
    let pages = 0;
    while (offset !== undefined) {
      const page = answerOf(await call(tool, { ...args, relations_offset: offset }));
      keys.push(...page.relations.map(key));
      counts.add(page.relationCount ?? -1);
      offset = page.next_relations_offset;
      expect(++pages).toBeLessThanOrEqual(HUB_RELATIONS / 1_000);
    }
    return { keys, counts, pages };
  }

  beforeAll(async () => {
    h = await harness();
    await h.ok('create_entities', {
      entities: [
        { name: HUB, entityType: 'hub', observations: ['the hub of the harbour'] },
        { name: HEAVY, entityType: 'hub', observations: [] },
      ],
    });
    const now = Date.now();
    const spokes = (from: string, n: number): Relation[] =>
      Array.from({ length: n }, (_, i) => ({ from, to: `Leaf ${i}`, relationType: 'links' }));
    await h.store.graph.importBatch({ entities: [], relations: spokes(HUB, HUB_RELATIONS) }, now);
    await h.store.graph.importBatch({ entities: [], relations: spokes(HEAVY, HEAVY_RELATIONS) }, now);
    for (let c = 0; c < 4; c++) {
      const contents = Array.from({ length: 50 }, (_, i) => quoted(c * 50 + i));
      await h.ok('add_observations', { observations: [{ entityName: HEAVY, contents }] });
    }
  }, 180_000);

  afterAll(async () => {
    await h.close();
  });

  it('open_nodes answers with the first page of the relations, how many there are and where the next page starts', async () => {
    const page = answerOf(await call('open_nodes', { names: [HUB] }));
    expect(page.entities.map((e) => e.name)).toEqual([HUB]);
    expect(page.relationCount).toBe(HUB_RELATIONS);
    expect(page.relations).toHaveLength(LIMITS.maxRelationsPerPage);
    expect(page.next_relations_offset).toBe(LIMITS.maxRelationsPerPage);
    expect(page.relations[0]).toEqual({ from: HUB, to: 'Leaf 0', relationType: 'links' });
  });

  it('search_nodes and read_graph {limit: 1, compact: true} answer within the bound, with the counts', async () => {
    const found = answerOf(await call('search_nodes', { query: 'harbour' }));
    expect(found.entities.map((e) => e.name)).toEqual([HUB]);
    expect(found.relationCount).toBe(HUB_RELATIONS);
    expect(found.next_relations_offset).toBe(found.relations.length);
    const outline = answerOf(await call('read_graph', { limit: 1, compact: true }));
    expect(outline.entities.map((e) => e.name)).toEqual([HUB]);
    expect(outline.relationCount).toBe(HUB_RELATIONS);
    expect(outline.relations.length).toBeGreaterThan(0);
    expect(outline.next_relations_offset).toBe(outline.relations.length);
  });

  it('relations_offset and relations_limit walk every relation exactly once, on each of the three tools', async () => {
    const expected = Array.from({ length: HUB_RELATIONS }, (_, i) => `${HUB}|links|Leaf ${i}`);
    for (const [tool, args] of [
      ['open_nodes', { names: [HUB], relations_limit: LIMITS.maxRelationsPerPage }],
      ['search_nodes', { query: 'harbour' }],
      ['read_graph', { limit: 1, compact: true }],
    ] as const) {
      const { keys, counts, pages } = await walk(tool, args);
      expect(counts, tool).toEqual(new Set([HUB_RELATIONS]));
      expect(keys, tool).toEqual(expected);
      expect(pages, tool).toBeGreaterThan(1);
    }
  }, 120_000);

  it('a page past the end is empty and says how many there are; relations_limit: 0 counts alone', async () => {
    const past = answerOf(await call('open_nodes', { names: [HUB], relations_offset: HUB_RELATIONS + 5 }));
    expect(past.relations).toEqual([]);
    expect(past.relationCount).toBe(HUB_RELATIONS);
    expect(past.next_relations_offset).toBeUndefined();
    const counted = answerOf(await call('open_nodes', { names: [HUB], relations_limit: 0 }));
    expect(counted.relations).toEqual([]);
    expect(counted.relationCount).toBe(HUB_RELATIONS);
  });

  it('refuses an answer still over the bound with the argument that shrinks it, and following that advice succeeds', async () => {
    const refused = await call('open_nodes', { names: [HEAVY] });
    expect(refused.isError).toBe(true);
    const advice = textOf(refused);
    expect(advice).toMatch(/more than the 9\.0 MiB an MCP client takes in one message/);
    // The advice names arguments with values; the test does exactly what it says.
    const named = Object.fromEntries(
      [...advice.matchAll(/\b(relations_limit|observations_limit|limit): (\d+)/g)].map((m) => [m[1], Number(m[2])]),
    );
    expect(Object.keys(named).length).toBeGreaterThan(0);
    const followed = answerOf(await call('open_nodes', { names: [HEAVY], ...named }));
    expect(followed.entities.map((e) => e.name)).toEqual([HEAVY]);
    expect(followed.relationCount).toBe(HEAVY_RELATIONS);
    // And the pages it points to are within the bound too.
    const entity = followed.entities[0];
    const next = await call('open_nodes', {
      names: [HEAVY],
      ...named,
      ...(entity?.next_observations_offset === undefined ? {} : { observations_offset: entity.next_observations_offset }),
      ...(followed.next_relations_offset === undefined ? {} : { relations_offset: followed.next_relations_offset }),
    });
    answerOf(next);
  }, 60_000);
});
