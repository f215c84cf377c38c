/**
 * Words that carry no evidence on their own, in every language the embedding model reads. In a small
 * memory BM25 cannot tell: "the" in two entities out of six has a full idf, and a keyword hit on it
 * outranked a semantic match (issue 18); a German note on an entity made "der" match every German
 * question, and "avec" put a French dentist above the garden (issue 37). Plain queries drop them
 * whatever the graph's size; expert syntax keeps every word.
 *
 * The lists: English from the `stopword` package (plus question words); the Snowball project's
 * lists (function words only, as lunr-languages ships them) for Spanish, Portuguese, German,
 * Danish, Swedish, Finnish and Hungarian, because the `stopword` package's lists for those mix in
 * content words ("Jahr", "Zeit", "Mensch", "Uhr" in German; "dag", "beslut" in Swedish) or lack
 * forms (Spanish "es", "fue"); the package's lists for French, Italian, Dutch, Norwegian, Romanian,
 * Russian and Turkish, which are Snowball's or nearly; and the package's list for each other
 * language the model (multilingual-e5-small, trained on the 100 languages of CC100) reads: 41
 * more, from Arabic to Vietnamese. Its Lugbara, Sesotho, Yoruba and Zulu lists are left out: the
 * model was not trained on those languages.
 *
 * English stopwords go from every text. Another language's go only from text that reads as that
 * language, so English words stay English: "son", "sin" and "era" in "my son's birthday", "die" in
 * "the die was cast", "bin" and "fast" in "the bin is fast". A text reads as the language whose
 * stopwords cover the most of its words that are not English stopwords, when one of those is no
 * English word and they outnumber the English stopwords it does not share with them, two to one
 * when all are in ASCII (readLanguage). A word is compared with its accents folded as well as
 * written, because the keyword index folds them
 * (unicode61 remove_diacritics): "dónde" is "donde" to it.
 */
import lunr from 'lunr';
import lunrDanish from 'lunr-languages/lunr.da.js';
import lunrGerman from 'lunr-languages/lunr.de.js';
import lunrSpanish from 'lunr-languages/lunr.es.js';
import lunrFinnish from 'lunr-languages/lunr.fi.js';
import lunrHungarian from 'lunr-languages/lunr.hu.js';
import lunrPortuguese from 'lunr-languages/lunr.pt.js';
import lunrStemmerSupport from 'lunr-languages/lunr.stemmer.support.js';
import lunrSwedish from 'lunr-languages/lunr.sv.js';
import * as packageLists from 'stopword';
import { foldAccents } from './fold.js';

/**
 * Question words are never evidence either (issue 33): the `stopword` list has what, where, who,
 * which and how but not when, why, whom or whose, nor the "does" of "when does …", so "when is my
 * grandmother's birthday" searched for "when", which any observation about a time has.
 */
const ENGLISH_QUESTION_WORDS = ['when', 'why', 'whom', 'whose', 'whenever', 'wherever', 'whatever', 'whoever', 'whichever', 'does'];

/**
 * Question words the lists lack (issue 33's rule, in the languages whose questions a test asks):
 * Spanish has qué, quién, cuál, cómo, dónde, cuándo
 * but not cuáles, cuánto or adónde; German has wie and was but not wann, warum, wo or wer; French,
 * Dutch, Italian and Portuguese lack theirs for when, why, where, how many. Accents folded.
 */
const QUESTION_WORDS: Readonly<Record<string, readonly string[]>> = {
  spa: ['cuales', 'cuanto', 'cuanta', 'cuantos', 'cuantas', 'adonde'],
  deu: ['wann', 'warum', 'wieso', 'weshalb', 'weswegen', 'wo', 'woher', 'wohin', 'womit', 'wer', 'wen', 'wem', 'wessen', 'wie', 'wieviel', 'wieviele', 'welche', 'welcher', 'welches', 'welchem', 'welchen'],
  fra: ['quand', 'pourquoi', 'comment', 'combien', 'quel', 'quelle', 'quels', 'quelles', 'lequel', 'laquelle', 'lesquels', 'lesquelles', 'ou', 'quoi'],
  ita: ['quando', 'perche', 'come', 'dove', 'chi', 'quale', 'quali', 'quanto', 'quanta', 'quanti', 'quante', 'cosa'],
  por: ['onde', 'aonde', 'quando', 'porque', 'como', 'quem', 'qual', 'quais', 'quanto', 'quanta', 'quantos', 'quantas'],
  nld: ['waar', 'wanneer', 'waarom', 'hoe', 'wie', 'wat', 'welk', 'welke', 'hoeveel', 'waarheen', 'waarvandaan'],
}; // prettier-ignore

const ENGLISH: ReadonlySet<string> = new Set([...packageLists.eng.map((w) => w.toLowerCase()), ...ENGLISH_QUESTION_WORDS]);

// lunr-languages registers each language's pipeline on a lunr object; its stopword filter returns
// undefined for a stopword and the word otherwise. The filter passes nothing through for an empty
// word, which is no stopword.
lunrStemmerSupport(lunr);
const SNOWBALL = { spa: lunrSpanish, por: lunrPortuguese, deu: lunrGerman, dan: lunrDanish, swe: lunrSwedish, fin: lunrFinnish, hun: lunrHungarian } as const; // prettier-ignore
const LUNR_CODE: Record<keyof typeof SNOWBALL, string> = { spa: 'es', por: 'pt', deu: 'de', dan: 'da', swe: 'sv', fin: 'fi', hun: 'hu' }; // prettier-ignore
type Filter = (word: string) => string | undefined;
const snowballFilters: { readonly language: string; readonly filter: Filter }[] = Object.entries(SNOWBALL).map(([language, register]) => {
  register(lunr);
  const code = LUNR_CODE[language as keyof typeof SNOWBALL];
  return { language, filter: (lunr as unknown as Record<string, { stopWordFilter: Filter }>)[code]!.stopWordFilter };
});

/**
 * The `stopword` package's lists that are function words alone: Snowball's, or nearly (French adds
 * être, avoir, faire; Turkish a few adverbs). Read like Snowball's, on words in ASCII too.
 */
const PACKAGE_FUNCTION_WORDS = ['fra', 'ita', 'nld', 'nob', 'ron', 'rus', 'tur'] as const;

/**
 * The package's other lists kept (its ISO 639-3 names): every language it has that the model
 * reads, less those above, English, Brazilian Portuguese (Portuguese is Snowball's), and Malay,
 * whose list is words frequent in news ("abdullah", "ahmad", "program", "air"; Indonesian's covers
 * Malay's function words). These hold content words too, English ones among them.
 */
const PACKAGE_LANGUAGES = [
  'afr', 'ara', 'ben', 'bre', 'bul', 'cat', 'ces', 'ell', 'epo', 'est', 'eus', 'fas', 'gle', 'glg', 'guj',
  'hau', 'heb', 'hin', 'hrv', 'hye', 'ind', 'jpn', 'kor', 'kur', 'lat', 'lav', 'lit', 'mar', 'mya',
  'panGu', 'pol', 'slk', 'slv', 'som', 'swa', 'tgl', 'tha', 'ukr', 'urd', 'vie', 'zho',
] as const; // prettier-ignore

/** The languages whose lists hold function words alone: a text reads as one on words in ASCII too. */
const FUNCTION_WORD_LANGUAGES: readonly string[] = [...snowballFilters.map((s) => s.language), ...PACKAGE_FUNCTION_WORDS];
/** Every language's name, in a fixed order (the first wins a tie): Spanish, the other function-word lists, the rest. */
export const STOPWORD_LANGUAGES: readonly string[] = [...FUNCTION_WORD_LANGUAGES, ...PACKAGE_LANGUAGES];

interface PackageWords {
  /** Each word of the package's lists, lower case as written → the languages it is a stopword of. */
  readonly written: ReadonlyMap<string, readonly string[]>;
  /** The same, accents folded. */
  readonly folded: ReadonlyMap<string, readonly string[]>;
}

let packageWordsMade: PackageWords | undefined;
/** Made on first use, not at import: folding some 15,000 words costs tens of milliseconds, which a process that never reads a text should not pay. */
function packageWords(): PackageWords {
  if (packageWordsMade !== undefined) return packageWordsMade;
  const written = new Map<string, string[]>();
  const folded = new Map<string, string[]>();
  const add = (map: Map<string, string[]>, form: string, language: string): void => {
    const languages = map.get(form);
    if (languages === undefined) map.set(form, [language]);
    else if (!languages.includes(language)) languages.push(language);
  };
  for (const language of [...PACKAGE_FUNCTION_WORDS, ...PACKAGE_LANGUAGES]) {
    const curated = (PACKAGE_FUNCTION_WORDS as readonly string[]).includes(language);
    for (const word of packageLists[language]) {
      // The lists that hold the alphabet (Slovenian, Croatian, …) would read initials as a language.
      if (!curated && /^[a-z]$/i.test(word)) continue;
      add(written, word.toLowerCase(), language);
      add(folded, foldAccents(word), language);
    }
  }
  packageWordsMade = { written, folded };
  return packageWordsMade;
}

/** The languages other than English whose stopwords hold a word (lower case), as written or with its accents folded. */
function languagesOf(lower: string, folded: string): Set<string> {
  const found = new Set<string>();
  if (lower === '') return found;
  for (const { language, filter } of snowballFilters) {
    if (filter(lower) === undefined || filter(folded) === undefined) found.add(language);
  }
  for (const [language, words] of Object.entries(QUESTION_WORDS)) if (words.includes(folded)) found.add(language);
  const lists = packageWords();
  for (const language of [...(lists.written.get(lower) ?? []), ...(lists.folded.get(folded) ?? [])]) found.add(language);
  return found;
}

/**
 * The languages a word is evidence of: a word written with accents is evidence of the languages
 * that write it so, when there are any ("qué" is Spanish; "que" is also French and Portuguese);
 * otherwise of every language whose stopwords hold it folded ("dónde" is Spanish "donde").
 */
function evidenceOf(lower: string, folded: string, languages: ReadonlySet<string>): ReadonlySet<string> {
  if (lower === folded) return languages;
  const written = new Set<string>();
  for (const { language, filter } of snowballFilters) if (filter(lower) === undefined) written.add(language);
  for (const language of packageWords().written.get(lower) ?? []) written.add(language);
  return written.size > 0 ? written : languages;
}

const english = (lower: string, folded: string): boolean => ENGLISH.has(lower) || ENGLISH.has(folded);

/** Lower case with accents removed, as the keyword index compares words (fold.ts). */
export { foldAccents };

/**
 * Whether a word (any case) is a stopword of English or of the given language (a name of
 * STOPWORD_LANGUAGES), or without one of any language the model reads, whatever the text around it.
 */
export function isStopword(word: string, language?: string): boolean {
  const languages = stopwordLanguages(word);
  return english(word.toLowerCase(), foldAccents(word)) || (language === undefined ? languages.length > 0 : languages.includes(language));
}

/** The languages other than English a word (any case) is a stopword of, in STOPWORD_LANGUAGES' order. */
export function stopwordLanguages(word: string): string[] {
  const found = languagesOf(word.toLowerCase(), foldAccents(word));
  return STOPWORD_LANGUAGES.filter((l) => found.has(l));
}

/**
 * English words that are function words of another language's list: one of them alone does not make
 * a text read as that language ("sin city", "die hard", "no parking", "see ya"), though it is dropped
 * once the text reads as it. The words of the lists with function words only (Snowball's and the like)
 * that XQuAD's English paragraphs and LoCoMo's English conversations use most, and a few more.
 */
const ENGLISH_WORDS_ELSEWHERE: ReadonlySet<string> = new Set([
  'ad', 'ante', 'bin', 'care', 'cat', 'data', 'den', 'die', 'dies', 'dig', 'dog', 'dove', 'end', 'era', 'eras', 'face',
  'fin', 'ha', 'hat', 'hay', 'hem', 'hoe', 'ill', 'inn', 'man', 'men', 'met', 'mine', 'mint', 'mod', 'multi', 'no',
  'non', 'nun', 'per', 'pic', 'pot', 'pour', 'sale', 'sea', 'sin', 'sit', 'so', 'son', 'soy', 'sub', 'sue', 'tale',
  'till', 'ton', 'tot', 'van', 'want', 'war', 'will', 'ya', 'zero',
]); // prettier-ignore

/**
 * How many times a language's function words, all in ASCII, must outnumber the text's English
 * stopwords that the language lacks, for the text to read as it. English text is full of "the",
 * "a", "of", "to"; text in another language holds few of them; and "will the man wear a hat" has
 * three German function words (will, man, hat) against two English ones.
 */
export const ENGLISH_ODDS = 2;

interface Marks {
  readonly en: boolean;
  /** The languages the word is evidence of (evidenceOf): a subset of `languages`. */
  readonly evidence: ReadonlySet<string>;
  /** Written with a letter outside ASCII, which no English word is ("qué", "für", "où", "и"). */
  readonly foreign: boolean;
  /** No English word: written outside ASCII, or not one of ENGLISH_WORDS_ELSEWHERE ("der", "avec", "la"). */
  readonly telling: boolean;
  readonly languages: ReadonlySet<string>;
}

const NON_ASCII = /[^\p{ASCII}]/u;

const marksOf = (words: readonly string[]): Marks[] =>
  words.map((w) => {
    const lower = w.toLowerCase();
    const folded = foldAccents(w);
    const languages = languagesOf(lower, folded);
    const foreign = NON_ASCII.test(w);
    const telling = foreign || !ENGLISH_WORDS_ELSEWHERE.has(lower);
    return { en: english(lower, folded), foreign, telling, languages, evidence: evidenceOf(lower, folded, languages) };
  });

/**
 * The language other than English a text reads as, if any: the one whose stopwords cover the most
 * of its words that are not English stopwords, when one of those is no English word (written
 * outside ASCII, or not one of ENGLISH_WORDS_ELSEWHERE) and they outnumber the text's English
 * stopwords that are not theirs: two to one when all are in ASCII, since English text is full of
 * "the", "a", "of" and "will the man wear a hat" has three German function words against two
 * English ones. So "la abuela" and "factura pagada con retraso" read as Spanish, "¿Qué cantó Lady
 * Gaga?" too, while "die hard", "sin city" and "my son's birthday" stay English.
 *
 * A language of the package's lists is read only with one of its words written outside ASCII
 * ("są", "és", "že", any word of Cyrillic, Greek, Arabic or Devanagari script): their ASCII words
 * include English ones (Breton's "just", "stop", "war"; Esperanto's "super", "ok"), so "just stop
 * the war" would read as Breton. Indonesian, Basque or Lithuanian text, whose function words are
 * all ASCII, is therefore not read (its words stay). Among languages with as many words, the
 * first of STOPWORD_LANGUAGES (Spanish, then the other Snowball languages) wins: dropping every
 * tied language's words would drop "dos" (two) from Spanish because it is Portuguese for "of the".
 * @example readLanguage(['wo', 'ist', 'der', 'garten']) // 'deu'
 * @example readLanguage(['my', 'son', 'was', 'born']) // undefined
 */
export function readLanguage(words: readonly string[]): string | undefined {
  return readFromMarks(marksOf(words));
}

function readFromMarks(marks: readonly Marks[]): string | undefined {
  const evidence = new Map<string, { n: number; foreign: boolean; telling: boolean }>();
  for (const m of marks) {
    if (m.en) continue;
    for (const language of m.evidence) {
      const e = evidence.get(language) ?? { n: 0, foreign: false, telling: false };
      evidence.set(language, { n: e.n + 1, foreign: e.foreign || m.foreign, telling: e.telling || m.telling });
    }
  }
  const against = (language: string): number => marks.filter((m) => m.en && !m.languages.has(language)).length;
  let found: { language: string; n: number } | undefined;
  for (const language of STOPWORD_LANGUAGES) {
    const e = evidence.get(language);
    if (e === undefined || !e.telling || (!e.foreign && !FUNCTION_WORD_LANGUAGES.includes(language))) continue;
    // Function words in ASCII may be English words; one written outside ASCII is none.
    const read = e.foreign ? e.n > against(language) : e.n > ENGLISH_ODDS * against(language);
    if (read && (found === undefined || e.n > found.n)) found = { language, n: e.n };
  }
  return found?.language;
}

/**
 * The words of a text that carry evidence, in their order: English stopwords go, and the stopwords
 * of the language the text reads as (readLanguage). A word that is a stopword of several languages
 * ("de", "la", "die", "in") goes when one of them is the text's; in English text only English
 * decides, so a Spanish name in an English question keeps its "de" and "la".
 * @example contentWords(['who', 'wrote', 'the', 'program']) // ['wrote', 'program']
 * @example contentWords(['de', 'dónde', 'es', 'mi', 'abuelo']) // ['abuelo']
 * @example contentWords(['que', 'dois', 'je', 'faire', 'avec', 'les', 'plantes']) // ['dois', 'plantes']
 * @example contentWords(['my', 'son', 'was', 'born']) // ['son', 'born']: English, so "son" stays
 */
export function contentWords(words: readonly string[]): string[] {
  const marks = marksOf(words);
  const read = readFromMarks(marks);
  return words.filter((_, i) => {
    const m = marks[i];
    return m !== undefined && !m.en && !(read !== undefined && m.languages.has(read));
  });
}
