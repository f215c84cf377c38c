/** The usage capability: what the limbic re-ranker reads of candidates, and the accesses it learns from. */
import type { CandidateSignals } from '../core/signals.js';
import type { EntityId } from '../core/types.js';

export interface UsageStore {
  /** Facts, access counts, degrees and co-occurrences of a candidate set. */
  signals(ids: readonly EntityId[]): Promise<CandidateSignals>;
  /** Counts an access for each id (once per call) and a co-occurrence for each pair. */
  recordAccess(ids: readonly EntityId[], now: number): Promise<void>;
}
