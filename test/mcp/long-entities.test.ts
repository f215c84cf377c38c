/**
 * A long entity (issue 18: "an entity's other observations when one matches"): Sam's 64
 * observations do not fit one vector's 480 tokens, and the two facts asked about are among those
 * its text leaves out. The store keeps a vector per observation of such an entity, so search by
 * meaning alone (no shared words do the work: `search_modes: ['semantic']`) still finds Sam first,
 * ahead of short entities that are near the question but wrong. Real model, real MCP client.
 * Without observation vectors Sam is not first for either question (the garden and the clinic are).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildEntityText } from '../../src/core/text/entity-text.js';
import { harness, realEmbedder, type Harness } from '../helpers/fixtures.js';

const FILLER = [
  'prefers tea to coffee in the morning',
  'runs 5 km every Saturday along the river',
  'works as a structural engineer at a bridge company',
  'has a cat called Miso who hates the vacuum cleaner',
  'is learning Portuguese with an app, about twenty minutes a day',
  'drives an old green Volvo estate',
  'plays the cello in an amateur orchestra on Thursdays',
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
  'collects vinyl records of 1970s jazz',
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
];
/** Short notes of words found nowhere else: the most novel middle observations, chosen for the entity's text before the facts. */
const NOTES = [
  'fluent Welsh',
  'juggling hobby',
  'homemade kombucha',
  'watercolour landscapes',
  'two kayaks',
  'smartwatch sleep tracking',
  'hates coriander',
  'history podcasts',
  'met astronaut',
  'cycling newsletter',
  'beekeeping neighbour',
  'loft conversion plans',
  'vintage radios',
  'Queen singalongs',
  'blood donor',
  'chess teacher',
  'oat milk',
  'forty houseplants',
  'driving glasses',
  'salsa lessons',
  'crossword addict',
  'Lego collector',
  'night owl',
  'left handed',
  'tattoo planned',
  'Esperanto curious',
];
const KEY = 'hid the spare house key under the blue flowerpot by the back door';
const ALLERGY = "Ana's younger sister is allergic to peanuts";
const SAM = { name: 'Sam', entityType: 'person', observations: [...FILLER, ...NOTES.slice(0, 12), KEY, ALLERGY, ...NOTES.slice(12)] };
const NEAR_BUT_WRONG = [
  { name: 'Locksmith', entityType: 'service', observations: ['Pedro the locksmith on Calle Mayor changes locks and cuts keys'] },
  { name: 'Allergy clinic', entityType: 'place', observations: ['the clinic near the station tests for food intolerances'] },
  { name: 'Garden', entityType: 'place', observations: ['the back garden gets sun in the afternoon'] },
];

describe('a long entity is found by an observation its vector left out (real model)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ embedder: 'real' });
    await h.ok('create_entities', { entities: [SAM, ...NEAR_BUT_WRONG] });
    await h.service.drainEmbeddings();
  });
  afterAll(async () => {
    await h.close();
  });

  it('leaves both facts out of Sam’s own text (the case this is about)', async () => {
    const engine = await realEmbedder();
    const text = buildEntityText(SAM, [], (t) => engine.countTokens(t));
    expect(text.includes(KEY) || text.includes(ALLERGY)).toBe(false);
    expect(await engine.fitsOneVector?.([{ entity: SAM, relations: [] }])).toEqual([false]);
  });

  for (const [question, fact] of [
    ['where is a backup key to the house?', 'the key'],
    ['which relative has a nut allergy?', 'the allergy'],
  ] as const) {
    it(`finds Sam first by meaning alone for ${fact}: "${question}"`, async () => {
      const semantic = await h.ok<{ results: { name: string }[] }>('hybrid_search', {
        query: question,
        search_modes: ['semantic'],
        limit: 4,
      });
      expect(semantic.results[0]?.name).toBe('Sam');
      const both = await h.ok<{ results: { name: string }[] }>('search_semantic', { query: question, limit: 4 });
      expect(both.results[0]?.name).toBe('Sam');
    });
  }

  it('counts entities, not vectors, as indexed', async () => {
    const stats = await h.ok<{ semantic: { indexed: number } }>('get_statistics');
    expect(stats.semantic.indexed).toBe(4);
  });
});
