import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import type { WeightedInput } from '../../../src/core/rank/fuse-weighted.js';
import { GRAPH_EDGE_DECAY, MAX_NEIGHBORS_PER_CANDIDATE, graphBoost, type GraphEdge } from '../../../src/core/rank/graph-boost.js';
import { asEntityId, type EntityId } from '../../../src/core/types.js';

const id = asEntityId;
type Semantic = { readonly fts?: number; readonly vector?: number };

const edge = (from: number, to: number, weight?: number): GraphEdge =>
  weight === undefined ? { from: id(from), to: id(to) } : { from: id(from), to: id(to), weight };
const ids = (...ns: number[]): EntityId[] => ns.map(id);
const baseOf = (entries: readonly (readonly [number, Semantic])[]): Map<EntityId, Semantic> =>
  new Map(entries.map(([n, scores]) => [id(n), scores]));

function boostOf(boosts: ReadonlyMap<EntityId, number>, n: number): number {
  const boost = boosts.get(id(n));
  if (boost === undefined) throw new Error(`entity ${n} missing from the boosts`);
  return boost;
}

describe('graph-boost constants', () => {
  it("are engrava's defaults: decay 0.5, at most 5 neighbours", () => {
    expect(GRAPH_EDGE_DECAY).toBe(0.5);
    expect(MAX_NEIGHBORS_PER_CANDIDATE).toBe(5);
  });
});

describe('graphBoost', () => {
  // Candidates 1-4; 9 is a neighbour outside the candidate pool, with a score of its own that must
  // not leak in. neighbour_base: 1 → max(0.8, 0.6) = 0.8, 2 → 0.5, 3 → 0.2, 4 → 0.
  const candidates = ids(1, 2, 3, 4);
  const edges = [edge(1, 2), edge(2, 3, 0.5), edge(3, 1), edge(4, 9), edge(9, 1)];
  const base = baseOf([
    [1, { fts: 0.8, vector: 0.6 }],
    [2, { vector: 0.5 }],
    [3, { fts: 0.2 }],
    [4, {}],
    [9, { vector: 1 }],
  ]);

  describe('the engrava algorithm on a small graph, by hand', () => {
    const boosts = graphBoost(candidates, edges, base);

    it('1: neighbours 2, 3 and 9 (not a candidate) → 1×0.5×0.5 + 1×0.2×0.5 + 1×0×0.5 = 0.35', () => {
      expect(boostOf(boosts, 1)).toBeCloseTo(0.35, 12);
    });

    it('2: neighbours 1 and 3 (edge 0.5) → 1×0.8×0.5 + 0.5×0.2×0.5 = 0.45', () => {
      expect(boostOf(boosts, 2)).toBeCloseTo(0.45, 12);
    });

    it('3: neighbours 1 and 2 (edge 0.5), reached against the edges’ direction too → 0.4 + 0.125 = 0.525', () => {
      expect(boostOf(boosts, 3)).toBeCloseTo(0.525, 12);
    });

    it('4: its only neighbour is not a candidate → 0', () => {
      expect(boostOf(boosts, 4)).toBe(0);
    });

    it('has exactly one entry per candidate: the non-candidate 9 never appears', () => {
      expect([...boosts.keys()]).toEqual(candidates);
      expect(boosts.has(id(9))).toBe(false);
    });
  });

  it('returns a 0 for every candidate without neighbours', () => {
    expect(graphBoost(ids(5, 6), edges, base)).toEqual(
      new Map([
        [id(5), 0],
        [id(6), 0],
      ]),
    );
  });

  it('returns an empty map for no candidates, whatever the edges', () => {
    expect(graphBoost([], edges, base).size).toBe(0);
  });

  it('keeps one entry for a candidate listed twice', () => {
    const boosts = graphBoost(ids(1, 2, 1), [edge(1, 2)], base);
    expect([...boosts.keys()]).toEqual(ids(1, 2));
    expect(boostOf(boosts, 1)).toBeCloseTo(0.25, 12);
  });

  describe('the neighbour cap', () => {
    // Candidate 1 linked to 2..8 with weight 1; neighbour n has base n / 10. Edges shuffled and in
    // both directions, so only the deterministic ordering decides who makes the cut.
    const hub = ids(1, 2, 3, 4, 5, 6, 7, 8);
    const spokes = [edge(7, 1), edge(1, 3), edge(8, 1), edge(1, 2), edge(6, 1), edge(1, 5), edge(4, 1)];
    const hubBase = baseOf([2, 3, 4, 5, 6, 7, 8].map((n) => [n, { vector: n / 10 }] as const));

    it('defaults to 5 neighbours, picking the lowest ids among equal weights: (0.2+0.3+0.4+0.5+0.6)×0.5 = 1.0', () => {
      expect(boostOf(graphBoost(hub, spokes, hubBase), 1)).toBeCloseTo(1.0, 12);
    });

    it('honours maxNeighbors: 3 → neighbours 2, 3, 4 → 0.45', () => {
      expect(boostOf(graphBoost(hub, spokes, hubBase, { maxNeighbors: 3 }), 1)).toBeCloseTo(0.45, 12);
    });

    it('does not depend on the order of the edges', () => {
      const reversed = graphBoost(hub, [...spokes].reverse(), hubBase);
      expect(reversed).toEqual(graphBoost(hub, spokes, hubBase));
    });

    it('takes the strongest edges first, then the lowest ids', () => {
      const weighted = [edge(1, 2, 0.5), edge(1, 5, 0.9), edge(4, 1, 1), edge(1, 3, 1)];
      // 2 slots: 3 and 4 (weight 1) beat 5 (0.9) and 2 (0.5) → (0.3 + 0.4) × 0.5.
      expect(boostOf(graphBoost(hub, weighted, hubBase, { maxNeighbors: 2 }), 1)).toBeCloseTo(0.35, 12);
      // 1 slot: 3 and 4 tie on weight; 3 has the lower id → 0.3 × 0.5.
      expect(boostOf(graphBoost(hub, weighted, hubBase, { maxNeighbors: 1 }), 1)).toBeCloseTo(0.15, 12);
      // 3 slots: then 5 at 0.9 → 0.35 + 0.9 × 0.5 × 0.5.
      expect(boostOf(graphBoost(hub, weighted, hubBase, { maxNeighbors: 3 }), 1)).toBeCloseTo(0.575, 12);
    });

    it('counts a neighbour outside the candidates toward the cap, as the spec’s get_edges-then-cap does', () => {
      // 1's neighbours: 2 (not a candidate) and 3 (base 0.3); the single slot goes to 2.
      expect(boostOf(graphBoost(ids(1, 3), [edge(1, 3), edge(1, 2)], hubBase, { maxNeighbors: 1 }), 1)).toBe(0);
    });

    it('maxNeighbors 0 is a real value: no neighbour, no boost', () => {
      const boosts = graphBoost(hub, spokes, hubBase, { maxNeighbors: 0 });
      expect([...boosts.values()].every((b) => b === 0)).toBe(true);
      expect(boosts.size).toBe(hub.length);
    });

    it('maxNeighbors Infinity lifts the cap: (0.2 + … + 0.8) × 0.5 = 1.75', () => {
      expect(boostOf(graphBoost(hub, spokes, hubBase, { maxNeighbors: Infinity }), 1)).toBeCloseTo(1.75, 12);
    });
  });

  describe('only the semantic scores propagate (spec: no hub cascade)', () => {
    it('ignores recency, priority and graph on a neighbour', () => {
      const inputs: WeightedInput[] = [
        { id: id(1), vector: 0.1 },
        { id: id(2), recency: 1, priority: 1, graph: 1 },
        { id: id(3), fts: 0.3, recency: 1, priority: 1, graph: 1 },
      ];
      const boosts = graphBoost(ids(1, 2, 3), [edge(1, 2)], new Map(inputs.map((c) => [c.id, c])));
      expect(boostOf(boosts, 1)).toBe(0);
      expect(boostOf(graphBoost(ids(1, 3), [edge(1, 3)], new Map(inputs.map((c) => [c.id, c]))), 1)).toBeCloseTo(0.15, 12);
    });

    it('takes the larger of fts and vector', () => {
      const boosts = graphBoost(
        ids(1, 2, 3),
        [edge(1, 2), edge(3, 1)],
        baseOf([
          [2, { fts: 0.9, vector: 0.1 }],
          [3, { fts: 0.1, vector: 0.7 }],
        ]),
      );
      expect(boostOf(boosts, 1)).toBeCloseTo((0.9 + 0.7) * 0.5, 12);
    });

    it('gives a candidate missing from base a neighbour_base of 0', () => {
      expect(boostOf(graphBoost(ids(1, 2), [edge(1, 2)], new Map()), 1)).toBe(0);
    });
  });

  describe('self-loops and duplicate edges', () => {
    it('ignores a self-loop, which also takes no slot under the cap', () => {
      const loops = [edge(1, 1, 5), edge(1, 2), edge(2, 2)];
      const boosts = graphBoost(ids(1, 2), loops, base, { maxNeighbors: 1 });
      expect(boostOf(boosts, 1)).toBeCloseTo(0.5 * 0.5, 12); // only neighbour 2
      expect(boostOf(boosts, 2)).toBeCloseTo(0.8 * 0.5, 12); // only neighbour 1
      expect(boostOf(graphBoost(ids(1), [edge(1, 1)], base), 1)).toBe(0);
    });

    it('counts a pair linked by several edges, in either direction, once with the strongest weight', () => {
      const duplicates = [edge(1, 2, 0.4), edge(2, 1, 0.8), edge(1, 2, 0.8), edge(1, 2)];
      expect(boostOf(graphBoost(ids(1, 2), duplicates, base), 1)).toBeCloseTo(1 * 0.5 * 0.5, 12);
      const weaker = [edge(1, 2, 0.4), edge(2, 1, 0.8)];
      expect(boostOf(graphBoost(ids(1, 2), weaker, base), 1)).toBeCloseTo(0.8 * 0.5 * 0.5, 12);
      expect(boostOf(graphBoost(ids(1, 2), [edge(1, 2), edge(2, 1)], base), 1)).toBeCloseTo(0.25, 12);
    });
  });

  describe('decay and edge weights', () => {
    it('takes a decay override: 0.3 scales the hand-computed boosts by 0.3 / 0.5', () => {
      const boosts = graphBoost(candidates, edges, base, { decay: 0.3 });
      expect(boostOf(boosts, 1)).toBeCloseTo(0.35 * 0.6, 12);
      expect(boostOf(boosts, 2)).toBeCloseTo(0.45 * 0.6, 12);
      expect(boostOf(boosts, 3)).toBeCloseTo(0.525 * 0.6, 12);
    });

    it('decay 0 is a real value, not the default: every boost is 0', () => {
      const boosts = graphBoost(candidates, edges, base, { decay: 0 });
      expect([...boosts.values()]).toEqual([0, 0, 0, 0]);
    });

    it('an edge of weight 0 contributes 0, not the default weight 1', () => {
      expect(boostOf(graphBoost(ids(1, 2), [edge(1, 2, 0)], base), 1)).toBe(0);
      expect(boostOf(graphBoost(ids(1, 2), [edge(1, 2, 0)], base), 2)).toBe(0);
    });

    it('an edge without a weight weighs 1', () => {
      expect(boostOf(graphBoost(ids(1, 2), [edge(1, 2)], base), 2)).toBeCloseTo(0.8 * 0.5, 12);
    });
  });

  describe('invalid input throws a RangeError', () => {
    it.each([-0.1, Number.NaN, Infinity])('decay %d', (decay) => {
      expect(() => graphBoost(candidates, edges, base, { decay })).toThrow(RangeError);
    });

    it.each([-1, 2.5, Number.NaN])('maxNeighbors %d', (maxNeighbors) => {
      expect(() => graphBoost(candidates, edges, base, { maxNeighbors })).toThrow(RangeError);
    });

    it.each([-1, Number.NaN, Infinity])('edge weight %d', (weight) => {
      expect(() => graphBoost(candidates, [edge(1, 2, weight)], base)).toThrow(/Edge 1 -> 2/);
    });

    it('a non-finite semantic score of a neighbour', () => {
      expect(() => graphBoost(ids(1, 2), [edge(1, 2)], baseOf([[2, { vector: Number.NaN }]]))).toThrow(/Entity 2/);
    });
  });

  it('property: one finite, non-negative, bounded entry per candidate, independent of edge order', () => {
    const node = fc.integer({ min: 1, max: 12 });
    const unit = fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined });
    fc.assert(
      fc.property(
        fc.uniqueArray(node, { maxLength: 10 }),
        fc.array(fc.record({ from: node, to: node, weight: unit }), { maxLength: 40 }),
        fc.array(fc.tuple(node, fc.record({ fts: unit, vector: unit })), { maxLength: 12 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 0, max: 6 }),
        (candidateNumbers, rawEdges, rawBase, decay, maxNeighbors) => {
          const candidateIds = candidateNumbers.map(id);
          const graph = rawEdges.map((e) => edge(e.from, e.to, e.weight));
          const semantic = baseOf(rawBase);
          const boosts = graphBoost(candidateIds, graph, semantic, { decay, maxNeighbors });
          expect([...boosts.keys()]).toEqual(candidateIds);
          for (const boost of boosts.values()) {
            expect(Number.isFinite(boost)).toBe(true);
            expect(boost).toBeGreaterThanOrEqual(0);
            // Each of at most maxNeighbors terms is weight (≤ 1) × base (≤ 1) × decay.
            expect(boost).toBeLessThanOrEqual(decay * maxNeighbors + 1e-12);
          }
          expect(graphBoost(candidateIds, [...graph].reverse(), semantic, { decay, maxNeighbors })).toEqual(boosts);
        },
      ),
    );
  });
});
