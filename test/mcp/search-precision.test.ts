/**
 * Issue 33: what a question's small words and an entity's name do to a search (real model, a real
 * MCP client; test/mcp/on-postgres.test.ts runs this file on PostgreSQL too).
 * - item 9: question words and the fragments apostrophes leave ("grandmother's" → "s") are never
 *   keyword evidence; "s" matched every "user's …" observation and buried the grandmother;
 * - item 11: an entity named what the query says comes before the ones that mention it.
 */
import { describe, expect, it } from 'vitest';
import { harness } from '../helpers/fixtures.js';

interface Answer {
  results: { name: string; scores?: { name_match: boolean } }[];
  stats?: { fts_stats: { match: string | null } | null };
}

const FRIENDS = [
  'Ana',
  'Ben',
  'Carla',
  'Dev',
  'Eli',
  'Fran',
  'Gus',
  'Hana',
  'Ivan',
  'Jo',
  'Kai',
  'Lena',
  'Milo',
  'Nora',
  'Omar',
  'Pia',
  'Quin',
  'Rui',
  'Sara',
  'Tom',
];
const HOBBIES = [
  'cooking',
  'chess',
  'running',
  'piano',
  'photography',
  'gardening',
  'cycling',
  'painting',
  'yoga',
  'hiking',
  'sailing',
  'pottery',
  'climbing',
  'knitting',
  'poetry',
  'jazz',
  'tennis',
  'baking',
  'surfing',
];

/** A 40-entity memory as an agent writes one: "the user's …" and "when …" everywhere, one grandmother. */
function userMemory() {
  return [
    {
      name: 'Grandma Rosa',
      entityType: 'person',
      observations: ["Mother of the user's mother", 'Born on 14 March 1941 in Porto', 'Loves embroidery and fado'],
    },
    ...FRIENDS.map((name, i) => ({
      name,
      entityType: 'person',
      observations:
        i % 2 === 0
          ? [
              `${name} is the user's friend from the ${HOBBIES[i] ?? 'book'} club`,
              `When they meet, ${name} talks about ${HOBBIES[i] ?? 'books'}`,
            ]
          : [`Knows the user from the ${HOBBIES[i] ?? 'book'} club`],
    })),
    ...HOBBIES.map((hobby, i) => ({
      name: `Hobby ${hobby}`,
      entityType: 'hobby',
      observations: [
        i % 2 === 0 ? `The user's ${hobby} hobby, practised when the weather is good` : `Practised on weekends since ${2000 + i}`,
      ],
    })),
  ];
}

describe("question words and apostrophes' fragments are no keyword evidence (issue 33, item 9)", () => {
  it('hybrid_search and search_semantic put the grandmother first for "when is my grandmother\'s birthday"', async () => {
    const h = await harness({ embedder: 'real' });
    try {
      await h.ok('create_entities', { entities: userMemory() });
      await h.service.drainEmbeddings();
      const query = "when is my grandmother's birthday";
      const hybrid = await h.ok<Answer>('hybrid_search', { query, limit: 5, explain_query: true });
      const semantic = await h.ok<Answer>('search_semantic', { query, limit: 5 });
      expect([hybrid.results[0]?.name, semantic.results[0]?.name]).toEqual(['Grandma Rosa', 'Grandma Rosa']);
      // Nothing of the query but "grandmother" and "birthday" is searched by keyword.
      expect(hybrid.stats?.fts_stats?.match).toBe('"grandmother" OR "birthday"');
      // "what's", "doesn't", "whose": no fragment and no question word reaches the keyword leg either.
      const other = await h.ok<Answer>('hybrid_search', { query: "whose birthday doesn't Rosa's family know?", explain_query: true });
      expect(other.stats?.fts_stats?.match).toBe('"birthday" OR "Rosa" OR "family" OR "know"');
    } finally {
      await h.close();
    }
  });

  it('a Spanish question drops its question words (cuántos, adónde) and keeps its content', async () => {
    const h = await harness({ embedder: 'real' });
    try {
      await h.ok('create_entities', {
        entities: [
          { name: 'Abuela Carmen', entityType: 'persona', observations: ['tiene ochenta y dos años', 'vive en Sevilla'] },
          { name: 'Viaje', entityType: 'evento', observations: ['cuántos kilómetros hay hasta Cádiz'] },
        ],
      });
      const answer = await h.ok<Answer>('hybrid_search', {
        query: '¿cuántos años tiene la abuela?',
        search_modes: ['fts'],
        explain_query: true,
      });
      expect(answer.stats?.fts_stats?.match).toBe('"años" OR "abuela"');
      expect(answer.results.map((r) => r.name)).toEqual(['Abuela Carmen']);
    } finally {
      await h.close();
    }
  });
});

describe('an entity named what the query says comes first (issue 33, item 11)', () => {
  const PROJECTS = [
    {
      name: 'Project Atlas',
      entityType: 'project',
      observations: ['Migrating the billing system to Kubernetes', 'Deadline is the end of Q3', 'Budget approved in January'],
    },
    {
      name: 'Maria Lopez',
      entityType: 'person',
      observations: ['Leads Project Atlas', 'Reviews every Project Atlas design document', 'Works from Lisbon'],
    },
    { name: 'Weekly sync', entityType: 'meeting', observations: ['Status of Project Atlas every Monday'] },
    { name: 'Project Hermes', entityType: 'project', observations: ['A new search engine for the docs site'] },
    { name: 'Atlas Mountains trip', entityType: 'event', observations: ['Hiking in Morocco in April'] },
  ];

  it('"Project Atlas", "project atlas" and "Project-Atlas" find the entity so named first, in every mode', async () => {
    const h = await harness({ embedder: 'real' });
    try {
      await h.ok('create_entities', { entities: PROJECTS });
      await h.service.drainEmbeddings();
      const firsts: Record<string, string | undefined> = {};
      const answers: Answer[] = [];
      for (const query of ['Project Atlas', 'project atlas', 'Project-Atlas']) {
        for (const search_modes of [undefined, ['fts'], ['semantic']]) {
          const answer = await h.ok<Answer>('hybrid_search', { query, limit: 5, ...(search_modes === undefined ? {} : { search_modes }) });
          firsts[`hybrid_search ${query} ${search_modes?.join() ?? 'both legs'}`] = answer.results[0]?.name;
          answers.push(answer);
        }
        firsts[`search_semantic ${query}`] = (await h.ok<Answer>('search_semantic', { query, limit: 5 })).results[0]?.name;
      }
      expect(firsts).toEqual(Object.fromEntries(Object.keys(firsts).map((k) => [k, 'Project Atlas'])));
      // Each answer says which result is there by its name.
      for (const answer of answers) expect(answer.results.map((r) => r.scores?.name_match)).toEqual(answer.results.map((_, i) => i === 0));
      // A query that only mentions a name is left to the scores: no result is a name match.
      const mention = await h.ok<Answer>('hybrid_search', { query: 'who reviews the Atlas design documents', limit: 5 });
      expect(mention.results.some((r) => r.scores?.name_match)).toBe(false);
      expect(mention.results[0]?.name).toBe('Maria Lopez');
    } finally {
      await h.close();
    }
  });
});
