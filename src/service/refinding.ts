/**
 * Re-finding pairs (docs/ranking.md, "Re-finding"): which recent search a use answers. A search that
 * ran the semantic leg is kept in a small ring, in process (its query's vector, its model, the ids
 * its page listed); a use within FEEDBACK_WINDOW_MS of the newest search that listed the entity
 * pairs that search's query vector with the entity, once per (search, entity). The ring holds
 * vectors, never query text, and nothing of it is written until a use pairs it.
 */
import type { EntityId } from '../core/types.js';
import type { RefindingPair } from '../store/usage-store.js';
import { FEEDBACK_WINDOW_MS } from './search/shadow-log.js';

/** Searches kept: a use answers one of the last few searches, within the hour. */
export const RECENT_SEARCHES = 32;

interface RecentSearch {
  readonly at: number;
  readonly model: string;
  readonly vector: Float32Array;
  readonly listed: ReadonlySet<EntityId>;
  /** Entities a use already paired with this search. */
  readonly paired: Set<EntityId>;
}

export class RecentSearches {
  private readonly ring: RecentSearch[] = [];

  constructor(
    private readonly size = RECENT_SEARCHES,
    private readonly windowMs = FEEDBACK_WINDOW_MS,
  ) {}

  /** A search's page, when its semantic leg ran (query undefined: nothing to pair). */
  note(at: number, query: { readonly vector: Float32Array; readonly model: string } | undefined, listed: readonly EntityId[]): void {
    if (query === undefined || listed.length === 0 || this.size <= 0) return;
    this.ring.push({ at, model: query.model, vector: query.vector, listed: new Set(listed), paired: new Set() });
    if (this.ring.length > this.size) this.ring.shift();
  }

  /**
   * The pairs a use of `used` at `now` makes: each entity with the newest search within the window
   * that listed it, unless a use paired them already. An entity no recent search listed makes none
   * (the agent found it some other way: by name, from the graph).
   */
  pairsFor(used: readonly EntityId[], now: number): RefindingPair[] {
    const pairs: RefindingPair[] = [];
    for (const id of new Set(used)) {
      for (let i = this.ring.length - 1; i >= 0; i--) {
        const s = this.ring[i] as RecentSearch;
        if (s.at > now || now - s.at > this.windowMs || !s.listed.has(id)) continue;
        if (!s.paired.has(id)) {
          s.paired.add(id);
          pairs.push({ entityId: id, model: s.model, vector: s.vector, at: now });
        }
        break;
      }
    }
    return pairs;
  }
}
