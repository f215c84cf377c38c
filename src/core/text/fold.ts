/**
 * Unicode forms and folding, shared by the keyword stopwords, search_nodes and the name checks at
 * the boundary: visually identical text must compare equal however a client composed it (issue 26).
 */

/** Any character outside ASCII: text without one folds by lower-casing alone. */
const NON_ASCII = /[^\p{ASCII}]/u;
const MARKS = /\p{M}/gu;

/** Whether text is all ASCII: it then folds by lower-casing alone. */
export const isAscii = (text: string): boolean => !NON_ASCII.test(text);

/**
 * Lower case with accents removed, as the keyword index compares words: lower-cased whole (as the
 * official server's toLowerCase), decomposed (NFD), combining marks dropped. Removing the marks of
 * each character's decomposition maps every piece of text on its own, so text that contains another
 * still contains it once both are folded.
 * @example foldAccents('Ana García') // 'ana garcia'
 */
export function foldAccents(text: string): string {
  return foldLower(text.toLowerCase());
}

const foldLower = (lower: string): string =>
  NON_ASCII.test(lower) ? (foldLatin(lower) ?? lower.normalize('NFD').replace(MARKS, '')) : lower;

/**
 * Whether folded `text` contains `needle` (itself folded), folding only when it can matter: text
 * whose lower case already contains the needle contains it folded too, and ASCII text folds by
 * lower-casing alone. Most text a search tests is one or the other.
 * @example foldedIncludes('Ana García', 'garcia') // true
 */
export function foldedIncludes(text: string, needle: string): boolean {
  const lower = text.toLowerCase();
  if (lower.includes(needle)) return true;
  return NON_ASCII.test(lower) && foldLower(lower).includes(needle);
}

/** Code units below this are folded from LATIN_FOLDS; text with others takes the general path. */
const LATIN_END = 0x370;
/**
 * Each character of Latin-1, Latin Extended and the combining diacritics (U+0080-U+036F) folded on
 * its own (undefined: unchanged). Folding is character by character, so these give what the general
 * path gives, at a third of its cost on accented text (no normalize()).
 */
const LATIN_FOLDS: readonly (string | undefined)[] = Array.from({ length: LATIN_END }, (_, c) => {
  const char = String.fromCharCode(c);
  const folded = char.normalize('NFD').replace(MARKS, '');
  return c < 0x80 || folded === char ? undefined : folded;
});

/** Lower-cased text folded through LATIN_FOLDS; undefined when it holds a character past them. */
function foldLatin(lower: string): string | undefined {
  let out = '';
  let from = 0;
  for (let i = 0; i < lower.length; i++) {
    const c = lower.charCodeAt(i);
    if (c < 0x80) continue;
    if (c >= LATIN_END) return undefined;
    const folded = LATIN_FOLDS[c];
    if (folded === undefined) continue;
    out += lower.slice(from, i) + folded;
    from = i + 1;
  }
  return from === 0 ? lower : out + lower.slice(from);
}

/**
 * Text in Unicode's composed form (NFC), the one form names, relation types and observations are
 * stored and compared in: "Cafe\u0301" and "Café" are one name.
 */
export const toNfc = (text: string): string => (NON_ASCII.test(text) ? text.normalize('NFC') : text);

/** search_nodes' test for one query (substringTest). */
export interface SubstringTest {
  /** The query as the stored text is compared with it. */
  readonly needle: string;
  /** False for a query of combining marks alone: `needle` is only lower-cased, and so must the text be. */
  readonly folded: boolean;
  /** The text as compared with `needle`. */
  readonly prepare: (text: string) => string;
  readonly matches: (text: string) => boolean;
}

/**
 * search_nodes' test: the official one (lower-cased text contains the lower-cased query) widened to
 * accents, by folding both sides; everything the official test matches still matches. A query of
 * combining marks alone folds to nothing and would match everything: it is compared as the official
 * server compares it.
 * @example substringTest('Garcia').matches('Ana García') // true
 */
export function substringTest(query: string): SubstringTest {
  const folded = foldAccents(query);
  if (folded === '' && query !== '') {
    const needle = query.toLowerCase();
    const prepare = (text: string): string => text.toLowerCase();
    return { needle, folded: false, prepare, matches: (text) => prepare(text).includes(needle) };
  }
  return { needle: folded, folded: true, prepare: foldAccents, matches: (text) => foldedIncludes(text, folded) };
}

/**
 * The renames that bring stored names to NFC (a schema migration on each backend), given every
 * entity name in creation order: a name not in NFC takes its NFC form, or, when an entity already
 * holds that form (two entities a client once told apart only by their bytes), the form with the
 * first free " (2)", " (3)" suffix, so neither is lost and each stays reachable by a name a client
 * can type. A relation end that names no renamed entity is put in NFC (`relationEnd`).
 * @example planNfcRenames(['Café', 'Cafe\u0301', 'Nin\u0303o']) // Map { 'Cafe\u0301' => 'Café (2)', 'Nin\u0303o' => 'Niño' }
 */
export function planNfcRenames(names: readonly string[]): Map<string, string> {
  const taken = new Set(names);
  const renames = new Map<string, string>();
  for (const name of names) {
    const nfc = toNfc(name);
    if (nfc === name || renames.has(name)) continue;
    let target = nfc;
    for (let k = 2; taken.has(target); k++) target = `${nfc} (${k})`;
    taken.add(target);
    renames.set(name, target);
  }
  return renames;
}

/** A relation end's stored form after planNfcRenames: the renamed entity's new name, or its NFC form. */
export const relationEnd = (renames: ReadonlyMap<string, string>, end: string): string => renames.get(end) ?? toNfc(end);
