/** Issue 33: "1 recently written entities": counts agree with their nouns. */
import { describe, expect, it } from 'vitest';
import { plural } from '../../../src/core/text/plural.js';

describe('plural', () => {
  it('says one thing in the singular and any other count in the plural', () => {
    expect(plural(1, 'entity', 'entities')).toBe('1 entity');
    expect(plural(0, 'entity', 'entities')).toBe('0 entities');
    expect(plural(2, 'observation')).toBe('2 observations');
    expect(plural(1, 'entity waits', 'entities wait')).toBe('1 entity waits');
  });
  it('is the same on the page and in the MCP App view (web/why.js)', async () => {
    const page: string = '../../../web/why.js'; // plain JavaScript for the browser, without types
    const { plural: pagePlural } = (await import(page)) as { plural: typeof plural };
    for (const n of [0, 1, 2]) expect(pagePlural(n, 'result')).toBe(plural(n, 'result'));
  });
});
