/**
 * A server's calls leave nothing behind in Node's performance timeline (issue 38). Marks and
 * measures there are kept until someone clears them, and an observer of them runs at every new one:
 * secretlint's profiler, loaded by redaction, made 69 marks a write and scanned all it had kept at
 * each new one, so a server's 4,000th call cost its main thread 15 times its first
 * (bench/results/soak-2026-11-28.md). This holds every tool of a session to it, through the MCP
 * server with redaction on, so that a dependency doing the same again is caught.
 */
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedactor } from '../../src/service/redaction.js';
import { harness, type Harness } from '../helpers/fixtures.js';

const timeline = (): number => performance.getEntriesByType('mark').length + performance.getEntriesByType('measure').length;

describe('a session of calls', () => {
  let h: Harness;
  beforeAll(async () => {
    // The fake embedder: what is measured is what the calls leave behind, not what they find.
    h = await harness({ embedder: 'fake', redactor: createRedactor(true) });
  });
  afterAll(async () => {
    await h.close();
  });

  it('leaves no performance marks or measures behind, whichever tools it uses', async () => {
    const before = timeline();
    for (let i = 0; i < 30; i++) {
      await h.ok('create_entities', {
        entities: [
          { name: `note ${i}`, entityType: 'note', observations: [`the garden was watered on day ${i}, token=${'x'.repeat(8)}${i}`] },
        ],
      });
      await h.ok('add_observations', { observations: [{ entityName: `note ${i}`, contents: [`and again on day ${i + 1}`] }] });
      if (i > 0) await h.ok('create_relations', { relations: [{ from: `note ${i}`, to: `note ${i - 1}`, relationType: 'follows' }] });
      await h.ok('search_nodes', { query: 'garden' });
      await h.ok('hybrid_search', { query: `garden day ${i}` });
      await h.ok('search_semantic', { query: `when was the garden watered` });
      await h.ok('open_nodes', { names: [`note ${i}`] });
    }
    await h.ok('read_graph', {});
    await h.ok('get_statistics', {});
    await h.settle();
    expect((await h.ok<{ entities: unknown[] }>('open_nodes', { names: ['note 29'] })).entities).toHaveLength(1); // the calls did run
    expect(timeline() - before).toBe(0);
  }, 120_000);
});
