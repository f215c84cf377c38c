/**
 * The offline tuner (docs/ranking.md, "Tuning"): NDCG@K and Lift@K of logged searches
 * against their implicit relevance, and a grid search over GAMMA, BETA_SAL and RRF k. Unlike the
 * seed system's auto_tuner, the replay is the live formula whole
 * (routing blend, status and metadata multipliers, FTS-only bases), relevance is actually recorded,
 * ties keep the values in force instead of moving to the grid's first cell, and the result is
 * stored where every process's next search reads it rather than patched into a source file.
 */
import { ndcgAtK, liftAtK } from './metrics.js';
import { baselineOrder, replay, type RankParameters, type ShadowEvent } from './shadow.js';

/** The spec's minimum: fewer events than this say too little to move the parameters. */
export const MIN_EVENTS = 50;
/** The seed system's ranges, plus k = 10, which led 60 on LoCoMo offline (docs/ranking.md, "Tuning metrics"). */
export const DEFAULT_GRID = Object.freeze({
  gamma: [0.001, 0.005, 0.01, 0.05, 0.1],
  betaSal: [0.1, 0.25, 0.5, 0.75, 1.0],
  rrfK: [10, 20, 30, 60, 100],
});
/** A cell must beat the values in force by more than this to replace them (float noise is not a gain). */
const MIN_GAIN = 1e-9;

export interface Metrics {
  readonly 'ndcg@1': number;
  readonly 'ndcg@5': number;
  readonly 'lift@5': number;
  /** Events that were scored: those with at least one relevant candidate. */
  readonly events: number;
}

export interface Grid {
  readonly gamma: readonly number[];
  readonly betaSal: readonly number[];
  readonly rrfK: readonly number[];
}

export interface GridCell extends RankParameters {
  readonly 'ndcg@5': number;
}

export interface TuneReport {
  /** skipped: too few events; kept: nothing beats the values in force; tuned: better values found. */
  readonly status: 'skipped' | 'kept' | 'tuned';
  readonly reason?: string;
  /** Logged searches, those with feedback, and those RRF k changes (hybrid_search with RRF fusion, k not pinned). */
  readonly events: { readonly logged: number; readonly withFeedback: number; readonly rrfTunable: number };
  readonly current: RankParameters & { readonly metrics: Metrics; readonly baseline: Metrics };
  readonly optimal?: GridCell;
  /** NDCG@5 of the optimal values minus that of the values in force. */
  readonly gain?: number;
  /** The best cells, best first. */
  readonly top?: readonly GridCell[];
}

const round4 = (x: number): number => Math.round(x * 1e4) / 1e4;
const hasFeedback = (e: ShadowEvent): boolean => e.candidates.some((c) => c.relevance > 0);

/** Mean metrics of an ordering over the events with feedback. */
function scoreOrders(events: readonly ShadowEvent[], order: (e: ShadowEvent) => readonly { relevance: number }[]): Metrics {
  let n1 = 0;
  let n5 = 0;
  let lift = 0;
  let count = 0;
  for (const e of events) {
    if (!hasFeedback(e)) continue;
    const rel = order(e).map((c) => c.relevance);
    n1 += ndcgAtK(rel, 1);
    n5 += ndcgAtK(rel, 5);
    lift += liftAtK(rel, 5);
    count++;
  }
  const mean = (x: number): number => (count === 0 ? 0 : round4(x / count));
  return { 'ndcg@1': mean(n1), 'ndcg@5': mean(n5), 'lift@5': mean(lift), events: count };
}

/** NDCG@1, NDCG@5 and Lift@5 of the events replayed under `p`. */
export function evaluate(events: readonly ShadowEvent[], p: RankParameters): Metrics {
  return scoreOrders(events, (e) => replay(e, p));
}

/** The same metrics for the base relevance alone: what shadow mode compares the limbic ranking with. */
export function evaluateBaseline(events: readonly ShadowEvent[]): Metrics {
  return scoreOrders(events, baselineOrder);
}

/** Mean NDCG@5 unrounded, for comparing cells. */
function meanNdcg5(events: readonly ShadowEvent[], p: RankParameters): number {
  let sum = 0;
  let count = 0;
  for (const e of events) {
    sum += ndcgAtK(
      replay(e, p).map((c) => c.relevance),
      5,
    );
    count++;
  }
  return count === 0 ? 0 : sum / count;
}

/**
 * Every cell of the grid (the values in force always among them), best NDCG@5 first. Ties keep the
 * values in force first, then the grid's order, so no evidence means no move.
 */
export function gridSearch(events: readonly ShadowEvent[], grid: Grid, current: RankParameters): GridCell[] {
  const scored = events.filter(hasFeedback);
  // k changes nothing in events that did not fuse by RRF; trying several k over them is wasted work.
  const kMatters = scored.some((e) => e.fusion === 'rrf' && !e.rrfKPinned);
  const ks = kMatters ? withValue(grid.rrfK, current.rrfK) : [current.rrfK];
  const cells: GridCell[] = [{ ...current, 'ndcg@5': meanNdcg5(scored, current) }];
  for (const gamma of withValue(grid.gamma, current.gamma)) {
    for (const betaSal of withValue(grid.betaSal, current.betaSal)) {
      for (const rrfK of ks) {
        if (gamma === current.gamma && betaSal === current.betaSal && rrfK === current.rrfK) continue;
        cells.push({ gamma, betaSal, rrfK, 'ndcg@5': meanNdcg5(scored, { gamma, betaSal, rrfK }) });
      }
    }
  }
  const best = (a: GridCell, b: GridCell): number =>
    b['ndcg@5'] - a['ndcg@5'] > MIN_GAIN ? 1 : a['ndcg@5'] - b['ndcg@5'] > MIN_GAIN ? -1 : 0;
  return cells.sort(best); // Array.prototype.sort is stable: equal cells keep the current-first order.
}

function withValue(values: readonly number[], v: number): number[] {
  return values.includes(v) ? [...values] : [...values, v];
}

/** The whole tuning decision: the minimum-events rule, the grid, the gain. Storing is the caller's. */
export function tune(
  events: readonly ShadowEvent[],
  current: RankParameters,
  options: { grid?: Grid; minEvents?: number } = {},
): TuneReport {
  const grid = options.grid ?? DEFAULT_GRID;
  const minEvents = options.minEvents ?? MIN_EVENTS;
  const withFeedback = events.filter(hasFeedback);
  const counts = {
    logged: events.length,
    withFeedback: withFeedback.length,
    rrfTunable: withFeedback.filter((e) => e.fusion === 'rrf' && !e.rrfKPinned).length,
  };
  const currentReport = { ...current, metrics: evaluate(withFeedback, current), baseline: evaluateBaseline(withFeedback) };
  if (withFeedback.length < minEvents) {
    return {
      status: 'skipped',
      reason:
        `Only ${withFeedback.length} events, minimum ${minEvents} required. An event is a search_semantic or hybrid_search ` +
        'answer one of whose results was later opened with open_nodes; keep using Limbic and run "limbic tune" again.',
      events: counts,
      current: currentReport,
    };
  }
  const cells = gridSearch(withFeedback, grid, current);
  const first = cells[0];
  const optimal = first === undefined ? undefined : { ...first, 'ndcg@5': round4(first['ndcg@5']) };
  const currentCell = cells.find((c) => c.gamma === current.gamma && c.betaSal === current.betaSal && c.rrfK === current.rrfK);
  const gain = first === undefined || currentCell === undefined ? 0 : first['ndcg@5'] - currentCell['ndcg@5'];
  const moved =
    optimal !== undefined && (optimal.gamma !== current.gamma || optimal.betaSal !== current.betaSal || optimal.rrfK !== current.rrfK);
  return {
    status: moved ? 'tuned' : 'kept',
    ...(moved ? {} : { reason: 'No grid cell ranks the logged searches better than the values in force.' }),
    events: counts,
    current: currentReport,
    ...(optimal === undefined ? {} : { optimal }),
    gain: round4(gain),
    top: cells.slice(0, 5).map((c) => ({ ...c, 'ndcg@5': round4(c['ndcg@5']) })),
  };
}

/**
 * The values to store: `blend` 1 stores the optimal values; below 1 moves that share of the way
 * (the seed system's smooth apply, new = current·(1−blend) + target·blend). k stays a whole number.
 */
export function blendParameters(current: RankParameters, target: RankParameters, blend: number): RankParameters {
  const mix = (a: number, b: number): number => a * (1 - blend) + b * blend;
  return {
    gamma: Math.round(mix(current.gamma, target.gamma) * 1e6) / 1e6,
    betaSal: Math.round(mix(current.betaSal, target.betaSal) * 1e6) / 1e6,
    rrfK: Math.max(1, Math.round(mix(current.rrfK, target.rrfK))),
  };
}
