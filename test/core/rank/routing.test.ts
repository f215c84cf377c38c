import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { detectQueryType, queryTypeScore, ROUTING_WEIGHTS, type RoutingStrategy } from '../../../src/core/rank/routing.js';

/** A limit that neither adds nor removes a point (4..9). */
const NEUTRAL_LIMIT = 5;

describe('detectQueryType (spec/limbic-system.md "Query Routing")', () => {
  describe('factual queries → cosine_heavy', () => {
    it.each(['qué es FTS5', 'que es FTS5', 'what is FTS5', 'define RRF', 'definición de RRF', 'cómo funciona sqlite-vec'])(
      '%s',
      (query) => {
        expect(detectQueryType(query, NEUTRAL_LIMIT)).toBe('cosine_heavy');
      },
    );

    it('scores "qué es FTS5" as +2 (keyword) +1 (≤3 words)', () => {
      expect(queryTypeScore('qué es FTS5', NEUTRAL_LIMIT)).toBe(3);
    });

    it('is case-insensitive', () => {
      expect(detectQueryType('WHAT IS FTS5', NEUTRAL_LIMIT)).toBe('cosine_heavy');
      expect(detectQueryType('Qué Es FTS5', NEUTRAL_LIMIT)).toBe('cosine_heavy');
    });
  });

  describe('exploratory queries → limbic_heavy', () => {
    it.each([
      'explícame todo sobre el proyecto y sus relaciones con otros sistemas',
      'tell me everything about the memory server project and its history please',
      'dime todo sobre el proyecto',
    ])('%s', (query) => {
      expect(detectQueryType(query, NEUTRAL_LIMIT)).toBe('limbic_heavy');
    });

    it('reads the seed system\'s "cuentame", and every Spanish word with or without its accents (issue 25)', () => {
      for (const query of [
        'cuéntame algo del proyecto',
        'cuentame algo del proyecto',
        'CUÉNTAME algo del proyecto',
        'explicame algo del proyecto',
      ])
        expect(queryTypeScore(query, NEUTRAL_LIMIT), query).toBe(-2);
      expect(queryTypeScore('definicion de RRF', NEUTRAL_LIMIT)).toBe(3);
      expect(queryTypeScore('como funciona sqlite-vec', NEUTRAL_LIMIT)).toBe(3);
      expect(queryTypeScore('relacion entre los dos sistemas que tenemos aqui', NEUTRAL_LIMIT)).toBe(-2);
    });

    it('scores the long Spanish query as -2 (explícame) -1 (≥10 words)', () => {
      expect(queryTypeScore('explícame todo sobre el proyecto y sus relaciones con otros sistemas', NEUTRAL_LIMIT)).toBe(-3);
    });
  });

  describe('mixed queries → hybrid_balanced', () => {
    it.each([
      'sqlite storage engine notes', // no keyword, 4 words: 0
      'compare sqlite and postgres', // intermediate +1
      'diferencia entre sqlite y postgres', // intermediate +1
      'ejemplos de uso del grafo', // intermediate +1
    ])('%s', (query) => {
      expect(detectQueryType(query, NEUTRAL_LIMIT)).toBe('hybrid_balanced');
    });

    it('an intermediate keyword adds exactly +1', () => {
      expect(queryTypeScore('compare sqlite and postgres', NEUTRAL_LIMIT)).toBe(1);
      expect(queryTypeScore('sqlite storage engine notes', NEUTRAL_LIMIT)).toBe(0);
    });
  });

  describe('thresholds: score ≥ 2 → cosine_heavy, ≤ -2 → limbic_heavy', () => {
    it('score exactly 2 is cosine_heavy, exactly 1 is balanced', () => {
      expect(queryTypeScore('compare sqlite and postgres', 3)).toBe(2);
      expect(detectQueryType('compare sqlite and postgres', 3)).toBe('cosine_heavy');
      expect(detectQueryType('compare sqlite and postgres', NEUTRAL_LIMIT)).toBe('hybrid_balanced');
    });

    it('score exactly -2 is limbic_heavy, exactly -1 is balanced', () => {
      const tenWords = 'the memory server keeps its graph in one sqlite file';
      expect(queryTypeScore(tenWords, NEUTRAL_LIMIT)).toBe(-1);
      expect(detectQueryType(tenWords, NEUTRAL_LIMIT)).toBe('hybrid_balanced');
      expect(queryTypeScore(tenWords, 10)).toBe(-2);
      expect(detectQueryType(tenWords, 10)).toBe('limbic_heavy');
    });
  });

  describe('limit rules', () => {
    const query = 'sqlite storage engine notes'; // scores 0 by itself

    it.each([1, 2, 3])('limit %i (≤3) → +1', (limit) => {
      expect(queryTypeScore(query, limit)).toBe(1);
    });

    it.each([4, 5, 9])('limit %i → 0', (limit) => {
      expect(queryTypeScore(query, limit)).toBe(0);
    });

    it.each([10, 11, 50])('limit %i (≥10) → -1', (limit) => {
      expect(queryTypeScore(query, limit)).toBe(-1);
    });
  });

  describe('word-count rules', () => {
    const words = (n: number): string => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');

    it.each([1, 2, 3])('%i words (≤3) → +1', (n) => {
      expect(queryTypeScore(words(n), NEUTRAL_LIMIT)).toBe(1);
    });

    it.each([4, 9])('%i words → 0', (n) => {
      expect(queryTypeScore(words(n), NEUTRAL_LIMIT)).toBe(0);
    });

    it.each([10, 25])('%i words (≥10) → -1', (n) => {
      expect(queryTypeScore(words(n), NEUTRAL_LIMIT)).toBe(-1);
    });

    it('counts words across any whitespace, ignoring leading and trailing blanks', () => {
      expect(queryTypeScore('  alpha\t\tbeta\n gamma   delta  ', NEUTRAL_LIMIT)).toBe(0);
      expect(queryTypeScore('  alpha\t\tbeta\n gamma  ', NEUTRAL_LIMIT)).toBe(1);
    });
  });

  describe('keywords match whole words only', () => {
    it('"define" does not fire inside "undefined"', () => {
      expect(queryTypeScore('undefined behaviour in sqlite', NEUTRAL_LIMIT)).toBe(0);
      expect(queryTypeScore('define behaviour in sqlite', NEUTRAL_LIMIT)).toBe(2);
      expect(detectQueryType('undefined', NEUTRAL_LIMIT)).toBe('hybrid_balanced');
      expect(detectQueryType('define', NEUTRAL_LIMIT)).toBe('cosine_heavy');
    });

    it('"define" still fires next to punctuation', () => {
      expect(queryTypeScore('define: RRF fusion method', NEUTRAL_LIMIT)).toBe(2);
    });

    it('"explain" does not fire inside "unexplained"', () => {
      expect(queryTypeScore('unexplained sqlite lock errors', NEUTRAL_LIMIT)).toBe(0);
    });
  });

  it('property: always returns one of the three strategies, consistent with the score', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), fc.integer({ min: 0, max: 100 }), (query, limit) => {
        const strategy = detectQueryType(query, limit);
        const score = queryTypeScore(query, limit);
        const expected: RoutingStrategy = score >= 2 ? 'cosine_heavy' : score <= -2 ? 'limbic_heavy' : 'hybrid_balanced';
        expect(strategy).toBe(expected);
      }),
    );
  });
});

describe('ROUTING_WEIGHTS', () => {
  it('weights sum to 1 for every strategy', () => {
    const strategies = Object.keys(ROUTING_WEIGHTS) as RoutingStrategy[];
    expect(strategies.sort()).toEqual(['cosine_heavy', 'hybrid_balanced', 'limbic_heavy']);
    for (const s of strategies) {
      expect(ROUTING_WEIGHTS[s].cosine + ROUTING_WEIGHTS[s].limbic).toBeCloseTo(1, 12);
    }
  });

  it('matches the spec table: 70/30, 30/70, 50/50', () => {
    expect(ROUTING_WEIGHTS.cosine_heavy).toEqual({ cosine: 0.7, limbic: 0.3 });
    expect(ROUTING_WEIGHTS.limbic_heavy).toEqual({ cosine: 0.3, limbic: 0.7 });
    expect(ROUTING_WEIGHTS.hybrid_balanced).toEqual({ cosine: 0.5, limbic: 0.5 });
  });
});
