/** Issue 33, item 11: an entity named what the query says comes first. */
import { describe, expect, it } from 'vitest';
import { isNameMatch, MAX_NAME_WORDS, nameKey, pinNameMatches } from '../../../src/core/rank/name-match.js';
import type { EntityId } from '../../../src/core/types.js';

const id = (n: number): EntityId => n as EntityId;

describe('isNameMatch', () => {
  it('matches the same words whatever their case, accents and punctuation', () => {
    for (const query of ['Project Atlas', 'project atlas', 'PROJECT-ATLAS', 'project_atlas', '  Project   Atlas ']) {
      expect(isNameMatch(nameKey(query), 'Project Atlas'), query).toBe(true);
    }
    expect(isNameMatch(nameKey('jose garcia'), 'José García')).toBe(true);
    expect(isNameMatch(nameKey("Rosa's"), 'Rosa')).toBe(true);
  });

  it('sets stopwords aside when both sides keep a word, and compares all-stopword names exactly', () => {
    expect(isNameMatch(nameKey('Beatles'), 'The Beatles')).toBe(true);
    expect(isNameMatch(nameKey('what is Python'), 'Python')).toBe(true);
    expect(isNameMatch(nameKey('The Who'), 'The Who')).toBe(true);
    expect(isNameMatch(nameKey('who'), 'The Who')).toBe(false);
  });

  it('does not match a query that only mentions the name, or a name that only contains the query', () => {
    expect(isNameMatch(nameKey('who leads Project Atlas'), 'Project Atlas')).toBe(false);
    expect(isNameMatch(nameKey('Atlas'), 'Project Atlas')).toBe(false);
    expect(isNameMatch(nameKey('Atlas Project'), 'Project Atlas')).toBe(false);
  });

  it('has no key for text without words or with more words than a name has', () => {
    expect(nameKey('?!')).toBeUndefined();
    expect(nameKey('')).toBeUndefined();
    expect(nameKey(Array.from({ length: MAX_NAME_WORDS + 1 }, (_, i) => `w${i}`).join(' '))).toBeUndefined();
    expect(isNameMatch(undefined, 'Project Atlas')).toBe(false);
    expect(isNameMatch(nameKey('x'), '')).toBe(false);
  });
});

describe('pinNameMatches', () => {
  const ranked = [id(1), id(2), id(3), id(4)].map((i) => ({ id: i }));
  it('puts the matches first, each part in its order', () => {
    expect(pinNameMatches(ranked, new Set([id(4), id(2)])).map((r) => r.id)).toEqual([2, 4, 1, 3]);
  });
  it('keeps the order without matches, and on an empty list', () => {
    expect(pinNameMatches(ranked, new Set()).map((r) => r.id)).toEqual([1, 2, 3, 4]);
    expect(pinNameMatches([], new Set([id(1)]))).toEqual([]);
  });
});
