/**
 * Builds FTS5 MATCH expressions from a user's text. Every token is quoted, so no user input can
 * make FTS5 raise: quotes, operators, punctuation and unicode are only ever literal text.
 */
import { withoutClitics } from './clitics.js';

/** Letters and digits in any script; everything else splits tokens. */
const TOKEN = /[\p{L}\p{N}\p{M}]+/gu;

/** Quotes one literal for FTS5: a string in double quotes, with inner quotes doubled. */
export function quoteFts(literal: string): string {
  return `"${literal.replaceAll('"', '""')}"`;
}

/**
 * Splits text into word tokens as the unicode61 tokenizer would (letters, digits, marks).
 * @example tokenizeWords('FTS5: dom-cachorroink!') // ['FTS5', 'dom', 'cachorroink']
 */
export function tokenizeWords(text: string): string[] {
  return text.match(TOKEN) ?? [];
}

/**
 * The words of a text, each once (the first spelling of a case-insensitive duplicate), in order.
 * @example distinctWords('FTS5 fts5 sqlite') // ['FTS5', 'sqlite']
 */
export function distinctWords(text: string): string[] {
  const seen = new Set<string>();
  const words: string[] = [];
  for (const token of tokenizeWords(text)) {
    const key = token.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    words.push(token);
  }
  return words;
}

/**
 * The words plain text searches for: each once, in order, without the fragments apostrophes leave
 * ("grandmother's" is "grandmother", clitics.ts).
 * @example queryWords("what's my sister's name") // ['what', 'my', 'sister', 'name']
 */
export const queryWords = (text: string): string[] => distinctWords(withoutClitics(text));

/**
 * OR of quoted words, so BM25 ranks by the rarest shared terms; undefined for no words.
 * @example orOfWords(['what', 'FTS5']) // '"what" OR "FTS5"'
 */
export function orOfWords(words: readonly string[]): string | undefined {
  return words.length === 0 ? undefined : words.map(quoteFts).join(' OR ');
}

/**
 * The keyword leg's expression for bare text: its words (queryWords) OR-matched. Returns undefined
 * when the text has no word to search for.
 * @example buildOrQuery('what is FTS5?') // '"what" OR "is" OR "FTS5"'
 */
export function buildOrQuery(text: string): string | undefined {
  return orOfWords(queryWords(text));
}

/**
 * Trigrams a long substring query is narrowed to. FTS5 checks a phrase of n trigrams position by
 * position, which took seconds when a long repetitive query met long repetitive text (10,000 "x"
 * against an observation of 20,000 "x": 2.1 s); an AND of a few distinct trigrams costs one doclist
 * each.
 */
export const MAX_SUBSTRING_TRIGRAMS = 16;

/**
 * The substring expression for the trigram index. FTS5's trigram tokenizer needs at least 3
 * characters; shorter queries (and any with a NUL) return undefined and are answered by a scan.
 * Up to MAX_SUBSTRING_TRIGRAMS trigrams the whole query is one phrase; a longer one becomes an AND
 * of at most that many of its distinct trigrams (substringTrigrams). Either way every entity that
 * contains the query matches, and the store's exact check afterwards drops the ones that do not.
 * @example buildSubstringQuery('cachorro') // '"cachorro"'
 */
export function buildSubstringQuery(text: string): string | undefined {
  // FTS5 reads a NUL as the end of the expression; such text is answered by the scan too.
  if (text.includes('\u0000')) return undefined;
  const chars = [...text];
  if (chars.length < 3) return undefined;
  if (chars.length - 2 <= MAX_SUBSTRING_TRIGRAMS) return quoteFts(text);
  return substringTrigrams(chars).map(quoteFts).join(' AND ');
}

/**
 * At most MAX_SUBSTRING_TRIGRAMS distinct trigrams (of code points, as FTS5 counts) of a query: the
 * first and the last, then the likeliest-rare one from each of the equal stretches between them
 * (three different characters, and no space or punctuation, beat runs like "xxx" or " th"), so the
 * whole query, not only its start, narrows the candidates.
 */
export function substringTrigrams(chars: readonly string[]): string[] {
  const trigramAt = (i: number): string => `${chars[i]}${chars[i + 1]}${chars[i + 2]}`;
  const last = chars.length - 3;
  const picked = new Set<string>([trigramAt(0), trigramAt(last)]);
  const stretches = MAX_SUBSTRING_TRIGRAMS - 2;
  for (let s = 0; s < stretches; s++) {
    const from = 1 + Math.floor(((last - 1) * s) / stretches);
    const to = 1 + Math.floor(((last - 1) * (s + 1)) / stretches);
    let best: string | undefined;
    let bestScore = -1;
    for (let i = from; i < to; i++) {
      const trigram = trigramAt(i);
      if (picked.has(trigram)) continue;
      const score = rarityScore(chars[i] as string, chars[i + 1] as string, chars[i + 2] as string);
      if (score > bestScore) [best, bestScore] = [trigram, score];
    }
    if (best !== undefined) picked.add(best);
  }
  return [...picked];
}

const WORD_CHAR = /^[\p{L}\p{N}\p{M}]$/u;

/** Higher for trigrams likely to be rare in stored text: distinct characters, all of them word characters. */
function rarityScore(a: string, b: string, c: string): number {
  const distinct = new Set([a.toLowerCase(), b.toLowerCase(), c.toLowerCase()]).size;
  const wordy = WORD_CHAR.test(a) && WORD_CHAR.test(b) && WORD_CHAR.test(c) ? 1 : 0;
  return distinct * 2 + wordy;
}
