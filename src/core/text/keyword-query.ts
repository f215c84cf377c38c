/**
 * The keyword leg's query language (docs/tools.md, hybrid_search's `query`):
 * plain text is OR-matched word by word; text that uses expert syntax — "quoted phrases", uppercase
 * AND / OR / NOT, prefix*, and the column filters name: / type: / obs: — keeps those operators.
 * Either way the result is rebuilt from quoted literals and operators this module writes itself, so
 * no input can make FTS5 raise.
 */

import { orOfWords, queryWords, quoteFts, tokenizeWords } from './fts-query.js';

export type KeywordMode = 'bare' | 'expert';

export interface KeywordQuery {
  /** The expression a KeywordIndex searches, or undefined when there is nothing to search for. */
  readonly expr: KeywordExpr | undefined;
  /** The same expression as text (keywordText), as explain_query shows it. */
  readonly match: string | undefined;
  readonly mode: KeywordMode;
  /** Bare text's distinct words, in order, without apostrophes' fragments (the OR in `match`); empty in expert mode. */
  readonly words: readonly string[];
  /** Human-readable notes, e.g. an unbalanced quote that was closed, an unknown column treated as a word. */
  readonly warnings: readonly string[];
}

/** User columns → the FTS5 columns keywordText names (each backend maps them to its own). */
export const KEYWORD_COLUMNS = { name: 'name', type: 'entity_type', obs: 'obs_text' } as const;

/** A column a term may be restricted to: an entity's name, its type, or its observations. */
export type KeywordColumn = keyof typeof KEYWORD_COLUMNS;

/** A Map, so that `constructor:` or `__proto__:` can never look like a column. */
const COLUMN_BY_NAME: ReadonlyMap<string, KeywordColumn> = new Map((Object.keys(KEYWORD_COLUMNS) as KeywordColumn[]).map((c) => [c, c]));

const COLUMN_LIST = Object.keys(KEYWORD_COLUMNS)
  .map((c) => `${c}:`)
  .join(', ');

/**
 * Deepest nesting of groups we emit. FTS5's parser stack holds 100 entries and each `a AND (` level
 * takes three, so about 31 levels parse; beyond that FTS5 raises "parser stack overflow".
 */
const MAX_DEPTH = 16;

/** Characters that end a run of ordinary text: whitespace, quotes and parentheses. */
const RUN_END = /[\s"()]/u;

/** Something that looks like a field name the user meant as a column (`essence:`), not `12:` or `http:/`. */
const IDENTIFIER = /^\p{L}[\p{L}\p{N}_]*$/u;

type Operator = 'AND' | 'OR' | 'NOT';

/** One searchable literal: a word, or a phrase (several words that must be adjacent). */
export interface KeywordTerm {
  readonly kind: 'term';
  readonly words: readonly string[];
  /** The last word is a prefix (`neur*`). */
  readonly prefix: boolean;
  /** The column it is restricted to, if any. */
  readonly column: KeywordColumn | undefined;
}
type Term = KeywordTerm;

type Token = Term | { readonly kind: 'op'; readonly op: Operator } | { readonly kind: 'open' } | { readonly kind: 'close' };

/**
 * A keyword query as a tree: what crosses the Store interface (KeywordIndex.search), each backend
 * translating it once (SQLite to an FTS5 MATCH, PostgreSQL to a tsquery). `not` is binary: what
 * matches `left` and not `right`.
 */
export type KeywordExpr =
  | KeywordTerm
  | { readonly kind: 'and'; readonly children: readonly KeywordExpr[] }
  | { readonly kind: 'or'; readonly children: readonly KeywordExpr[] }
  | { readonly kind: 'not'; readonly left: KeywordExpr; readonly right: KeywordExpr };
type Node = KeywordExpr;

interface Lexed {
  readonly tokens: readonly Token[];
  /** True when any expert syntax (phrase, operator, prefix, known column) was seen. */
  readonly expert: boolean;
}

/**
 * Turns a user's search text into an FTS5 MATCH expression for the entity_fts table.
 *
 * Bare text gives exactly {@link buildOrQuery}'s OR of quoted words (without the fragments apostrophes
 * leave: "grandmother's" searches "grandmother", clitics.ts). Expert syntax keeps its meaning:
 * phrases stay phrases (their inner punctuation splits words), uppercase AND / OR / NOT stay operators
 * (`AND NOT` becomes FTS5's binary NOT; a leading or dangling operator is dropped), adjacent terms are
 * ANDed, `word*` is a prefix, and `name:` / `type:` / `obs:` restrict the term or phrase written
 * directly after them (`type:sci-fi` is the phrase "sci fi" in entity_type). Every other `word:` is
 * plain text. Unbalanced quotes are closed, unmatched parentheses dropped, each with a warning; a
 * query nested too deeply gives no expression at all.
 *
 * @example buildKeywordQuery('what was my sister doing').match // '"what" OR "was" OR "my" OR "sister" OR "doing"'
 * @example buildKeywordQuery('python AND NOT snake').match     // '"python" NOT "snake"'
 * @example buildKeywordQuery('"machine learning" neur*').match // '"machine learning" AND "neur"*'
 * @example buildKeywordQuery('type:Project obs:"exact phrase"').match
 *   // 'entity_type : "Project" AND obs_text : "exact phrase"'
 * @example buildKeywordQuery('"open quote').warnings // ['Closed an unbalanced double quote at the end of the query.']
 */
export function buildKeywordQuery(text: string): KeywordQuery {
  const warnings: string[] = [];
  const warn = (message: string): void => {
    if (!warnings.includes(message)) warnings.push(message);
  };
  // FTS5 reads a NUL as the end of its input; for us it only separates words.
  const clean = text.replaceAll('\u0000', ' ');
  const { tokens, expert } = lex(clean, warn);
  if (!expert) {
    const words = queryWords(clean);
    return { expr: orOfWordsExpr(words), match: orOfWords(words), mode: 'bare', words, warnings };
  }

  const balanced = dropUnmatchedParentheses(tokens, warn);
  if (nestingOf(balanced) > MAX_DEPTH) {
    warn(`The query nests parentheses more than ${MAX_DEPTH} deep; simplify it to search by keyword.`);
    return { expr: undefined, match: undefined, mode: 'expert', words: [], warnings };
  }
  const tree = new Parser(balanced, warn).parseAll();
  if (tree !== undefined && depthOf(tree) > MAX_DEPTH) {
    warn(`The query nests operators more than ${MAX_DEPTH} deep; simplify it to search by keyword.`);
    return { expr: undefined, match: undefined, mode: 'expert', words: [], warnings };
  }
  return { expr: tree, match: tree === undefined ? undefined : serialize(tree), mode: 'expert', words: [], warnings };
}

// ---------------------------------------------------------------------------------------------
// Lexing: phrases, parentheses, operators, column filters and words.

function lex(text: string, warn: (message: string) => void): Lexed {
  const tokens: Token[] = [];
  let expert = false;
  let pendingColumn: KeywordColumn | undefined;
  let i = 0;

  while (i < text.length) {
    const c = text.charAt(i);
    if (c === '"') {
      expert = true;
      const close = text.indexOf('"', i + 1);
      if (close === -1) warn('Closed an unbalanced double quote at the end of the query.');
      const end = close === -1 ? text.length : close;
      const words = tokenizeWords(text.slice(i + 1, end));
      i = close === -1 ? text.length : close + 1;
      const prefix = text.charAt(i) === '*';
      if (words.length === 0) warn('Dropped a phrase with no words in it.');
      else tokens.push({ kind: 'term', words, prefix, column: pendingColumn });
      pendingColumn = undefined;
      continue;
    }
    if (c === '(' || c === ')') {
      tokens.push({ kind: c === '(' ? 'open' : 'close' });
      i++;
      continue;
    }
    if (/\s/u.test(c)) {
      i++;
      continue;
    }
    let end = i;
    while (end < text.length && !RUN_END.test(text.charAt(end))) end++;
    const run = text.slice(i, end);
    i = end;
    const lexedRun = lexRun(run, text.charAt(end), warn);
    if (lexedRun.expert) expert = true;
    tokens.push(...lexedRun.tokens);
    pendingColumn = lexedRun.columnForNextPhrase;
  }
  return { tokens, expert };
}

interface LexedRun extends Lexed {
  /** Set when the run is `name:` directly followed by a quoted phrase. */
  readonly columnForNextPhrase: KeywordColumn | undefined;
}

/** One stretch of text between whitespace, quotes and parentheses; `next` is the character after it. */
function lexRun(run: string, next: string, warn: (message: string) => void): LexedRun {
  if (run === 'AND' || run === 'OR' || run === 'NOT') {
    return { tokens: [{ kind: 'op', op: run }], expert: true, columnForNextPhrase: undefined };
  }
  const colon = run.indexOf(':');
  if (colon > 0) {
    const head = run.slice(0, colon);
    const rest = run.slice(colon + 1);
    const column = COLUMN_BY_NAME.get(head.toLowerCase());
    const restWords = tokenizeWords(rest);
    const restStartsWord = restWords.length > 0 && rest.startsWith(restWords[0] ?? '');
    if (column !== undefined) {
      if (rest === '' && next === '"') return { tokens: [], expert: true, columnForNextPhrase: column };
      if (restWords.length > 0) {
        // The filter covers everything written directly after the colon, as one phrase.
        const stem = rest.replace(/(?<!\*)\*+$/u, '');
        const prefix = stem !== rest && stem.endsWith(restWords.at(-1) ?? '*');
        return { tokens: [{ kind: 'term', words: restWords, prefix, column }], expert: true, columnForNextPhrase: undefined };
      }
      warn(`'${head}:' has no term directly after it, so it was searched as a word; write ${head}:word or ${head}:"a phrase".`);
    } else if (IDENTIFIER.test(head) && (restStartsWord || (rest === '' && next === '"'))) {
      warn(`'${shorten(head)}:' is not a column filter (the columns are ${COLUMN_LIST}), so it was searched as a word.`);
    }
  }
  return { ...wordsOf(run), columnForNextPhrase: undefined };
}

/** Keeps a warning readable when the user pasted something long. */
function shorten(text: string): string {
  const chars = [...text];
  return chars.length <= 40 ? text : `${chars.slice(0, 40).join('')}…`;
}

/** Ordinary text: each word is its own term; a word directly followed by `*` is a prefix. */
function wordsOf(run: string): Lexed {
  const tokens: Term[] = [];
  let expert = false;
  const pieces = run.split('*');
  pieces.forEach((piece, index) => {
    const words = tokenizeWords(piece);
    const last = words.at(-1);
    // A star follows every piece but the last; it makes a prefix only if it touches the word.
    const starred = index < pieces.length - 1 && last !== undefined && piece.endsWith(last);
    words.forEach((word, w) => {
      const prefix = starred && w === words.length - 1;
      if (prefix) expert = true;
      tokens.push({ kind: 'term', words: [word], prefix, column: undefined });
    });
  });
  return { tokens, expert };
}

// ---------------------------------------------------------------------------------------------
// Repair and parse.

/** Keeps only parentheses that pair up; FTS5 rejects any other. */
function dropUnmatchedParentheses(tokens: readonly Token[], warn: (message: string) => void): Token[] {
  const keep = tokens.map(() => true);
  const open: number[] = [];
  tokens.forEach((token, index) => {
    if (token.kind === 'open') open.push(index);
    else if (token.kind === 'close' && open.pop() === undefined) keep[index] = false;
  });
  for (const index of open) keep[index] = false;
  const dropped = keep.filter((k) => !k).length;
  if (dropped > 0) warn(`Dropped ${dropped} unmatched ${dropped === 1 ? 'parenthesis' : 'parentheses'}.`);
  return tokens.filter((_, index) => keep[index]);
}

function nestingOf(tokens: readonly Token[]): number {
  let depth = 0;
  let deepest = 0;
  for (const token of tokens) {
    if (token.kind === 'open') deepest = Math.max(deepest, ++depth);
    else if (token.kind === 'close') depth--;
  }
  return deepest;
}

/**
 * Recursive descent with FTS5's precedence (NOT binds tighter than AND, AND tighter than OR), which
 * skips what it cannot use instead of failing. Parentheses are balanced before it runs.
 */
class Parser {
  private position = 0;

  constructor(
    private readonly tokens: readonly Token[],
    private readonly warn: (message: string) => void,
  ) {}

  parseAll(): Node | undefined {
    const parts: Node[] = [];
    while (this.peek() !== undefined) {
      const part = this.parseOr();
      if (part !== undefined) parts.push(part);
      // Unreachable with balanced parentheses; skipping keeps the loop finite regardless.
      if (this.peek()?.kind === 'close') this.position++;
    }
    return parts.length === 0 ? undefined : and(parts);
  }

  private peek(): Token | undefined {
    return this.tokens[this.position];
  }

  private isOp(token: Token | undefined, op: Operator): boolean {
    return token?.kind === 'op' && token.op === op;
  }

  private parseOr(): Node | undefined {
    const parts: Node[] = [];
    const first = this.parseAnd();
    if (first !== undefined) parts.push(first);
    while (this.isOp(this.peek(), 'OR')) {
      this.position++;
      const next = this.parseAnd();
      if (parts.length === 0 || next === undefined) this.warn('Dropped an OR with nothing on one side of it.');
      if (next !== undefined) parts.push(next);
    }
    return parts.length === 0 ? undefined : or(parts);
  }

  private parseAnd(): Node | undefined {
    const operands: Node[] = [];
    for (;;) {
      const token = this.peek();
      if (token === undefined || token.kind === 'close' || this.isOp(token, 'OR')) break;
      if (token.kind === 'op' && token.op === 'AND') {
        this.position++;
        const after = this.peek();
        const usable = after !== undefined && (after.kind === 'term' || after.kind === 'open' || this.isOp(after, 'NOT'));
        if (operands.length === 0 || !usable) this.warn('Dropped an AND with nothing on one side of it.');
        continue;
      }
      if (token.kind === 'op' && token.op === 'NOT') {
        this.position++;
        const excluded = this.parsePrimary();
        if (excluded === undefined) {
          this.warn('Dropped a NOT with nothing after it.');
          continue;
        }
        const from = operands.pop();
        if (from === undefined) {
          // FTS5's NOT is binary (a NOT b). With nothing to subtract from, searching for the excluded
          // term would do the opposite of what was asked, so the NOT and its term are both dropped.
          this.warn('Dropped a NOT and the term after it: there was nothing before it to exclude from; write it as: wanted NOT unwanted.');
        } else {
          // `a b NOT c` is `a AND (b NOT c)` in FTS5, the same rows as `(a AND b) NOT c`.
          operands.push(not(from, excluded));
        }
        continue;
      }
      const primary = this.parsePrimary();
      if (primary !== undefined) operands.push(primary);
    }
    return operands.length === 0 ? undefined : and(operands);
  }

  /** A term or a parenthesised group; undefined (having consumed nothing) at an operator. */
  private parsePrimary(): Node | undefined {
    const token = this.peek();
    if (token?.kind === 'term') {
      this.position++;
      return token;
    }
    if (token?.kind !== 'open') return undefined;
    this.position++;
    const inner = this.parseOr();
    if (this.peek()?.kind === 'close') this.position++;
    if (inner === undefined) this.warn('Dropped parentheses with nothing to search for inside.');
    return inner;
  }
}

// ---------------------------------------------------------------------------------------------
// The tree, kept shallow: FTS5 limits both its parser stack and its expression depth.

function and(children: readonly Node[]): Node {
  const flat = distinct(children.flatMap((child) => (child.kind === 'and' ? child.children : [child])));
  return flat.length === 1 && flat[0] !== undefined ? flat[0] : { kind: 'and', children: flat };
}

function or(children: readonly Node[]): Node {
  const flat = distinct(children.flatMap((child) => (child.kind === 'or' ? child.children : [child])));
  return flat.length === 1 && flat[0] !== undefined ? flat[0] : { kind: 'or', children: flat };
}

/**
 * Operands once each: `apples OR Apples OR pears` is `apples OR pears`, as plain text's words are
 * (distinctWords). `a OR a` and `a AND a` match what `a` matches, and BM25 sums over the terms
 * written, so a repeat would only double a term's weight, and then by how each backend counts it.
 */
function distinct(children: readonly Node[]): Node[] {
  const seen = new Set<string>();
  return children.filter((child) => {
    const key = serialize(child).toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** `(a NOT b) NOT c` is `a NOT (b OR c)`: a chain of NOTs stays one level deep. */
function not(left: Node, right: Node): Node {
  return left.kind === 'not' ? { kind: 'not', left: left.left, right: or([left.right, right]) } : { kind: 'not', left, right };
}

function depthOf(node: Node): number {
  switch (node.kind) {
    case 'term':
      return 0;
    case 'and':
    case 'or':
      return 1 + Math.max(...node.children.map(depthOf));
    case 'not':
      return 1 + Math.max(depthOf(node.left), depthOf(node.right));
    default: {
      const _exhaustive: never = node;
      return _exhaustive;
    }
  }
}

/**
 * The expression as text in FTS5's MATCH syntax: what the SQLite backend runs, and how
 * explain_query shows the expression. Every word is a quoted literal, so no input can make FTS5 raise.
 * @example keywordText(orOfWordsExpr(['what', 'FTS5'])!) // '"what" OR "FTS5"'
 */
export const keywordText = (expr: KeywordExpr): string => serialize(expr);

/**
 * Words OR-matched, so BM25 ranks by the rarest shared terms (plain text's expression); undefined for no words.
 * keywordText of it is orOfWords(words).
 */
export function orOfWordsExpr(words: readonly string[]): KeywordExpr | undefined {
  if (words.length === 0) return undefined;
  return or(words.map((w): Term => ({ kind: 'term', words: [w], prefix: false, column: undefined })));
}

/**
 * The words of an expression that is single words joined by OR and nothing else (what plain text
 * gives): its matches are the entities having any of the words, which lets a backend answer it from
 * a word index. Undefined for anything else (phrases, prefixes, columns, AND, NOT).
 * @example plainWords(orOfWordsExpr(['tea', 'coffee'])!) // ['tea', 'coffee']
 */
export function plainWords(expr: KeywordExpr): string[] | undefined {
  const terms = expr.kind === 'or' ? expr.children : [expr];
  const words: string[] = [];
  for (const t of terms) {
    if (t.kind !== 'term' || t.prefix || t.column !== undefined || t.words.length !== 1) return undefined;
    words.push(t.words[0] as string);
  }
  return words;
}

function serialize(node: Node): string {
  switch (node.kind) {
    case 'term': {
      const column = node.column === undefined ? '' : `${KEYWORD_COLUMNS[node.column]} : `;
      return `${column}${quoteFts(node.words.join(' '))}${node.prefix ? '*' : ''}`;
    }
    case 'and':
      return node.children.map(grouped).join(' AND ');
    case 'or':
      return node.children.map(grouped).join(' OR ');
    case 'not':
      return `${grouped(node.left)} NOT ${grouped(node.right)}`;
    default: {
      const _exhaustive: never = node;
      return _exhaustive;
    }
  }
}

/** Every compound operand gets parentheses, so the result never leans on precedence rules. */
function grouped(node: Node): string {
  return node.kind === 'term' ? serialize(node) : `(${serialize(node)})`;
}
