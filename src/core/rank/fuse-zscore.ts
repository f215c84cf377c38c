/**
 * Fusion by score strength (issue 18): each leg's raw scores as z-scores over its own hits, the
 * keyword leg weighted by how much of the query the memory's words cover. Chosen on half A of
 * bench:quality's three suites from 478 variants (bench/results/quality-2026-11-23-fusion-study.md);
 * on the held-out half it led search_semantic's previous base on all three: LoCoMo recall@5 0.581 vs
 * 0.558, XQuAD hit@1 0.901 vs 0.802, small memories hit@1 0.942 vs 0.883 (150 hits per leg).
 *
 * Ranks alone lose how far apart two hits are; min-max stretches a near tie to 0 vs 1. A z-score
 * keeps each leg's own spread, and coverage lets a query whose words the memory never uses (across
 * languages, say) fall back to meaning.
 */
import type { FusedCandidate } from './fuse-rrf.js';

/** Keyword weight at full coverage: w(q) = ZSCORE_KEYWORD_WEIGHT × coverage(q). */
export const ZSCORE_KEYWORD_WEIGHT = 0.6;

/**
 * The semantic leg's σ is at least this share of its mean similarity (about 0.017 for e5, whose
 * cosines sit around 0.85): z-scores over two or three hits turn any gap into a full standard
 * deviation, so a 0.004 cosine gap between two near-identical entities outweighed an archived one's
 * deboost. Chosen on half A of the three suites (bench/results/quality-2026-11-23-neighbours.md):
 * 0.02 led the mean of their headlines among 0, 0.01, 0.02, 0.03 and 0.05.
 */
export const SEMANTIC_SPREAD_FLOOR = 0.02;

/**
 * z = (v − μ) / σ over the values present (population σ, at least `relativeFloor` × |μ|); a
 * candidate the leg did not find gets min(0, the leg's lowest z); a leg whose hits all score alike
 * gives every candidate 0.
 * @example zScores([1, 3, undefined]) // [-1, 1, -1]
 * @example zScores([0.84, 0.85], 0.02) // [-0.30, 0.30]: σ 0.005 raised to 0.0169
 */
export function zScores(values: readonly (number | undefined)[], relativeFloor = 0): number[] {
  const present = values.filter((v): v is number => v !== undefined);
  if (present.length === 0) return values.map(() => 0);
  const mean = present.reduce((a, b) => a + b, 0) / present.length;
  const spread = Math.sqrt(present.reduce((a, b) => a + (b - mean) ** 2, 0) / present.length);
  const sd = spread > 0 ? Math.max(spread, relativeFloor * Math.abs(mean)) : 0;
  if (!(sd > 0)) return values.map(() => 0);
  const z = values.map((v) => (v === undefined ? undefined : (v - mean) / sd));
  const miss = Math.min(0, ...z.filter((x): x is number => x !== undefined));
  return z.map((x) => x ?? miss);
}

/**
 * Each candidate's fused score, mapped into (0, 1) by the logistic function so the limbic re-rank
 * multiplies a positive base: (1 − w)·z_semantic(1 − distance) + w·z_keyword(−bm25), w = 0.6 × coverage.
 * `coverage`: the share of the query's searched words that occur in the memory (0 to 1).
 * @example zScoreFusion(candidates, 1) // semantic and keyword z-scores weighted 0.4 / 0.6
 */
export function zScoreFusion(candidates: readonly FusedCandidate[], coverage: number): number[] {
  const w = ZSCORE_KEYWORD_WEIGHT * Math.min(1, Math.max(0, coverage));
  const semantic = zScores(
    candidates.map((c) => (c.semantic === undefined ? undefined : 1 - c.semantic.distance)),
    SEMANTIC_SPREAD_FLOOR,
  );
  const keyword = zScores(candidates.map((c) => (c.keyword === undefined ? undefined : -c.keyword.bm25)));
  return candidates.map((_, i) => 1 / (1 + Math.exp(-((1 - w) * (semantic[i] ?? 0) + w * (keyword[i] ?? 0)))));
}
