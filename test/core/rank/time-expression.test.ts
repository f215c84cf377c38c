import { describe, expect, it } from 'vitest';
import { DATE_JOIN, timeExpressions } from '../../../src/core/rank/time-expression.js';

/** The joiner before issue 35: three `\s` parts side by side, which could split a run of spaces in every way. */
const CUBIC_JOIN = '(?:\\s*,?\\s*(?:de|of)?\\s+|\\s*,\\s*)';

/** Every sequence of up to `max` pieces. */
function sequences(pieces: readonly string[], max: number): string[] {
  let level = [''];
  const all = [''];
  for (let n = 0; n < max; n++) {
    level = level.flatMap((s) => pieces.map((p) => s + p));
    all.push(...level);
  }
  return all;
}

describe('timeExpressions on adversarial text (issue 35)', () => {
  it('joins exactly what the earlier joiner joined, on every short join', () => {
    const joins = sequences([' ', '\t', '\u3000', ',', 'de', 'of', 'd', 'x'], 5);
    const earlier = new RegExp(`^8${CUBIC_JOIN}May$`, 'iu');
    const now = new RegExp(`^8${DATE_JOIN}May$`, 'iu');
    const differ = joins.filter((j) => earlier.test(`8${j}May`) !== now.test(`8${j}May`));
    expect(differ).toEqual([]);
    expect(joins.filter((j) => now.test(`8${j}May`)).length).toBeGreaterThan(100);
  });

  // Each of these took 16 s at 2,000 characters and more than 300 s at 10,000 (the query limit): a hang detector, not a timing.
  it.each([
    ['a query', `apple 1${' '.repeat(10_000)}x`],
    ['a stored observation', `1${' '.repeat(10_000)}x`],
    ['newlines', `1${'\n'.repeat(10_000)}x`],
    ['tabs', `May${'\t'.repeat(10_000)}x`],
    ['ideographic spaces', `1${'\u3000'.repeat(10_000)}x`],
    ['a padded table row', `Total 12${' '.repeat(10_000)}EUR`],
    ['commas and spaces', `8${' ,'.repeat(5_000)}x`],
  ])('reads no date in %s of 10,000 characters, and returns', { timeout: 20_000 }, (_, text) => {
    expect(timeExpressions(text)).toEqual([]);
  });

  it('still reads a date after a long run of spaces, and every one of thousands of dates', { timeout: 20_000 }, () => {
    expect(timeExpressions(`${' '.repeat(10_000)}on 8 May, 2023`)).toEqual([{ year: 2023, month: 4, day: 8 }]);
    const many = timeExpressions('in 2023, on 8 May 2023; '.repeat(2_000));
    expect(many).toHaveLength(4_000);
    expect(many.filter((d) => d.day === 8)).toHaveLength(2_000);
  });
});
