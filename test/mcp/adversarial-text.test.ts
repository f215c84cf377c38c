/**
 * Issue 35, item 1: one search froze the server. search_semantic for "apple 1" + 2,000 spaces +
 * "x" held it 16 s (the date patterns backtracked a cube of the run's length; 10,000 characters
 * ran past 300 s), and a metadata observation "1" + 2,000 spaces + "x" held it 16 s on every later
 * search that named a date and reached that entity. Each search here is given 20 s, far above what
 * it needs: a hang detector, not a timing. Runs on PostgreSQL too (on-postgres.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../src/core/limits.js';
import { harness, type Harness } from '../helpers/fixtures.js';

interface Results {
  readonly results: readonly { readonly name: string }[];
}

const HANG = { timeout: 20_000 };
/** As long as a query may be: the shape at the limit. */
const QUERY = `apple 1${' '.repeat(LIMITS.maxQueryChars - 'apple 1x'.length)}x`;

describe('searches over adversarial text return (issue 35)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ embedder: 'real' });
    await h.ok('create_entities', {
      entities: [
        { name: 'Apple pie', entityType: 'Recipe', observations: ['apple pie with cinnamon, baked on 8 May, 2023'] },
        { name: 'Invoice', entityType: 'Document', observations: ['the invoice for the kitchen, paid in cash'] },
      ],
    });
    // A stored observation as long as one may be, the shape: a number, spaces, a letter.
    await h.ok('add_observations', {
      observations: [
        { entityName: 'Invoice', contents: [`1${' '.repeat(LIMITS.maxObservationChars - 2)}x`, 'date: 9 May, 2023'], kind: 'metadata' },
        { entityName: 'Invoice', contents: [`Total 12${'\u3000'.repeat(5_000)}EUR`, `1${'\n\t'.repeat(5_000)}x`], kind: 'metadata' },
      ],
    });
    await h.service.drainEmbeddings();
  }, 120_000);
  afterAll(async () => {
    await h.close();
  });

  it('search_semantic for "apple 1" + spaces + "x" at the query limit', HANG, async () => {
    const found = await h.ok<Results>('search_semantic', { query: QUERY, limit: 5 });
    expect(found.results.map((r) => r.name)).toContain('Apple pie');
  });

  it('hybrid_search for the same query, and for runs of newlines, tabs and U+3000', HANG, async () => {
    for (const run of [' ', '\n', '\t', '\u3000']) {
      const query = `apple 1${run.repeat(LIMITS.maxQueryChars - 'apple 1x'.length)}x`;
      const found = await h.ok<Results>('hybrid_search', { query, limit: 5 });
      expect(found.results.map((r) => r.name)).toContain('Apple pie');
    }
  });

  it('a search naming a date that reaches an entity whose metadata is a long run of spaces', HANG, async () => {
    for (const query of ['the kitchen invoice of May 2023', 'the invoice paid on 9 May, 2023', 'la factura de mayo de 2023']) {
      const found = await h.ok<Results>('search_semantic', { query, limit: 5 });
      expect(found.results.map((r) => r.name)).toContain('Invoice');
    }
  });
});
