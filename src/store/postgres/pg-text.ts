/**
 * Keyword text on PostgreSQL, made to match FTS5's: text is folded and split here, in JavaScript,
 * as FTS5's `unicode61 remove_diacritics 2` does (accents removed, letters/digits/marks only), so the
 * same words reach the index on any server (no `unaccent` extension needed; the pgserver wheel has
 * none), and the keyword expressions core/text builds (a tree: terms, AND, OR, binary NOT) are
 * translated to tsquery SQL.
 */
import { tokenizeWords } from '../../core/text/fts-query.js';
import { plainWords, type KeywordColumn, type KeywordExpr } from '../../core/text/keyword-query.js';

/** Accents off and words split as unicode61 does; lower case is left to the stemmer. */
export function foldWords(text: string): string[] {
  return tokenizeWords(text.normalize('NFD').replace(/\p{M}+/gu, '')).filter((w) => w !== '');
}

export const foldText = (text: string): string => foldWords(text).join(' ');

/** Columns → tsvector weights (pg-graph.ts writes name as A, type as B, observations as C). */
const WEIGHT_OF: Readonly<Record<KeywordColumn, string>> = { name: 'A', type: 'B', obs: 'C' };

/** A tsquery as SQL over numbered parameters, and the phrases that score (not under a NOT). */
export interface TsQuerySql {
  readonly sql: string;
  readonly params: string[];
  /**
   * Each positive term of the expression, in order and once per time it is written (FTS5's bm25()
   * sums over the query's phrases so): its folded words joined by spaces (a phrase when several),
   * whether its last word is a prefix, and the weights (columns) it is limited to, '' for all.
   */
  readonly scored: { readonly phrase: string; readonly prefix: boolean; readonly weights: string }[];
}

/**
 * Translates a keyword expression; `firstParam` is the number of the first $n it may use. AND and
 * OR as FTS5 reads them, `a NOT b` as `a && !!b`; what is under a NOT does not score.
 */
export function toTsQuery(expr: KeywordExpr, firstParam: number): TsQuerySql {
  const params: string[] = [];
  const scored: { phrase: string; prefix: boolean; weights: string }[] = [];

  const term = (t: Extract<KeywordExpr, { kind: 'term' }>, positive: boolean): string => {
    const words = foldWords(t.words.join(' '));
    const weight = t.column === undefined ? undefined : WEIGHT_OF[t.column];
    if (positive && words.length > 0) scored.push({ phrase: words.join(' '), prefix: t.prefix, weights: weight ?? '' });
    params.push(words.join(' '));
    let sql = `phraseto_tsquery('limbic', $${firstParam + params.length - 1})`;
    // Weights and prefixes have no function form: they are written into the query's text form,
    // where every lexeme is a quoted literal ('it''s' escapes a quote).
    if (weight !== undefined) sql = `regexp_replace(${sql}::text, '''((?:[^'']|'''')*)''', '''\\1'':${weight}', 'g')`;
    if (t.prefix) sql = `regexp_replace(${sql}::text, '''((?:[^'']|'''')*)'':?([A-D]*)$', '''\\1'':*\\2')`;
    return weight !== undefined || t.prefix ? `(${sql})::tsquery` : sql;
  };

  const walk = (node: KeywordExpr, positive: boolean): string => {
    switch (node.kind) {
      case 'term':
        return term(node, positive);
      case 'and':
        return `(${node.children.map((c) => walk(c, positive)).join(' && ')})`;
      case 'or':
        return `(${node.children.map((c) => walk(c, positive)).join(' || ')})`;
      case 'not':
        return `(${walk(node.left, positive)} && !!${walk(node.right, false)})`;
      default: {
        const _exhaustive: never = node;
        return _exhaustive;
      }
    }
  };

  return { sql: walk(expr, true), params, scored };
}

/**
 * The folded words of an expression that is only single words joined by OR (what plain text gives,
 * core/text's plainWords), or undefined for anything else (phrases, prefixes, columns, AND, NOT, or
 * a word that folds to more or less than one): such a query's matches are exactly the entities
 * having any word, which pg-keywords.ts's pruned search relies on.
 * @example plainOrWords(orOfWordsExpr(['Café', 'tea'])!) // ['Cafe', 'tea']
 */
export function plainOrWords(expr: KeywordExpr): string[] | undefined {
  const words = plainWords(expr);
  if (words === undefined) return undefined;
  const folded: string[] = [];
  for (const w of words) {
    const f = foldWords(w);
    if (f.length !== 1) return undefined;
    folded.push(f[0] as string);
  }
  return folded;
}
