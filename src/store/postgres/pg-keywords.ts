/**
 * The keyword index on PostgreSQL: tsvector + GIN for matching, and BM25 computed in SQL the way
 * FTS5's bm25() computes it, so the fused scores mean the same on both backends:
 *
 *   score = -Σ_terms idf · tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen)),  k1 = 1.2, b = 0.75
 *   idf   = ln((N − df + 0.5) / (df + 0.5)), at least 1e-6
 *
 * tf is a lexeme's positions in the whole entity (all columns, weight 1 as FTS5's default; only the
 * named column's for a `name :` / `type :` / `obs :` filter, whose df counts that column too), len the
 * entity's token count, N and avglen from keyword_totals, df counted on the GIN index per query.
 * Where it differs from FTS5: tsvector keeps at most 256 positions per lexeme (tf caps there), a
 * phrase scores as its words (FTS5 counts whole-phrase hits), the stemmer is Snowball English
 * (FTS5: the original Porter), and df is exact on every query (FTS5's path caches it within 1%).
 * ts_rank_cd as the score was the other choice: it has no idf, so a rare word weighs what a common
 * one does; here it only counts tf. Cost: every matched entity is scored (as FTS5 does), about
 * 30-300 ms at 10k entities where SQLite's in-memory top-k answers in about 1 ms (bench/postgres.ts);
 * a postings table with stored tf would be the next step.
 */
import { ERROR_CODES, MemoryError } from '../../core/errors.js';
import type { KeywordHit } from '../../core/signals.js';
import { asEntityId } from '../../core/types.js';
import type { CompactionListener, KeywordIndex, TermStats } from '../keyword-index.js';
import type { PgConnection } from './pg-connection.js';
import { foldText, toTsQuery } from './pg-text.js';

export class PgKeywordIndex implements KeywordIndex {
  constructor(private readonly conn: PgConnection) {}

  async search(match: string, limit: number): Promise<KeywordHit[]> {
    const query = toTsQuery(match, 5);
    if (query.scored.length === 0 || limit <= 0) return [];
    try {
      const rows = await this.conn.query<{ id: number; score: number }>(
        // MATERIALIZED: computed once each (inlined, df's counts ran once per joined row).
        `WITH terms AS MATERIALIZED (
                SELECT DISTINCT u.lexeme, x.prefix, x.weights,
                       (quote_literal(u.lexeme) || CASE WHEN x.prefix OR x.weights <> '' THEN ':' || CASE WHEN x.prefix THEN '*' ELSE '' END || x.weights ELSE '' END)::tsquery AS q
                  FROM unnest($1::text[], $2::boolean[], $4::text[]) AS x(word, prefix, weights), unnest(to_tsvector('limbic', x.word)) AS u),
              totals AS MATERIALIZED (SELECT greatest(docs, 1)::float8 AS n, greatest(tokens, 1)::float8 / greatest(docs, 1) AS avglen FROM keyword_totals),
              -- A term limited to a column counts only the entities having it there, as FTS5 does.
              df AS MATERIALIZED (
                SELECT t.q, greatest(ln((totals.n - c.n + 0.5) / (c.n + 0.5)), 1e-6) AS idf,
                       -- ts_rank_cd's weights, in the order D, C, B, A: 1 for the columns the term may count in.
                       ARRAY[CASE WHEN t.weights = '' THEN 1 ELSE 0 END,
                             CASE WHEN t.weights = '' OR strpos(t.weights, 'C') > 0 THEN 1 ELSE 0 END,
                             CASE WHEN t.weights = '' OR strpos(t.weights, 'B') > 0 THEN 1 ELSE 0 END,
                             CASE WHEN t.weights = '' OR strpos(t.weights, 'A') > 0 THEN 1 ELSE 0 END]::float4[] AS mask
                  FROM terms t CROSS JOIN totals CROSS JOIN LATERAL (SELECT count(*)::float8 AS n FROM entity_keywords k WHERE k.tsv @@ t.q) c)
         SELECT m.entity_id AS id,
                -sum(df.idf * d.tf * 2.2 / (d.tf + 1.2 * (0.25 + 0.75 * m.doc_len / totals.avglen))) AS score
           FROM entity_keywords m
           CROSS JOIN df
           -- With one lexeme (or one prefix) as the query and 0/1 weights, ts_rank_cd is the count of
           -- its positions in the allowed columns: tf, without unpacking the tsvector.
           CROSS JOIN LATERAL (SELECT ts_rank_cd(df.mask, m.tsv, df.q)::float8 AS tf) d
           CROSS JOIN totals
          WHERE m.tsv @@ (${query.sql}) AND d.tf > 0
          GROUP BY m.entity_id
          ORDER BY score, m.entity_id
          LIMIT $3`,
        [query.scored.map((s) => s.word), query.scored.map((s) => s.prefix), limit, query.scored.map((s) => s.weights), ...query.params],
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

  async termStats(words: readonly string[]): Promise<TermStats> {
    const rows = await this.conn.query<{ i: number; df: number | null }>(
      `SELECT x.i, (SELECT max((SELECT count(*) FROM entity_keywords k WHERE k.tsv @@ quote_literal(u.lexeme)::tsquery))
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
   * against writers (gin_clean_pending_list and ANALYZE take no exclusive lock).
   */
  async optimize(progress?: CompactionListener): Promise<void> {
    progress?.({ done: 0, total: 2, lockMs: 0 });
    await this.conn.query("SELECT gin_clean_pending_list('entity_keywords_tsv'::regclass)");
    progress?.({ done: 1, total: 2, lockMs: 0 });
    await this.conn.query('ANALYZE entity_keywords');
    progress?.({ done: 2, total: 2, lockMs: 0 });
  }
}
