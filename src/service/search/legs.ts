/**
 * The retrieval legs: which run, and what each finds. The keyword leg parses the query once
 * (core/text), asks the index which words carry weight, and searches; the semantic leg first
 * embeds what was written since the last search (bounded), then encodes the query and runs KNN.
 */
import { ERROR_CODES, MemoryError } from '../../core/errors.js';
import type { KeywordHit, VectorHit } from '../../core/signals.js';
import { queryWords } from '../../core/text/fts-query.js';
import { buildKeywordQuery, keywordText, orOfWordsExpr, type KeywordExpr, type KeywordMode } from '../../core/text/keyword-query.js';
import { informativeWords, MAX_TERM_SHARE } from '../../core/text/prune-terms.js';
import { contentWords } from '../../core/text/stopwords.js';
import type { Embedder } from '../../embed/embedder.js';
import { modelNeededError } from '../../embed/model-state.js';
import type { KeywordIndex } from '../../store/keyword-index.js';
import type { Store } from '../../store/store.js';
import type { VectorIndex } from '../../store/vector-index.js';
import type { EmbeddingIndexer } from '../embedding-indexer.js';
import { timed, type SearchMode, type SearchRequest, type StageTimings } from './request.js';

export interface Legs {
  readonly keywords: KeywordIndex | undefined;
  readonly vectors: { readonly index: VectorIndex; readonly embedder: Embedder } | undefined;
}

/** Which legs run: a requested mode that is unavailable is an error naming it and how to enable it. */
export async function chooseLegs(store: Store, indexer: EmbeddingIndexer, requested: readonly SearchMode[] | undefined): Promise<Legs> {
  const wantFts = requested === undefined || requested.includes('fts');
  const wantSemantic = requested === undefined || requested.includes('semantic');
  const embedder = wantSemantic && store.vectors !== undefined ? await indexer.ready() : undefined;
  if (requested?.includes('fts') && store.keywords === undefined) {
    throw new MemoryError(
      ERROR_CODES.INVALID_INPUT,
      'Search mode "fts" is unavailable: this store has no keyword index. Use search_modes ["semantic"].',
    );
  }
  if (requested?.includes('semantic') && embedder === undefined) {
    if (store.vectors === undefined)
      throw new MemoryError(
        ERROR_CODES.VECTOR_UNAVAILABLE,
        `Search mode "semantic" is unavailable. ${indexer.unavailableNote()} Use search_modes ["fts"].`,
      );
    throw modelNeededError(
      indexer.modelState(),
      'Search mode "semantic" is unavailable: it needs the embedding model.',
      'Use search_modes ["fts"] meanwhile.',
    );
  }
  const keywords = wantFts ? store.keywords : undefined;
  const vectors = embedder !== undefined && store.vectors !== undefined ? { index: store.vectors, embedder } : undefined;
  return { keywords, vectors };
}

/**
 * The words of plain text that carry evidence: neither stopwords nor, on large graphs, words in so
 * many entities that BM25 gives them no weight. A query of stopwords alone has no keyword leg.
 */
export async function evidenceMatch(
  keywords: KeywordIndex,
  words: readonly string[],
): Promise<{ expr: KeywordExpr | undefined; coverage: number }> {
  const kept = contentWords(words);
  if (kept.length === 0) return { expr: undefined, coverage: 0 };
  const stats = await keywords.termStats(kept);
  const searched = new Set(informativeWords(stats.terms, stats.total));
  // How much of what was searched the memory uses as evidence: z-score fusion weighs the keyword leg
  // by it. A word in more than half the entities counts for nothing (BM25's idf is ≤ 0 there), even
  // when it is searched because every word was that common: its hits' near-equal scores would
  // otherwise be spread a full standard deviation apart and outvote meaning in a small memory.
  const found = stats.terms.filter(
    (t) => searched.has(t.word) && t.df > 0 && (stats.total <= 0 || t.df / stats.total <= MAX_TERM_SHARE),
  ).length;
  return { expr: orOfWordsExpr([...searched]), coverage: searched.size === 0 ? 0 : found / searched.size };
}

/** evidenceMatch of a text's distinct words: the expression search_semantic's keyword leg runs. */
export const plainKeywordMatch = async (keywords: KeywordIndex, text: string): Promise<KeywordExpr | undefined> =>
  (await evidenceMatch(keywords, queryWords(text))).expr;

export interface KeywordLeg {
  readonly hits: KeywordHit[];
  readonly mode: KeywordMode;
  /** The expression run, as text (keywordText), or undefined when the query had no word to search for. */
  readonly match: string | undefined;
  /** Share of the searched words the memory uses (plain text); 1 or 0 by whether expert syntax found anything. */
  readonly coverage: number;
  readonly warnings: readonly string[];
}

export async function keywordLeg(keywords: KeywordIndex, request: SearchRequest, depth: number): Promise<KeywordLeg> {
  const parsed = request.keywordSyntax === 'expert' ? buildKeywordQuery(request.query) : undefined;
  const mode: KeywordMode = parsed?.mode ?? 'bare';
  // Expert syntax is kept as written; plain text keeps only the words that carry evidence.
  const evidence = parsed?.mode === 'expert' ? undefined : await evidenceMatch(keywords, parsed?.words ?? queryWords(request.query));
  const expr = parsed?.mode === 'expert' ? parsed.expr : evidence?.expr;
  const warnings = [...(parsed?.warnings ?? [])];
  let hits: KeywordHit[] = [];
  if (expr !== undefined) {
    try {
      hits = await keywords.search(expr, depth);
    } catch (error) {
      if (!(error instanceof MemoryError) || error.code !== ERROR_CODES.INVALID_QUERY) throw error;
      // engrava: a malformed expression degrades to zero keyword hits; the semantic leg still answers.
      warnings.push(`${error.message} The keyword leg found nothing; the semantic leg still answered.`);
    }
  }
  return {
    hits,
    mode,
    match: expr === undefined ? undefined : keywordText(expr),
    coverage: evidence?.coverage ?? (hits.length > 0 ? 1 : 0),
    warnings,
  };
}

export interface SemanticLeg {
  readonly hits: VectorHit[];
  /** Set when the wait for fresh entities hit its bound: the answer covers what is indexed. */
  readonly note: string | undefined;
  /** The query's vector, for ordering a result's observations by their distance to it (shown.ts). */
  readonly vector: Float32Array | undefined;
}

export async function semanticLeg(
  vectors: NonNullable<Legs['vectors']>,
  indexer: EmbeddingIndexer,
  query: string,
  depth: number,
  timings: StageTimings,
): Promise<SemanticLeg> {
  const fresh = await timed(timings, 'catchUp', () => indexer.catchUp());
  const [vector] = await timed(timings, 'encode', () => vectors.embedder.embed([query], 'query'));
  // A vector with no direction (text an embedder reads nothing in) is near nothing: its cosine is
  // 0/0, which pgvector answers as NaN for every row, ranking them all at a distance that is no number.
  const found =
    vector === undefined || !vector.some((x) => x !== 0) ? [] : await timed(timings, 'vector', () => vectors.index.search(vector, depth));
  return { hits: found.filter((h) => Number.isFinite(h.distance)), note: fresh.note, vector };
}
