/**
 * Unicode forms and folding, shared by the keyword stopwords, search_nodes and the name checks at
 * the boundary: visually identical text must compare equal however a client composed it (issue 26).
 */

/** Any character outside ASCII: text without one folds by lower-casing alone. */
const NON_ASCII = /[^\p{ASCII}]/u;
const MARKS = /\p{M}/gu;

/**
 * Lower case with accents removed, as the keyword index compares words: lower-cased whole (as the
 * official server's toLowerCase), decomposed (NFD), combining marks dropped. Removing the marks of
 * each character's decomposition maps every piece of text on its own, so text that contains another
 * still contains it once both are folded.
 * @example foldAccents('Ana García') // 'ana garcia'
 */
export function foldAccents(text: string): string {
  const lower = text.toLowerCase();
  return NON_ASCII.test(lower) ? lower.normalize('NFD').replace(MARKS, '') : lower;
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
  return { needle: folded, folded: true, prepare: foldAccents, matches: (text) => foldAccents(text).includes(folded) };
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
