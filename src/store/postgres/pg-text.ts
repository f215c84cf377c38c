/**
 * Keyword text on PostgreSQL, made to match FTS5's: text is folded and split here, in JavaScript,
 * as FTS5's `unicode61 remove_diacritics 2` does (accents removed, letters/digits/marks only), so the
 * same words reach the index on any server (no `unaccent` extension needed; the pgserver wheel has
 * none), and the MATCH expressions core/text builds for FTS5 are translated to tsquery SQL.
 *
 * The translation covers exactly the grammar core/text emits: quoted phrases ("" escapes a quote),
 * `phrase*` prefixes, `column : phrase` filters, AND / OR / binary NOT, parentheses, and bare words.
 */
import { ERROR_CODES, MemoryError } from '../../core/errors.js';
import { tokenizeWords } from '../../core/text/fts-query.js';

/** Accents off and words split as unicode61 does; lower case is left to the stemmer. */
export function foldWords(text: string): string[] {
  return tokenizeWords(text.normalize('NFD').replace(/\p{M}+/gu, '')).filter((w) => w !== '');
}

export const foldText = (text: string): string => foldWords(text).join(' ');

/** FTS5 columns → tsvector weights (pg-graph.ts writes name as A, type as B, observations as C). */
const WEIGHT_OF: ReadonlyMap<string, string> = new Map([
  ['name', 'A'],
  ['entity_type', 'B'],
  ['obs_text', 'C'],
]);

/** A tsquery as SQL over numbered parameters, and the words that score (not under a NOT). */
export interface TsQuerySql {
  readonly sql: string;
  readonly params: string[];
  /**
   * Each positive word, folded, with whether it is a prefix and the weights (columns) it is limited
   * to, '' for all: BM25 is summed over these.
   */
  readonly scored: { readonly word: string; readonly prefix: boolean; readonly weights: string }[];
}

type Token =
  | { kind: 'phrase'; text: string; prefix: boolean; column: string | undefined }
  | { kind: 'op'; op: 'AND' | 'OR' | 'NOT' }
  | { kind: 'open' }
  | { kind: 'close' };

/** Translates an FTS5 MATCH expression; `firstParam` is the number of the first $n it may use. */
export function toTsQuery(match: string, firstParam: number): TsQuerySql {
  const tokens = lex(match);
  const params: string[] = [];
  const scored: { word: string; prefix: boolean; weights: string }[] = [];
  let position = 0;
  const peek = (): Token | undefined => tokens[position];
  const fail = (why: string): never => {
    throw new MemoryError(ERROR_CODES.INVALID_QUERY, `The keyword expression could not be parsed (${why}).`);
  };

  const term = (t: Extract<Token, { kind: 'phrase' }>, positive: boolean): string => {
    const words = foldWords(t.text);
    const weight = t.column === undefined ? undefined : WEIGHT_OF.get(t.column);
    if (t.column !== undefined && weight === undefined) fail(`no column ${t.column}`);
    if (positive) words.forEach((word, i) => scored.push({ word, prefix: t.prefix && i === words.length - 1, weights: weight ?? '' }));
    params.push(words.join(' '));
    let sql = `phraseto_tsquery('limbic', $${firstParam + params.length - 1})`;
    // Weights and prefixes have no function form: they are written into the query's text form,
    // where every lexeme is a quoted literal ('it''s' escapes a quote).
    if (weight !== undefined) sql = `regexp_replace(${sql}::text, '''((?:[^'']|'''')*)''', '''\\1'':${weight}', 'g')`;
    if (t.prefix) sql = `regexp_replace(${sql}::text, '''((?:[^'']|'''')*)'':?([A-D]*)$', '''\\1'':*\\2')`;
    return weight !== undefined || t.prefix ? `(${sql})::tsquery` : sql;
  };

  // Precedence as FTS5: NOT binds tighter than AND (explicit or implied by adjacency), AND than OR.
  const primary = (positive: boolean): string => {
    const t = peek();
    if (t === undefined) return fail('it ends where a term was expected');
    position++;
    if (t.kind === 'phrase') return term(t, positive);
    if (t.kind === 'open') {
      const inner = or(positive);
      if (peek()?.kind !== 'close') fail('a parenthesis is not closed');
      position++;
      return `(${inner})`;
    }
    return fail(`unexpected ${t.kind === 'op' ? t.op : ')'}`);
  };
  const not = (positive: boolean): string => {
    let left = primary(positive);
    for (let t = peek(); t?.kind === 'op' && t.op === 'NOT'; t = peek()) {
      position++;
      left = `(${left} && !!${primary(false)})`;
    }
    return left;
  };
  const and = (positive: boolean): string => {
    let left = not(positive);
    for (let t = peek(); t !== undefined && t.kind !== 'close' && !(t.kind === 'op' && t.op === 'OR'); t = peek()) {
      if (t.kind === 'op' && t.op === 'AND') position++;
      left = `(${left} && ${not(positive)})`;
    }
    return left;
  };
  const or = (positive: boolean): string => {
    let left = and(positive);
    for (let t = peek(); t?.kind === 'op' && t.op === 'OR'; t = peek()) {
      position++;
      left = `(${left} || ${and(positive)})`;
    }
    return left;
  };

  const sql = or(true);
  if (position < tokens.length) fail('text is left after the expression');
  return { sql, params, scored };
}

/**
 * The folded words of an expression that is only single words joined by OR (what plain text gives,
 * core/text's orOfWords), or undefined for anything else (phrases, prefixes, columns, AND, NOT):
 * such a query's matches are exactly the entities having any word, which pg-keywords.ts's pruned
 * search relies on.
 * @example plainOrWords('"Café" OR "tea"') // ['Cafe', 'tea']
 */
export function plainOrWords(match: string): string[] | undefined {
  let tokens: Token[];
  try {
    tokens = lex(match);
  } catch {
    return undefined;
  }
  const words: string[] = [];
  for (const [i, t] of tokens.entries()) {
    if (i % 2 === 1) {
      if (t.kind !== 'op' || t.op !== 'OR') return undefined;
      continue;
    }
    if (t.kind !== 'phrase' || t.prefix || t.column !== undefined) return undefined;
    const folded = foldWords(t.text);
    if (folded.length !== 1) return undefined;
    words.push(folded[0] as string);
  }
  return words.length > 0 && tokens.length % 2 === 1 ? words : undefined;
}

function lex(match: string): Token[] {
  const tokens: Token[] = [];
  let column: string | undefined;
  let i = 0;
  while (i < match.length) {
    const c = match[i] as string;
    if (/\s/u.test(c)) {
      i++;
    } else if (c === '(' || c === ')') {
      tokens.push({ kind: c === '(' ? 'open' : 'close' });
      i++;
    } else if (c === '"') {
      let text = '';
      for (i++; ; i++) {
        if (i >= match.length)
          throw new MemoryError(ERROR_CODES.INVALID_QUERY, 'The keyword expression could not be parsed (unterminated string).');
        if (match[i] === '"') {
          if (match[i + 1] !== '"') break;
          i++;
        }
        text += match[i];
      }
      i++;
      const prefix = match[i] === '*';
      if (prefix) i++;
      tokens.push({ kind: 'phrase', text, prefix, column });
      column = undefined;
    } else {
      const word = /^[^\s()"*:]+/u.exec(match.slice(i))?.[0] ?? '';
      i += word.length;
      if (word === '') {
        i++; // a stray ':' or '*'
      } else if (/^\s*:/u.test(match.slice(i))) {
        column = word;
        i = match.indexOf(':', i) + 1;
      } else if (word === 'AND' || word === 'OR' || word === 'NOT') {
        tokens.push({ kind: 'op', op: word });
      } else {
        const prefix = match[i] === '*';
        if (prefix) i++;
        tokens.push({ kind: 'phrase', text: word, prefix, column });
        column = undefined;
      }
    }
  }
  return tokens;
}
