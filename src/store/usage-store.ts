/**
 * The usage capability: what the limbic re-ranker reads of candidates, and the uses it learns from.
 * The tables keep the spec's names (entity_access, co_occurrences), but since issue 24 an access is
 * a use: an entity opened, extended or related by the agent; a search listing it is not one.
 */
import type { RefindPair } from '../core/rank/limbic.js';
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
  /**
   * Stores re-finding pairs (docs/ranking.md, "Re-finding"): the vector of a query after which the
   * agent used the entity, never its text. Pairs of an entity that no longer exists are dropped;
   * each entity keeps its REFIND_PAIRS_PER_ENTITY newest, the store its REFIND_PAIRS_MAX newest.
   */
  recordRefinding(pairs: readonly RefindingPair[]): Promise<void>;
  /** The re-finding pairs of the candidates made with this model, newest first. */
  refinding(ids: readonly EntityId[], model: string): Promise<Map<EntityId, RefindPair[]>>;
  /**
   * Whether the store holds any re-finding pair, cheaply: a search skips reading its candidates'
   * pairs while none is (a memory nobody used after a search has none). Once it answers true, a
   * store may go on answering true without asking (pairs rarely all go; one that went costs only
   * the read a search made before), so a pair another process records is never missed.
   */
  holdsRefinding(): Promise<boolean>;
}

/** One re-finding pair to store. */
export interface RefindingPair {
  readonly entityId: EntityId;
  /** The embedding model's id: a vector is compared only with queries the same model embedded. */
  readonly model: string;
  readonly vector: Float32Array;
  readonly at: number;
}

/** A vector as the bytes the stores keep (float32, the machine's order: little-endian everywhere Node runs). */
export function vectorBytes(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

/** The vector a stored blob holds (copied: the driver's buffer may be reused). */
export function bytesVector(bytes: Uint8Array): Float32Array {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new Float32Array(copy.buffer, 0, Math.floor(copy.byteLength / 4));
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
