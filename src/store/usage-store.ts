/**
 * The usage capability: what the limbic re-ranker reads of candidates, and the uses it learns from.
 * The tables keep the spec's names (entity_access, co_occurrences), but since issue 24 an access is
 * a use: an entity opened, extended or related by the agent; a search listing it is not one.
 */
import type { CandidateSignals } from '../core/signals.js';
import type { EntityId } from '../core/types.js';

export interface UsageStore {
  /** Facts, access counts, degrees and co-occurrences of a candidate set. */
  signals(ids: readonly EntityId[]): Promise<CandidateSignals>;
  /**
   * Counts an access for each id (once per call) and a co-occurrence for each pair: every pair of
   * `ids` (`'all'`, the spec's open_nodes), or the pairs given (the two ends of a new relation).
   */
  recordAccess(ids: readonly EntityId[], now: number, pairs?: CoUse): Promise<void>;
}

/** Which pairs of a use count as used together. */
export type CoUse = 'all' | readonly (readonly [EntityId, EntityId])[];

/** The pairs a use records, each in canonical order (a < b), once, self-pairs left out. */
export function coUsePairs(unique: readonly EntityId[], pairs: CoUse): [EntityId, EntityId][] {
  if (pairs === 'all') {
    const out: [EntityId, EntityId][] = [];
    for (let i = 0; i < unique.length; i++)
      for (let j = i + 1; j < unique.length; j++) out.push([unique[i] as EntityId, unique[j] as EntityId]);
    return out;
  }
  const seen = new Map<string, [EntityId, EntityId]>();
  for (const [x, y] of pairs) {
    if (x === y) continue;
    const pair: [EntityId, EntityId] = x < y ? [x, y] : [y, x];
    seen.set(`${pair[0]}:${pair[1]}`, pair);
  }
  return [...seen.values()].sort((p, q) => p[0] - q[0] || p[1] - q[1]);
}
