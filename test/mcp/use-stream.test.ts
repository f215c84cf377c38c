/**
 * Issue 24 with the real model over MCP: a memory that has been used. An agent asks a stream of
 * questions and opens the first result every time, right or wrong (what it opens is lifted, so the
 * old re-rank turned this into a loop: hit@5 0.92 → 0.07 over 1,190 questions); recall must hold.
 * And the small memory: searches about the garden, then the dentist's appointment is added.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FACTS } from '../../bench/quality/small-memory-facts.js';
import { harness, type Harness } from '../helpers/fixtures.js';

interface Semantic {
  results: { name: string; limbic_score: number; scoring: { usage_lift: number; usage_places: number } }[];
}
interface Hybrid {
  results: { name: string }[];
}

const ENTITIES = 40;
const ROUNDS = 3;

describe('a used memory over MCP with the real model', () => {
  let now = Date.UTC(2026, 10, 25, 9);
  const clock = (): number => now;
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ embedder: 'real', clock });
  }, 120_000);
  afterAll(async () => {
    await h.close();
  });

  it('keeps its recall over a few hundred searches whose first result is always opened', async () => {
    const facts = FACTS.slice(0, ENTITIES);
    await h.ok('create_entities', { entities: facts.map((f) => ({ name: f.en.name, entityType: f.type, observations: f.en.obs })) });
    await h.service.drainEmbeddings();
    const questions = facts.flatMap((f) => [
      { q: f.en.q, gold: f.en.name },
      { q: f.es.q, gold: f.en.name },
    ]);
    const hits = { first: { at1: 0, at5: 0 }, last: { at1: 0, at5: 0 }, again: { at1: 0, at5: 0 } };
    const listed = new Map<string, number>();
    let searches = 0;
    let firstRound = new Map<string, number>();
    const score = (into: { at1: number; at5: number }, names: readonly string[], gold: string) => {
      into.at1 += names[0] === gold ? 1 : 0;
      into.at5 += names.slice(0, 5).includes(gold) ? 1 : 0;
    };
    for (let round = 0; round < ROUNDS; round++) {
      for (const { q, gold } of questions) {
        now += 10 * 60_000;
        const tool = searches % 2 === 0 ? 'search_semantic' : 'hybrid_search';
        const names = (await h.ok<Semantic | Hybrid>(tool, { query: q, limit: 5 })).results.map((r) => r.name);
        searches++;
        for (const n of names) listed.set(n, (listed.get(n) ?? 0) + 1);
        if (searches === questions.length) firstRound = new Map(listed);
        if (round === 0) score(hits.first, names, gold);
        if (round === ROUNDS - 1) score(hits.last, names, gold);
        if (names[0] !== undefined) await h.ok('open_nodes', { names: [names[0]] });
        await h.settle();
      }
    }
    // The first round asked again, nothing opened.
    for (const [i, { q, gold }] of questions.entries()) {
      const names = (await h.ok<Semantic | Hybrid>(i % 2 === 0 ? 'search_semantic' : 'hybrid_search', { query: q, limit: 5 })).results.map(
        (r) => r.name,
      );
      score(hits.again, names, gold);
    }
    const n = questions.length;
    const rate = (x: { at1: number; at5: number }) => ({ at1: x.at1 / n, at5: x.at5 / n });
    const [first, last, again] = [rate(hits.first), rate(hits.last), rate(hits.again)];
    // The most listed entity's share of answers: in the first round (some entity matches many
    // questions a little in any memory), and over the whole stream.
    const [top0, top] = [Math.max(...firstRound.values()) / n, Math.max(...listed.values()) / searches];
    console.info(
      `use stream: ${searches} searches, hit@1 ${first.at1.toFixed(3)} → last round ${last.at1.toFixed(3)}, re-asked ${again.at1.toFixed(3)}; ` +
        `hit@5 ${first.at5.toFixed(3)} → ${last.at5.toFixed(3)}, re-asked ${again.at5.toFixed(3)}; the most listed entity in ${(top0 * 100).toFixed(0)}% of the first round's answers, ${(top * 100).toFixed(0)}% of all`,
    );
    expect(searches).toBe(ROUNDS * n);
    expect(first.at5).toBeGreaterThan(0.8); // the memory answers at all
    // Stability, at the order of magnitude a test can hold: the collapse was 0.92 → 0.07.
    expect(last.at5).toBeGreaterThanOrEqual(first.at5 - 0.05);
    expect(again.at5).toBeGreaterThanOrEqual(first.at5 - 0.05);
    expect(last.at1).toBeGreaterThanOrEqual(first.at1 - 0.1);
    // No entity comes to answer everything (one paragraph was in 571 of 1,190 top-5 lists).
    expect(top).toBeLessThanOrEqual(top0 + 0.05);
  }, 300_000);

  it("the issue's small memory: a garden searched four times does not tie with the dentist when the dentist is asked about", async () => {
    const m = await harness({ embedder: 'real', clock });
    try {
      await m.ok('create_entities', {
        entities: [
          { name: 'Garden', entityType: 'note', observations: ['The tomatoes need watering every morning'] },
          { name: 'Marta', entityType: 'person', observations: ['My sister, lives in Valencia'] },
          { name: 'Car', entityType: 'object', observations: ['The car is due for its inspection in March'] },
          { name: 'Book club', entityType: 'event', observations: ['We meet on the first Monday of the month'] },
        ],
      });
      for (const q of ['how often do the tomatoes need water?', 'tomatoes', 'watering the garden', 'what needs watering?']) {
        now += 60_000;
        await m.ok('search_semantic', { query: q, limit: 5 });
      }
      await m.ok('create_entities', {
        entities: [{ name: 'Dentist', entityType: 'event', observations: ['Dentist appointment on Friday at 9 with Dr. Gómez'] }],
      });
      await m.settle();
      const answer = await m.ok<Semantic>('search_semantic', { query: 'when is the dentist appointment?', limit: 5 });
      const [first, second] = answer.results;
      expect(first?.name).toBe('Dentist');
      // Listed four times, used never: no usage lift, and a score clearly below the dentist's.
      const garden = answer.results.find((r) => r.name === 'Garden');
      expect(garden?.scoring.usage_lift).toBe(0);
      expect(answer.results.every((r) => r.scoring.usage_places === 0)).toBe(true);
      expect((first?.limbic_score ?? 0) - (second?.limbic_score ?? 0)).toBeGreaterThan(0.05);
    } finally {
      await m.close();
    }
  }, 120_000);
});
