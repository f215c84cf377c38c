/**
 * Words that carry no evidence on their own, in the languages Limbic routes: English from the
 * `stopword` package's list, Spanish from the Snowball project's list (as lunr-languages ships it:
 * function words only, every form of ser, estar, haber and tener). In a small memory BM25 cannot
 * tell: "the" in two entities out of six has a full idf, and a keyword hit on it outranked a
 * semantic match (issue 18). Plain queries drop them whatever the graph's size; expert syntax keeps
 * every word.
 *
 * Two rules keep English words English: a Spanish stopword is dropped only from text that reads as
 * Spanish (more of its words are Spanish stopwords than English ones), so "son", "sin" and "era"
 * stay in "my son's birthday"; and a word is compared with its accents folded as well as written,
 * because the keyword index folds them (unicode61 remove_diacritics): "dónde" is "donde" to it.
 */
import lunr from 'lunr';
import lunrSpanish from 'lunr-languages/lunr.es.js';
import lunrStemmerSupport from 'lunr-languages/lunr.stemmer.support.js';
import { eng } from 'stopword';
import { foldAccents } from './fold.js';

// lunr-languages registers its Spanish pipeline on a lunr object; its stopword filter returns
// undefined for a stopword and the word otherwise.
lunrStemmerSupport(lunr);
lunrSpanish(lunr);
const spanishFilter = (lunr as unknown as { es: { stopWordFilter: (word: string) => string | undefined } }).es.stopWordFilter;

/**
 * Question words are never evidence either (issue 33): the `stopword` list has what, where, who,
 * which and how but not when, why, whom or whose, nor the "does" of "when does …", so "when is my
 * grandmother's birthday" searched for "when", which any observation about a time has.
 */
const ENGLISH_QUESTION_WORDS = ['when', 'why', 'whom', 'whose', 'whenever', 'wherever', 'whatever', 'whoever', 'whichever', 'does'];

/**
 * Spanish question words the Snowball list lacks (it has qué, quién, cuál, cómo, dónde, cuándo):
 * the plural cuáles, the forms of cuánto, and adónde. Spanish stopwords like these are dropped only
 * from text that reads as Spanish (below).
 */
const SPANISH_QUESTION_WORDS: ReadonlySet<string> = new Set(['cuales', 'cuanto', 'cuanta', 'cuantos', 'cuantas', 'adonde']);

const ENGLISH: ReadonlySet<string> = new Set([...eng.map((w) => w.toLowerCase()), ...ENGLISH_QUESTION_WORDS]);

/** Lower case with accents removed, as the keyword index compares words (fold.ts). */
export { foldAccents };

const english = (lower: string, folded: string): boolean => ENGLISH.has(lower) || ENGLISH.has(folded);
// The filter passes nothing through for an empty word, which is no stopword.
const spanish = (lower: string, folded: string): boolean =>
  lower !== '' && (spanishFilter(lower) === undefined || spanishFilter(folded) === undefined || SPANISH_QUESTION_WORDS.has(folded));

/** Whether a word (any case) is a stopword of English or Spanish, whatever the text around it. */
export function isStopword(word: string): boolean {
  const lower = word.toLowerCase();
  const folded = foldAccents(word);
  return english(lower, folded) || spanish(lower, folded);
}

/**
 * The words of a text that carry evidence, in their order: English stopwords go; Spanish ones go
 * when the text reads as Spanish (words that are stopwords of both languages count for neither).
 * @example contentWords(['who', 'wrote', 'the', 'program']) // ['wrote', 'program']
 * @example contentWords(['de', 'dónde', 'es', 'mi', 'abuelo']) // ['abuelo']
 * @example contentWords(['my', 'son', 'was', 'born']) // ['son', 'born']: English, so "son" stays
 */
export function contentWords(words: readonly string[]): string[] {
  const marks = words.map((w) => {
    const lower = w.toLowerCase();
    const folded = foldAccents(w);
    return { en: english(lower, folded), es: spanish(lower, folded) };
  });
  const englishOnly = marks.filter((m) => m.en && !m.es).length;
  const spanishOnly = marks.filter((m) => m.es && !m.en).length;
  const readsSpanish = spanishOnly > englishOnly;
  return words.filter((_, i) => {
    const m = marks[i];
    return m !== undefined && !m.en && !(readsSpanish && m.es);
  });
}
