/** The pure part of redaction (src/core/text/redaction.ts): spans to marks, overlaps, tallies, the answer's line. */
import { describe, expect, it } from 'vitest';
import {
  EXTRA_SECRET_PATTERNS,
  RedactionTally,
  findPatternSpans,
  redactionNotice,
  replaceSpans,
  shannonEntropy,
  urlPasswordSpan,
} from '../../../src/core/text/redaction.js';

describe('replaceSpans', () => {
  it('replaces each span with its mark and counts by type', () => {
    const text = 'a SECRET1 b SECRET2 c';
    const out = replaceSpans(text, [
      { start: 2, end: 9, type: 'x' },
      { start: 12, end: 19, type: 'x' },
    ]);
    expect(out).toEqual({ text: 'a [REDACTED:x] b [REDACTED:x] c', counts: [{ type: 'x', count: 2 }] });
  });

  it('lets a higher-priority span win an overlap, and unites spans of equal priority', () => {
    const text = '0123456789abcdef';
    expect(
      replaceSpans(text, [
        { start: 2, end: 8, type: 'generic', priority: 0 },
        { start: 4, end: 6, type: 'specific', priority: 2 },
      ]).text,
    ).toBe('0123[REDACTED:specific]6789abcdef');
    expect(
      replaceSpans(text, [
        { start: 2, end: 6, type: 'a' },
        { start: 4, end: 9, type: 'b' },
      ]),
    ).toEqual({ text: '01[REDACTED:a]9abcdef', counts: [{ type: 'a', count: 1 }] });
  });

  it('ignores a span inside a mark already there, and empty spans', () => {
    const text = 'x [REDACTED:password] y';
    expect(
      replaceSpans(text, [
        { start: 3, end: 20, type: 'secret' },
        { start: 1, end: 1, type: 'z' },
      ]),
    ).toEqual({ text, counts: [] });
  });

  it('returns the text itself when there is no span', () => {
    expect(replaceSpans('plain', [])).toEqual({ text: 'plain', counts: [] });
  });
});

describe('RedactionTally and the answer line', () => {
  it('sums by type, most first, and names types and counts only', () => {
    const tally = new RedactionTally();
    tally.add([{ type: 'password', count: 1 }]);
    tally.add([
      { type: 'github-token', count: 2 },
      { type: 'password', count: 1 },
      { type: 'aws-access-key', count: 2 },
    ]);
    expect(tally.total).toBe(6);
    expect(tally.counts()).toEqual([
      { type: 'aws-access-key', count: 2 },
      { type: 'github-token', count: 2 },
      { type: 'password', count: 2 },
    ]);
    expect(redactionNotice(tally.counts())).toBe(
      'Redacted before storing: 2 aws-access-key, 2 github-token, 2 password (each stored as [REDACTED:type]).',
    );
  });
});

describe('helpers', () => {
  it('finds the password of a URL, with or without a scheme, and nothing without one', () => {
    const uri = 'postgres://alice:pw1@db/x';
    const span = urlPasswordSpan(uri);
    expect(span && uri.slice(span[0], span[1])).toBe('pw1');
    expect(urlPasswordSpan('https://example.com/a:b@c')).toBeUndefined();
    expect(urlPasswordSpan('https://bob@example.com')).toBeUndefined();
  });

  it('scores random tokens above words', () => {
    expect(shannonEntropy('Xk9Lm2Pq7Rt4Vw8Y')).toBeGreaterThan(3.5);
    expect(shannonEntropy('aaaaaaaa')).toBe(0);
  });

  it('gives a password type to a KEY=value line whose name says password, secret otherwise', () => {
    const types = (t: string) => findPatternSpans(t, EXTRA_SECRET_PATTERNS).map((s) => [s.type, t.slice(s.start, s.end)]);
    expect(types('DB_PASSWORD=hunter2')).toEqual([['password', 'hunter2']]);
    expect(types('"apiKey": "a8f3b2c1d4e5"')).toEqual([['secret', 'a8f3b2c1d4e5']]);
    expect(types('tokenizer=wordpiece')).toEqual([]);
  });
});
