import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import fc from 'fast-check';
import Database from 'better-sqlite3';
import { buildKeywordQuery as parseQuery, KEYWORD_COLUMNS, keywordText, type KeywordQuery } from '../../../src/core/text/keyword-query.js';
import { buildOrQuery, tokenizeWords } from '../../../src/core/text/fts-query.js';

/**
 * The query these tests read: its expression as text. Every call also checks that the text is the
 * tree's (keywordText), so the tree a KeywordIndex searches is the expression asserted here.
 */
function buildKeywordQuery(text: string): Omit<KeywordQuery, 'expr'> {
  const { expr, ...rest } = parseQuery(text);
  expect(expr === undefined ? undefined : keywordText(expr)).toBe(rest.match);
  return rest;
}

// The store's entity_fts table, in memory. Rowid 2 is the only one saying "snake" (name and obs), so
// `python AND NOT snake` separates 1 from 2; rowid 7 says "berlin" only in its observations, so
// `name:berlin` and `obs:berlin` find different rows.
const ROWS: readonly (readonly [number, string, string, string])[] = [
  [1, 'Python', 'Language', 'asyncio makes python async'],
  [2, 'Snake', 'Animal', 'a python is a snake'],
  [3, 'Neural nets', 'Concept', 'machine learning with neurons'],
  [4, 'Berlin', 'City', 'capital of Germany'],
  [5, "Sister's dog", 'Pet', "my sister's dog barks at 12:30"],
  [6, 'dom-cachorroink', 'Skill', 'draws dogs'],
  [7, 'Trip notes', 'Project', 'flew to berlin, learning machine translation'],
];

let db: Database.Database;
let matchStatement: Database.Statement<[string], { rowid: number }>;

beforeAll(() => {
  db = new Database(':memory:');
  db.exec(`CREATE VIRTUAL TABLE entity_fts USING fts5(name, entity_type, obs_text,
    tokenize = 'porter unicode61 remove_diacritics 2', content = '', contentless_delete = 1)`);
  const insert = db.prepare('INSERT INTO entity_fts (rowid, name, entity_type, obs_text) VALUES (?, ?, ?, ?)');
  for (const row of ROWS) insert.run(...row);
  matchStatement = db.prepare('SELECT rowid FROM entity_fts WHERE entity_fts MATCH ? ORDER BY rowid');
});

afterAll(() => {
  db.close();
});

/** Runs an expression on the real FTS5 table; throws whatever FTS5 raises. */
function rowids(match: string): number[] {
  return matchStatement.all(match).map((row) => row.rowid);
}

/** The rowids a user's text finds; [] when it builds no expression. */
function search(text: string): number[] {
  const { match } = buildKeywordQuery(text);
  return match === undefined ? [] : rowids(match);
}

/** What every result must satisfy, whatever the input. */
function expectWellFormed(query: Omit<KeywordQuery, 'expr'>, text: string): void {
  expect(['bare', 'expert']).toContain(query.mode);
  expect(Array.isArray(query.warnings)).toBe(true);
  for (const warning of query.warnings) {
    expect(typeof warning).toBe('string');
    expect(warning.length).toBeGreaterThan(0);
  }
  if (query.mode === 'bare') expect(query.match).toBe(buildOrQuery(text));
  if (query.match === undefined) return;
  expect(query.match).not.toContain('\u0000');
  // Outside quoted literals, only our own syntax: operators, mapped columns, parentheses, `:` and `*`.
  const outside = query.match.replace(/"(?:[^"]|"")*"/gu, ' ');
  expect(outside).toMatch(/^(?:\s|AND|OR|NOT|name|entity_type|obs_text|[():*])*$/u);
  expect(() => rowids(query.match ?? '')).not.toThrow();
}

describe('KEYWORD_COLUMNS', () => {
  it('maps the user columns name:, type:, obs: to the entity_fts columns', () => {
    expect(KEYWORD_COLUMNS).toEqual({ name: 'name', type: 'entity_type', obs: 'obs_text' });
  });
});

describe('bare queries', () => {
  it('OR-match the words, exactly as buildOrQuery does', () => {
    const query = buildKeywordQuery('what was my sister doing');
    expect(query).toEqual({
      match: '"what" OR "was" OR "my" OR "sister" OR "doing"',
      mode: 'bare',
      words: ['what', 'was', 'my', 'sister', 'doing'],
      warnings: [],
    });
    expect(rowids(query.match ?? '')).toEqual([5]);
  });

  it('dedupe words case-insensitively', () => {
    expect(buildKeywordQuery('Berlin berlin BERLIN trip').match).toBe('"Berlin" OR "trip"');
    expect(search('Berlin berlin BERLIN trip')).toEqual([4, 7]);
  });

  it("drop what an apostrophe leaves: sister's searches sister, and finds the stored sister's dog (issue 33)", () => {
    expect(buildKeywordQuery("sister's")).toEqual({ match: '"sister"', mode: 'bare', words: ['sister'], warnings: [] });
    expect(search("sister's")).toEqual([5]);
    expect(buildKeywordQuery("when is my grandmother's birthday").words).toEqual(['when', 'is', 'my', 'grandmother', 'birthday']);
  });

  it('treat a URL and a timestamp as plain words', () => {
    const url = buildKeywordQuery('http://example.com');
    expect(url).toEqual({ match: '"http" OR "example" OR "com"', mode: 'bare', words: ['http', 'example', 'com'], warnings: [] });
    expect(rowids(url.match ?? '')).toEqual([]);

    const time = buildKeywordQuery('12:30');
    expect(time).toEqual({ match: '"12" OR "30"', mode: 'bare', words: ['12', '30'], warnings: [] });
    expect(rowids(time.match ?? '')).toEqual([5]);
  });

  it('read lowercase and / or / not as words, so `python and snake` is an OR', () => {
    const query = buildKeywordQuery('python and snake');
    expect(query.mode).toBe('bare');
    expect(query.match).toBe('"python" OR "and" OR "snake"');
    expect(rowids(query.match ?? '')).toEqual([1, 2]);
    expect(buildKeywordQuery('python and not snake').match).toBe('"python" OR "and" OR "not" OR "snake"');
  });

  it('give undefined when there is no word', () => {
    for (const text of ['', '   ', '!!!', '*', '**', ':', '(', ')', '()', '😀']) {
      expect(buildKeywordQuery(text)).toEqual({ match: undefined, mode: 'bare', words: [], warnings: [] });
    }
  });
});

describe('expert syntax', () => {
  it('a quoted phrase matches only adjacent words', () => {
    const query = buildKeywordQuery('"machine learning"');
    expect(query).toEqual({ match: '"machine learning"', mode: 'expert', words: [], warnings: [] });
    expect(rowids(query.match ?? '')).toEqual([3]);
    // Rowid 7 has both words, but not side by side.
    expect(search('machine learning')).toEqual([3, 7]);
  });

  it('punctuation inside a phrase splits words but keeps them one phrase', () => {
    expect(buildKeywordQuery('"dom-cachorroink"').match).toBe('"dom cachorroink"');
    expect(search('"dom-cachorroink"')).toEqual([6]);
    expect(buildKeywordQuery('"(a) OR * NOT: b"').match).toBe('"a OR NOT b"');
  });

  it('python AND NOT snake becomes FTS5 binary NOT', () => {
    const query = buildKeywordQuery('python AND NOT snake');
    expect(query).toEqual({ match: '"python" NOT "snake"', mode: 'expert', words: [], warnings: [] });
    expect(rowids(query.match ?? '')).toEqual([1]);
    expect(search('python NOT snake')).toEqual([1]);
  });

  it('uppercase AND intersects, uppercase OR unites', () => {
    const both = buildKeywordQuery('python AND snake');
    expect(both).toEqual({ match: '"python" AND "snake"', mode: 'expert', words: [], warnings: [] });
    expect(rowids(both.match ?? '')).toEqual([2]);
    expect(buildKeywordQuery('berlin OR neural').match).toBe('"berlin" OR "neural"');
    expect(search('berlin OR neural')).toEqual([3, 4, 7]);
  });

  it('adjacent terms in an expert query are ANDed', () => {
    expect(buildKeywordQuery('"python" snake').match).toBe('"python" AND "snake"');
    expect(search('"python" snake')).toEqual([2]);
    expect(buildKeywordQuery('neur* machine').match).toBe('"neur"* AND "machine"');
  });

  it('neur* is a prefix query', () => {
    const query = buildKeywordQuery('neur*');
    expect(query).toEqual({ match: '"neur"*', mode: 'expert', words: [], warnings: [] });
    expect(rowids(query.match ?? '')).toEqual([3]);
    expect(buildKeywordQuery('"machine lear"*').match).toBe('"machine lear"*');
    expect(search('"machine lear"*')).toEqual([3]);
    expect(buildKeywordQuery('neur**').match).toBe('"neur"*');
  });

  it('name: and obs: restrict a term to one column', () => {
    expect(search('berlin')).toEqual([4, 7]);
    const name = buildKeywordQuery('name:berlin');
    expect(name).toEqual({ match: 'name : "berlin"', mode: 'expert', words: [], warnings: [] });
    expect(rowids(name.match ?? '')).toEqual([4]);
    const obs = buildKeywordQuery('obs:berlin');
    expect(obs).toEqual({ match: 'obs_text : "berlin"', mode: 'expert', words: [], warnings: [] });
    expect(rowids(obs.match ?? '')).toEqual([7]);
  });

  it('type: filters on entity_type, with any capitalisation of the column name', () => {
    const query = buildKeywordQuery('type:Project');
    expect(query).toEqual({ match: 'entity_type : "Project"', mode: 'expert', words: [], warnings: [] });
    expect(rowids(query.match ?? '')).toEqual([7]);
    expect(buildKeywordQuery('TYPE:city').match).toBe('entity_type : "city"');
    expect(search('Name:Berlin')).toEqual([4]);
  });

  it('a column filter takes a phrase, a prefix, or the whole punctuated run after the colon', () => {
    expect(buildKeywordQuery('obs:"machine learning"').match).toBe('obs_text : "machine learning"');
    expect(search('obs:"machine learning"')).toEqual([3]);
    expect(search('name:"machine learning"')).toEqual([]);
    expect(buildKeywordQuery('name:ber*').match).toBe('name : "ber"*');
    expect(search('name:ber*')).toEqual([4]);
    expect(buildKeywordQuery('name:"neural ne"*').match).toBe('name : "neural ne"*');
    expect(buildKeywordQuery('name:dom-cachorroink').match).toBe('name : "dom cachorroink"');
    expect(search('name:dom-cachorroink')).toEqual([6]);
  });

  it('combines filters, phrases and operators', () => {
    const query = buildKeywordQuery('(name:berlin OR obs:berlin) NOT type:City');
    expect(query.match).toBe('(name : "berlin" OR obs_text : "berlin") NOT entity_type : "City"');
    expect(rowids(query.match ?? '')).toEqual([7]);
    expect(search('python OR "machine learning" NOT type:Project')).toEqual([1, 2, 3]);
  });

  it('follows FTS5 precedence: NOT binds tighter than AND, AND tighter than OR', () => {
    expect(buildKeywordQuery('berlin OR python snake NOT asyncio').match).toBe('"berlin" OR ("python" AND ("snake" NOT "asyncio"))');
    expect(search('berlin OR python snake NOT asyncio')).toEqual([2, 4, 7]);
    expect(buildKeywordQuery('a OR b AND NOT c').match).toBe('"a" OR ("b" NOT "c")');
  });

  it('a chain of NOTs becomes one NOT of an OR', () => {
    expect(buildKeywordQuery('python NOT snake NOT asyncio').match).toBe('"python" NOT ("snake" OR "asyncio")');
    expect(search('python NOT snake NOT asyncio')).toEqual([]);
    expect(search('dog* NOT sister NOT draws')).toEqual([]);
    expect(search('dog* NOT sister')).toEqual([6]);
  });

  it('keeps a term written twice once, as plain text keeps a word once (its BM25 weight must not double)', () => {
    expect(buildKeywordQuery('apples OR apples OR pears').match).toBe('"apples" OR "pears"');
    expect(buildKeywordQuery('apples OR Apples OR pears').match).toBe('"apples" OR "pears"');
    expect(buildKeywordQuery('apples AND apples').match).toBe('"apples"');
    expect(buildKeywordQuery('"apples and" OR "Apples AND"').match).toBe('"apples and"');
    // Different terms stay: another word (a stem twin is the index's business), a prefix, a column.
    expect(buildKeywordQuery('apple OR apples OR apples* OR name:apples').match).toBe(
      '"apple" OR "apples" OR "apples"* OR name : "apples"',
    );
    expect(buildKeywordQuery('(a OR b) AND (B OR A)').match).toBe('("a" OR "b") AND ("B" OR "A")');
  });

  it('HTTP-style and unknown `word:` prefixes are words, with a note when it looked like a filter', () => {
    const essence = buildKeywordQuery('essence:berlin');
    expect(essence.mode).toBe('bare');
    expect(essence.match).toBe('"essence" OR "berlin"');
    expect(essence.warnings).toEqual([
      "'essence:' is not a column filter (the columns are name:, type:, obs:), so it was searched as a word.",
    ]);
    const url = buildKeywordQuery('"example" http://example.com/path');
    expect(url.match).toBe('"example" AND "http" AND "com" AND "path"');
    expect(url.warnings).toEqual([]);
    expect(buildKeywordQuery('dog* 12:30').match).toBe('"dog"* AND "12" AND "30"');
    expect(search('dog* 12:30')).toEqual([5]);
    expect(buildKeywordQuery('constructor:x __proto__:y').match).toBe('"constructor" OR "x" OR "proto" OR "y"');
  });
});

describe('repairs', () => {
  it('closes an unbalanced quote at the end', () => {
    const query = buildKeywordQuery('"machine learning');
    expect(query).toEqual({
      match: '"machine learning"',
      mode: 'expert',
      words: [],
      warnings: ['Closed an unbalanced double quote at the end of the query.'],
    });
    expect(rowids(query.match ?? '')).toEqual([3]);
  });

  it('keeps matched parentheses and drops unmatched ones', () => {
    expect(buildKeywordQuery('(python OR berlin) NOT (snake)').match).toBe('("python" OR "berlin") NOT "snake"');
    const unmatched = buildKeywordQuery('((python OR berlin) NOT snake');
    expect(unmatched.match).toBe('("python" OR "berlin") NOT "snake"');
    expect(unmatched.warnings).toEqual(['Dropped 1 unmatched parenthesis.']);
    expect(rowids(unmatched.match ?? '')).toEqual([1, 4, 7]);
    expect(buildKeywordQuery(') python AND snake (').warnings).toEqual(['Dropped 2 unmatched parentheses.']);
  });

  it('drops empty parentheses and empty phrases', () => {
    const query = buildKeywordQuery('python AND () AND "" AND "!!"');
    expect(query.match).toBe('"python"');
    expect(query.warnings).toContain('Dropped parentheses with nothing to search for inside.');
    expect(query.warnings).toContain('Dropped a phrase with no words in it.');
  });

  it('drops a leading NOT together with its term (searching for it would invert the request), and says so', () => {
    const query = buildKeywordQuery('NOT snake');
    expect(query.match).toBeUndefined();
    expect(query.mode).toBe('expert');
    expect(query.warnings).toEqual([
      'Dropped a NOT and the term after it: there was nothing before it to exclude from; write it as: wanted NOT unwanted.',
    ]);
    expect(buildKeywordQuery('berlin OR NOT snake').match).toBe('"berlin"');
  });

  it('drops dangling operators at the start, the end and in pairs', () => {
    expect(buildKeywordQuery('AND python')).toMatchObject({ match: '"python"', mode: 'expert' });
    expect(buildKeywordQuery('python AND')).toMatchObject({
      match: '"python"',
      warnings: ['Dropped an AND with nothing on one side of it.'],
    });
    expect(buildKeywordQuery('python OR OR snake')).toMatchObject({
      match: '"python" OR "snake"',
      warnings: ['Dropped an OR with nothing on one side of it.'],
    });
    expect(buildKeywordQuery('python NOT')).toMatchObject({
      match: '"python"',
      warnings: ['Dropped a NOT with nothing after it.'],
    });
    expect(buildKeywordQuery('python AND OR snake').match).toBe('"python" OR "snake"');
    expect(buildKeywordQuery('python NOT NOT snake').match).toBe('"python" NOT "snake"');
  });

  it('a column name with no term directly after it is a word', () => {
    const query = buildKeywordQuery('name: berlin');
    expect(query.match).toBe('"name" OR "berlin"');
    expect(query.warnings).toEqual([
      `'name:' has no term directly after it, so it was searched as a word; write name:word or name:"a phrase".`,
    ]);
    expect(buildKeywordQuery('"x" name:').match).toBe('"x" AND "name"');
  });

  it('reads NUL as a separator', () => {
    expect(buildKeywordQuery('python\u0000AND\u0000snake')).toEqual({
      match: '"python" AND "snake"',
      mode: 'expert',
      words: [],
      warnings: [],
    });
    expect(buildKeywordQuery('py\u0000thon').match).toBe('"py" OR "thon"');
  });

  it('gives no expression, with a warning, when groups nest deeper than FTS5 can parse', () => {
    // Each level is `"x" OR (` or `"x" AND (`: the shape that fills FTS5's parser stack fastest.
    const nested = (levels: number, quote = (word: string): string => word): string => {
      let text = quote('python');
      for (let i = 0; i < levels; i++) {
        text = i % 2 === 0 ? `${quote('snake')} OR (${text})` : `${quote('berlin')} AND (${text})`;
      }
      return text;
    };
    const deepest = buildKeywordQuery(nested(15));
    // The innermost group is a single term, so its parentheses are not needed.
    expect(deepest.match).toBe(nested(15, (word) => `"${word}"`).replace('("python")', '"python"'));
    expect(rowids(deepest.match ?? '')).toEqual([2]);

    const tooDeep = buildKeywordQuery(nested(40));
    expect(tooDeep.match).toBeUndefined();
    expect(tooDeep.mode).toBe('expert');
    expect(tooDeep.warnings).toEqual(['The query nests parentheses more than 16 deep; simplify it to search by keyword.']);
    // The same nesting written raw is more than FTS5 itself accepts.
    expect(() => rowids(nested(40, (word) => `"${word}"`))).toThrow(/parser stack overflow/u);

    expect(buildKeywordQuery(`${'('.repeat(17)}python AND snake${')'.repeat(17)}`).match).toBeUndefined();
    expect(buildKeywordQuery(`${'('.repeat(16)}python AND snake${')'.repeat(16)}`).match).toBe('"python" AND "snake"');
    // Without expert syntax parentheses are punctuation, however deep.
    expect(buildKeywordQuery(`${'('.repeat(100)}python${')'.repeat(100)}`).match).toBe('"python"');
  });

  it('also counts the nesting that precedence adds, not only parentheses', () => {
    // `snake OR berlin (...)` is OR over AND: two levels of the tree for one pair of parentheses.
    const nested = (levels: number): string => {
      let text = 'python';
      for (let i = 0; i < levels; i++) text = `snake OR berlin (${text})`;
      return text;
    };
    const deepest = buildKeywordQuery(nested(8));
    expect(deepest.match?.startsWith('"snake" OR ("berlin" AND ("snake" OR')).toBe(true);
    expect(rowids(deepest.match ?? '')).toEqual([2]);
    expect(buildKeywordQuery(nested(9))).toEqual({
      match: undefined,
      mode: 'expert',
      words: [],
      warnings: ['The query nests operators more than 16 deep; simplify it to search by keyword.'],
    });
  });

  it('keeps a 300-NOT chain under FTS5 depth limit of 256', () => {
    const text = `python ${Array.from({ length: 300 }, (_, i) => `NOT w${i}`).join(' ')}`;
    const query = buildKeywordQuery(text);
    expect(query.match?.startsWith('"python" NOT ("w0" OR "w1" OR')).toBe(true);
    expect(rowids(query.match ?? '')).toEqual([1, 2]);
  });
});

describe('hostile input', () => {
  const HOSTILE: readonly (readonly [string, 'bare' | 'expert'])[] = [
    ['"', 'expert'],
    ['""', 'expert'],
    ['"unterminated phrase', 'expert'],
    ['AND', 'expert'],
    ['OR OR', 'expert'],
    ['NOT', 'expert'],
    ['python AND', 'expert'],
    ['*', 'bare'],
    ['**', 'bare'],
    ['name:', 'bare'],
    [':', 'bare'],
    ['(', 'bare'],
    [')', 'bare'],
    ['"((("', 'expert'],
    ['((( python', 'bare'],
    ['😀', 'bare'],
    ['memory 😀🧠 AND graph', 'expert'],
    ["'; DROP TABLE entity_fts; --", 'bare'],
    ['" OR 1=1; DELETE FROM entity_fts WHERE "1', 'expert'],
    ['x'.repeat(10_000), 'bare'],
    ['a* '.repeat(3_000), 'expert'],
    [Array.from({ length: 10_000 }, (_, i) => String.fromCharCode(32 + (i % 95))).join(''), 'expert'],
    ['\u0000', 'bare'],
    ['NOT\u0000python', 'expert'],
    ['مرحبا بالعالم AND "日本語の検索"', 'expert'],
    ['日本語*', 'expert'],
    ['NEAR(a b)', 'bare'],
    ['NEAR("a" "b", 2)', 'expert'],
    ['col:value', 'bare'],
    ['col:"value"', 'expert'],
    ['^python', 'bare'],
    ['{name entity_type}: python', 'bare'],
    ['name:(python OR snake)', 'expert'],
    ['python + snake - berlin', 'bare'],
    ['e\u0301 \u0301*', 'expert'],
    ['\u200b zero\u200bwidth \ufeff', 'bare'],
    ['obs:"', 'expert'],
    ['type:*', 'bare'],
    ['AND OR NOT ( ) * : "', 'expert'],
    ['\ud800 lone surrogate*', 'expert'],
  ];

  const cases = HOSTILE.map(([text, mode]) => [JSON.stringify(text).slice(0, 50), text, mode] as const);

  it.each(cases)('%s gives no expression or one FTS5 runs', (_label, text, mode) => {
    const query = buildKeywordQuery(text);
    expect(query.mode).toBe(mode);
    expectWellFormed(query, text);
  });

  it(`has at least 20 cases (${HOSTILE.length})`, () => {
    expect(HOSTILE.length).toBeGreaterThanOrEqual(20);
  });
});

describe('properties', () => {
  it('any string gives no expression or one FTS5 runs', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
        expectWellFormed(buildKeywordQuery(text), text);
      }),
      { numRuns: 500 },
    );
  });

  const PIECES = [
    'AND',
    'OR',
    'NOT',
    'and',
    'or',
    'not',
    'NEAR',
    '"',
    '""',
    '*',
    '**',
    ':',
    '::',
    '(',
    ')',
    '()',
    'name:',
    'type:',
    'obs:',
    'Name:',
    'http:',
    'col:',
    '//',
    'python',
    'snake',
    'neur',
    'berlin',
    "sister's",
    '12:30',
    'dom-cachorroink',
    '😀',
    '\u0000',
    '日本',
    'مرحبا',
    '^',
    '+',
    '-',
    '{',
    '}',
    ',',
    "'",
    ';',
    '\\',
    '\u0301',
  ];
  const tokenSoup = fc
    .array(fc.tuple(fc.constantFrom(...PIECES), fc.constantFrom('', '', ' ', '\t')), { maxLength: 40 })
    .map((parts) => parts.map(([piece, gap]) => piece + gap).join(''));

  it('any mix of operators, quotes, stars, colons and parentheses gives no expression or one FTS5 runs', () => {
    fc.assert(
      fc.property(tokenSoup, (text) => {
        expectWellFormed(buildKeywordQuery(text), text);
      }),
      { numRuns: 2_000 },
    );
  });

  it('searches only for words the user typed', () => {
    fc.assert(
      fc.property(fc.oneof(tokenSoup, fc.string({ unit: 'binary', maxLength: 100 })), (text) => {
        const typed = new Set(tokenizeWords(text.replaceAll('\u0000', ' ')));
        const literals = buildKeywordQuery(text).match?.match(/"(?:[^"]|"")*"/gu) ?? [];
        for (const literal of literals) {
          for (const word of literal.slice(1, -1).split(' ')) expect(typed.has(word)).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
    // Feeding an expression without column filters back in changes nothing.
    const once = buildKeywordQuery('(python OR "machine learning") AND NOT snake*').match ?? '';
    expect(once).toBe('("python" OR "machine learning") NOT "snake"*');
    expect(buildKeywordQuery(once).match).toBe(once);
  });
});
