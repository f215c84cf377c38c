/**
 * An entity named what the user typed comes first (issue 33): `hybrid_search "Project Atlas"` put
 * the person who "leads Project Atlas" above the entity named Project Atlas, because BM25 prefers
 * the shorter or more repetitive text and the model reads both as about Project Atlas. A name is
 * the one thing a user can give exactly, so an exact or near-exact match of the whole query wins
 * over whatever the scores say; among several matches, and among the rest, the scores keep their
 * order. Near-exact: the same words once case, accents, punctuation, apostrophes' fragments and,
 * when both keep a word, stopwords are set aside ("project atlas", "Project-Atlas", "the Beatles"
 * for "Beatles"). A query that only contains a name ("who leads Project Atlas") is left to the scores.
 */
import { queryWords } from '../text/fts-query.js';
import { foldAccents } from '../text/fold.js';
import { contentWords } from '../text/stopwords.js';
import type { EntityId } from '../types.js';

/** Names are short: a query of more words than this is never compared with names. */
export const MAX_NAME_WORDS = 12;

/** A text's words as a name is compared: folded, in order; and the same without stopwords. */
export interface NameKey {
  readonly words: string;
  readonly content: string;
}

/**
 * The key a query or a name is compared by; undefined for text with no word (or too many).
 * @example nameKey('Project-Atlas') // { words: 'project atlas', content: 'project atlas' }
 */
export function nameKey(text: string): NameKey | undefined {
  const words = queryWords(text).map(foldAccents);
  if (words.length === 0 || words.length > MAX_NAME_WORDS) return undefined;
  return { words: words.join(' '), content: contentWords(words).join(' ') };
}

/**
 * Whether a name matches a query exactly or nearly (see above).
 * @example isNameMatch(nameKey('project atlas'), 'Project Atlas') // true
 * @example isNameMatch(nameKey('who leads Project Atlas'), 'Project Atlas') // false
 */
export function isNameMatch(query: NameKey | undefined, name: string): boolean {
  if (query === undefined) return false;
  const key = nameKey(name);
  if (key === undefined) return false;
  return key.words === query.words || (key.content !== '' && key.content === query.content);
}

/**
 * The ranked list with the name matches first; both parts keep their order (a stable partition).
 * @example pinNameMatches([{ id: 1 }, { id: 2 }], new Set([2])) // [{ id: 2 }, { id: 1 }]
 */
export function pinNameMatches<T extends { readonly id: EntityId }>(ranked: readonly T[], matches: ReadonlySet<EntityId>): T[] {
  if (matches.size === 0) return [...ranked];
  return [...ranked.filter((r) => matches.has(r.id)), ...ranked.filter((r) => !matches.has(r.id))];
}
