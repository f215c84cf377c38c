/**
 * The pieces of words an apostrophe leaves behind, which are never evidence in a plain query
 * (issue 33): the keyword index splits "grandmother's" into "grandmother" and "s", so a question
 * about a grandmother's birthday also searched for "s", which every "user's …" observation has, and
 * the grandmother fell from first to seventh in a 40-entity memory. English clitics ('s, 't, 'd,
 * 'll, 're, 've, 'm, n't) and the elided articles and pronouns of French, Italian and Catalan (l',
 * d', j', qu', dell' …) are dropped from plain text before it is split into words; the word they
 * were attached to stays. Expert syntax keeps every word (a phrase must match the index's positions).
 */

/** The apostrophes people type: ASCII, the typographic right and left quotes, the modifier letter, the backtick. */
const APOSTROPHE = "['\u2019\u2018\u02bc`]";

/**
 * n't after a word: "doesn't" keeps "does", "can't" and "won't" their verbs. The word is read from
 * its first letter only (the lookbehind): tried from every letter of a long word, it cost the
 * word's length squared (issue 35).
 */
export const NEGATION = new RegExp(`(?<![\\p{L}\\p{M}])(\\p{L}+)n${APOSTROPHE}t(?![\\p{L}\\p{M}])`, 'giu');
const NEGATED: Readonly<Record<string, string>> = { ca: 'can', wo: 'will', sha: 'shall', ai: 'is' };

/**
 * 's, 't, 'd, 'll, 're, 've, 'm after a letter or digit ("the 90's"), ending the word. A combining
 * mark after it belongs to the word ("'s" + U+0301 is "'ś"): dropping the "s" would put the accent
 * on the word before, making a word nobody typed.
 */
export const SUFFIX = new RegExp(`(?<=[\\p{L}\\p{M}\\p{N}])${APOSTROPHE}(?:s|t|d|ll|re|ve|m)(?![\\p{L}\\p{M}\\p{N}])`, 'giu');

/** One letter, or qu / dell / dall / nell / sull / all / un (Italian), elided before a word. */
export const ELISION = new RegExp(`(?<![\\p{L}\\p{M}\\p{N}])(?:\\p{L}|qu|dell|dall|nell|sull|all|un)${APOSTROPHE}(?=\\p{L})`, 'giu');

/**
 * Plain text without the fragments apostrophes make, the words they belonged to kept.
 * @example withoutClitics("when is my grandmother's birthday") // 'when is my grandmother birthday'
 * @example withoutClitics("l'anniversaire d'Alice") // 'anniversaire Alice'
 * @example withoutClitics("she doesn't know") // 'she does know'
 */
export function withoutClitics(text: string): string {
  return text
    .replace(NEGATION, (_, stem: string) => NEGATED[stem.toLowerCase()] ?? stem)
    .replace(SUFFIX, '')
    .replace(ELISION, '');
}
