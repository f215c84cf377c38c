/**
 * The keyword index on PostgreSQL: tsvector + GIN for matching, and BM25 computed in SQL the way
 * FTS5's bm25() computes it, so the fused scores mean the same on both backends:
 *
 *   score = -Σ_terms idf · tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen)),  k1 = 1.2, b = 0.75
 *   idf   = ln((N − df + 0.5) / (df + 0.5)), at least 1e-6
 *
 * summed over the query's phrases as FTS5 sums them: a single word, a prefix, or a quoted phrase,
 * each time it is written (two words with one stem count twice, as two phrases do in FTS5). tf is a
 * phrase's hits in the whole entity (all columns, weight 1 as FTS5's default; only the named
 * column's for a `name :` / `type :` / `obs :` filter, whose df counts that column too): a word's
 * positions, or the places a phrase starts with all its words in one column. len is the entity's
 * token count, N and avglen from keyword_totals (the sum of its shards), df counted per query.
 * Where it still differs from FTS5 (docs/postgresql.md measures it): tsvector keeps at most 256
 * positions per lexeme and reads every position past 16,383 as 16,383 (tf and phrases cap there),
 * Snowball's Porter stemmer (schema 13) and FTS5's part on a few words (words of one or two
 * letters, which FTS5 leaves as they are, -logy and -bly endings, tokens over 64 characters), a
 * phrase across two columns matches the tsquery (FTS5 keeps columns apart; it scores 0 here, so it
 * adds no hit of its own, but can satisfy an AND), and df is exact on every query (FTS5's path
 * caches it within 1%). ts_rank_cd as the score was the other choice: it has no
 * idf, so a rare word weighs what a common one does.
 *
 * Two paths. Plain words joined by OR (all plain text gives) read keyword_postings (migration 6):
 * each word's entries, with tf and the entity's length, from one B-tree range (an index-only scan),
 * and MaxScore prunes: words are taken rarest first, and once the k-th best score of the entities
 * having those words beats what the remaining (common) words could add at most (each word's
 * largest part, read with its df), the entities having only common words are never scored, and a
 * long range is only probed for the candidates. At most two rounds; scores and order are FTS5's
 * exactly (test/store/postgres-keywords.test.ts). The cost is at write time: about 60 postings
 * per entity, kept by triggers. Everything else (phrases, prefixes, columns, AND, NOT) matches on
 * the GIN index and counts tf with ts_rank_cd on each matched tsvector, about 2 µs per entity and
 * term (a phrase's from the positions of its words). bench/postgres.ts measures both paths against SQLite.
 */
import { ERROR_CODES, MemoryError } from '../../core/errors.js';
import type { KeywordHit } from '../../core/signals.js';
import { asEntityId } from '../../core/types.js';
import type { CompactionListener, KeywordIndex, TermStats } from '../keyword-index.js';
import type { PgConnection } from './pg-connection.js';
import type { KeywordExpr } from '../../core/text/keyword-query.js';
import { foldText, plainOrWords, toTsQuery } from './pg-text.js';

/** A bound is compared with this slack, so rounding never prunes an entity of the true top k. */
const BOUND_SLACK = 1 + 1e-9;
/** An index probe costs about this many entries of a range read (measured at 10k entities). */
const PROBE_COST = 30;

export class PgKeywordIndex implements KeywordIndex {
  constructor(private readonly conn: PgConnection) {}

  async search(expr: KeywordExpr, limit: number): Promise<KeywordHit[]> {
    const words = limit > 0 ? plainOrWords(expr) : undefined;
    const plain = words === undefined ? undefined : await this.searchWords(words, limit);
    if (plain !== undefined) return plain;
    const query = toTsQuery(expr, 5);
    if (query.scored.length === 0 || limit <= 0) return [];
    try {
      const rows = await this.conn.query<{ id: number; score: number }>(
        // MATERIALIZED: computed once each (inlined, df's counts ran once per joined row). One row
        // per scored phrase of the query, k its place: a phrase written twice counts twice, as in FTS5.
        `WITH terms AS MATERIALIZED (
                SELECT x.k, lx.lex, x.prefix, x.weights,
                       (SELECT string_agg(quote_literal(y.l) || CASE WHEN (x.prefix AND y.j = cardinality(lx.lex)) OR x.weights <> ''
                                  THEN ':' || CASE WHEN x.prefix AND y.j = cardinality(lx.lex) THEN '*' ELSE '' END || x.weights ELSE '' END,
                                  ' <-> ' ORDER BY y.j)
                          FROM unnest(lx.lex) WITH ORDINALITY AS y(l, j))::tsquery AS q
                  FROM unnest($1::text[], $2::boolean[], $4::text[]) WITH ORDINALITY AS x(phrase, prefix, weights, k)
                  -- The phrase's lexemes in the order of its words.
                  CROSS JOIN LATERAL (SELECT array_agg(u.lexeme ORDER BY p.pos) AS lex
                                        FROM unnest(to_tsvector('limbic', x.phrase)) AS u, unnest(u.positions) AS p(pos)) lx
                 WHERE lx.lex IS NOT NULL),
              totals AS MATERIALIZED (SELECT greatest(docs, 1)::float8 AS n, greatest(tokens, 1)::float8 / greatest(docs, 1) AS avglen FROM keyword_totals),
              -- A phrase's df counts the entities having the whole phrase (in its column, when limited to one), as FTS5 does.
              df AS MATERIALIZED (
                SELECT t.k, t.lex, t.prefix, t.weights, t.q, greatest(ln((totals.n - c.n + 0.5) / (c.n + 0.5)), 1e-6) AS idf,
                       -- ts_rank_cd's weights, in the order D, C, B, A: 1 for the columns the term may count in.
                       ARRAY[CASE WHEN t.weights = '' THEN 1 ELSE 0 END,
                             CASE WHEN t.weights = '' OR strpos(t.weights, 'C') > 0 THEN 1 ELSE 0 END,
                             CASE WHEN t.weights = '' OR strpos(t.weights, 'B') > 0 THEN 1 ELSE 0 END,
                             CASE WHEN t.weights = '' OR strpos(t.weights, 'A') > 0 THEN 1 ELSE 0 END]::float4[] AS mask
                  FROM terms t CROSS JOIN totals CROSS JOIN LATERAL (SELECT count(*)::float8 AS n FROM entity_keywords k WHERE k.tsv @@ t.q) c)
         SELECT m.entity_id AS id,
                -sum(df.idf * d.tf * 2.2 / (d.tf + 1.2 * (0.25 + 0.75 * m.doc_len / totals.avglen)) ORDER BY df.k) AS score
           FROM entity_keywords m
           CROSS JOIN df
           -- tf: with one lexeme (or one prefix) as the query and 0/1 weights, ts_rank_cd is the count of
           -- its positions in the allowed columns, without unpacking the tsvector. A phrase's tf is the
           -- count of the places it starts, all its words in one column (FTS5 counts phrase hits so).
           CROSS JOIN LATERAL (
             SELECT CASE WHEN cardinality(df.lex) = 1 THEN ts_rank_cd(df.mask, m.tsv, df.q)::float8 ELSE (
                      SELECT count(*)::float8
                        FROM (SELECT a.lexeme, s.pos, s.w FROM unnest(m.tsv) AS a(lexeme, positions, weights), unnest(a.positions, a.weights) AS s(pos, w)
                               WHERE a.lexeme = ANY (df.lex) OR (df.prefix AND starts_with(a.lexeme, df.lex[cardinality(df.lex)]))) AS p
                       WHERE p.lexeme = df.lex[1] AND (df.weights = '' OR strpos(df.weights, p.w) > 0)
                         AND (SELECT count(*) FROM generate_series(2, cardinality(df.lex)) AS i
                               WHERE EXISTS (SELECT 1 FROM unnest(m.tsv) AS b(lexeme, positions, weights), unnest(b.positions, b.weights) AS r(pos, w)
                                              WHERE r.pos = p.pos + i - 1 AND r.w = p.w
                                                AND (b.lexeme = df.lex[i] OR (df.prefix AND i = cardinality(df.lex) AND starts_with(b.lexeme, df.lex[i])))))
                             = cardinality(df.lex) - 1) END AS tf) d
           CROSS JOIN totals
          WHERE m.tsv @@ (${query.sql}) AND d.tf > 0
          GROUP BY m.entity_id
          ORDER BY score, m.entity_id
          LIMIT $3`,
        [query.scored.map((s) => s.phrase), query.scored.map((s) => s.prefix), limit, query.scored.map((s) => s.weights), ...query.params],
      );
      return rows.map((r) => ({ id: asEntityId(r.id), bm25: r.score }));
    } catch (cause) {
      // 42601 syntax error, 22P02 invalid text representation: a tsquery the translation made badly.
      const code = (cause as { code?: unknown }).code;
      if (code !== '42601' && code !== '22P02') throw cause;
      throw new MemoryError(ERROR_CODES.INVALID_QUERY, `The keyword expression could not be parsed (${(cause as Error).message}).`, {
        cause,
      });
    }
  }

  /**
   * BM25 of an OR of plain words from the postings, pruned by MaxScore (see the top of this file);
   * undefined when a word is more than one lexeme to the parser (a phrase: the GIN path's).
   */
  private async searchWords(words: readonly string[], limit: number): Promise<KeywordHit[] | undefined> {
    const rows = await this.conn.query<{
      i: number;
      lexemes: string[] | null;
      df: number;
      idf: number;
      top: number | null;
      avglen: number;
    }>(
      `WITH w AS (SELECT x.i, array_agg(u.lexeme) FILTER (WHERE u.lexeme IS NOT NULL) AS lexemes
                    FROM unnest($1::text[]) WITH ORDINALITY AS x(word, i) LEFT JOIN LATERAL unnest(to_tsvector('limbic', x.word)) AS u ON true
                   GROUP BY x.i),
            totals AS MATERIALIZED (SELECT greatest(docs, 1)::float8 AS n, greatest(tokens, 1)::float8 / greatest(docs, 1) AS avglen FROM keyword_totals)
       -- One read of each word's range gives its df and the largest tf part any entity has: its bound.
       SELECT w.i, w.lexemes, c.df, greatest(ln((totals.n - c.df + 0.5) / (c.df + 0.5)), 1e-6) AS idf, c.top, totals.avglen
         FROM w CROSS JOIN totals
         CROSS JOIN LATERAL (SELECT count(*)::float8 AS df, max(p.tf * 2.2 / (p.tf + 1.2 * (0.25 + 0.75 * p.doc_len / totals.avglen))) AS top
                               FROM keyword_postings p WHERE cardinality(w.lexemes) = 1 AND p.lexeme = w.lexemes[1]) c`,
      [words],
    );
    if (rows.some((r) => (r.lexemes?.length ?? 0) > 1)) return undefined;
    // A word given twice, or two words with one lexeme, count twice, as in FTS5 (each is a phrase of the query).
    const terms = rows
      .filter((r) => r.df > 0 && r.lexemes !== null)
      .map((r) => ({ lexeme: r.lexemes?.[0] as string, df: r.df, idf: r.idf, bound: r.idf * (r.top ?? 2.2), order: r.i }))
      .sort((a, b) => b.bound - a.bound || (a.lexeme < b.lexeme ? -1 : a.lexeme > b.lexeme ? 1 : a.order - b.order));
    const avglen = rows[0]?.avglen ?? 1;
    if (terms.length === 0) return [];
    // The most any entity gets from terms[j..].
    const rest = terms.map((_, j) => terms.slice(j).reduce((sum, t) => sum + t.bound, 0));
    rest.push(0);
    // First the rarest words whose entities could fill the k twice over; then, if the k-th score
    // found does not beat what the words left out could add, as many more as the bound asks for
    // (the k-th score only rises as words are added, so the second round is the last).
    let taken = 0;
    for (let df = 0; taken < terms.length && df < 2 * limit; taken++) df += terms[taken]?.df ?? 0;
    for (;;) {
      const hits = await this.scorePostings(terms, taken, avglen, limit);
      const kth = hits.length === limit ? -(hits[limit - 1]?.bm25 ?? 0) : 0;
      const needed = rest.findIndex((bound) => bound * BOUND_SLACK < kth);
      if (taken === terms.length || (needed >= 0 && needed <= taken)) return hits;
      taken = needed < 0 ? terms.length : needed;
    }
  }

  /**
   * The best `limit` entities having any of the first `taken` terms, scored on all terms. Every
   * other term is read for those candidates only: its whole range when that is short, else one
   * index probe per candidate (a probe costs about PROBE_COST entries of a range read), which is
   * what leaves a common word's long range unread.
   */
  private async scorePostings(
    terms: readonly { lexeme: string; df: number; idf: number; order: number }[],
    taken: number,
    avglen: number,
    limit: number,
  ): Promise<KeywordHit[]> {
    const candidates = terms.slice(0, taken).reduce((n, x) => n + x.df, 0);
    // 0: gives the candidates; 1: its range read, kept for the candidates; 2: probed per candidate.
    const mode = terms.map((x, i) => (i < taken ? 0 : x.df <= PROBE_COST * candidates ? 1 : 2));
    // Summed in the query's word order, as FTS5 sums (0 for a word the entity lacks): equal
    // entities get equal scores bit for bit, so ties fall to the lower id on both backends. One
    // aggregate per term rather than an ordered sum, which would sort every entry.
    const order = terms.map((_, i) => i).sort((a, b) => (terms[a]?.order ?? 0) - (terms[b]?.order ?? 0));
    const sum = order.map((i) => `coalesce(max(p.part) FILTER (WHERE p.k = ${i + 1}), 0)`).join(' + ');
    const part = 't.idf * p.tf * 2.2 / (p.tf + 1.2 * (0.25 + 0.75 * p.doc_len / $3::float8))';
    const sql =
      taken === terms.length
        ? `WITH t AS (SELECT * FROM unnest($1::text[], $2::float8[]) WITH ORDINALITY AS t(lexeme, idf, k))
           SELECT p.entity_id AS id, -(${sum}) AS score
             FROM (SELECT p.entity_id, t.k, ${part} AS part FROM t JOIN keyword_postings p ON p.lexeme = t.lexeme) p
            GROUP BY p.entity_id ORDER BY score, p.entity_id LIMIT $4`
        : `WITH t AS (SELECT * FROM unnest($1::text[], $2::float8[], $5::int[]) WITH ORDINALITY AS t(lexeme, idf, mode, k)),
                c AS MATERIALIZED (SELECT DISTINCT p.entity_id FROM t JOIN keyword_postings p ON p.lexeme = t.lexeme WHERE t.mode = 0)
           SELECT p.entity_id AS id, -(${sum}) AS score
             FROM (SELECT p.entity_id, t.k, ${part} AS part FROM t JOIN keyword_postings p ON p.lexeme = t.lexeme
                    WHERE t.mode < 2 AND p.entity_id IN (SELECT entity_id FROM c)
                   UNION ALL
                   SELECT c.entity_id, x.k, x.part FROM c CROSS JOIN t
                   -- OFFSET 0 keeps this a probe per candidate and term, not a join over the range.
                    CROSS JOIN LATERAL (SELECT t.k, ${part} AS part FROM keyword_postings p
                                         WHERE p.lexeme = t.lexeme AND p.entity_id = c.entity_id OFFSET 0) x
                    WHERE t.mode = 2) p
            GROUP BY p.entity_id ORDER BY score, p.entity_id LIMIT $4`;
    const params = [terms.map((x) => x.lexeme), terms.map((x) => x.idf), avglen, limit];
    if (taken < terms.length) params.push(mode);
    const rows = await this.conn.query<{ id: number; score: number }>(sql, params);
    return rows.map((r) => ({ id: asEntityId(r.id), bm25: r.score }));
  }

  async termStats(words: readonly string[]): Promise<TermStats> {
    const rows = await this.conn.query<{ i: number; df: number | null }>(
      // The postings' B-tree counts a word's entities without visiting the table (the GIN index would).
      `SELECT x.i, (SELECT max((SELECT count(*) FROM keyword_postings p WHERE p.lexeme = u.lexeme))
                      FROM unnest(to_tsvector('limbic', x.word)) AS u) AS df
         FROM unnest($1::text[]) WITH ORDINALITY AS x(word, i)`,
      [words.map(foldText)],
    );
    const total = (await this.conn.query<{ docs: number }>('SELECT docs FROM keyword_totals'))[0]?.docs ?? 0;
    const df = new Map(rows.map((r) => [r.i, r.df ?? 0]));
    return { total, terms: words.map((word, i) => ({ word, df: df.get(i + 1) ?? 0 })) };
  }

  /**
   * A GIN index takes writes into a pending list that every search also reads; after a bulk load it
   * is merged into the main index, and the planner's statistics refreshed. Nothing is locked
   * against writers (gin_clean_pending_list, ANALYZE and a plain VACUUM take no exclusive lock).
   */
  async optimize(progress?: CompactionListener): Promise<void> {
    progress?.({ done: 0, total: 3, lockMs: 0 });
    await this.conn.query("SELECT gin_clean_pending_list('entity_keywords_tsv'::regclass)");
    progress?.({ done: 1, total: 3, lockMs: 0 });
    await this.conn.query('ANALYZE entity_keywords');
    progress?.({ done: 2, total: 3, lockMs: 0 });
    // Marks the postings' pages all-visible, so their index is read without visiting the table.
    await this.conn.query('VACUUM (ANALYZE) keyword_postings');
    progress?.({ done: 3, total: 3, lockMs: 0 });
  }
}
