/**
 * Issue 33 item 5: a search answer carried every observation of every result, and one entity of 300
 * observations made search_semantic's limit-3 answer 27,266 characters. Each result now shows a
 * bounded number, those matching the query first, counts the rest (observations_omitted) and says
 * how to read them (open_nodes); observations_limit asks for more, or all. Real MCP clients of both
 * eras; the last part runs the real model on an entity whose observations are embedded one by one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERAS } from '../helpers/mcp-eras.js';
import { harness, realEmbedder, textOf, type EraHarness, type Harness } from '../helpers/fixtures.js';

/** Routine observations about 90 characters long, as in the entity. */
const routine = (i: number): string => `ops log ${i}: the nightly backup of the billing database finished, no errors were reported`;
const LOG = [
  ...Array.from({ length: 200 }, (_, i) => routine(i)),
  'the backup moved to the Frankfurt region',
  ...Array.from({ length: 99 }, (_, i) => routine(200 + i)),
];

interface Result {
  readonly name: string;
  readonly observations: string[];
  readonly observations_omitted?: number;
}
interface Answer {
  readonly results: Result[];
  readonly more_observations?: string;
}

describe.each(ERAS)('search answers show a bounded number of observations ($name)', ({ era }) => {
  let h: EraHarness;
  beforeAll(async () => {
    h = await harness({ era });
    await h.ok('create_entities', {
      entities: [
        { name: 'ops-log', entityType: 'log', observations: LOG },
        { name: 'Frankfurt office', entityType: 'place', observations: ['the Frankfurt office hosts the billing team'] },
        { name: 'billing', entityType: 'service', observations: ['billing runs on a PostgreSQL database', 'billing backups are nightly'] },
      ],
    });
  });
  afterAll(() => h.close());

  for (const tool of ['search_semantic', 'hybrid_search'] as const) {
    it(`${tool}: a 300-observation entity keeps a 3-result answer under 12,000 characters, its matching observation first`, async () => {
      const result = await h.call(tool, { query: 'backup Frankfurt', limit: 3 });
      expect(result.isError).toBeFalsy();
      expect(textOf(result).length).toBeLessThan(12_000);
      const answer = result.structuredContent as unknown as Answer;
      const log = answer.results.find((r) => r.name === 'ops-log');
      expect(log?.observations.length).toBeLessThanOrEqual(10);
      expect(log?.observations[0]).toBe('the backup moved to the Frankfurt region');
      expect((log?.observations.length ?? 0) + (log?.observations_omitted ?? 0)).toBe(300);
      // Results that show everything say nothing more; the answer says once how to read the rest.
      expect(answer.results.find((r) => r.name === 'billing')?.observations_omitted).toBeUndefined();
      expect(answer.more_observations).toMatch(/open_nodes/);
      expect(answer.more_observations).toMatch(/observations_limit/);
      // The text an agent reads carries the same, compactly.
      const text = JSON.parse(textOf(result)) as Answer;
      expect(text.results.find((r) => r.name === 'ops-log')?.observations_omitted).toBe(log?.observations_omitted);
    });

    it(`${tool}: observations_limit asks for more (1000: all of them) or for none`, async () => {
      const all = (await h.ok<Answer>(tool, { query: 'backup Frankfurt', limit: 3, observations_limit: 1000 })).results;
      expect(all.find((r) => r.name === 'ops-log')?.observations).toEqual(LOG);
      expect(all.find((r) => r.name === 'ops-log')?.observations_omitted).toBeUndefined();
      const twenty = (await h.ok<Answer>(tool, { query: 'backup Frankfurt', limit: 3, observations_limit: 20 })).results;
      expect(twenty.find((r) => r.name === 'ops-log')?.observations).toHaveLength(20);
      expect(twenty.find((r) => r.name === 'ops-log')?.observations_omitted).toBe(280);
      const none = await h.ok<Answer>(tool, { query: 'backup Frankfurt', limit: 3, observations_limit: 0 });
      expect(none.results.every((r) => r.observations.length === 0)).toBe(true);
      const refused = await h.call(tool, { query: 'backup', observations_limit: 1001 });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/observations_limit must be a whole number from 0 to 1000/);
    });
  }

  it('open_nodes still returns every observation, as the hint says', async () => {
    const graph = await h.ok<{ entities: { observations: string[] }[] }>('open_nodes', { names: ['ops-log'] });
    expect(graph.entities[0]?.observations).toEqual(LOG);
  });
});

/** Facts of one person, none sharing a word with the question asked below but the one about music. */
const FACTS = [
  'prefers tea to coffee in the morning',
  'runs 5 km every Saturday along the river',
  'works as a structural engineer at a bridge company',
  'has a cat called Miso who hates the vacuum cleaner',
  'is learning Portuguese with an app, about twenty minutes a day',
  'drives an old green Volvo estate',
  'was born in Bristol in 1988',
  'moved to Valencia in 2019 for work',
  'reads mostly science fiction, currently Le Guin',
  'is saving for a sailing boat',
  'dislikes open-plan offices',
  'keeps a vegetable patch with tomatoes and courgettes',
  'had knee surgery in 2021 and avoids stairs when it rains',
  'volunteers at the food bank once a month',
  'supports Bristol City, mostly out of habit',
  'owns a 3D printer that is always jammed',
  'wants to visit Japan in cherry blossom season',
  'bakes sourdough on Sundays',
  'uses a standing desk at home',
  'is afraid of wasps since a childhood sting',
  'photographs street art on weekend walks',
  'prefers trains to planes for trips under six hours',
  'repairs bicycles for friends',
  'studied civil engineering at Cardiff',
  'keeps the household budget in a spreadsheet',
  'meditates for ten minutes before bed',
  'has a weekly call with their parents on Sunday evenings',
  'grows chillies on the balcony',
  'once ran the Valencia marathon in just under four hours',
  'prefers board games to video games',
  'is vegetarian except for fish',
  'their best friend Tom lives in Glasgow',
  'uses a fountain pen for letters',
  'got a promotion to team lead last spring',
  'keeps a journal of every hike in the Pyrenees, with sketches of the route',
  'switched to an electric kettle after the old one burned out last winter',
  'organises the neighbourhood street party every June',
  'has a standing Tuesday lunch with former colleagues from the bridge company',
  'is allergic to penicillin, noted in the family medical folder',
  'rents a small allotment shared with two neighbours',
  'bought a second-hand road bike from a colleague in March',
  'prefers paper maps to phone navigation on holidays',
  'speaks Spanish at work and English at home',
  'learned to swim only at the age of thirty',
  'is planning to repaint the kitchen a pale yellow',
  'gives blood twice a year at the hospital in town',
  'keeps spare keys with the neighbour on the second floor',
  'fixed the leaking roof of the shed with a friend',
  'plays the cello in an amateur orchestra on Thursdays',
  'collects vinyl records of 1970s jazz',
];

describe('search answers show the observations nearest the question first (real model)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ embedder: 'real' });
    await realEmbedder();
    await h.ok('create_entities', { entities: [{ name: 'Sam', entityType: 'person', observations: FACTS }] });
    await h.service.drainEmbeddings();
  }, 300_000);
  afterAll(() => h.close());

  it('orders a long entity by its observation vectors: the answer to a paraphrase is shown, though 49th in stored order', async () => {
    // The entity is too long for one vector, so the store keeps one per observation (the premise).
    const [id] = await h.store.graph.idsByName(['Sam']);
    const vectors = await h.store.vectors?.observationVectors?.(id === undefined ? [] : [id]);
    expect(vectors?.get(id as never)).toHaveLength(FACTS.length);

    for (const tool of ['search_semantic', 'hybrid_search'] as const) {
      const answer = await h.ok<Answer>(tool, { query: 'which instrument does Sam perform on?', limit: 1 });
      const sam = answer.results[0];
      expect(sam?.name).toBe('Sam');
      expect(sam?.observations.slice(0, 3), tool).toContain('plays the cello in an amateur orchestra on Thursdays');
      expect(sam?.observations_omitted).toBe(FACTS.length - (sam?.observations.length ?? 0));
    }
  }, 120_000);
});
