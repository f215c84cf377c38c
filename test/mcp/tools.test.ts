/** The nine official tools through a real MCP client, in-process, in both protocol generations. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LIMITS } from '../../src/core/limits.js';
import { harness, textOf, type EraHarness } from '../helpers/fixtures.js';
import { ERAS } from '../helpers/mcp-eras.js';

describe.each(ERAS)('MCP tools (official contract): $name', ({ era }) => {
  let h: EraHarness;
  beforeEach(async () => {
    h = await harness({ era });
  });
  afterEach(async () => {
    await h.close();
  });

  it('lists the nine official tools with their annotations, plus Limbic extras', async () => {
    const { tools } = await h.client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const name of [
      'create_entities',
      'create_relations',
      'add_observations',
      'delete_entities',
      'delete_observations',
      'delete_relations',
      'read_graph',
      'search_nodes',
      'open_nodes',
    ]) {
      expect(byName.has(name), name).toBe(true);
      expect(byName.get(name)?.outputSchema, name).toBeDefined();
      expect(byName.get(name)?.annotations?.openWorldHint).toBe(false);
    }
    expect(byName.get('read_graph')?.annotations?.readOnlyHint).toBe(true);
    expect(byName.get('delete_entities')?.annotations?.destructiveHint).toBe(true);
    expect(byName.get('create_entities')?.annotations?.idempotentHint).toBe(false);
    const create = byName.get('create_entities')?.inputSchema as { required?: string[]; properties: Record<string, unknown> };
    expect(create.required).toEqual(['entities']);
    expect(byName.has('search_semantic')).toBe(true);
    expect(byName.has('get_statistics')).toBe(true);
  });

  it('create_entities returns only new entities, as text and structuredContent', async () => {
    const first = await h.call('create_entities', {
      entities: [{ name: 'Alice', entityType: 'person', observations: ['Speaks Spanish'] }],
    });
    expect(first.structuredContent).toEqual({ entities: [{ name: 'Alice', entityType: 'person', observations: ['Speaks Spanish'] }] });
    expect(JSON.parse(textOf(first))).toEqual([{ name: 'Alice', entityType: 'person', observations: ['Speaks Spanish'] }]);
    const again = await h.ok('create_entities', { entities: [{ name: 'Alice', entityType: 'robot', observations: ['other'] }] });
    expect(again).toEqual({ entities: [] });
  });

  it('add_observations on a missing entity is an error that saves nothing', async () => {
    await h.ok('create_entities', { entities: [{ name: 'Alice', entityType: 'person', observations: [] }] });
    const result = await h.call('add_observations', {
      observations: [
        { entityName: 'Alice', contents: ['kept?'] },
        { entityName: 'Ghost', contents: ['x'] },
      ],
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/Entity with name Ghost not found/);
    expect(textOf(result)).toMatch(/create_entities/);
    const graph = await h.ok<{ entities: { observations: string[] }[] }>('read_graph');
    expect(graph.entities[0]?.observations).toEqual([]);
  });

  it('add_observations reports what it added, skipping exact duplicates', async () => {
    await h.ok('create_entities', { entities: [{ name: 'Alice', entityType: 'person', observations: ['a'] }] });
    const result = await h.ok('add_observations', { observations: [{ entityName: 'Alice', contents: ['a', 'b'] }] });
    expect(result).toEqual({ results: [{ entityName: 'Alice', addedObservations: ['b'] }] });
  });

  it('relations may point at entities that do not exist yet; searches return relations touching the set', async () => {
    await h.ok('create_entities', {
      entities: [
        { name: 'Alice', entityType: 'person', observations: [] },
        { name: 'Bob', entityType: 'person', observations: [] },
      ],
    });
    const rel = await h.ok('create_relations', {
      relations: [
        { from: 'Alice', to: 'Bob', relationType: 'knows' },
        { from: 'Alice', to: 'Future', relationType: 'plans' },
        { from: 'Alice', to: 'Bob', relationType: 'knows' },
      ],
    });
    expect(rel).toEqual({
      relations: [
        { from: 'Alice', to: 'Bob', relationType: 'knows' },
        { from: 'Alice', to: 'Future', relationType: 'plans' },
      ],
    });
    const open = await h.ok<{ entities: unknown[]; relations: unknown[] }>('open_nodes', { names: ['Bob'] });
    expect(open.entities).toHaveLength(1);
    expect(open.relations).toEqual([{ from: 'Alice', to: 'Bob', relationType: 'knows' }]);
    const search = await h.ok<{ relations: unknown[] }>('search_nodes', { query: 'alice' });
    expect(search.relations).toHaveLength(2);
  });

  it('deletes report success for unknown names and remove relations of deleted entities', async () => {
    await h.ok('create_entities', {
      entities: [
        { name: 'A', entityType: 't', observations: ['x'] },
        { name: 'B', entityType: 't', observations: [] },
      ],
    });
    await h.ok('create_relations', { relations: [{ from: 'A', to: 'B', relationType: 'r' }] });
    expect(await h.ok('delete_entities', { entityNames: ['A', 'Nope'] })).toEqual({
      success: true,
      message: 'Entities deleted successfully',
    });
    expect(await h.ok('delete_observations', { deletions: [{ entityName: 'Nope', observations: ['x'] }] })).toEqual({
      success: true,
      message: 'Observations deleted successfully',
    });
    expect(await h.ok('delete_relations', { relations: [{ from: 'X', to: 'Y', relationType: 'z' }] })).toEqual({
      success: true,
      message: 'Relations deleted successfully',
    });
    expect(await h.ok('read_graph')).toEqual({ entities: [{ name: 'B', entityType: 't', observations: [] }], relations: [] });
  });

  it('search_nodes ranks a name match above an observation match', async () => {
    await h.ok('create_entities', {
      entities: [
        { name: 'Notes', entityType: 'doc', observations: ['mentions sqlite once'] },
        { name: 'SQLite', entityType: 'database', observations: ['embedded'] },
      ],
    });
    const result = await h.ok<{ entities: { name: string }[] }>('search_nodes', { query: 'sqlite' });
    expect(result.entities.map((e) => e.name)).toEqual(['SQLite', 'Notes']);
  });

  it('malformed arguments get an isError result naming the field', async () => {
    const result = await h.call('create_entities', { entities: [{ name: 42, entityType: 'x', observations: [] }] });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/entities\.0\.name/);
    expect(textOf(result)).toMatch(/string/i);
    const missing = await h.call('add_observations', {});
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/observations/);
  });

  it('refuses oversized input whole, stating the limit', async () => {
    const huge = 'x'.repeat(LIMITS.maxObservationChars + 1);
    const result = await h.call('create_entities', { entities: [{ name: 'Big', entityType: 't', observations: [huge] }] });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain(String(LIMITS.maxObservationChars));
    const many = Array.from({ length: LIMITS.maxItemsPerCall + 1 }, (_, i) => ({ name: `e${i}`, entityType: 't', observations: [] }));
    const tooMany = await h.call('create_entities', { entities: many });
    expect(tooMany.isError).toBe(true);
    expect(textOf(tooMany)).toContain(String(LIMITS.maxItemsPerCall));
    expect(await h.ok('read_graph')).toEqual({ entities: [], relations: [] });
  });

  it('survives hostile strings and keeps them verbatim', async () => {
    const nasty = ["'; DROP TABLE entities; --", '"quoted"', 'emoji 🧠🔥', 'NUL\u0000byte', 'AND OR NOT NEAR(', '\u202Ertl'];
    await h.ok('create_entities', { entities: nasty.map((n) => ({ name: n, entityType: n, observations: [n] })) });
    const graph = await h.ok<{ entities: { name: string }[] }>('read_graph');
    expect(graph.entities.map((e) => e.name)).toEqual(nasty);
    for (const n of nasty) {
      const found = await h.ok<{ entities: { name: string }[] }>('search_nodes', { query: n });
      expect(found.entities.map((e) => e.name)).toContain(n);
    }
  });

  it('serves the knowledge graph resource and notifies subscribers of changes', async () => {
    const updates: string[] = [];
    h.client.setNotificationHandler('notifications/resources/updated', (n) => {
      updates.push(n.params.uri);
    });
    // Each generation subscribes its own way: a subscriptions/listen stream, or resources/subscribe.
    const subscription =
      era === 'modern'
        ? await h.client.listen({ resourceSubscriptions: ['memory://knowledge-graph'] })
        : await h.client.subscribeResource({ uri: 'memory://knowledge-graph' });
    await h.ok('create_entities', { entities: [{ name: 'R', entityType: 't', observations: [] }] });
    await h.settle();
    await expect.poll(() => updates).toEqual(['memory://knowledge-graph']);
    if ('close' in subscription) await subscription.close();
    const resource = await h.client.readResource({ uri: 'memory://knowledge-graph' });
    const first = resource.contents[0];
    expect(first && 'text' in first ? JSON.parse(first.text) : undefined).toEqual({
      entities: [{ name: 'R', entityType: 't', observations: [] }],
      relations: [],
    });
  });

  it('holds an entity to 1,000 observations across calls, refusing the whole call that would pass it (issue 26)', async () => {
    await h.ok('create_entities', { entities: [{ name: 'Many', entityType: 't', observations: [] }] });
    const obs = (from: number, n: number) => Array.from({ length: n }, (_, i) => `note ${from + i}`);
    await h.ok('add_observations', { observations: [{ entityName: 'Many', contents: obs(0, 600) }] });
    const over = await h.call('add_observations', { observations: [{ entityName: 'Many', contents: obs(600, 401) }] });
    expect(over.isError).toBe(true);
    expect(textOf(over)).toMatch(/Entity Many would hold 1001 observations, over the 1000 one entity may hold.*Nothing was added/);
    // Texts it already holds do not count twice; exactly the bound is accepted.
    await h.ok('add_observations', { observations: [{ entityName: 'Many', contents: [...obs(550, 50), ...obs(600, 400)] }] });
    const many = await h.ok<{ entities: { observations: string[] }[] }>('open_nodes', { names: ['Many'] });
    expect(many.entities[0]?.observations).toHaveLength(1000);
  });

  it('set_entity_status accepts English and Spanish words and answers in English (issue 25 item 9)', async () => {
    await h.ok('create_entities', { entities: [{ name: 'P', entityType: 'project', observations: [], status: 'pausado' }] });
    expect(await h.ok('set_entity_status', { name: 'P', status: 'archivado' })).toEqual({
      success: true,
      message: 'Status of P set to archived',
    });
    // entity_name, as Limbic's other tools name an entity; `name` still works; one of the two.
    expect(await h.ok('set_entity_status', { entity_name: 'P', status: 'active' })).toEqual({
      success: true,
      message: 'Status of P set to active',
    });
    expect(await h.ok('set_entity_status', { entity_name: 'P', name: 'P', status: 'active' })).toMatchObject({ success: true });
    const both = await h.call('set_entity_status', { entity_name: 'P', name: 'Q', status: 'active' });
    expect(both.isError).toBe(true);
    expect(textOf(both)).toMatch(/entity_name and name name two different entities/);
    const neither = await h.call('set_entity_status', { status: 'active' });
    expect(neither.isError).toBe(true);
    expect(textOf(neither)).toMatch(/entity_name is required/);
    const missing = await h.call('set_entity_status', { name: 'Nope', status: 'active' });
    expect(missing.isError).toBe(true);
    const bad = await h.call('set_entity_status', { name: 'P', status: 'deleted' });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/active, paused, completed, archived/);
  });

  it('get_statistics counts the graph and reports the index state', async () => {
    await h.ok('create_entities', { entities: [{ name: 'S', entityType: 't', observations: ['a', 'b'] }] });
    const stats = await h.ok<{
      entities: number;
      observations: number;
      relations: number;
      fts: { available: boolean };
      embeddings: { pending: number };
    }>('get_statistics');
    expect(stats).toMatchObject({ entities: 1, observations: 2, relations: 0, fts: { available: true } });
    expect(stats.embeddings.pending).toBe(1);
  });
});
