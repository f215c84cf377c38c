import { describe, expect, it } from 'vitest';
import { informativeWords, MAX_TERM_SHARE } from '../../../src/core/text/prune-terms.js';

describe('informativeWords', () => {
  it('drops terms in more than half of the entities (BM25 idf ≤ 0) and keeps the rest in order', () => {
    expect(MAX_TERM_SHARE).toBe(0.5);
    const terms = [
      { word: 'what', df: 900 },
      { word: 'FTS5', df: 3 },
      { word: 'is', df: 600 },
      { word: 'config', df: 500 },
    ];
    expect(informativeWords(terms, 1000)).toEqual(['FTS5', 'config']);
  });

  it('keeps the rarest word when every word is common, so the query still finds something', () => {
    expect(
      informativeWords(
        [
          { word: 'the', df: 99 },
          { word: 'a', df: 80 },
        ],
        100,
      ),
    ).toEqual(['a']);
  });

  it('keeps everything on an empty store and returns nothing for no words', () => {
    expect(informativeWords([{ word: 'x', df: 0 }], 0)).toEqual(['x']);
    expect(informativeWords([], 10)).toEqual([]);
  });

  it('honours a custom share, including 1 (prune nothing)', () => {
    const terms = [
      { word: 'w', df: 90 },
      { word: 'v', df: 10 },
    ];
    expect(informativeWords(terms, 100, 1)).toEqual(['w', 'v']);
    expect(informativeWords(terms, 100, 0.05)).toEqual(['v']);
  });
});
