/**
 * Which observations a search result shows (issue 33): a bounded number, the ones that match the
 * query first. An entity of 300 observations made a 3-result search_semantic answer 27,266
 * characters; an agent pays for every one of them, and the turns of a long captured conversation
 * that answer the question must be the ones it reads. Matching is by the query's keyword terms
 * (the words the keyword leg searches, folded as the keyword index folds them) and, where the
 * store keeps a vector per observation (long entities), by their distance to the query.
 */
import { distinctWords, tokenizeWords } from '../text/fts-query.js';
import { foldAccents } from '../text/fold.js';
import { buildKeywordQuery, type KeywordExpr } from '../text/keyword-query.js';
import { contentWords } from '../text/stopwords.js';

/** How many observations each result shows. */
export interface ObservationBound {
  /** At most this many observations per result. */
  readonly limit: number;
  /**
   * Stop adding observations once their text would pass this many characters (the first one is
   * always shown): a long entity's turns of thousands of characters each stay bounded too.
   * Undefined: the count alone bounds them (the caller asked for a number).
   */
  readonly maxChars?: number | undefined;
}

/**
 * What a search shows unless asked otherwise: 10 observations, and about 2,000 characters of them.
 * On LoCoMo kept as one entity per session (bench/quality/shown-observations.ts), the evidence turn
 * of a session found is among those shown for 0.947 of them (keyword terms and observation vectors
 * fused), 0.907 by keyword terms alone, 0.609 for the first ones in stored order; 5 observations
 * showed it for 0.843. The character bound cost 0.003 there, and bounds long turns elsewhere.
 */
export const DEFAULT_OBSERVATION_BOUND: ObservationBound = Object.freeze({ limit: 10, maxChars: 2000 });

/** One literal of the query an observation can contain: folded words, adjacent; the last a prefix when `prefix`. */
export interface ObservationTerm {
  readonly words: readonly string[];
  readonly prefix: boolean;
}

/** A one-letter Latin word ("s" of "grandmother's") matches nearly every observation and tells none apart. */
const TOO_SHORT = /^[a-z]$/;

const termOf = (words: readonly string[], prefix = false): ObservationTerm | undefined => {
  const folded = words.map(foldAccents).filter((w) => w !== '');
  return folded.length === 0 || (folded.length === 1 && !prefix && TOO_SHORT.test(folded[0] ?? '')) ? undefined : { words: folded, prefix };
};

/** The terms of an expert expression an observation can hold: not those restricted to name or type, not what NOT excludes. */
function exprTerms(expr: KeywordExpr | undefined, into: ObservationTerm[]): void {
  if (expr === undefined) return;
  switch (expr.kind) {
    case 'term': {
      if (expr.column !== undefined && expr.column !== 'obs') return;
      const term = termOf(expr.words, expr.prefix);
      if (term !== undefined) into.push(term);
      return;
    }
    case 'and':
    case 'or':
      for (const child of expr.children) exprTerms(child, into);
      return;
    case 'not':
      exprTerms(expr.left, into);
      return;
    default: {
      const _exhaustive: never = expr;
      return _exhaustive;
    }
  }
}

/**
 * The query's terms as observations are matched on: plain text's words that carry evidence (as the
 * keyword leg keeps them: no stopwords), or an expert query's terms and phrases.
 * @example observationTerms('when is my grandmother birthday', 'plain') // [{words:['grandmother']}, {words:['birthday']}]
 */
export function observationTerms(query: string, syntax: 'plain' | 'expert'): ObservationTerm[] {
  const terms: ObservationTerm[] = [];
  const parsed = syntax === 'expert' ? buildKeywordQuery(query) : undefined;
  if (parsed?.mode === 'expert') exprTerms(parsed.expr, terms);
  else
    for (const word of contentWords(parsed?.words ?? distinctWords(query))) {
      const term = termOf([word]);
      if (term !== undefined) terms.push(term);
    }
  return terms;
}

/** Whether the tokens hold the term: its words adjacent, in order, the last as a prefix when it is one. */
function holds(tokens: readonly string[], term: ObservationTerm): boolean {
  const n = term.words.length;
  for (let i = 0; i + n <= tokens.length; i++) {
    let all = true;
    for (let j = 0; j < n && all; j++) {
      const token = tokens[i + j] ?? '';
      const word = term.words[j] ?? '';
      all = term.prefix && j === n - 1 ? token.startsWith(word) : token === word;
    }
    if (all) return true;
  }
  return false;
}

/**
 * For each observation, the terms it holds (indices into `terms`). Only an observation whose folded
 * text contains some term's first word as a substring is split into words.
 */
function matches(observations: readonly string[], terms: readonly ObservationTerm[]): number[][] {
  return observations.map((text) => {
    if (terms.length === 0) return [];
    const folded = foldAccents(text);
    if (!terms.some((t) => folded.includes(t.words[0] ?? ''))) return [];
    const tokens = tokenizeWords(folded);
    return terms.flatMap((t, i) => (holds(tokens, t) ? [i] : []));
  });
}

/** RRF's k for the two orders of one entity's observations (the spec's, as its legs use). */
const OBSERVATION_RRF_K = 60;

/**
 * The observations' indices, best first: by the keyword terms they hold (each weighted by how few of
 * the entity's observations hold it, so the user's own name in every turn tells none apart), fused
 * with their distance to the query when `distances` gives one per observation (reciprocal rank
 * fusion); ties, and observations that match neither way, keep their stored order.
 * @example orderObservations(['a cat', 'a dog', 'dogs and a dog'], [{ words: ['dog'], prefix: false }]) // [1, 2, 0]
 */
export function orderObservations(
  observations: readonly string[],
  terms: readonly ObservationTerm[],
  distances?: readonly number[] | undefined,
): number[] {
  const n = observations.length;
  const held = matches(observations, terms);
  const df = terms.map((_, t) => held.filter((h) => h.includes(t)).length);
  const keyword = held.map((h) => h.reduce((sum, t) => sum + Math.log(1 + n / Math.max(1, df[t] ?? 1)), 0));
  const byStored = (a: number, b: number): number => a - b;
  const keywordOrder = [...keyword.keys()]
    .filter((i) => (keyword[i] ?? 0) > 0)
    .sort((a, b) => (keyword[b] ?? 0) - (keyword[a] ?? 0) || byStored(a, b));
  if (distances === undefined || distances.length !== n) {
    const matched = new Set(keywordOrder);
    return [...keywordOrder, ...[...Array(n).keys()].filter((i) => !matched.has(i))];
  }
  const semanticOrder = [...Array(n).keys()]
    .filter((i) => Number.isFinite(distances[i]))
    .sort((a, b) => (distances[a] ?? 0) - (distances[b] ?? 0) || byStored(a, b));
  const fused = new Array<number>(n).fill(0);
  keywordOrder.forEach((i, rank) => (fused[i] = (fused[i] ?? 0) + 1 / (OBSERVATION_RRF_K + rank + 1)));
  semanticOrder.forEach((i, rank) => (fused[i] = (fused[i] ?? 0) + 1 / (OBSERVATION_RRF_K + rank + 1)));
  return [...Array(n).keys()].sort((a, b) => (fused[b] ?? 0) - (fused[a] ?? 0) || byStored(a, b));
}

/** What a result shows of its observations, and how many it leaves out. */
export interface ShownObservations {
  readonly observations: string[];
  readonly omitted: number;
}

/**
 * The observations a result shows: all of them, in stored order, when they fit the bound; else in
 * orderObservations' order, at most `bound.limit`, and no more once `bound.maxChars` would be
 * passed (the first is always shown).
 * @example shownObservations(['a cat', 'a dog', 'a cow'], [{ words: ['dog'], prefix: false }], { limit: 2 })
 * // { observations: ['a dog', 'a cat'], omitted: 1 }
 */
export function shownObservations(
  observations: readonly string[],
  terms: readonly ObservationTerm[],
  bound: ObservationBound,
  distances?: readonly number[] | undefined,
): ShownObservations {
  if (observations.length <= bound.limit && (bound.maxChars === undefined || totalChars(observations) <= bound.maxChars))
    return { observations: [...observations], omitted: 0 };
  const shown: string[] = [];
  let chars = 0;
  for (const i of orderObservations(observations, terms, distances)) {
    if (shown.length >= bound.limit) break;
    const text = observations[i] ?? '';
    if (shown.length > 0 && bound.maxChars !== undefined && chars + text.length > bound.maxChars) break;
    shown.push(text);
    chars += text.length;
  }
  return { observations: shown, omitted: observations.length - shown.length };
}

function totalChars(texts: readonly string[]): number {
  let sum = 0;
  for (const t of texts) sum += t.length;
  return sum;
}
