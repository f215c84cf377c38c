/**
 * Words that carry no evidence on their own, in the languages Limbic routes (English and Spanish,
 * from the maintained lists of the `stopword` package). In a small memory BM25 cannot tell: "the"
 * in two entities out of six has a full idf, and a keyword hit on it outranked a semantic match
 * (issue 18). Plain queries drop them whatever the graph's size; expert syntax keeps every word.
 */
import { eng, spa } from 'stopword';

const STOPWORDS: ReadonlySet<string> = new Set([...eng, ...spa].map((w) => w.toLowerCase()));

/** Whether a word (any case) is a stopword of English or Spanish. */
export function isStopword(word: string): boolean {
  return STOPWORDS.has(word.toLowerCase());
}
