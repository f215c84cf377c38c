/**
 * The shadow log records hybrid_search's reflection options (reflection_boost, include_reflections,
 * reflections_only) and which candidates the boost multiplied, and the tuner's replay of such a
 * search under the logged parameters gives the order the live server answered with. Real SQLite
 * file, real MCP client; keyword leg only (no model), which is enough to rank notes and reflections.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replay, type ShadowEvent } from '../../src/core/tune/shadow.js';
import { harness, type Harness } from '../helpers/fixtures.js';

interface Answer {
  results: { name: string; entityType: string }[];
}

describe('shadow log with reflections', () => {
  let h: Harness;
  const events = async (): Promise<ShadowEvent[]> => (await h.store.tuning?.shadowEvents()) ?? [];

  beforeAll(async () => {
    h = await harness({ embedder: 'none' });
    const notes = Array.from({ length: 8 }, (_, i) => ({
      name: `Harbour note ${i}`,
      entityType: 'Note',
      // Different counts of the query's word, so the keyword leg orders them.
      observations: [`${'harbour '.repeat(8 - i)}ferry timetable ${i}`],
    }));
    await h.ok('create_entities', { entities: notes });
    await h.ok('add_reflection', { content: 'Harbour ferries are a recurring theme', about: ['Harbour note 1', 'Harbour note 2'] });
    await h.ok('add_reflection', { content: 'The harbour notes all mention timetables', about: ['Harbour note 3'] });
  });
  afterAll(() => h.close());

  it('logs the boost, which candidates it multiplied, and replays to the live order', async () => {
    const before = (await events()).length;
    const answer = await h.ok<Answer>('hybrid_search', { query: 'harbour', limit: 10, reflection_boost: 3 });
    await h.settle();
    const logged = (await events()).slice(before);
    expect(logged).toHaveLength(1);
    const event = logged[0] as ShadowEvent;
    expect(event.reflectionBoost).toBe(3);
    expect(event.reflections).toBe('included');
    const reflections = answer.results.filter((r) => r.entityType === 'Reflection').map((r) => r.name);
    expect(reflections).toHaveLength(2);
    const boosted = await h.store.graph.idsByName(reflections);
    expect(
      event.candidates
        .filter((c) => c.boosted)
        .map((c) => c.id)
        .sort(),
    ).toEqual([...boosted].sort());
    // The replay under the logged parameters is the answer; without the boost it is not.
    const liveIds = await h.store.graph.idsByName(answer.results.map((r) => r.name));
    const top = (order: readonly { id: number }[]): number[] => order.slice(0, liveIds.length).map((c) => c.id);
    expect(top(replay(event, event.parameters))).toEqual(liveIds);
    expect(top(replay({ ...event, reflectionBoost: 1 }, event.parameters))).not.toEqual(liveIds);
  });

  it('logs include_reflections false and reflections_only with no boost', async () => {
    const before = (await events()).length;
    await h.ok('hybrid_search', { query: 'harbour', include_reflections: false });
    await h.ok('hybrid_search', { query: 'harbour', reflections_only: true });
    await h.ok('search_semantic', { query: 'harbour' });
    await h.settle();
    const logged = (await events()).slice(before);
    expect(logged.map((e) => [e.tool, e.reflections, e.reflectionBoost])).toEqual([
      ['hybrid_search', 'excluded', 1],
      ['hybrid_search', 'only', 1],
      ['search_semantic', 'included', 1],
    ]);
    expect(logged.every((e) => e.candidates.every((c) => !c.boosted))).toBe(true);
  });
});
