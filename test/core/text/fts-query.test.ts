import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import fc from 'fast-check';
import Database from 'better-sqlite3';
import type { Entity } from '../../../src/core/types.js';
import { buildOrQuery, buildSubstringQuery, MAX_SUBSTRING_TRIGRAMS, quoteFts, tokenizeWords } from '../../../src/core/text/fts-query.js';
import { openSqliteStore } from '../../../src/store/sqlite/sqlite-store.js';

/** Every term a double-quoted literal (inner quotes doubled), terms joined by " OR ". */
const SAFE_OR_QUERY = /^"(?:[^"]|"")*"( OR "(?:[^"]|"")*")*$/;

function expectSafe(out: string | undefined): void {
  if (out === undefined) return;
  expect(out).toMatch(SAFE_OR_QUERY);
  // No empty phrase "" either.
  expect(out.split(' OR ').every((t) => t.length > 2)).toBe(true);
}

const HOSTILE: readonly string[] = [
  '"',
  '""',
  '"unterminated phrase',
  'AND',
  'a AND',
  'NOT',
  'NOT sqlite',
  'OR OR OR',
  'NEAR(',
  'NEAR(a b, 2)',
  '*',
  'prefix*',
  '^start',
  'a + b',
  '-exclude',
  '😀',
  'memory 😀🧠 graph',
  "'; DROP TABLE entities; --",
  'x'.repeat(10_000),
  'word '.repeat(2_000),
  Array.from({ length: 10_000 }, (_, i) => String.fromCharCode(33 + (i % 94))).join(''),
  'name:x',
  'entity_type:Project obs_text:sqlite',
  '{name entity_type}: x',
  '(a OR b)',
  '((((',
  ')',
  'Ñandú über café — naïve',
  '日本語の検索クエリ',
  'مرحبا بالعالم',
  'e\u0301 combining accent',
  '\u0000\u0001\u0002 control',
  '\u200b zero\u200bwidth',
  '\t\n\r',
  'a"b"c',
  'back\\slash',
  'col:"quoted" AND NOT (x*)',
];

describe('tokenizeWords', () => {
  it('splits on anything that is not a letter, digit or mark', () => {
    expect(tokenizeWords('FTS5: dom-cachorroink!')).toEqual(['FTS5', 'dom', 'cachorroink']);
    expect(tokenizeWords('Sesión 2026-03-28')).toEqual(['Sesión', '2026', '03', '28']);
    expect(tokenizeWords('  ')).toEqual([]);
  });
});

describe('quoteFts', () => {
  it('wraps in double quotes and doubles inner quotes', () => {
    expect(quoteFts('abc')).toBe('"abc"');
    expect(quoteFts('a"b')).toBe('"a""b"');
    expect(quoteFts('')).toBe('""');
  });
});

describe('buildOrQuery', () => {
  it('OR-joins quoted tokens in order', () => {
    expect(buildOrQuery('what is FTS5?')).toBe('"what" OR "is" OR "FTS5"');
    expect(buildOrQuery('sqlite')).toBe('"sqlite"');
  });

  it('drops duplicates case-insensitively, keeping the first spelling', () => {
    expect(buildOrQuery('FTS5 fts5 sqlite Fts5 SQLITE')).toBe('"FTS5" OR "sqlite"');
    expect(buildOrQuery('Ñandú ÑANDÚ ñandú')).toBe('"Ñandú"');
  });

  it.each(['', '   ', '!!!', '"', '*', '()', '— … ·', '\t\n'])('returns undefined when there is no word: %j', (text) => {
    expect(buildOrQuery(text)).toBeUndefined();
  });

  it(`turns ${HOSTILE.length} hostile inputs into undefined or quoted literals only`, () => {
    expect(HOSTILE.length).toBeGreaterThanOrEqual(20);
    for (const input of HOSTILE) expectSafe(buildOrQuery(input));
  });

  it('keeps operators and column filters as plain words', () => {
    expect(buildOrQuery('a AND NOT b')).toBe('"a" OR "AND" OR "NOT" OR "b"');
    expect(buildOrQuery('name:x')).toBe('"name" OR "x"');
    expect(buildOrQuery('NEAR(')).toBe('"NEAR"');
    expect(buildOrQuery("'; DROP TABLE entities; --")).toBe('"DROP" OR "TABLE" OR "entities"');
  });

  it('keeps unicode words whole', () => {
    expect(buildOrQuery('Ñandú über café')).toBe('"Ñandú" OR "über" OR "café"');
    expect(buildOrQuery('e\u0301t\u00e9')).toBe('"e\u0301t\u00e9"');
  });

  it('handles 10,000 characters', () => {
    expect(buildOrQuery('x'.repeat(10_000))).toBe(`"${'x'.repeat(10_000)}"`);
    expect(buildOrQuery('word '.repeat(2_000))).toBe('"word"');
  });

  it('property: any string gives undefined or a safe OR of quoted literals', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => {
        const out = buildOrQuery(text);
        expectSafe(out);
        expect(out === undefined).toBe(tokenizeWords(text).length === 0);
      }),
      { numRuns: 500 },
    );
  });
});

describe('buildSubstringQuery', () => {
  it.each(['', 'a', 'ab', '😀😀', 'é'])('fewer than 3 characters → undefined: %j', (text) => {
    expect(buildSubstringQuery(text)).toBeUndefined();
  });

  it('3 or more characters → one quoted phrase', () => {
    expect(buildSubstringQuery('abc')).toBe('"abc"');
    expect(buildSubstringQuery('😀😀😀')).toBe('"😀😀😀"');
    expect(buildSubstringQuery('dom-cachorroink v2')).toBe('"dom-cachorroink v2"');
  });

  it('doubles inner quotes', () => {
    expect(buildSubstringQuery('say "hi"')).toBe('"say ""hi"""');
    expect(buildSubstringQuery('"""')).toBe('""""""""');
  });

  it('property: up to 18 characters, one quoted literal that unquotes back to the input', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: MAX_SUBSTRING_TRIGRAMS + 2 }), (text) => {
        const out = buildSubstringQuery(text);
        if ([...text].length < 3 || text.includes('\u0000')) {
          expect(out).toBeUndefined();
          return;
        }
        expect(out).toMatch(/^"(?:[^"]|"")*"$/);
        expect(out?.slice(1, -1).replaceAll('""', '"')).toBe(text);
      }),
    );
  });

  it('issue 10: property: a longer query is an AND of at most 16 distinct trigrams of it, its first and last among them', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary', minLength: MAX_SUBSTRING_TRIGRAMS + 3, maxLength: 400 }),
          // Repetitive text, where distinct trigrams are few.
          fc.tuple(fc.string({ minLength: 1, maxLength: 4 }), fc.integer({ min: 20, max: 200 })).map(([unit, n]) => unit.repeat(n)),
        ),
        (text) => {
          const chars = [...text];
          fc.pre(chars.length > MAX_SUBSTRING_TRIGRAMS + 2 && !text.includes('\u0000'));
          const terms = andTerms(buildSubstringQuery(text));
          expect(terms.length).toBeGreaterThan(0);
          expect(terms.length).toBeLessThanOrEqual(MAX_SUBSTRING_TRIGRAMS);
          expect(new Set(terms).size).toBe(terms.length);
          for (const t of terms) {
            expect([...t]).toHaveLength(3);
            expect(text).toContain(t);
          }
          expect(terms).toContain(chars.slice(0, 3).join(''));
          expect(terms).toContain(chars.slice(-3).join(''));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('issue 10: 10,000 "x" is one trigram, a query with many distinct trigrams is cut to 16', () => {
    expect(buildSubstringQuery('x'.repeat(10_000))).toBe('"xxx"');
    const sentence = 'The quick brown fox jumps over the lazy dog near "Ñandú" café, 2026-03-28. '.repeat(100);
    const terms = andTerms(buildSubstringQuery(sentence));
    expect(terms).toHaveLength(MAX_SUBSTRING_TRIGRAMS);
    expect(terms).toContain('The');
    expect(terms).toContain('8. ');
  });
});

/** The trigrams of an expression that must be `"t1" AND "t2" AND …`; fails the test otherwise. */
function andTerms(expression: string | undefined): string[] {
  expect(expression).toBeDefined();
  const literals = [...(expression ?? '').matchAll(/"(?:[^"]|"")*"/g)].map((m) => m[0]);
  expect(literals.join(' AND ')).toBe(expression);
  return literals.map((l) => l.slice(1, -1).replaceAll('""', '"'));
}

describe('FTS5 accepts every expression built from hostile input', () => {
  // A real SQLite FTS5 index, shaped like the store's (unicode61 words, trigram substrings).
  let db: Database.Database;

  beforeAll(() => {
    db = new Database(':memory:');
    db.exec(`
      CREATE VIRTUAL TABLE words USING fts5(name, entity_type, obs_text, tokenize = 'unicode61');
      CREATE VIRTUAL TABLE grams USING fts5(name, obs_text, tokenize = 'trigram case_sensitive 0');
      INSERT INTO words VALUES ('FTS5', 'Concept', 'full text search | AND NOT NEAR'), ('Ñandú', 'Animal', 'über café');
      INSERT INTO grams VALUES ('dom-cachorroink', 'say "hi" to FTS5'), ('Ñandú', 'über café');
    `);
  });

  afterAll(() => {
    db.close();
  });

  it('buildOrQuery output never makes MATCH throw', () => {
    const match = db.prepare('SELECT rowid FROM words WHERE words MATCH ?');
    for (const input of HOSTILE) {
      const q = buildOrQuery(input);
      if (q !== undefined) expect(() => match.all(q)).not.toThrow();
    }
  });

  it('operators typed by the user are searched as words', () => {
    const q = buildOrQuery('NOT');
    expect(q).toBeDefined();
    expect(db.prepare('SELECT name FROM words WHERE words MATCH ?').all(q)).toEqual([{ name: 'FTS5' }]);
  });

  it('property: buildOrQuery output for any string is accepted by MATCH', () => {
    const match = db.prepare('SELECT rowid FROM words WHERE words MATCH ?');
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
        const q = buildOrQuery(text);
        if (q !== undefined) expect(() => match.all(q)).not.toThrow();
      }),
      { numRuns: 300 },
    );
  });

  it('buildSubstringQuery output never makes MATCH throw, and finds substrings with quotes', () => {
    const match = db.prepare('SELECT name FROM grams WHERE grams MATCH ?');
    for (const input of HOSTILE) {
      const q = buildSubstringQuery(input);
      if (q !== undefined) expect(() => match.all(q)).not.toThrow();
    }
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 100 }), (text) => {
        const q = buildSubstringQuery(text);
        if (q !== undefined) expect(() => match.all(q)).not.toThrow();
      }),
      { numRuns: 300 },
    );
    // FTS5 reads the expression as a C string, so text with a NUL goes to the store's exact scan.
    expect(buildSubstringQuery('abc\u0000def')).toBeUndefined();
    expect(match.all(buildSubstringQuery('"hi" to'))).toEqual([{ name: 'dom-cachorroink' }]);
    expect(match.all(buildSubstringQuery('cachorro'))).toEqual([{ name: 'dom-cachorroink' }]);
  });
});

/** The official server's search_nodes predicate: a case-insensitive substring of name, type or an observation. */
const officialMatch = (e: Entity, query: string): boolean => {
  const q = query.toLowerCase();
  return [e.name, e.entityType, ...e.observations].some((text) => text.toLowerCase().includes(q));
};

/**
 * Limbic's predicate: the official one widened to accents, both sides lower-cased, decomposed and
 * stripped of combining marks (issue 25); a query of marks alone is compared lower-cased only.
 */
const limbicMatch = (e: Entity, query: string): boolean => {
  const strip = (t: string) => t.toLowerCase().normalize('NFD').replace(/\p{M}/gu, '');
  const fold = query !== '' && strip(query) === '' ? (t: string) => t.toLowerCase() : strip;
  return [e.name, e.entityType, ...e.observations].some((text) => fold(text).includes(fold(query)));
};

describe('issue 10: search_nodes through the trigram expression, against the official predicate widened to accents', () => {
  // A small alphabet with case pairs, accents, an emoji, a quote and spaces, so random queries hit.
  const letter = fc.constantFrom('a', 'b', 'A', 'B', 'x', 'X', 'é', 'É', '😀', '"', ' ', '-');
  const text = (max: number) => fc.array(letter, { maxLength: max, size: 'max' }).map((a) => a.join(''));
  const entity = fc.record({ entityType: text(6), observations: fc.array(text(80), { maxLength: 3 }) });

  it('property: the store finds exactly what the predicate finds, all the official predicate finds among it, for short and long queries', async () => {
    // Long queries (past one phrase) that found something: the AND expression was really exercised.
    let longFound = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(entity, { minLength: 1, maxLength: 8 }),
        fc.array(fc.oneof(text(40), fc.tuple(fc.nat(), fc.nat({ max: 60 }), fc.boolean())), { minLength: 1, maxLength: 6 }),
        async (drafts, querySpecs) => {
          const entities: Entity[] = drafts.map((d, i) => ({ name: `e${i}`, ...d }));
          const store = openSqliteStore({ path: ':memory:', vectors: false });
          try {
            await store.graph.createEntities(entities, 1);
            // Half the queries are cut from a stored observation (so they match), in a changed case.
            const stored = entities.flatMap((e) => e.observations).map((o) => [...o]);
            const queries = querySpecs.map((spec) => {
              if (typeof spec === 'string') return spec;
              const [pick, length, upper] = spec;
              const chars = stored[pick % Math.max(1, stored.length)] ?? [];
              const start = pick % Math.max(1, chars.length - length);
              const cut = chars.slice(start, start + length).join('');
              return upper ? cut.toUpperCase() : cut;
            });
            for (const query of queries) {
              const found = (await store.graph.searchNodes(query)).entities.map((e) => e.name).sort();
              const expected = entities
                .filter((e) => limbicMatch(e, query))
                .map((e) => e.name)
                .sort();
              expect(found, JSON.stringify(query)).toEqual(expected);
              for (const e of entities.filter((x) => officialMatch(x, query))) expect(found).toContain(e.name);
              if ([...query].length > MAX_SUBSTRING_TRIGRAMS + 2 && found.length > 0) longFound++;
            }
          } finally {
            await store.close();
          }
        },
      ),
      { numRuns: 150 },
    );
    expect(longFound).toBeGreaterThan(50);
  });

  it('finds 10,000 "x" in an observation of 20,000 "x", case-insensitively, and not in 9,999', async () => {
    const store = openSqliteStore({ path: ':memory:', vectors: false });
    try {
      await store.graph.createEntities(
        [
          { name: 'long-run', entityType: 'note', observations: ['x'.repeat(20_000)] },
          { name: 'short-run', entityType: 'note', observations: [`${'x'.repeat(9_999)}y${'x'.repeat(9_999)}`] },
          { name: 'upper-run', entityType: 'note', observations: ['X'.repeat(10_000)] },
          { name: 'other', entityType: 'note', observations: ['lorem ipsum'] },
        ],
        1,
      );
      const found = await store.graph.searchNodes('x'.repeat(10_000));
      expect(found.entities.map((e) => e.name)).toEqual(['long-run', 'upper-run']);
    } finally {
      await store.close();
    }
  });
});
