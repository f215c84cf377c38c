/**
 * The maintenance tools where meaning matters, with the real model through a real MCP client:
 * paraphrased duplicates, and a split into topics that share no keyword.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from '../helpers/fixtures.js';

const GARDEN = [
  'Tomatoes grow in the backyard garden',
  'We planted basil and tomatoes in spring',
  'The garden needs watering every evening',
  'Roses bloom near the garden fence in June',
  'Compost is added to the vegetable beds',
  'Slugs ate the lettuce seedlings',
  'The apple tree was pruned in winter',
  'Weeds are pulled from the flower beds on Sundays',
];
const MONEY = [
  'The quarterly budget was approved by finance',
  'Invoices are paid within thirty days',
  'Tax returns are filed every April',
  'The accountant reviews expenses monthly',
  'Payroll runs on the last Friday of the month',
  'The bank loan interest rate is 4 percent',
  'Office rent increased by ten percent',
  'Receipts are scanned into the bookkeeping system',
];
const TRAVEL = [
  'Flew to Tokyo for the March conference',
  'Booked a hotel near the Lisbon train station',
  'Lost luggage on the flight to Berlin',
  'Train tickets to Madrid cost 80 euros',
  'Rented a car for the road trip across Portugal',
  'The flight to New York was delayed by three hours',
  'Visited the museums of Rome over a long weekend',
];

describe('maintenance by meaning (real model)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ embedder: 'real' });
    await h.client.listTools(); // the client then checks answers against each outputSchema
    await h.ok('create_entities', {
      entities: [
        {
          name: 'Alice',
          entityType: 'person',
          observations: [
            'Alice lives in Paris',
            'Alice likes green tea',
            'Alice resides in Paris, France',
            'The quarterly budget was approved by finance',
            'Finance signed off on the Q3 budget',
            'Alice has her home in Paris',
          ],
        },
        { name: 'Journal', entityType: 'Notes', observations: [...GARDEN, ...MONEY, ...TRAVEL] },
      ],
    });
  });
  afterAll(() => h.close());

  it('clusters paraphrases as duplicates, and a lower threshold takes in looser ones', async () => {
    const r = await h.ok<{
      method: string;
      clusters: { observations: { content: string }[] }[];
      pairs: { match_type: string; similarity: number }[];
    }>('find_duplicate_observations', { entity_name: 'Alice' });
    expect(r.method).toBe('semantic');
    expect(r.clusters.map((c) => c.observations.map((o) => o.content))).toEqual([
      ['Alice lives in Paris', 'Alice resides in Paris, France', 'Alice has her home in Paris'],
    ]);
    for (const p of r.pairs) {
      expect(p.match_type).toBe('cosine');
      expect(p.similarity).toBeGreaterThanOrEqual(0.85);
    }
    const loose = await h.ok<{ clusters: { observations: { content: string }[] }[] }>('find_duplicate_observations', {
      entity_name: 'Alice',
      threshold: 0.6,
    });
    expect(loose.clusters.map((c) => c.observations.map((o) => o.content))).toContainEqual([
      'The quarterly budget was approved by finance',
      'Finance signed off on the Q3 budget',
    ]);
  });

  it('splits by meaning into the topics, which share no keyword', async () => {
    const { analysis } = await h.ok<{ analysis: { method: string; needs_split: boolean; topics: Record<string, string[]> } }>(
      'analyze_entity_split',
      {
        entity_name: 'Journal',
      },
    );
    expect(analysis.method).toBe('semantic');
    expect(analysis.needs_split).toBe(true);
    const groups = Object.values(analysis.topics);
    // Each topic's observations stay together; at most one stray observation per topic.
    for (const topic of [GARDEN, MONEY, TRAVEL]) {
      const home = groups.find((g) => g.includes(topic[0] as string)) as string[];
      expect(topic.filter((o) => home.includes(o)).length).toBeGreaterThanOrEqual(topic.length - 1);
      expect(home.length).toBeLessThanOrEqual(topic.length + 2);
    }
    const report = await h.ok<{ split_candidates: { entity_name: string }[] }>('consolidation_report', {});
    expect(report.split_candidates.map((c) => c.entity_name)).toEqual(['Journal']);
  });
});

describe('run_consolidation by meaning (real model)', () => {
  let h: Harness;
  const topics = [GARDEN, MONEY, TRAVEL].map((t) => t.slice(0, 4));
  beforeAll(async () => {
    h = await harness({ embedder: 'real' });
    await h.client.listTools();
    // One entity per observation, named without the topic's words: only meaning can group them.
    await h.ok('create_entities', {
      entities: topics.flatMap((t, k) => t.map((o, i) => ({ name: `Note ${k}.${i}`, entityType: 'Note', observations: [o] }))),
    });
  });
  afterAll(() => h.close());

  it('writes a reflection per topic whose sources share that topic', async () => {
    const r = await h.ok<{ method: string; reflections_created: { sources: string[] }[] }>('run_consolidation', {});
    expect(r.method).toBe('semantic');
    // Measured: exactly the three topics, four notes each (named e.g. "Garden Tomatoes", "Quarterly Budget").
    expect(r.reflections_created.map((x) => x.sources.sort())).toEqual(topics.map((t, k) => t.map((_, i) => `Note ${k}.${i}`)));
  });
});
