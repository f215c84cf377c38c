/** The keyword capability: BM25 search over names, types and observations. A backend may lack it. */
import type { KeywordHit } from '../core/signals.js';
import type { KeywordExpr } from '../core/text/keyword-query.js';

/** How far an index compaction has got, reported after each step. */
export interface CompactionProgress {
  /** Work done and in all, in index pages (a backend's own unit; only their ratio matters). */
  readonly done: number;
  readonly total: number;
  /** How long the step just finished held the write lock, in ms (0 in the first and last reports). */
  readonly lockMs: number;
}

export type CompactionListener = (progress: CompactionProgress) => void;

export interface TermStats {
  /** Entities in the index. */
  readonly total: number;
  /** How many entities each word's term appears in, after the index's own tokenizing. */
  readonly terms: readonly { readonly word: string; readonly df: number }[];
}

export interface KeywordIndex {
  /**
   * The entities matching a keyword expression (core/text/keyword-query.ts builds it from what the
   * user typed), best first by BM25. Each backend translates the tree itself; one it cannot run
   * throws INVALID_QUERY.
   */
  search(query: KeywordExpr, limit: number): Promise<KeywordHit[]>;
  /** Document frequencies of words, for pruning terms that carry no BM25 weight. */
  termStats(words: readonly string[]): Promise<TermStats>;
  /**
   * Merges the index into one segment after a bulk load: queries then read one doclist per term
   * instead of one per segment. Works in short steps, so other writers keep going meanwhile.
   */
  optimize(progress?: CompactionListener): Promise<void>;
}
