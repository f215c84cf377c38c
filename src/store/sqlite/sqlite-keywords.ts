/**
 * The keyword index on SQLite: BM25 over FTS5 (its rows are written by sqlite-graph.ts with each
 * graph change), document frequencies for term pruning, the split of large searches over two cores
 * (keyword-split.ts), and compaction after a bulk load (fts5-compaction.ts). Plain OR expressions
 * of single terms (what the pipeline builds from plain text) are answered by the in-memory top-k
 * index (keyword-topk*.ts) with the same ids and scores; FTS5 answers everything else, and plain
 * ones too while that index is first built.
 */
import { ERROR_CODES, MemoryError } from '../../core/errors.js';
import { asEntityId } from '../../core/types.js';
import type { KeywordHit } from '../../core/signals.js';
import { keywordText, plainWords, type KeywordExpr } from '../../core/text/keyword-query.js';
import type { CompactionListener, KeywordIndex, TermStats } from '../keyword-index.js';
import { compactFts5 } from './fts5/fts5-compaction.js';
import { KeywordWorker, KeywordWorkerError, RANGE_SQL, mergeRanges, type RangeHit } from './keyword-topk/keyword-split.js';
import { keywordFilePath } from './keyword-topk/keyword-topk-file.js';
import { KeywordTopKSync } from './keyword-topk/keyword-topk-sync.js';
import type { SqliteConnection } from './sqlite-connection.js';

/** Entries kept in each of the keyword-term caches before they start over. */
const TERM_CACHE_SIZE = 50_000;

export class SqliteKeywordIndex implements KeywordIndex {
  /** Keyword searches answered by two halves (for tests and diagnostics). */
  splits = 0;
  private termTablesReady = false;
  /** Query word → the stored terms it tokenizes to (porter, accents folded): fixed for the tokenizer. */
  private readonly stemsOf = new Map<string, readonly string[]>();
  /** Query word → its one stored term, or null when it tokenizes to none or several (a phrase). */
  private readonly termOf = new Map<string, string | null>();
  /**
   * Plain OR queries are answered top-k by an in-memory index (keyword-topk.ts) with FTS5's exact
   * bm25(); undefined when switched off. Everything else (phrases, NOT, prefixes, columns) is FTS5's.
   */
  readonly topK: KeywordTopKSync | undefined;
  /** Searches the top-k index answered (for tests and diagnostics). */
  topKAnswers = 0;
  /** termStats calls the top-k index's counts answered (for tests and diagnostics). */
  termStatsFromIndex = 0;
  /** Why the top-k index was set aside (FTS5 answers everything since), if it was. */
  topKError: Error | undefined;
  /** Document frequency per stored term, with the keyword change count it was read at. */
  private readonly dfOf = new Map<string, { readonly df: number; readonly changes: number }>();
  /** The second half of split keyword queries; created on the first search that splits. */
  private worker: KeywordWorker | undefined;

  /** `splitFrom`: entities from which a search is split over two cores (Infinity: never). */
  constructor(
    private readonly conn: SqliteConnection,
    private splitFrom: number,
    topK = true,
  ) {
    this.topK = topK ? new KeywordTopKSync(conn, { file: conn.path === ':memory:' ? undefined : keywordFilePath(conn.path) }) : undefined;
  }

  async search(query: KeywordExpr, limit: number): Promise<KeywordHit[]> {
    const phrases = this.topK === undefined || this.topKError !== undefined ? undefined : this.plainTerms(query);
    if (phrases !== undefined && this.topK !== undefined) {
      try {
        const hits = this.topK.search(phrases, limit);
        if (hits !== undefined) {
          this.topKAnswers++;
          return hits.map((r) => ({ id: asEntityId(r.id), bm25: r.score }));
        }
      } catch (error) {
        // FTS5 answers the same question exactly, only slower: a failing index is set aside.
        this.topKError = error as Error;
      }
    }
    try {
      // The tree as FTS5's MATCH syntax (keywordText quotes every word, so no input makes FTS5 raise).
      const hits = await this.hits(keywordText(query), limit);
      return hits.map((r) => ({ id: asEntityId(r.id), bm25: r.score }));
    } catch (cause) {
      const code = (cause as { code?: unknown }).code;
      if (code !== 'SQLITE_ERROR') throw cause;
      throw new MemoryError(ERROR_CODES.INVALID_QUERY, `The keyword expression could not be parsed (${(cause as Error).message}).`, {
        cause,
      });
    }
  }

  async termStats(words: readonly string[]): Promise<TermStats> {
    const total = this.conn.entityCount();
    if (words.length === 0) return { total, terms: [] };
    this.learnStems(words.filter((w) => !this.stemsOf.has(w)));
    const stems = words.map((word) => this.stemsOf.get(word) ?? []);
    // The top-k index knows every term's count exactly and at once (fts5vocab took 7 ms of a
    // keyword leg at 1M entities); FTS5's vocabulary answers while it is built or set aside.
    const unique = [...new Set(stems.flat())];
    let counts: number[] | undefined;
    try {
      counts = this.topKError === undefined ? this.topK?.docFrequencies(unique) : undefined;
    } catch (error) {
      this.topKError = error as Error;
    }
    if (counts !== undefined) {
      this.termStatsFromIndex++;
      const dfOf = new Map(unique.map((term, i) => [term, counts[i] ?? 0]));
      return { total, terms: words.map((word, i) => ({ word, df: Math.max(0, ...(stems[i] ?? []).map((t) => dfOf.get(t) ?? 0)) })) };
    }
    // fts5vocab counts a term's documents by reading its whole doclist: 11 ms per query at 100k
    // entities for common words. A count is reused while fewer than 1% of the entities changed
    // since it was read (every writer, in any process, adds to meta `keyword_changes`), so it is
    // off by less than 1% of the entity count, and in a graph under 100 entities always exact.
    const changes = Number(this.conn.metaGet('keyword_changes') ?? 0);
    const df = this.conn.stmt<[string], { doc: number }>('SELECT doc FROM entity_fts_vocab WHERE term = ?');
    const docsWith = (term: string): number => {
      const cached = this.dfOf.get(term);
      if (cached !== undefined && (changes - cached.changes) * 100 < total) return cached.df;
      const fresh = df.get(term)?.doc ?? 0;
      if (this.dfOf.size >= TERM_CACHE_SIZE) this.dfOf.clear();
      this.dfOf.set(term, { df: fresh, changes });
      return fresh;
    };
    const terms = words.map((word, i) => ({ word, df: Math.max(0, ...(stems[i] ?? []).map(docsWith)) }));
    return { total, terms };
  }

  async optimize(progress?: CompactionListener): Promise<void> {
    // Not FTS5's 'optimize': one transaction that, at 1M entities, locked out other writers for
    // tens of seconds (fts5-compaction.ts). Merging changes no graph data: cached facts stay valid.
    // The substring index (search_nodes) is merged too: it has the same segments to gain from.
    await compactFts5(this.conn.db, ['entity_fts', 'entity_trigram'], {
      inTransaction: (step) => this.conn.write(step, false),
      busyTimeoutMs: this.conn.busyTimeoutMs,
      progress,
    });
  }

  async close(): Promise<void> {
    await this.topK?.close();
    await this.worker?.close();
  }

  /** Best-first BM25 matches: one query, or from splitFrom entities two halves on two cores. */
  private async hits(match: string, limit: number): Promise<RangeHit[]> {
    const worker = this.conn.entityCount() >= this.splitFrom ? this.splitWorker() : undefined;
    if (worker === undefined) {
      return this.conn
        .stmt<[string, number], RangeHit>(
          'SELECT rowid AS id, bm25(entity_fts) AS score FROM entity_fts WHERE entity_fts MATCH ? ORDER BY score, rowid LIMIT ?',
        )
        .all(match, limit);
    }
    const last = this.conn.stmt<[], { m: number | null }>('SELECT max(id) AS m FROM entities').get()?.m ?? 0;
    const middle = Math.floor(last / 2);
    const range = this.conn.stmt<[string, number, number, number], RangeHit>(RANGE_SQL);
    const far = worker.search(match, middle + 1, last, limit);
    let near: RangeHit[];
    try {
      near = range.all(match, 0, middle, limit);
    } catch (error) {
      far.catch(() => undefined); // the same expression fails there too; this error is the answer
      throw error;
    }
    let rest: RangeHit[];
    try {
      rest = await far;
    } catch (error) {
      if (error instanceof KeywordWorkerError) throw error;
      rest = range.all(match, middle + 1, last, limit); // the worker is gone: this connection answers
    }
    this.splits++;
    return mergeRanges(near, rest, limit);
  }

  private splitWorker(): KeywordWorker | undefined {
    if (this.worker?.broken === true) return undefined;
    try {
      this.worker ??= new KeywordWorker(this.conn.path, this.conn.busyTimeoutMs);
    } catch {
      this.splitFrom = Infinity; // no worker threads here: one core answers
      return undefined;
    }
    return this.worker;
  }

  /**
   * The stored term of each word of a plain OR expression, in order, or undefined when the
   * expression is anything else or a word is not exactly one term (FTS5 answers those).
   */
  private plainTerms(query: KeywordExpr): string[] | undefined {
    const words = plainWords(query);
    if (words === undefined) return undefined;
    this.learnStems([...new Set(words.filter((w) => !this.termOf.has(w)))]);
    const terms: string[] = [];
    for (const w of words) {
      const term = this.termOf.get(w);
      if (term === undefined || term === null) return undefined;
      terms.push(term);
    }
    return terms;
  }

  /** Puts the words through the index's own tokenizer, in a private temporary table. */
  private learnStems(words: readonly string[]): void {
    if (words.length === 0) return;
    const db = this.conn.db;
    if (!this.termTablesReady) {
      db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_terms USING fts5(t, tokenize = 'porter unicode61 remove_diacritics 2');
        CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_terms_vocab USING fts5vocab(temp, query_terms, 'instance');`);
      this.termTablesReady = true;
    }
    const insert = this.conn.stmt('INSERT INTO temp.query_terms (rowid, t) VALUES (?, ?)');
    const stems = db.transaction(() => {
      words.forEach((w, i) => insert.run(i + 1, w));
      const rows = this.conn.stmt<[], { term: string; doc: number }>('SELECT term, doc FROM temp.query_terms_vocab').all();
      db.exec('DELETE FROM temp.query_terms');
      return rows;
    })();
    if (this.stemsOf.size + words.length > TERM_CACHE_SIZE) this.stemsOf.clear();
    if (this.termOf.size + words.length > TERM_CACHE_SIZE) this.termOf.clear();
    words.forEach((w, i) => {
      const tokens = stems.filter((s) => s.doc === i + 1).map((s) => s.term);
      this.stemsOf.set(w, [...new Set(tokens)]);
      this.termOf.set(w, tokens.length === 1 ? (tokens[0] as string) : null);
    });
  }
}
