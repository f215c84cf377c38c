/**
 * Builds FTS5 MATCH expressions from a user's text. Every token is quoted, so no user input can
 * make FTS5 raise: quotes, operators, punctuation and unicode are only ever literal text.
 */

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
 * The keyword leg's expression: bare words OR-matched so BM25 ranks by the rarest shared terms.
 * Returns undefined when the text has no word to search for. Duplicate words are dropped
 * (case-insensitively) since they add nothing to an OR.
 * @example buildOrQuery('what is FTS5?') // '"what" OR "is" OR "FTS5"'
 */
export function buildOrQuery(text: string): string | undefined {
  const seen = new Set<string>();
  const terms: string[] = [];
  for (const token of tokenizeWords(text)) {
    const key = token.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    terms.push(quoteFts(token));
  }
  return terms.length === 0 ? undefined : terms.join(' OR ');
}

/**
 * The substring expression for the trigram index: the whole query as one phrase. FTS5's trigram
 * tokenizer needs at least 3 characters; shorter queries (and any with a NUL) return undefined and are
 * answered by a scan.
 */
export function buildSubstringQuery(text: string): string | undefined {
  // FTS5 reads a NUL as the end of the expression; such text is answered by the scan too.
  return [...text].length >= 3 && !text.includes('\u0000') ? quoteFts(text) : undefined;
}
