/**
 * The last stage of a search's answer: which observations each result on the page shows
 * (core/rank/shown-observations.ts). Those holding the query's keyword terms come first; where the
 * store keeps a vector per observation (an entity too long for one vector), those nearest the query
 * are fused in. The rest are counted, and open_nodes reads them.
 */
import { dot } from '../../core/maintenance/duplicates.js';
import { observationTerms, shownObservations, type ObservationBound, type ShownObservations } from '../../core/rank/shown-observations.js';
import type { EntityId } from '../../core/types.js';
import type { StoredEntity } from '../../store/graph-store.js';
import type { VectorIndex } from '../../store/vector-index.js';
import type { SearchOutcome } from './pipeline.js';

/**
 * Each page entity's shown observations, by id. `query` is the query's vector when the semantic leg
 * ran; an entity whose stored observation vectors do not line up with its observations (written
 * since, not embedded yet) is ordered by its keyword terms alone.
 */
export async function showObservations(
  page: readonly StoredEntity[],
  query: { readonly text: string; readonly syntax: 'plain' | 'expert'; readonly vector: Float32Array | undefined },
  bound: ObservationBound,
  vectors: VectorIndex | undefined,
): Promise<Map<EntityId, ShownObservations>> {
  const shown = new Map<EntityId, ShownObservations>();
  const terms = observationTerms(query.text, query.syntax);
  // Vectors only for entities the bound cuts: one that shows every observation needs no order.
  const over = page.filter((e) => e.observations.length > bound.limit || textLength(e.observations) > (bound.maxChars ?? Infinity));
  const stored =
    query.vector === undefined || over.length === 0 || vectors?.observationVectors === undefined
      ? new Map<EntityId, readonly Float32Array[]>()
      : await vectors.observationVectors(over.map((e) => e.id));
  for (const entity of page) {
    const own = stored.get(entity.id);
    const distances =
      own === undefined || query.vector === undefined || own.length !== entity.observations.length
        ? undefined
        : own.map((v) => 1 - dot(query.vector as Float32Array, v));
    shown.set(entity.id, shownObservations(entity.observations, terms, bound, distances));
  }
  return shown;
}

function textLength(texts: readonly string[]): number {
  let n = 0;
  for (const t of texts) n += t.length;
  return n;
}

/** The sentence an answer carries when a result left observations out: how to read the rest. */
export function moreObservationsHint(bound: ObservationBound): string {
  const chars = bound.maxChars === undefined ? '' : ` (about ${bound.maxChars.toLocaleString('en-US')} characters)`;
  return (
    `Each result shows at most ${bound.limit} observations${chars}, those matching the query first; observations_omitted counts the rest. ` +
    'open_nodes with its name returns them all (observations_limit and observations_offset page a long one), or search again with observations_limit (1000 shows all).'
  );
}

/** A result's observations as the outcome shows them, and how many it left out (none: the field is absent). */
export function shownOf(
  outcome: Pick<SearchOutcome, 'shown'>,
  entity: { readonly id: EntityId; readonly observations: readonly string[] },
): { observations: readonly string[]; observations_omitted?: number } {
  const shown = outcome.shown?.get(entity.id);
  if (shown === undefined) return { observations: entity.observations };
  return { observations: shown.observations, ...(shown.omitted > 0 ? { observations_omitted: shown.omitted } : {}) };
}
