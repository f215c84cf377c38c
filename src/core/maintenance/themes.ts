/**
 * What a consolidation run calls a cluster (issue 33). The seed system named a cluster by its two
 * most distinctive words, capitalised and joined by a space, which reads as a proper name: an English
 * user was shown "Usuario Hermana", two words of the notes ("usuario", the user, which nearly every
 * note of a personal memory has) that look like somebody's name. Here a theme is:
 * - the words its members share, weighed against the whole memory scanned, not only against the
 *   other clusters: a word in most notes ("user", "usuario") names nothing, and a word one member
 *   alone uses is that member's, not the cluster's;
 * - written as the notes write it (lower case; a capital only where the notes always capitalise the
 *   word mid-sentence, as a place or a person: "Lisbon"), and joined as a list ("garden, tomatoes"),
 *   so it reads as words quoted from the notes, in their language, rather than as a name.
 * Pure; split.ts's topic names for entity splits keep the seed system's form (they become entity names).
 */
import { topicWords } from './split.js';

/** Words a theme name shows. */
export const THEME_WORDS = 2;

/** A word in more than this share of the notes scanned is how the memory talks, not a theme. */
export const MOST = 0.5;

/**
 * How a text writes its content words in the middle of a sentence (a capital at a sentence's start
 * says nothing about the word itself).
 */
function writtenForms(text: string): Map<string, string[]> {
  const forms = new Map<string, string[]>();
  const keep = new Set(topicWords(text));
  for (const match of text.matchAll(/\p{L}[\p{L}\p{M}]*/gu)) {
    const word = match[0].toLowerCase();
    const before = text.slice(0, match.index).trimEnd();
    if (!keep.has(word) || before === '' || /[.!?¿¡:;|]$/u.test(before)) continue;
    forms.set(word, [...(forms.get(word) ?? []), match[0]]);
  }
  return forms;
}

/** How a word is shown: as written when the notes always capitalise it mid-sentence (a name, a place), else lower case. */
function shown(word: string, forms: readonly string[]): string {
  return forms.length > 0 && forms.every((f) => f !== word) ? (forms[0] as string) : word;
}

/** A cluster's theme: the words shown, and the name made of them. */
export interface Theme {
  readonly words: readonly string[];
  readonly name: string;
}

/**
 * One theme per group of texts (each text an entity's notes), in the groups' order; `corpus` is
 * every text scanned, the groups' included. A name is never given twice; a group with no shared
 * content word has no words and is named "theme N".
 * @example themes([['tomatoes in the garden', 'the garden needs water']], corpus)[0].name // 'garden'
 */
export function themes(groups: readonly (readonly string[])[], corpus: readonly string[]): Theme[] {
  const df = new Map<string, number>();
  for (const text of corpus) for (const w of new Set(topicWords(text))) df.set(w, (df.get(w) ?? 0) + 1);
  const n = Math.max(corpus.length, 1);
  const taken = new Set<string>();
  return groups.map((texts, k) => {
    const members = new Map<string, number>();
    const counts = new Map<string, number>();
    const forms = new Map<string, string[]>();
    let total = 0;
    for (const text of texts) {
      const words = topicWords(text);
      total += words.length;
      for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1);
      for (const w of new Set(words)) members.set(w, (members.get(w) ?? 0) + 1);
      for (const [w, f] of writtenForms(text)) forms.set(w, [...(forms.get(w) ?? []), ...f]);
    }
    const shared = texts.length < 2 ? 1 : 2;
    const scored = [...counts]
      // Shared by the members, and not by most of the memory.
      .filter(([w]) => (members.get(w) ?? 0) >= shared && (df.get(w) ?? 0) <= MOST * n)
      .map(([w, c]) => ({ w, s: (c / Math.max(total, 1)) * Math.log(n / (df.get(w) ?? 1)) }))
      .filter((x) => x.s > 0)
      .sort((a, b) => b.s - a.s || a.w.localeCompare(b.w));
    const words = scored.slice(0, THEME_WORDS).map((x) => shown(x.w, forms.get(x.w) ?? []));
    let name = words.length === 0 ? `theme ${k + 1}` : words.join(', ');
    if (taken.has(name)) name = `${name} (${k + 1})`;
    taken.add(name);
    return { words, name };
  });
}
