/**
 * Re-finding pairs (docs/ranking.md, "Re-finding"): which recent search a use answers. A search that
 * ran the semantic leg is kept in a small ring, in process (its query's vector, its model, the ids
 * its page listed); a use within FEEDBACK_WINDOW_MS of the newest search that listed the entity
 * pairs that search's query vector with the entity, once per (search, entity). The ring holds
 * vectors, never query text, and nothing of it is written until a use pairs it.
 *
 * Under `serve --http --workers N` each worker has its own ring of a memory, and a search answered
 * by one worker may be followed by a use answered by another: each ring tells the others (through
 * the primary, never the store) of every search it keeps and of every pairing it makes, so a use
 * pairs with a search wherever either was answered, once, as in one process (two uses of one entity
 * on two workers within the milliseconds the news takes both pair: a duplicate pair, no lost one).
 */
import { randomUUID } from 'node:crypto';
import type { EntityId } from '../core/types.js';
import type { RefindingPair } from '../store/usage-store.js';
import { FEEDBACK_WINDOW_MS } from './search/shadow-log.js';

/** Searches kept: a use answers one of the last few searches, within the hour. */
export const RECENT_SEARCHES = 32;

/** A search kept for re-finding, as the other processes of a server hear of it. */
export interface SharedSearch {
  /** Unique on the server: names the search in a pairing. */
  readonly key: string;
  readonly at: number;
  readonly model: string;
  readonly vector: Float32Array;
  readonly listed: readonly EntityId[];
}

/** What one ring tells the others: a search it keeps, or the entities a use paired with one. */
export type RingNews =
  | { readonly kind: 'search'; readonly search: SharedSearch }
  | { readonly kind: 'paired'; readonly key: string; readonly ids: readonly EntityId[] };

interface RecentSearch {
  readonly key: string;
  readonly at: number;
  readonly model: string;
  readonly vector: Float32Array;
  readonly listed: ReadonlySet<EntityId>;
  /** Entities a use already paired with this search (here or, as told, in another process). */
  readonly paired: Set<EntityId>;
}

export class RecentSearches {
  private readonly ring: RecentSearch[] = [];
  /** Keys of this ring's searches: this process's prefix and a count. */
  private readonly prefix = randomUUID();
  private count = 0;

  /** `tell`: where this ring's news goes to the other processes of the server; undefined, alone. */
  constructor(
    private readonly size = RECENT_SEARCHES,
    private readonly windowMs = FEEDBACK_WINDOW_MS,
    private readonly tell?: (news: RingNews) => void,
  ) {}

  /** A search's page, when its semantic leg ran (query undefined: nothing to pair). */
  note(at: number, query: { readonly vector: Float32Array; readonly model: string } | undefined, listed: readonly EntityId[]): void {
    if (query === undefined || listed.length === 0 || this.size <= 0) return;
    const search = { key: `${this.prefix}:${++this.count}`, at, model: query.model, vector: query.vector, listed };
    this.keep(search);
    this.tell?.({ kind: 'search', search });
  }

  /** What another process's ring of the same memory told: kept as if it happened here, told no further. */
  heard(news: RingNews): void {
    if (news.kind === 'search') {
      if (this.size > 0) this.keep(news.search);
      return;
    }
    const search = this.ring.find((s) => s.key === news.key);
    for (const id of news.ids) search?.paired.add(id);
  }

  /** Kept in time order (another process's search may arrive after a later one of this one's). */
  private keep(s: SharedSearch): void {
    const entry: RecentSearch = { key: s.key, at: s.at, model: s.model, vector: s.vector, listed: new Set(s.listed), paired: new Set() };
    let i = this.ring.length;
    while (i > 0 && (this.ring[i - 1] as RecentSearch).at > s.at) i--;
    this.ring.splice(i, 0, entry);
    if (this.ring.length > this.size) this.ring.shift();
  }

  /**
   * The pairs a use of `used` at `now` makes: each entity with the newest search within the window
   * that listed it, unless a use paired them already. An entity no recent search listed makes none
   * (the agent found it some other way: by name, from the graph).
   */
  pairsFor(used: readonly EntityId[], now: number): RefindingPair[] {
    const pairs: RefindingPair[] = [];
    const told = new Map<string, EntityId[]>();
    for (const id of new Set(used)) {
      for (let i = this.ring.length - 1; i >= 0; i--) {
        const s = this.ring[i] as RecentSearch;
        if (s.at > now || now - s.at > this.windowMs || !s.listed.has(id)) continue;
        if (!s.paired.has(id)) {
          s.paired.add(id);
          pairs.push({ entityId: id, model: s.model, vector: s.vector, at: now });
          told.set(s.key, [...(told.get(s.key) ?? []), id]);
        }
        break;
      }
    }
    for (const [key, ids] of told) this.tell?.({ kind: 'paired', key, ids });
    return pairs;
  }
}
