/**
 * Pruning of keyword terms that carry no weight. FTS5's BM25 gives a term in more than half of
 * the entities an idf of (almost) zero, so it changes no score; yet an OR query still has to visit
 * and score every entity containing it, which dominates the keyword leg's cost on large graphs
 * ("the" in 90% of 1M entities). Dropping those terms leaves the ranking of every entity that
 * matches an informative term unchanged.
 */

/** Terms in more than this share of entities are pruned: BM25's idf is ≤ 0 there. */
export const MAX_TERM_SHARE = 0.5;

export interface TermStat {
  readonly word: string;
  /** Entities containing the word's term. */
  readonly df: number;
}

/**
 * The words worth searching for. When every word is that common, the rarest one is kept so the
 * query still finds something.
 * @example informativeWords([{word: 'the', df: 90}, {word: 'fts5', df: 2}], 100) // ['fts5']
 */
export function informativeWords(terms: readonly TermStat[], total: number, maxShare: number = MAX_TERM_SHARE): string[] {
  if (terms.length === 0) return [];
  if (total <= 0) return terms.map((t) => t.word);
  const kept = terms.filter((t) => t.df / total <= maxShare).map((t) => t.word);
  if (kept.length > 0) return kept;
  const rarest = [...terms].sort((a, b) => a.df - b.df)[0];
  return rarest === undefined ? [] : [rarest.word];
}
