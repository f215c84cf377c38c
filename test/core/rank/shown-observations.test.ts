/**
 * Which observations a search result shows (issue 33): the bound, matching first, at its edges.
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_OBSERVATION_BOUND,
  observationTerms,
  orderObservations,
  shownObservations,
  type ObservationTerm,
} from '../../../src/core/rank/shown-observations.js';

const word = (w: string): ObservationTerm => ({ words: [w], prefix: false });

describe('observationTerms', () => {
  it("keeps the words that carry evidence, folded, and no lone letter (the 's' of a possessive)", () => {
    expect(observationTerms("my Grandmother's birthday?", 'plain')).toEqual([word('grandmother'), word('birthday')]);
    expect(observationTerms('¿Dónde vive mi abuela?', 'plain')).toEqual([word('vive'), word('abuela')]);
  });

  it('reads an expert query: phrases, prefixes, obs: terms; not name: or type: terms, not what NOT excludes', () => {
    expect(observationTerms('"machine learning" neur* obs:tea name:Sam type:person python NOT snake', 'expert')).toEqual([
      { words: ['machine', 'learning'], prefix: false },
      { words: ['neur'], prefix: true },
      word('tea'),
      word('python'),
    ]);
    // Bare text under expert syntax is plain text: its stopwords go.
    expect(observationTerms('the cello', 'expert')).toEqual([word('cello')]);
  });

  it('has none for a query of stopwords alone', () => {
    expect(observationTerms('what is it', 'plain')).toEqual([]);
  });
});

describe('orderObservations', () => {
  it('puts observations holding the terms first, rarer terms weighing more; the rest keep stored order', () => {
    const observations = ['Sam went home', 'Sam likes tea', 'nothing here', 'Sam bought green tea', 'Sam'];
    // "sam" is in four of five observations and tells them apart less than "tea" (two of five).
    expect(orderObservations(observations, [word('sam'), word('tea')])).toEqual([1, 3, 0, 4, 2]);
  });

  it('matches whole words, folded, phrases in order and prefixes', () => {
    const observations = ['teapot on the shelf', 'Té verde', 'learning machine', 'machine learning course', 'neural nets'];
    expect(orderObservations(observations, [word('te')])).toEqual([1, 0, 2, 3, 4]);
    expect(orderObservations(observations, [{ words: ['machine', 'learning'], prefix: false }])[0]).toBe(3);
    expect(orderObservations(observations, [{ words: ['neur'], prefix: true }])[0]).toBe(4);
  });

  it('fuses the keyword order with distances when every observation has one, ties in stored order', () => {
    const observations = ['a', 'b', 'c', 'd'];
    expect(orderObservations(observations, [], [0.4, 0.1, 0.3, 0.1])).toEqual([1, 3, 2, 0]);
    // Both orders put c first; d holds the word and is third nearest, b is only second nearest.
    expect(orderObservations(['a', 'b', 'c x', 'd x'], [word('x')], [0.9, 0.2, 0.1, 0.8])).toEqual([2, 3, 1, 0]);
    expect(orderObservations(['a', 'b', 'c', 'd'], [], [0.2, 0.1, 0.2, 0.1])).toEqual([1, 3, 0, 2]);
    // Distances that do not line up with the observations are not used.
    expect(orderObservations(observations, [], [0.1])).toEqual([0, 1, 2, 3]);
  });

  it('keeps stored order for no terms and no distances, and for no observations', () => {
    expect(orderObservations(['x', 'y'], [])).toEqual([0, 1]);
    expect(orderObservations([], [word('x')])).toEqual([]);
  });
});

describe('shownObservations', () => {
  const many = Array.from({ length: 300 }, (_, i) => `log entry ${i}: routine check of the pipes, nothing to report`);

  it('shows every observation in stored order when they fit', () => {
    expect(shownObservations(['b tea', 'a'], [word('a')], DEFAULT_OBSERVATION_BOUND)).toEqual({ observations: ['b tea', 'a'], omitted: 0 });
    expect(shownObservations([], [word('a')], { limit: 0 })).toEqual({ observations: [], omitted: 0 });
  });

  it('cuts at the bound, matching first, and counts what it left out', () => {
    const withMatch = [...many.slice(0, 200), 'grandmother birthday is on 12 March', ...many.slice(200)];
    const shown = shownObservations(withMatch, [word('grandmother'), word('birthday')], { limit: 10 });
    expect(shown.observations).toHaveLength(10);
    expect(shown.observations[0]).toBe('grandmother birthday is on 12 March');
    expect(shown.observations.slice(1)).toEqual(many.slice(0, 9));
    expect(shown.omitted).toBe(291);
  });

  it('stops at the character bound, but always shows the first', () => {
    const long = 'x'.repeat(1500);
    expect(shownObservations([long, long, 'short'], [], { limit: 10, maxChars: 2000 })).toEqual({ observations: [long], omitted: 2 });
    expect(shownObservations(['y'.repeat(5000), 'z'], [], { limit: 10, maxChars: 2000 }).observations).toHaveLength(1);
    const shown = shownObservations(many, [], DEFAULT_OBSERVATION_BOUND);
    expect(shown.observations.join('').length).toBeLessThanOrEqual(2000);
    expect(shown.observations.length + shown.omitted).toBe(300);
  });

  it('shows none for a limit of 0, and all for a limit as large as the entity', () => {
    expect(shownObservations(many, [], { limit: 0 })).toEqual({ observations: [], omitted: 300 });
    expect(shownObservations(many, [], { limit: 1000 })).toEqual({ observations: many, omitted: 0 });
  });
});
