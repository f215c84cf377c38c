/**
 * Prototype fusions of the two legs for the "fusion that respects strength" study (issue 18), in
 * the bench only: each ranks one question's legs (harness.ts `Legs`) offline. With no access
 * history, the limbic re-rank is a monotone function of the base relevance (importance 0, every
 * entity created at the same instant), so ranking by the base alone is what search_semantic would
 * return; the reproductions of the shipped modes below check that on every question.
 *
 * Notation for one query and candidate d (any entity in the top D of either leg):
 *   cos(d)   = max(0, (1 − distance − floor) / (1 − floor)), 0 when the semantic leg missed d
 *   mm(d)    = min-max of −bm25 over the keyword hits (all equal → 0.5), 0 when missed
 *   idf(t)   = max(1e-6, ln((N − df_t + 0.5) / (df_t + 0.5)))   (FTS5's own idf)
 *   abs(d)   = min(1, −bm25(d) / Σ_t idf(t)) over the words searched: how much of the query's
 *              evidence d matched, the same scale in every query (one word once at average length ≈ its idf)
 *   cov(q)   = share of the words searched that occur in the memory at all (0 when none searched)
 *   both(d)  = 1 when both legs found d
 */
import type { EntityId } from '../../src/core/types.js';
import type { Legs } from './harness.js';

/** Candidates per leg: limit × 3 (search_semantic's EXPANSION_FACTOR), limit × 5, or a fixed count (hybrid_search: 150). */
export type Depth = 'x3' | 'x5' | '60' | '100' | '150';
export const depthOf = (depth: Depth, limit: number): number => (depth === 'x3' ? limit * 3 : depth === 'x5' ? limit * 5 : Number(depth));

interface Candidate {
  readonly id: EntityId;
  readonly cos: number;
  readonly rawCos: number | undefined;
  readonly negBm25: number | undefined;
  readonly mm: number;
  readonly abs: number;
  readonly sRank: number | undefined;
  readonly kRank: number | undefined;
}

interface Features {
  readonly candidates: readonly Candidate[];
  /** z-scores of each leg (zSem[i] for candidates[i]); `lone`: a leg of one hit (or all equal) gives its hits 1, else 0. */
  readonly z: Readonly<Record<Lone, { readonly sem: readonly number[]; readonly kw: readonly number[] }>>;
  readonly cov: number;
  /** The best abs(d) of the query. */
  readonly top: number;
}

/** How a leg whose hits all score the same (one hit, say) is scaled: every hit 0 (no evidence of rank) or 1. */
export type Lone = 'zero' | 'one';

/**
 * z = (v − μ) / σ over the values present (population σ); a missing value (the leg did not find the
 * candidate) gets min(0, lowest z of the leg). When σ = 0 every hit gets 0 or 1 (`lone`), a miss 0.
 */
function zScores(values: readonly (number | undefined)[], lone: Lone): number[] {
  const present = values.filter((v): v is number => v !== undefined);
  if (present.length === 0) return values.map(() => 0);
  const mu = present.reduce((a, b) => a + b, 0) / present.length;
  const sd = Math.sqrt(present.reduce((a, b) => a + (b - mu) ** 2, 0) / present.length);
  if (sd === 0) return values.map((v) => (v !== undefined && lone === 'one' ? 1 : 0));
  const zs = values.map((v) => (v === undefined ? undefined : (v - mu) / sd));
  const miss = Math.min(0, ...zs.filter((x): x is number => x !== undefined));
  return zs.map((x) => x ?? miss);
}

const idf = (df: number, n: number): number => Math.max(1e-6, Math.log((n - df + 0.5) / (df + 0.5)));

function minMax(values: readonly number[]): number[] {
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  return values.map((v) => (hi > lo ? (v - lo) / (hi - lo) : 0.5));
}

const memo = new WeakMap<Legs, Map<number, Features>>();

/** The candidates of the top `depth` of both legs, with every normalised score a variant reads. */
export function features(legs: Legs, depth: number): Features {
  let byDepth = memo.get(legs);
  if (byDepth === undefined) memo.set(legs, (byDepth = new Map()));
  const cached = byDepth.get(depth);
  if (cached !== undefined) return cached;
  const semantic = legs.semantic.slice(0, depth);
  const keyword = legs.keyword.slice(0, depth);
  const mm = minMax(keyword.map((k) => -k.bm25));
  const evidence = legs.terms.reduce((sum, t) => sum + idf(t.df, legs.total), 0);
  const found = new Map<EntityId, { distance?: number; bm25?: number; mm?: number; sRank?: number; kRank?: number }>();
  semantic.forEach((h, i) => found.set(h.id, { distance: h.distance, sRank: i + 1 }));
  keyword.forEach((h, i) => found.set(h.id, { ...found.get(h.id), bm25: h.bm25, mm: mm[i] ?? 0, kRank: i + 1 }));
  const candidates = [...found].map(([id, f]): Candidate => ({
    id,
    cos: f.distance === undefined ? 0 : Math.max(0, (1 - f.distance - legs.floor) / (1 - legs.floor)),
    rawCos: f.distance === undefined ? undefined : 1 - f.distance,
    negBm25: f.bm25 === undefined ? undefined : -f.bm25,
    mm: f.mm ?? 0,
    abs: f.bm25 === undefined || evidence <= 0 ? 0 : Math.min(1, -f.bm25 / evidence),
    sRank: f.sRank,
    kRank: f.kRank,
  }));
  const cov = legs.terms.length === 0 ? 0 : legs.terms.filter((t) => t.df > 0).length / legs.terms.length;
  const top = Math.max(0, ...candidates.map((c) => c.abs));
  const z = {
    zero: {
      sem: zScores(
        candidates.map((c) => c.rawCos),
        'zero',
      ),
      kw: zScores(
        candidates.map((c) => c.negBm25),
        'zero',
      ),
    },
    one: {
      sem: zScores(
        candidates.map((c) => c.rawCos),
        'one',
      ),
      kw: zScores(
        candidates.map((c) => c.negBm25),
        'one',
      ),
    },
  };
  const result = { candidates, z, cov, top };
  byDepth.set(depth, result);
  return result;
}

/** Best first, ties by id ascending (as rankByBase and reciprocalRankFusion break them). */
function order(candidates: readonly Candidate[], score: (c: Candidate) => number, limit: number): EntityId[] {
  return candidates
    .map((c) => ({ id: c.id, s: score(c) }))
    .sort((a, b) => b.s - a.s || a.id - b.id)
    .slice(0, limit)
    .map((x) => x.id);
}

export interface Variant {
  readonly name: string;
  readonly family: string;
  rank(legs: Legs, limit: number): EntityId[];
}

/** The semantic leg alone, and the keyword leg alone, in their own order. */
export const legOnly = (leg: 'semantic' | 'keyword'): Variant => ({
  name: leg === 'semantic' ? 'semantic' : 'fts',
  family: 'leg',
  rank: (legs, limit) => (leg === 'semantic' ? legs.semantic : legs.keyword).slice(0, limit).map((h) => h.id),
});

/** score = Σ 1 / (k + rank) over the legs that found d. */
export const rrf = (k: number, depth: Depth): Variant => ({
  name: `rrf k=${k} D=${depth}`,
  family: 'rrf',
  rank: (legs, limit) =>
    order(
      features(legs, depthOf(depth, limit)).candidates,
      (c) => (c.sRank ? 1 / (k + c.sRank) : 0) + (c.kRank ? 1 / (k + c.kRank) : 0),
      limit,
    ),
});

export type KeywordScale = 'mm' | 'abs';
/** How the keyword weight follows the query: not at all, its coverage, or its best hit's abs. */
export type Gate = 'none' | 'cov' | 'top';

/**
 * score = (1 − w_q) · cos(d) + w_q · kw(d) + β · both(d), w_q = w · gate(q), kw = mm or abs.
 * The shipped `scores` base is kw = mm, w = 0.30 / 0.85, β = 0, no gate, D = x3.
 */
export const linear = (kw: KeywordScale, w: number, beta: number, gate: Gate, depth: Depth): Variant => ({
  name: `linear kw=${kw} w=${+w.toFixed(3)} β=${beta} gate=${gate} D=${depth}`,
  family: `linear kw=${kw}${gate === 'none' ? '' : ` gate=${gate}`}${beta > 0 ? ' +both' : ''}`,
  rank: (legs, limit) => {
    const f = features(legs, depthOf(depth, limit));
    const wq = w * (gate === 'none' ? 1 : gate === 'cov' ? f.cov : f.top);
    return order(f.candidates, (c) => (1 - wq) * c.cos + wq * (kw === 'mm' ? c.mm : c.abs) + (c.sRank && c.kRank ? beta : 0), limit);
  },
});

/**
 * score = (1 − w_q) · z_sem(d) + w_q · z_kw(d) + β · both(d): each leg's raw score (cosine,
 * −bm25) as a z-score over its own hits (zScores), so a hit counts by how far it stands out of its
 * leg, not by its rank; w_q = w · gate(q).
 */
export const zscore = (w: number, gate: Gate, depth: Depth, beta = 0, lone: Lone = 'zero'): Variant => ({
  name: `z-score w=${w} gate=${gate} D=${depth}${beta > 0 ? ` β=${beta}` : ''}${lone === 'one' ? ' lone=1' : ''}`,
  family: `z-score${gate === 'none' ? '' : ` gate=${gate}`}${beta > 0 ? ' +both' : ''}${lone === 'one' ? ' lone=1' : ''}`,
  rank: (legs, limit) => {
    const f = features(legs, depthOf(depth, limit));
    const { sem, kw } = f.z[lone];
    const wq = w * (gate === 'none' ? 1 : gate === 'cov' ? f.cov : f.top);
    const at = new Map(f.candidates.map((c, i) => [c.id, (1 - wq) * (sem[i] ?? 0) + wq * (kw[i] ?? 0) + (c.sRank && c.kRank ? beta : 0)]));
    return order(f.candidates, (c) => at.get(c.id) ?? 0, limit);
  },
});

/** CombSUM: min-max cosine + min-max −bm25 over each leg's hits; CombMNZ multiplies by the legs that found d. */
export const comb = (mnz: boolean, depth: Depth): Variant => ({
  name: `${mnz ? 'CombMNZ' : 'CombSUM'} D=${depth}`,
  family: mnz ? 'CombMNZ' : 'CombSUM',
  rank: (legs, limit) => {
    const f = features(legs, depthOf(depth, limit));
    const sem = f.candidates.filter((c) => c.rawCos !== undefined);
    const scaled = minMax(sem.map((s) => s.rawCos ?? 0));
    const semMm = new Map(sem.map((c, i) => [c.id, scaled[i] ?? 0]));
    return order(
      f.candidates,
      (c) => {
        const sum = (semMm.get(c.id) ?? 0) + (c.kRank ? c.mm : 0);
        return mnz ? sum * ((c.sRank ? 1 : 0) + (c.kRank ? 1 : 0)) : sum;
      },
      limit,
    );
  },
});

/** The shipped modes, rebuilt from the legs: they must score exactly as the real pipeline does. */
export const REPRODUCTIONS: readonly { readonly mode: string; readonly variant: Variant }[] = [
  { mode: 'fts', variant: legOnly('keyword') },
  { mode: 'semantic', variant: legOnly('semantic') },
  { mode: 'hybrid-rrf', variant: rrf(60, 'x3') },
  { mode: 'hybrid-limbic', variant: linear('mm', 0.3 / 0.85, 0, 'none', 'x3') },
  { mode: 'hybrid-weighted', variant: linear('mm', 0.3 / 0.85, 0, 'none', '150') },
];

/** Every variant the study tries. */
export function studyGrid(): Variant[] {
  const grid: Variant[] = [];
  const depths: Depth[] = ['x3', '150'];
  for (const depth of depths) {
    for (const k of [10, 20, 60]) grid.push(rrf(k, depth));
    grid.push(comb(false, depth), comb(true, depth));
    for (const kw of ['mm', 'abs'] as const) {
      for (const gate of ['none', 'cov', 'top'] as const) {
        for (const w of [0.2, 0.3, 0.4, 0.5, 0.6, 0.7]) {
          for (const beta of [0, 0.05, 0.1, 0.2]) grid.push(linear(kw, w, beta, gate, depth));
        }
      }
    }
  }
  const gates: Gate[] = ['none', 'cov', 'top'];
  for (const depth of ['x3', 'x5', '60', '100', '150'] as const) {
    for (const gate of gates) for (const w of [0.2, 0.4, 0.5, 0.6, 0.7, 0.8]) grid.push(zscore(w, gate, depth));
  }
  for (const depth of ['x3', '150'] as const) {
    for (const gate of gates) {
      for (const w of [0.5, 0.6, 0.7]) {
        for (const beta of [0, 0.25, 0.5])
          for (const lone of ['zero', 'one'] as const) if (beta > 0 || lone === 'one') grid.push(zscore(w, gate, depth, beta, lone));
      }
    }
  }
  return grid;
}
