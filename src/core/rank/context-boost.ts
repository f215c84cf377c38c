/**
 * Context the memory already has (issue 18, part 3), as one re-scoring of the fused candidates
 * before the limbic re-rank:
 * - time: when the query names a date ("in June", "on 8 May, 2023"), a candidate whose stored date
 *   (a date in its metadata observations) answers it gains `timeWeight` (time-expression.ts);
 * - graph: a candidate gains `graphWeight` × the strongest positive score among its related
 *   candidates: a turn next to the one that matches, a project of the person who matches. The
 *   strongest one, not a sum, so a hub with many weak neighbours gains no more than anyone.
 * Scores are in the fused strength's own units (z-scores: fuse-zscore.ts, before its logistic),
 * so a weight of 0.5 is half a standard deviation of the legs' scores. Like the spec's graph
 * signal (spec/engrava-hybrid-search.md) it re-ranks the candidates and adds none.
 */
import { dateMatch, type CalendarDate } from './time-expression.js';
import type { EntityId } from '../types.js';

export interface ContextWeights {
  /** Added for a stored date inside the query's time expression. 0 turns the time match off. */
  readonly timeWeight: number;
  /** Share of a stored date just after the expression (the next month / 7 days) counted as a match. */
  readonly lateShare: number;
  /** Share of the strongest related candidate's positive score. 0 turns the graph off. */
  readonly graphWeight: number;
  /**
   * Lift a related candidate at most level with the one that lifts it, never past it: the match
   * keeps its place and its neighbours come up behind it. @default false
   */
  readonly graphBelowSource?: boolean;
}

/**
 * search_semantic's weights, from the LoCoMo context study (bench/results/quality-2026-11-23-context.md):
 * on half A, time 1 and graph 0.5 gain recall@5 0.551 → 0.605 with hit@1 and MRR level or better;
 * half B 0.581 → 0.638. The study's own rule picked `graphBelowSource` at 0.75, which lost hit@1
 * on half B; that report says why this one ships instead.
 */
export const DEFAULT_CONTEXT_WEIGHTS: ContextWeights = Object.freeze({ timeWeight: 1, lateShare: 0.5, graphWeight: 0.5 });

export interface ContextInputs {
  /** Each candidate's fused strength, higher is better. */
  readonly strength: ReadonlyMap<EntityId, number>;
  /** Relations among or touching the candidates; direction does not matter. */
  readonly edges: readonly { readonly from: EntityId; readonly to: EntityId }[];
  /** Dates each candidate's metadata observations hold. */
  readonly dates: ReadonlyMap<EntityId, readonly CalendarDate[]>;
  /** The query's time expressions; empty when it names none. */
  readonly asked: readonly CalendarDate[];
}

export interface ContextBoost {
  readonly time: number;
  readonly graph: number;
}

/**
 * Each candidate's boost (added to its strength): time and graph parts, both ≥ 0. The graph part
 * reads the strengths before any boost, so a boost never propagates.
 * @example contextBoosts({ strength: new Map([[a, 1], [b, -1]]), edges: [{ from: a, to: b }], dates: new Map(), asked: [] },
 *   { timeWeight: 0.5, lateShare: 0.5, graphWeight: 0.25 }) // b: { time: 0, graph: 0.25 }, a: { time: 0, graph: 0 }
 */
export function contextBoosts(inputs: ContextInputs, weights: ContextWeights): Map<EntityId, ContextBoost> {
  for (const name of ['timeWeight', 'lateShare', 'graphWeight'] as const) {
    const value = weights[name];
    if (!Number.isFinite(value) || value < 0) throw new RangeError(`Context weight ${name} is ${value}; it must be finite and >= 0.`);
  }
  const below = weights.graphBelowSource === true;
  const { strength } = inputs;
  const best = new Map<EntityId, number>();
  if (weights.graphWeight > 0) {
    const reach = (from: EntityId, to: EntityId): void => {
      const own = strength.get(from);
      if (from === to || own === undefined) return;
      const s = strength.get(to);
      if (s === undefined || !(s > 0)) return;
      const lift = below ? Math.min(weights.graphWeight * s, Math.max(0, s - own)) : weights.graphWeight * s;
      best.set(from, Math.max(best.get(from) ?? 0, lift));
    };
    for (const e of inputs.edges) {
      reach(e.from, e.to);
      reach(e.to, e.from);
    }
  }
  const boosts = new Map<EntityId, ContextBoost>();
  for (const id of strength.keys()) {
    let time = 0;
    if (weights.timeWeight > 0 && inputs.asked.length > 0) {
      let match = 0;
      for (const stored of inputs.dates.get(id) ?? [])
        for (const q of inputs.asked) match = Math.max(match, dateMatch(q, stored, weights.lateShare));
      time = weights.timeWeight * match;
    }
    boosts.set(id, { time, graph: best.get(id) ?? 0 });
  }
  return boosts;
}
