/**
 * Search scoping (issue 34 item 3): a search from inside a project never shows another project's
 * captured sessions, keeps global memories, and prefers its own (a bounded multiplier); outside any
 * project, or with project "*", nothing is hidden.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Conversation } from '../../src/capture/conversation.js';
import type { Project } from '../../src/capture/project.js';
import { PROJECT_BOOST } from '../../src/core/rank/constants.js';
import { noopLogger } from '../../src/core/logger.js';
import { LazyEmbedder } from '../../src/embed/embedder.js';
import { MemoryService } from '../../src/service/memory-service.js';
import type { HybridSearchOptions } from '../../src/service/search/hybrid-search.js';
import { harness, type Harness } from '../helpers/fixtures.js';

const T0 = Date.UTC(2026, 10, 27);
const A: Project = { key: 'github.com/acme/a', name: 'a', root: '/src/a', from: 'git-remote' };
const B: Project = { key: 'github.com/acme/b', name: 'b', root: '/src/b', from: 'git-remote' };

const conversation = (id: string, text: string): Conversation => ({
  source: 'claude-code',
  id,
  startedAt: T0,
  turns: [{ role: 'user', text, at: T0 }],
});

const search = (query: string, project?: string): HybridSearchOptions => ({
  query,
  limit: 20,
  offset: 0,
  searchModes: ['fts'],
  fusionMethod: 'rrf',
  rrfK: undefined,
  weights: {},
  limbic: true,
  rerank: false,
  filters: {},
  explainQuery: false,
  project,
});

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A memory holding a session of each project and a global note, all about the zebrafish pipeline. */
async function memory(): Promise<Harness> {
  h = await harness({ clock: () => T0 + 1 });
  await h.service.capture(conversation('aaaa0001', 'The zebrafish pipeline in A retries twice'), A);
  await h.service.capture(conversation('bbbb0001', 'The zebrafish pipeline in B has a secret plan'), B);
  await h.service.createEntities([{ name: 'Zebrafish pipeline', entityType: 'note', observations: ['The zebrafish pipeline is shared'] }]);
  return h;
}

/** A second service over the same store, as a server started in a project's folder would hold it. */
const serviceIn = (harnessed: Harness, project: string | undefined): MemoryService =>
  new MemoryService({
    store: harnessed.store,
    embedder: new LazyEmbedder(async () => {
      throw new Error('no model in this test');
    }),
    clock: () => T0 + 1,
    logger: noopLogger,
    project,
  });

const names = async (service: MemoryService, project?: string): Promise<string[]> =>
  (await service.hybridSearch(search('zebrafish pipeline', project))).results.map((r) => r.name);

describe('search from inside a project', () => {
  it("never shows another project's sessions, keeps global memories, and lifts its own by PROJECT_BOOST", async () => {
    const m = await memory();
    const inA = serviceIn(m, A.key);
    const found = await inA.hybridSearch(search('zebrafish pipeline'));
    const shown = found.results.map((r) => r.name);
    expect(shown).toContain('Claude Code session 2026-11-27 aaaa0001');
    expect(shown).toContain('Zebrafish pipeline');
    expect(shown).not.toContain('Claude Code session 2026-11-27 bbbb0001');
    expect(shown).not.toContain(B.key);
    const multiplier = (name: string) => found.results.find((r) => r.name === name)?.scores.limbic?.multiplier;
    expect(multiplier('Claude Code session 2026-11-27 aaaa0001')).toBeCloseTo(PROJECT_BOOST, 6);
    expect(multiplier('Zebrafish pipeline')).toBe(1);
    const semantic = (await inA.searchSemantic('zebrafish pipeline', 20)).results.map((r) => r.name);
    expect(semantic).not.toContain('Claude Code session 2026-11-27 bbbb0001');
    expect(semantic).toContain('Zebrafish pipeline');
  });

  it("leaves another project's sessions out of search_nodes too, and the relations that name them, paged or not", async () => {
    const m = await memory();
    await m.service.createRelations([
      { from: 'Zebrafish pipeline', to: 'Claude Code session 2026-11-27 bbbb0001', relationType: 'mentions' },
    ]);
    const inA = serviceIn(m, A.key);
    const whole = await inA.searchNodes('zebrafish');
    expect(whole.entities.map((e) => e.name).sort()).toEqual(['Claude Code session 2026-11-27 aaaa0001', 'Zebrafish pipeline']);
    expect(JSON.stringify(whole.relations)).not.toContain('bbbb0001');
    const first = await inA.graphView({ query: 'zebrafish', page: { limit: 1, offset: 0 } });
    const second = await inA.graphView({ query: 'zebrafish', page: { limit: 1, offset: 1 } });
    expect([first.total, second.total]).toEqual([2, 2]);
    expect([...first.entities, ...second.entities].map((e) => e.name).sort()).toEqual([
      'Claude Code session 2026-11-27 aaaa0001',
      'Zebrafish pipeline',
    ]);
    expect(first.next_offset).toBe(1);
    expect(JSON.stringify([first.relations, second.relations])).not.toContain('bbbb0001');
    // Outside any project search_nodes is the official one: everything.
    expect((await m.service.searchNodes('zebrafish')).entities).toHaveLength(3);
  });

  it('searches another project, or all of them, when a call names it', async () => {
    const m = await memory();
    const inA = serviceIn(m, A.key);
    const inB = await names(inA, B.key);
    expect(inB).toContain('Claude Code session 2026-11-27 bbbb0001');
    expect(inB).not.toContain('Claude Code session 2026-11-27 aaaa0001');
    expect(await names(inA, '*')).toEqual(
      expect.arrayContaining(['Claude Code session 2026-11-27 aaaa0001', 'Claude Code session 2026-11-27 bbbb0001']),
    );
  });

  it('hides nothing outside any project', async () => {
    const m = await memory();
    const shown = await names(m.service);
    expect(shown).toEqual(
      expect.arrayContaining(['Claude Code session 2026-11-27 aaaa0001', 'Claude Code session 2026-11-27 bbbb0001', 'Zebrafish pipeline']),
    );
    expect((await m.service.hybridSearch(search('zebrafish pipeline'))).results.every((r) => r.scores.limbic?.multiplier === 1)).toBe(true);
  });

  it("fetches deeper when other projects exist, so a project's own match is not crowded out", async () => {
    h = await harness({ clock: () => T0 + 1 });
    // 200 sessions of B on the topic, more than a leg keeps (150), and one of A.
    for (let i = 0; i < 200; i++)
      await h.service.capture(conversation(`b${String(i).padStart(7, '0')}`, `heron migration step ${i} in B`), B);
    await h.service.capture(conversation('aaaa0002', 'heron migration in A, the only one'), A);
    const inA = serviceIn(h, A.key);
    expect((await inA.hybridSearch({ ...search('heron migration'), limit: 5 })).results.map((r) => r.name)).toContain(
      'Claude Code session 2026-11-27 aaaa0002',
    );
  });
});
