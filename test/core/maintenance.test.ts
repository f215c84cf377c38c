/** The pure parts of the maintenance tools: duplicate matching and entity-split topics. */
import { describe, expect, it } from 'vitest';
import { containment, findDuplicates, matchPair, rescaledCosine, wordSet } from '../../src/core/maintenance/duplicates.js';
import {
  analyzeSplit,
  keywordTopics,
  nameGroups,
  semanticGroups,
  splitSummary,
  splitThreshold,
  topicWords,
} from '../../src/core/maintenance/split.js';

const T = { similarity: 0.85, containment: 0.7 };

describe('duplicates', () => {
  it('tokenizes as the seed system: lower case, outer punctuation stripped, inner kept', () => {
    expect([...wordSet("Cat's toy, (red)!  ¡Sí!")]).toEqual(["cat's", 'toy', 'red', 'sí']);
    expect(containment('', 'anything')).toBe(1);
    expect(containment('red car', 'a shiny red car')).toBe(1);
    expect(containment('red bike', 'a shiny red car')).toBe(0.5);
  });

  it('matches by cosine, or by containment only when one text is at least twice as long', () => {
    expect(matchPair('a', 'b', 0.9, T)).toEqual({ type: 'cosine', score: 0.9 });
    expect(matchPair('red car', 'a red car', 0.1, T)).toBeUndefined(); // 9/7 < 2: lengths too close
    expect(matchPair('red car', 'a shiny red car parked', 0.1, T)).toEqual({ type: 'containment', score: 1 });
    expect(matchPair('red car', 'a shiny red car parked', undefined, { ...T, containment: 1 })).toEqual({ type: 'containment', score: 1 });
    // Lengths are counted in code points: 12 against 7 is under twice (in UTF-16 units it would be 16).
    expect(matchPair('red car', 'red car 😀😀😀😀', undefined, T)).toBeUndefined();
  });

  it('joins pairs transitively into clusters, ordered by first member', () => {
    const sims: Record<string, number> = { '0,2': 0.9, '2,3': 0.9 };
    const { pairs, clusters } = findDuplicates(['a', 'b', 'c', 'd', 'e'], (i, j) => sims[`${i},${j}`] ?? 0, T);
    expect(pairs.map((p) => [p.a, p.b])).toEqual([
      [0, 2],
      [2, 3],
    ]);
    expect(clusters).toEqual([[0, 2, 3]]);
  });

  it('rescales a cosine to the model floor', () => {
    expect(rescaledCosine(0.87, 0.74)).toBeCloseTo(0.5, 10);
    expect(rescaledCosine(0.5, 0.74)).toBe(0);
    expect(rescaledCosine(0.5, 0)).toBe(0.5);
  });
});

describe('entity split', () => {
  it('has the seed thresholds, in English and Spanish, accents ignored', () => {
    expect([
      splitThreshold('Sesión'),
      splitThreshold('session'),
      splitThreshold('Proyecto'),
      splitThreshold('Project'),
      splitThreshold('Person'),
    ]).toEqual([15, 15, 25, 25, 20]);
  });

  it('clusters by average linkage up to the cut distance', () => {
    // Two tight pairs, far apart: {0,1} and {2,3}.
    const sim = (i: number, j: number) => (Math.floor(i / 2) === Math.floor(j / 2) ? 0.9 : 0.1);
    expect(semanticGroups(4, sim)).toEqual([
      [0, 1],
      [2, 3],
    ]);
    expect(semanticGroups(4, sim, 0.95)).toEqual([[0, 1, 2, 3]]);
  });

  it('names topics by distinctive words of any script, never twice', () => {
    expect(topicWords('Ирина пишет письма и the tests')).toEqual(['ирина', 'пишет', 'письма', 'tests']);
    const named = nameGroups([['garden tomatoes garden'], ['garden tomatoes garden']]);
    expect(Object.keys(named)).toEqual(['Garden Tomatoes', 'Garden Tomatoes 2']);
  });

  it('falls back to keyword topics, and to halves when keywords separate nothing', () => {
    expect(keywordTopics(['alpha tomato', 'beta tomato', 'gamma invoice', 'delta invoice'])).toEqual({
      Tomato: ['alpha tomato', 'beta tomato'],
      Invoice: ['gamma invoice', 'delta invoice'],
    });
    expect(keywordTopics(['same words here', 'same words here too', 'same words again', 'same words still'])).toEqual({
      'Part 1': ['same words here', 'same words here too'],
      'Part 2': ['same words again', 'same words still'],
    });
  });

  it('needs a split only above the threshold with two topics or more', () => {
    const obs = Array.from({ length: 21 }, (_, i) => (i % 2 === 0 ? `tomato note ${i}` : `invoice note ${i}`));
    const a = analyzeSplit('E', 'Person', obs, undefined);
    expect(a).toMatchObject({ needs_split: true, method: 'keywords', observation_count: 21, threshold: 20 });
    expect(a.split_score).toBeCloseTo(21 / 20 + 2 / 21, 4);
    expect(analyzeSplit('E', 'Person', obs.slice(0, 20), undefined)).toMatchObject({ needs_split: false, method: 'none', split_score: 1 });
  });
});

describe('splitSummary (issue 33)', () => {
  it('says when and into which entities the observations went', () => {
    const day = Date.UTC(2026, 10, 27, 23, 59);
    expect(splitSummary(['Ana - Work', 'Ana - Family'], day)).toBe(
      'Split on 2026-11-27 into Ana - Work and Ana - Family, which hold its observations now (open_nodes reads them).',
    );
    expect(splitSummary(['A', 'B', 'C'], day)).toContain('into A, B and C,');
    expect(splitSummary(['Only'], day)).toContain('into Only,');
  });
});
