/**
 * Unicode through a real MCP client: a name, a relation type or an observation is one value in
 * whatever form a client composed its accents (issue 26: "Café" and "Cafe\u0301" were two
 * entities), and search_nodes matches accents either way (issue 25: "Garcia" found nothing for
 * "Ana García"). Runs on SQLite here and on PostgreSQL from on-postgres.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { harness, type Harness } from '../helpers/fixtures.js';

const NFC = 'Café';
const NFD = 'Cafe\u0301';

interface Graph {
  entities: { name: string; entityType: string; observations: string[] }[];
  relations: { from: string; to: string; relationType: string }[];
}

describe('names compared in NFC (issue 26)', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness();
  });
  afterEach(async () => {
    await h.close();
  });

  it('an entity created composed is found, extended, related, set and deleted by the decomposed spelling, and not duplicated', async () => {
    expect(NFD).not.toBe(NFC);
    await h.ok('create_entities', { entities: [{ name: NFC, entityType: 'place', observations: ['crème brûlée'] }] });
    expect(await h.ok('create_entities', { entities: [{ name: NFD, entityType: 'place', observations: ['x'] }] })).toEqual({
      entities: [],
    });

    const opened = await h.ok<Graph>('open_nodes', { names: [NFD] });
    expect(opened.entities.map((e) => e.name)).toEqual([NFC]);

    // The same observation in the other form is a duplicate; a new one is added.
    const added = await h.ok('add_observations', {
      observations: [{ entityName: NFD, contents: ['cre\u0300me bru\u0302le\u0301e', 'open late'] }],
    });
    expect(added).toEqual({ results: [{ entityName: NFC, addedObservations: ['open late'] }] });

    await h.ok('create_entities', { entities: [{ name: 'Ana', entityType: 'person', observations: [] }] });
    await h.ok('create_relations', { relations: [{ from: 'Ana', to: NFD, relationType: 'visits' }] });
    expect(await h.ok('create_relations', { relations: [{ from: 'Ana', to: NFC, relationType: 'visits' }] })).toEqual({ relations: [] });
    expect((await h.ok<Graph>('open_nodes', { names: [NFC] })).relations).toEqual([{ from: 'Ana', to: NFC, relationType: 'visits' }]);

    expect((await h.call('set_entity_status', { entity_name: NFD, status: 'paused' })).isError).toBeFalsy();

    await h.ok('delete_observations', { deletions: [{ entityName: NFD, observations: ['cre\u0300me bru\u0302le\u0301e'] }] });
    await h.ok('delete_relations', { relations: [{ from: 'Ana', to: NFD, relationType: 'visits' }] });
    let graph = await h.ok<Graph>('read_graph');
    expect(graph.entities.find((e) => e.name === NFC)?.observations).toEqual(['open late']);
    expect(graph.relations).toEqual([]);

    await h.ok('delete_entities', { entityNames: [NFD] });
    graph = await h.ok<Graph>('read_graph');
    expect(graph.entities.map((e) => e.name)).toEqual(['Ana']);
  });

  it('an entity created decomposed is stored composed, and found by either spelling', async () => {
    await h.ok('create_entities', {
      entities: [{ name: `Jose\u0301 ${NFD}`, entityType: 'pe\u0301rson', observations: ['nin\u0303o'] }],
    });
    const graph = await h.ok<Graph>('read_graph');
    expect(graph.entities).toEqual([{ name: 'José Café', entityType: 'pérson', observations: ['niño'] }]);
    for (const name of ['José Café', `Jose\u0301 ${NFD}`])
      expect((await h.ok<Graph>('open_nodes', { names: [name] })).entities.map((e) => e.name)).toEqual(['José Café']);
    expect(await h.ok('create_entities', { entities: [{ name: 'José Café', entityType: 'x', observations: [] }] })).toEqual({
      entities: [],
    });
    // Spellings that differ in form only, in one call: one entity.
    const variants = ['Café', 'Cafe\u0301', 'Caf\u00e9', 'C\u0061fe\u0301'];
    await h.ok('create_entities', { entities: variants.map((name) => ({ name, entityType: 'place', observations: [] })) });
    expect((await h.ok<Graph>('read_graph')).entities.map((e) => e.name)).toEqual(['José Café', 'Café']);
  });
});

describe('search_nodes matches accents either way (issue 25)', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness();
    await h.ok('create_entities', {
      entities: [
        { name: 'Ana García', entityType: 'person', observations: ['Vive en Málaga'] },
        { name: 'JOSE GARCIA', entityType: 'person', observations: ['crème brûlée lover'] },
        { name: 'Zoë', entityType: 'cat', observations: ['sleeps on the sofa'] },
        { name: 'Bob', entityType: 'person', observations: ['lives in Malaga'] },
      ],
    });
  });
  afterEach(async () => {
    await h.close();
  });

  const names = async (query: string, page?: { limit: number; offset: number }) =>
    (await h.ok<Graph & { total?: number }>('search_nodes', { query, ...page })).entities.map((e) => e.name);

  it('finds accented text by the unaccented query, and the other way round, in any case', async () => {
    expect(await names('Garcia')).toEqual(['Ana García', 'JOSE GARCIA']);
    expect(await names('garcía')).toEqual(['Ana García', 'JOSE GARCIA']);
    expect(await names('GARCI\u0301A')).toEqual(['Ana García', 'JOSE GARCIA']);
    expect(await names('zoe')).toEqual(['Zoë']);
    // With whitespace (SQLite answers these in SQL, not from the in-memory index).
    expect(await names('ana garcia')).toEqual(['Ana García']);
    expect(await names('creme brulee')).toEqual(['JOSE GARCIA']);
    expect(await names('en malaga')).toEqual(['Ana García']);
    // Observations, and a page with its total.
    expect(await names('málaga')).toEqual(['Ana García', 'Bob']);
    const page = await h.ok<{ entities: unknown[]; total: number }>('search_nodes', { query: 'MALAGA', limit: 1, offset: 1 });
    expect(page.total).toBe(2);
    expect(page.entities).toHaveLength(1);
  });

  it('still finds everything the official test finds', async () => {
    expect(await names('García')).toContain('Ana García');
    expect(await names('GARCIA')).toContain('JOSE GARCIA');
    expect(await names('sofa')).toEqual(['Zoë']);
    expect(await names('nobody')).toEqual([]);
  });
});
