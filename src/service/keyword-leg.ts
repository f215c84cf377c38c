/**
 * The keyword leg's expression for plain text: OR of the words that carry evidence, neither
 * stopwords nor (on large graphs) words BM25 gives no weight. A query of stopwords alone has no
 * keyword leg; the semantic leg answers it.
 */
import { buildOrQuery, tokenizeWords } from '../core/text/fts-query.js';
import { informativeWords } from '../core/text/prune-terms.js';
import { isStopword } from '../core/text/stopwords.js';
import type { Store } from '../store/store.js';

export async function plainKeywordMatch(store: Store, text: string): Promise<string | undefined> {
  const seen = new Set<string>();
  const words = tokenizeWords(text).filter((w) => {
    const key = w.toLowerCase();
    if (seen.has(key) || isStopword(key)) return false;
    seen.add(key);
    return true;
  });
  if (words.length === 0) return undefined;
  const stats = await store.keywordTermStats(words);
  return buildOrQuery(informativeWords(stats.terms, stats.total).join(' '));
}
