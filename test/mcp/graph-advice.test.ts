/**
 * The size refusal's advice (issue 35, item 6) names the argument that shrinks what made a graph
 * answer large, with a value that brings it within the bound: each case is refused, then the same
 * answer cut as the advice says is measured within the bound.
 */
import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../src/core/limits.js';
import { structuredGraph } from '../../src/mcp/answers.js';

const bytesOf = (value: unknown): number => Buffer.byteLength(JSON.stringify({ jsonrpc: '2.0', id: 0, result: value }));
const textOf = (result: { content: { type: string; text?: string }[] }): string => result.content[0]?.text ?? '';

/** A relation with a context of `chars` quotes-and-letters (doubling once escaped in the text). */
const relation = (i: number, chars: number): Record<string, string> => ({
  from: 'Hub',
  to: `Leaf ${i}`,
  relationType: 'links',
  context: '"a"'.repeat(Math.ceil(chars / 3)).slice(0, chars),
});

describe('the size refusal of read_graph, search_nodes and open_nodes', () => {
  it('names relations_limit when the relations make the answer large, with a value that fits', () => {
    const value = {
      entities: [{ name: 'Hub', entityType: 'hub', observations: ['the hub'] }],
      relations: Array.from({ length: 4_000 }, (_, i) => relation(i, 1_500)),
    };
    const refused = structuredGraph('open_nodes', value);
    expect(refused.isError).toBe(true);
    const k = Number(/the relations make it large .*relations_limit: (\d+)/.exec(textOf(refused))?.[1]);
    expect(k).toBeGreaterThan(0);
    const followed = structuredGraph('open_nodes', { ...value, relations: value.relations.slice(0, k) });
    expect(followed.isError, textOf(followed).slice(0, 200)).toBeUndefined();
    expect(bytesOf(followed)).toBeLessThanOrEqual(LIMITS.maxAnswerBytes);
  });

  it('names limit for read_graph when many entities do, and fewer names for open_nodes', () => {
    const entities = Array.from({ length: 1_000 }, (_, i) => ({
      name: `Entity ${i}`,
      entityType: 'note',
      observations: ['"x"'.repeat(2_000)],
    }));
    const value = { entities, relations: [] };
    const graph = structuredGraph('read_graph', value);
    const k = Number(/entities make it large: call read_graph again with the same arguments and limit: (\d+)/.exec(textOf(graph))?.[1]);
    expect(k).toBeGreaterThan(0);
    expect(structuredGraph('read_graph', { entities: entities.slice(0, k), relations: [] }).isError).toBeUndefined();
    expect(textOf(structuredGraph('open_nodes', value))).toMatch(/call open_nodes with at most \d+ of the names at a time/);
  });

  it('names both paging arguments when neither alone brings it within', () => {
    const value = {
      entities: [{ name: 'Hub', entityType: 'hub', observations: Array.from({ length: 300 }, () => '"o"'.repeat(6_000)) }],
      relations: Array.from({ length: 3_000 }, (_, i) => relation(i, 2_000)),
    };
    const refused = textOf(structuredGraph('open_nodes', value));
    const both = /relations_limit: (\d+) and observations_limit: (\d+)/.exec(refused);
    expect(both, refused).not.toBeNull();
    const cut = {
      entities: [{ ...value.entities[0], observations: value.entities[0]?.observations.slice(0, Number(both?.[2])) }],
      relations: value.relations.slice(0, Number(both?.[1])),
    };
    expect(structuredGraph('open_nodes', cut).isError).toBeUndefined();
  });
});
