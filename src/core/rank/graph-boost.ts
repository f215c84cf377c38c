/**
 * The graph signal: docs/ranking.md "Graph boost" (1-hop weighted neighbour
 * boost). Limbic's relations carry no weight, so an edge weighs 1.0 unless the caller says otherwise.
 */
import type { EntityId } from '../types.js';

/**
 * Decay factor for a 1-hop neighbour (spec "Configuration": graph_edge_decay).
 * @example graphBoost(ids, edges, base, { decay: GRAPH_EDGE_DECAY }) // same as leaving decay out
 */
export const GRAPH_EDGE_DECAY = 0.5;

/**
 * Safety cap on the neighbours read per candidate (spec "Configuration": max_neighbors_per_candidate).
 * @example graphBoost(ids, edges, base, { maxNeighbors: MAX_NEIGHBORS_PER_CANDIDATE }) // the default
 */
export const MAX_NEIGHBORS_PER_CANDIDATE = 5;

/**
 * A relation between two entities; direction does not matter to the boost.
 * @example const edge: GraphEdge = { from: asEntityId(1), to: asEntityId(2) }; // weight 1
 */
export interface GraphEdge {
  readonly from: EntityId;
  readonly to: EntityId;
  /** Finite and >= 0. @default 1 */
  readonly weight?: number;
}

/**
 * Per-query overrides of the spec's configuration.
 * @example graphBoost(ids, edges, base, { decay: 0.3 })
 */
export interface GraphBoostOptions {
  /** Finite and >= 0; 0 turns every boost into 0. @default GRAPH_EDGE_DECAY */
  readonly decay?: number;
  /** A non-negative integer, or Infinity for no cap; 0 turns every boost into 0. @default MAX_NEIGHBORS_PER_CANDIDATE */
  readonly maxNeighbors?: number;
}

/**
 * boost[C] = Σ edge.weight × max(fts[n], vector[n]) × decay over C's first `maxNeighbors` neighbours,
 * ordered by edge weight descending then neighbour id ascending; one entry per candidate, never more.
 *
 * - Edges count in both directions; a neighbour reached by several edges (either direction) counts
 *   once, with the strongest; self-loops are ignored.
 * - Only the semantic scores (fts, vector) propagate, so recency, priority and graph cannot cascade
 *   through hubs (spec "Key properties"). A neighbour that is not a candidate has a base of 0, even if
 *   `base` holds a value for it, and, as in the spec's `get_edges(C)` then cap, still takes a slot.
 * - Negative or non-finite weights, decay or base values, or a bad maxNeighbors, throw a RangeError.
 * @example graphBoost([a, b], [{ from: a, to: b }], new Map([[a, { fts: 0.8 }], [b, { vector: 0.4 }]]))
 *   // Map { a => 1 × 0.4 × 0.5 = 0.2, b => 1 × 0.8 × 0.5 = 0.4 }
 */
export function graphBoost(
  candidateIds: readonly EntityId[],
  edges: readonly GraphEdge[],
  base: ReadonlyMap<EntityId, { readonly fts?: number; readonly vector?: number }>,
  options?: GraphBoostOptions,
): Map<EntityId, number> {
  const decay = options?.decay ?? GRAPH_EDGE_DECAY;
  const maxNeighbors = options?.maxNeighbors ?? MAX_NEIGHBORS_PER_CANDIDATE;
  if (!Number.isFinite(decay) || decay < 0) {
    throw new RangeError(`Graph edge decay is ${decay}; it must be finite and >= 0.`);
  }
  if (!(Number.isInteger(maxNeighbors) || maxNeighbors === Infinity) || maxNeighbors < 0) {
    throw new RangeError(`maxNeighbors is ${maxNeighbors}; it must be a non-negative integer or Infinity.`);
  }

  const candidates = new Set(candidateIds);
  // For each candidate, its neighbours and the strongest edge weight reaching each of them.
  const neighbours = new Map<EntityId, Map<EntityId, number>>();
  for (const id of candidates) neighbours.set(id, new Map());
  const link = (from: EntityId, to: EntityId, weight: number): void => {
    const adjacent = neighbours.get(from);
    if (adjacent === undefined) return; // not a candidate: the graph signal never adds one
    adjacent.set(to, Math.max(weight, adjacent.get(to) ?? -Infinity));
  };
  for (const edge of edges) {
    const weight = edge.weight ?? 1;
    if (!Number.isFinite(weight) || weight < 0) {
      throw new RangeError(`Edge ${edge.from} -> ${edge.to} has weight ${weight}; edge weights must be finite and >= 0.`);
    }
    if (edge.from === edge.to) continue;
    link(edge.from, edge.to, weight);
    link(edge.to, edge.from, weight);
  }

  const semanticBase = (id: EntityId): number => {
    if (!candidates.has(id)) return 0;
    const scores = base.get(id);
    const value = Math.max(scores?.fts ?? 0, scores?.vector ?? 0);
    if (!Number.isFinite(value) || value < 0) {
      throw new RangeError(`Entity ${id} has a semantic score of ${value}; fts and vector must be finite numbers in [0, 1].`);
    }
    return value;
  };

  const boosts = new Map<EntityId, number>();
  for (const [id, adjacent] of neighbours) {
    // spec: "neighbours are sorted by edge.weight DESC before the max_neighbors cap"; id breaks ties.
    const chosen = [...adjacent.entries()].sort(([idA, wA], [idB, wB]) => wB - wA || idA - idB).slice(0, maxNeighbors);
    let boost = 0;
    for (const [neighbour, weight] of chosen) boost += weight * semanticBase(neighbour) * decay;
    boosts.set(id, boost);
  }
  return boosts;
}
