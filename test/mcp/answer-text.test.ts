/**
 * What an agent reads (issue 25, item 7): Limbic's own tools answer in compact text, one line of
 * JSON without nulls, routing_strategy once per answer and no score the order does not follow,
 * while structuredContent keeps every field. The nine official tools keep the official server's
 * pretty-printed text (compat/official-memory-server.md fixes it). Real MCP client, in-process.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, textOf, type Harness } from '../helpers/fixtures.js';

/** Every occurrence of a JSON key in a text. */
const keyCount = (text: string, key: string): number => text.split(`"${key}":`).length - 1;

/** The text is one line of JSON: exactly what JSON.stringify writes without indentation. */
function expectCompactJson(result: CallToolResult): Record<string, unknown> {
  expect(result.isError).toBeFalsy();
  const text = textOf(result);
  const parsed = JSON.parse(text) as Record<string, unknown>;
  expect(text).toBe(JSON.stringify(parsed));
  expect(text).not.toMatch(/\bnull\b/);
  return parsed;
}

interface Scored {
  name: string;
  rrf_score?: number;
  routing_strategy?: string;
  scores?: { rrf?: number | null; rerank_score?: number | null; limbic?: { routing_strategy?: string } | null };
}

describe('answer text (issue 25, item 7)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ embedder: 'fake' });
    await h.ok('create_entities', {
      entities: [
        { name: 'Apollo', entityType: 'Project', observations: ['rocket launch schedule', 'budget review'] },
        { name: 'Hera', entityType: 'Person', observations: ['leads the rocket team'] },
        { name: 'Ares', entityType: 'Meeting', observations: ['rocket retro notes'] },
      ],
    });
    await h.ok('create_relations', { relations: [{ from: 'Hera', to: 'Apollo', relationType: 'leads' }] });
    await h.service.drainEmbeddings();
  });
  afterAll(async () => {
    await h.close();
  });

  it('hybrid_search with explain_query: compact text without nulls, routing_strategy once; structuredContent complete', async () => {
    const result = await h.call('hybrid_search', { query: 'rocket', limit: 3, explain_query: true, fusion_method: 'rrf' });
    const shown = expectCompactJson(result);
    const text = textOf(result);
    expect(keyCount(text, 'routing_strategy')).toBe(1);
    expect(shown.routing_strategy).toEqual(expect.any(String));
    expect((shown.results as Scored[]).map((r) => r.name)).toHaveLength(3);
    // RRF fused this answer, so its rrf score is the one the order starts from and stays.
    expect((shown.results as Scored[])[0]?.scores?.rrf).toBeGreaterThan(0);

    const full = result.structuredContent as { routing_strategy: string; results: Scored[]; stats: { fts_stats: unknown } };
    expect(full.results).toHaveLength(3);
    for (const r of full.results) {
      expect(r.scores?.rerank_score).toBeNull();
      expect(r.scores?.limbic?.routing_strategy).toBe(full.routing_strategy);
    }
    // Pretty text with every null was a fifth whitespace: the compact one is smaller than the structured content.
    expect(text.length).toBeLessThan(JSON.stringify(full).length);
  });

  it('hybrid_search under weighted or z-score fusion (the default): no rrf score in the text, whose order it would contradict', async () => {
    for (const fusion_method of ['weighted', 'zscore', undefined]) {
      const result = await h.call('hybrid_search', { query: 'rocket', ...(fusion_method === undefined ? {} : { fusion_method }) });
      const text = textOf(result);
      expectCompactJson(result);
      expect(keyCount(text, 'rrf'), fusion_method).toBe(0);
      const full = result.structuredContent as { results: Scored[] };
      expect(full.results[0]?.scores?.rrf, fusion_method).toEqual(expect.any(Number));
    }
  });

  it('search_semantic: no rrf_score in the text (z-score fusion orders it), routing_strategy once', async () => {
    const result = await h.call('search_semantic', { query: 'rocket', limit: 3 });
    const shown = expectCompactJson(result);
    const text = textOf(result);
    expect(shown.mode).toBe('hybrid');
    expect(keyCount(text, 'rrf_score')).toBe(0);
    expect(keyCount(text, 'routing_strategy')).toBe(1);
    expect(shown.routing_strategy).toEqual(expect.any(String));
    const full = result.structuredContent as { routing_strategy: string; results: Scored[] };
    expect(full.results[0]?.rrf_score).toBeGreaterThan(0);
    expect(full.results.every((r) => r.routing_strategy === full.routing_strategy)).toBe(true);
  });

  it('says z-score, not RRF, where search_semantic fuses by z-score', async () => {
    const { tools } = await h.client.listTools();
    const semantic = tools.find((t) => t.name === 'search_semantic');
    expect(semantic?.description).toMatch(/z-score/);
    expect(semantic?.description).not.toMatch(/RRF|rrf_score/);
    expect(tools.find((t) => t.name === 'hybrid_search')?.description).toMatch(/z-score/);
  });

  it('get_statistics and the maintenance tools answer in compact text; structuredContent keeps its nulls', async () => {
    const stats = await h.call('get_statistics');
    expectCompactJson(stats);
    expect((stats.structuredContent as { ranking: { tuned_at: unknown } }).ranking.tuned_at).toBeNull();
    expectCompactJson(await h.call('analyze_entity_split', { entity_name: 'Apollo' }));
    expectCompactJson(await h.call('search_reflections', { query: 'rocket' }));
  });

  it("keeps the official server's pretty-printed text for its nine tools", async () => {
    for (const [tool, args] of [
      ['read_graph', {}],
      ['search_nodes', { query: 'rocket' }],
      ['open_nodes', { names: ['Apollo'] }],
    ] as const) {
      const result = await h.call(tool, args);
      expect(textOf(result), tool).toBe(JSON.stringify(result.structuredContent, null, 2));
    }
    const added = await h.call('add_observations', { observations: [{ entityName: 'Ares', contents: ['second retro'] }] });
    expect(textOf(added)).toBe(JSON.stringify([{ entityName: 'Ares', addedObservations: ['second retro'] }], null, 2));
  });
});
