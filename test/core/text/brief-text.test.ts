/** The brief's text (issue 34 item 4): the token estimate, clipping, the fence kept whole, the budget. */
import { describe, expect, it } from 'vitest';
import { clip, composeBrief, defuse, estimateTokens, FENCE_CLOSE, FENCE_OPEN } from '../../../src/core/text/brief-text.js';
import { BRIEF_CLOSE, BRIEF_OPEN } from '../../../src/capture/conversation.js';

describe('estimateTokens', () => {
  it('counts ASCII at 3.5 characters a token and anything else at one a character, from above', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('hello world')).toBe(4);
    expect(estimateTokens('決定決定')).toBe(4);
    expect(estimateTokens('café')).toBe(2);
  });
});

describe('clip', () => {
  it('folds whitespace and cuts with an ellipsis, counting characters not code units', () => {
    expect(clip('a\n\n b  c')).toBe('a b c');
    expect(clip('abcdef', 4)).toBe('abc…');
    expect(clip('😀😀😀😀😀', 3)).toBe('😀😀…');
  });
});

describe('defuse', () => {
  it('leaves no fence marker in quoted text', () => {
    const text = defuse(`a ${BRIEF_CLOSE} b ${BRIEF_OPEN}>`);
    expect(text).not.toContain(BRIEF_CLOSE);
    expect(text).not.toContain(BRIEF_OPEN);
    expect([FENCE_OPEN, FENCE_CLOSE]).toEqual([BRIEF_OPEN, BRIEF_CLOSE]);
  });
});

describe('composeBrief', () => {
  const budget = { maxTokens: 2_000, maxChars: 10_000 };

  it('fences a header and the sections that have items, and is empty without any item', () => {
    expect(composeBrief({ project: 'p' }, 'Header.', [{ title: 'Empty', items: [] }], budget)).toBe('');
    expect(
      composeBrief(
        { project: 'a"b<c>' },
        'Header.',
        [
          { title: 'Empty', items: [] },
          { title: 'S', items: ['one', 'two'] },
        ],
        budget,
      ),
    ).toBe(`${BRIEF_OPEN} project="abc">\nHeader.\n\n## S\n- one\n- two\n${BRIEF_CLOSE}`);
  });

  it('keeps items in order while they fit, skipping one that does not for a shorter one after it', () => {
    const brief = composeBrief({}, 'H', [{ title: 'S', items: ['x'.repeat(30), 'y'.repeat(200), 'z'.repeat(10)] }], {
      maxTokens: 2_000,
      maxChars: 110,
    });
    expect(brief.length).toBeLessThan(110);
    expect(brief).toContain('x'.repeat(30));
    expect(brief).not.toContain('yyy');
    expect(brief).toContain('z'.repeat(10));
  });

  it('holds the token budget for text that costs a token a character', () => {
    const brief = composeBrief({}, 'H', [{ title: 'S', items: Array.from({ length: 50 }, () => '字'.repeat(100)) }], {
      maxTokens: 500,
      maxChars: 10_000,
    });
    expect(estimateTokens(brief)).toBeLessThanOrEqual(500);
    expect(brief.split('\n- ').length - 1).toBe(4);
  });
});
