/**
 * Reflections through a real MCP client (issue 16, part 2): add_reflection, search_reflections,
 * hybrid_search's include_reflections / reflection_boost / reflections_only, and the consolidation
 * run without a model (shared words). maintenance-semantic.test.ts runs it by meaning.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, textOf, type Harness } from '../helpers/fixtures.js';

interface Hybrid {
  results: { name: string; entityType: string; scores: { final: number } }[];
}
const names = (r: Hybrid): string[] => r.results.map((x) => x.name);

describe('reflections', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ embedder: 'fake' });
    await h.client.listTools(); // the client then checks answers against each outputSchema
    await h.ok('create_entities', {
      entities: [
        { name: 'Apollo', entityType: 'Project', observations: ['rocket launch schedule slipped'] },
        { name: 'Zeus', entityType: 'Project', observations: ['rocket engine tests'] },
      ],
    });
  });
  afterAll(() => h.close());

  it('add_reflection writes a Reflection entity linked to what it is about', async () => {
    const r = await h.ok<{ reflection: Record<string, unknown> }>('add_reflection', {
      content: 'Rocket schedules keep slipping when engine tests run late',
      about: ['Apollo', 'Zeus'],
      author: 'sofia',
      mood: 'insight',
    });
    expect(r.reflection).toEqual({
      name: 'Reflection: Rocket schedules keep slipping when engine tests run',
      content: 'Rocket schedules keep slipping when engine tests run late',
      about: ['Apollo', 'Zeus'],
      author: 'sofia',
      mood: 'insight',
    });
    const opened = await h.ok<{ entities: { entityType: string; observations: string[] }[]; relations: unknown[] }>('open_nodes', {
      names: [r.reflection.name],
    });
    expect(opened.entities[0]).toMatchObject({
      entityType: 'Reflection',
      observations: [r.reflection.content, 'author: sofia', 'mood: insight'],
    });
    expect(opened.relations).toEqual([
      { from: r.reflection.name, to: 'Apollo', relationType: 'reflects_on' },
      { from: r.reflection.name, to: 'Zeus', relationType: 'reflects_on' },
    ]);
    // The same opening words get a name of their own.
    const second = await h.ok<{ reflection: { name: string } }>('add_reflection', {
      content: 'Rocket schedules keep slipping when engine tests run late again',
    });
    expect(second.reflection.name).toBe('Reflection: Rocket schedules keep slipping when engine tests run (2)');
    await h.ok('delete_entities', { entityNames: [second.reflection.name] });
  });

  it('refuses a reflection about an entity that does not exist, and bad input, saving nothing', async () => {
    const missing = await h.call('add_reflection', { content: 'x', about: ['Apollo', 'Nobody'] });
    expect(textOf(missing)).toMatch(/Entity with name Nobody not found/);
    expect(textOf(await h.call('add_reflection', { content: '' }))).toMatch(/content is empty/);
    expect(textOf(await h.call('add_reflection', { content: 'x', target_type: 'entity' }))).toMatch(/unknown field "target_type"/);
    const all = await h.ok<{ entities: { name: string }[] }>('search_nodes', { query: 'Reflection:' });
    expect(all.entities).toHaveLength(1);
  });

  it('hybrid_search includes reflections by default, leaves them out, boosts them, or searches only them', async () => {
    const base = { query: 'rocket', search_modes: ['fts'] };
    const reflection = 'Reflection: Rocket schedules keep slipping when engine tests run';
    const all = await h.ok<Hybrid>('hybrid_search', base);
    expect(names(all).sort()).toEqual(['Apollo', reflection, 'Zeus'].sort());
    expect(names(await h.ok<Hybrid>('hybrid_search', { ...base, include_reflections: false })).sort()).toEqual(['Apollo', 'Zeus']);
    expect(names(await h.ok<Hybrid>('hybrid_search', { ...base, reflections_only: true }))).toEqual([reflection]);
    const score = (r: Hybrid, name: string) => r.results.find((x) => x.name === name)?.scores.final ?? NaN;
    const plain = await h.ok<Hybrid>('hybrid_search', { ...base, limbic: false });
    const doubled = await h.ok<Hybrid>('hybrid_search', { ...base, limbic: false, reflection_boost: 2 });
    expect(score(doubled, reflection)).toBeCloseTo(2 * score(plain, reflection), 5);
    expect(score(doubled, 'Apollo')).toBe(score(plain, 'Apollo'));
    expect(names(await h.ok<Hybrid>('hybrid_search', { ...base, reflection_boost: 100 }))[0]).toBe(reflection);
    expect(names(await h.ok<Hybrid>('hybrid_search', { ...base, reflection_boost: 0 })).at(-1)).toBe(reflection);
    expect(textOf(await h.call('hybrid_search', { ...base, reflection_boost: -1 }))).toMatch(
      /reflection_boost must be a number from 0 to 100/,
    );
  });

  it('search_reflections returns reflections only, with what they are about', async () => {
    const r = await h.ok<{ results: { name: string; content: string; about: string[]; score: number }[] }>('search_reflections', {
      query: 'rocket engine',
    });
    expect(r.results).toHaveLength(1);
    expect(r.results[0]).toMatchObject({ content: 'Rocket schedules keep slipping when engine tests run late', about: ['Apollo', 'Zeus'] });
    expect(r.results[0]?.score).toBeGreaterThan(0);
    // When it was written (issue 25), as an ISO time.
    const at = (r.results[0] as { created_at?: string } | undefined)?.created_at ?? '';
    expect(at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Math.abs(Date.parse(at) - Date.now())).toBeLessThan(24 * 3_600_000);
    expect(textOf(await h.call('search_reflections', { query: '' }))).toMatch(/query is empty/);
    expect(textOf(await h.call('search_reflections', { query: 'x', mood: 'duda' }))).toMatch(/unknown field "mood"/);
  });
});

describe('run_consolidation: no theme of everything, and a dry run (issue 25)', () => {
  it('writes nothing for a cluster holding most of the memory, says why, and a dry run writes nothing', async () => {
    const h = await harness({ embedder: 'none' });
    try {
      await h.client.listTools();
      await h.ok('create_entities', {
        entities: ['Acme', 'Bolt', 'Crane', 'Dune', 'Ember'].map((name) => ({
          name,
          entityType: 'Client',
          observations: [`${name} prefers invoices by email and pays monthly`],
        })),
      });
      const r = await h.ok<{ reflections_created: unknown[]; broad_skipped: number; note?: string }>('run_consolidation', {});
      expect(r.reflections_created).toEqual([]);
      expect(r.broad_skipped).toBe(1);
      expect(r.note).toMatch(/held more than half of the 5 entities scanned: no theme, nothing written/);
      await h.ok('create_entities', {
        entities: ['Fern', 'Gale', 'Hill', 'Iris', 'Jade', 'Kite'].map((name, i) => ({
          name,
          entityType: 'Trip',
          observations: [i < 3 ? `${name} hiking trail mountains camping` : `${name} opera tickets concert hall`],
        })),
      });
      const dry = await h.ok<{ dry_run: boolean; reflections_to_create: { name: string }[] }>('run_consolidation', { dry_run: true });
      expect(dry.dry_run).toBe(true);
      expect(dry.reflections_to_create.length).toBeGreaterThan(0);
      const graph = await h.ok<{ entities: { entityType: string }[] }>('read_graph');
      expect(graph.entities.filter((e) => e.entityType === 'Reflection')).toEqual([]);
      const real = await h.ok<{ reflections_created: { name: string }[] }>('run_consolidation', {});
      expect(real.reflections_created.map((x) => x.name)).toEqual(dry.reflections_to_create.map((x) => x.name));
    } finally {
      await h.close();
    }
  });
});

describe('run_consolidation without a model (shared words)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ embedder: 'none' });
    await h.client.listTools();
    await h.ok('create_entities', {
      entities: [
        { name: 'Tomato bed', entityType: 'Garden', observations: ['tomatoes watering compost garden beds'] },
        { name: 'Basil bed', entityType: 'Garden', observations: ['basil watering compost garden beds'] },
        { name: 'Lettuce bed', entityType: 'Garden', observations: ['lettuce watering compost garden beds'] },
        { name: 'Invoice March', entityType: 'Finance', observations: ['invoice payment accounting ledger march'] },
        { name: 'Invoice April', entityType: 'Finance', observations: ['invoice payment accounting ledger april'] },
        { name: 'Invoice May', entityType: 'Finance', observations: ['invoice payment accounting ledger may'] },
        { name: 'Loner', entityType: 'Misc', observations: ['completely unrelated astronomy telescope'] },
      ],
    });
  });
  afterAll(() => h.close());

  it('writes one reflection per cluster, linked to its entities, and keeps them on a second run', async () => {
    const first = await h.ok<{
      reflections_created: { name: string; sources: string[] }[];
      clusters_found: number;
      method: string;
      entities_scanned: number;
    }>('run_consolidation', {});
    expect(first.method).toBe('words');
    expect(first.entities_scanned).toBe(7);
    expect(first.clusters_found).toBe(2);
    expect(first.reflections_created.map((r) => r.sources.sort())).toEqual([
      ['Basil bed', 'Lettuce bed', 'Tomato bed'],
      ['Invoice April', 'Invoice March', 'Invoice May'],
    ]);
    const reflection = first.reflections_created[0]?.name as string;
    const opened = await h.ok<{ relations: { from: string; to: string; relationType: string }[] }>('open_nodes', { names: [reflection] });
    expect(
      opened.relations
        .filter((r) => r.from === reflection && r.relationType === 'reflects_on')
        .map((r) => r.to)
        .sort(),
    ).toEqual(['Basil bed', 'Lettuce bed', 'Tomato bed']);
    // Reflections are not clustered again, and a theme already reflected is kept.
    const second = await h.ok<{ reflections_created: unknown[]; existing_kept: number; entities_scanned: number }>('run_consolidation', {});
    expect(second).toMatchObject({ reflections_created: [], existing_kept: 2, entities_scanned: 7 });
    const only = await h.ok<Hybrid>('hybrid_search', { query: 'invoice', reflections_only: true });
    expect(names(only)).toEqual([first.reflections_created[1]?.name]);
  });

  it('a larger min_size finds no cluster; bad input is named', async () => {
    const r = await h.ok<{ clusters_found: number }>('run_consolidation', { min_size: 4 });
    expect(r.clusters_found).toBe(0);
    expect(textOf(await h.call('run_consolidation', { min_size: 1 }))).toMatch(/min_size must be a whole number from 2 to 1000/);
  });
});

describe('run_consolidation names a theme by the words its notes share (issue 33)', () => {
  it('"hermana", not "Usuario Hermana": no title case, no word most of the memory uses', async () => {
    const h = await harness({ embedder: 'none' });
    try {
      await h.ok('create_entities', {
        entities: [
          { name: 'Laura', entityType: 'persona', observations: ['la hermana del usuario vive en Valencia'] },
          { name: 'Marta', entityType: 'persona', observations: ['la hermana mayor del usuario es médica'] },
          { name: 'Sofía', entityType: 'persona', observations: ['otra hermana del usuario estudia música'] },
          { name: 'Coche', entityType: 'cosa', observations: ['el usuario conduce un coche eléctrico'] },
          { name: 'Piano', entityType: 'afición', observations: ['el usuario toca el piano los domingos'] },
          { name: 'Tiempo', entityType: 'nota', observations: ['mañana lloverá en Madrid'] },
          { name: 'Libro', entityType: 'nota', observations: ['leyendo una novela de misterio'] },
        ],
      });
      const r = await h.ok<{ reflections_created: { name: string; content: string; sources: string[] }[] }>('run_consolidation', {});
      expect(r.reflections_created).toEqual([
        {
          name: 'Reflection: hermana',
          content: 'Laura, Marta and Sofía are related by shared words (3 entities); the words they share most: hermana.',
          sources: ['Laura', 'Marta', 'Sofía'],
        },
      ]);
    } finally {
      await h.close();
    }
  });
});
