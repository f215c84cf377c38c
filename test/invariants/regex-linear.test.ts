/**
 * Issue 35, item 1: no regular expression of `src/` takes more than linear time on adversarial
 * input. One search for "apple 1" + 2,000 spaces + "x" held the server 16 s: the date patterns
 * could split a run of spaces between three `\s` parts in every way, a cube of the run's length.
 *
 * Every pattern is run on long runs of each kind of character (spaces, tabs, newlines, U+3000,
 * digits, letters, punctuation, mixed separators) behind the prefixes that make patterns start
 * (a number, a month, "Total 12", a secret word, a tag) and before a character that makes them
 * fail, at two lengths, 2,000 and 8,000 characters. Linear work grows 4× with the input;
 * quadratic 16×, cubic 64×. The test fails a pattern whose time grows more than 10× in three
 * measurements in a row, each the ratio of the fastest of several trials at each length (noise on
 * a shared machine only ever adds time, so the fastest trial is the truest). No wall-clock bound.
 *
 * The patterns: every regular expression literal in `src/**.ts` (read with the TypeScript parser,
 * so none is missed), and the ones built with `new RegExp`, which their modules export for this
 * test. A `new RegExp` this test does not know fails it, until it is added below.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { CHROME_ELEMENT, ORPHAN_CLOSE } from '../../src/capture/clean-text.js';
import { DATE_PATTERNS } from '../../src/core/rank/time-expression.js';
import { ELISION, NEGATION, SUFFIX } from '../../src/core/text/clitics.js';
import { EXTRA_SECRET_PATTERNS, PII_PATTERNS } from '../../src/core/text/redaction.js';
import { ID_AT_END, ID_AT_START } from '../../src/mcp/jsonrpc-screen.js';

const ROOT = join(import.meta.dirname, '..', '..');
const SRC = join(ROOT, 'src');

/**
 * Each `new RegExp(` of `src/`, by file: how many, and the patterns they build. A pattern built from
 * escaped literal text in a function is represented by one it builds; that text adds no repetition.
 */
const BUILT: Readonly<Record<string, { readonly count: number; readonly patterns: readonly RegExp[] }>> = {
  'src/core/rank/time-expression.ts': { count: 7, patterns: DATE_PATTERNS.map((p) => p.re) },
  'src/core/text/clitics.ts': { count: 3, patterns: [NEGATION, SUFFIX, ELISION] },
  'src/capture/clean-text.ts': { count: 2, patterns: [CHROME_ELEMENT, ORPHAN_CLOSE] },
  'src/mcp/jsonrpc-screen.ts': { count: 2, patterns: [ID_AT_START, ID_AT_END] },
  // ASSIGNMENT, in EXTRA_SECRET_PATTERNS; findPatternSpans copies each pattern with the `d` flag.
  'src/core/text/redaction.ts': { count: 2, patterns: [...EXTRA_SECRET_PATTERNS, ...PII_PATTERNS].map((p) => p.pattern) },
  // containsPhrase: a routing phrase, escaped, between word edges.
  'src/core/rank/routing.ts': { count: 1, patterns: [/(^|[^\p{L}\p{N}])how many($|[^\p{L}\p{N}])/u] },
  // A session's name: label, date, tag, escaped.
  'src/service/capture.ts': { count: 1, patterns: [/^Claude Code \d{4}-\d{2}-\d{2} 1a2b3c4d$/] },
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

interface Found {
  readonly where: string;
  readonly re: RegExp;
}

/** Every regex literal of `src/`, compiled, and the count of `new RegExp(` per file. */
function patternsOfSource(): { literals: Found[]; built: Map<string, number> } {
  const literals: Found[] = [];
  const built = new Map<string, number>();
  for (const file of sourceFiles(SRC)) {
    const name = relative(ROOT, file).split('\\').join('/');
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
        const text = node.getText(source);
        const slash = text.lastIndexOf('/');
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        literals.push({ where: `${name}:${line} ${text}`, re: new RegExp(text.slice(1, slash), text.slice(slash + 1)) });
      } else if (ts.isNewExpression(node) || ts.isCallExpression(node)) {
        if (ts.isIdentifier(node.expression) && node.expression.text === 'RegExp') built.set(name, (built.get(name) ?? 0) + 1);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return { literals, built };
}

/** What is repeated: one character of each class, and pairs and mixes of separators. */
const RUNS = [
  ' ',
  '\t',
  '\n',
  '\r\n',
  '\u3000',
  '\u00a0',
  '0',
  '1',
  'a',
  'A',
  'é',
  'x1',
  ',',
  '.',
  '-',
  '_',
  '/',
  '\\',
  ':',
  '=',
  '"',
  "'",
  '@',
  '#',
  '*',
  '<',
  '[',
  '{',
  '+',
  '%',
  '&',
  '~',
  ' ,',
  ', ',
  ' \t\n',
  '1 ',
  'a ',
  'a-',
  'a.',
  '\\n',
  ': ',
  '1,',
];
/** Behind each run: nothing, a number (dates begin there), a word; after it, a character no pattern takes there. */
const AROUND = [
  ['', '\u0000'],
  ['1', '\u0000'],
  ['a', '\u0000'],
] as const;
/** The issue's shapes, and the starts of the patterns that begin with a word: prefix, run, end. */
const SHAPES = [
  ['apple 1', ' ', 'x'],
  ['Total 12', ' ', 'EUR'],
  ['1', '\n', 'x'],
  ['1', '\t', 'x'],
  ['1', '\u3000', 'x'],
  ['May', ' ', 'x'],
  ['May 8', ' , ', 'x'],
  ['in', ' ', 'x'],
  ['password', ' ', 'x'],
  ['-----BEGIN PRIVATE KEY-----', '\\n', '!'],
  ['-----BEGIN PRIVATE KEY-----\nAAAAAAAAAAAAAAAAAAAA', ' AAAA', '!'],
  ['<system-reminder', ' ', 'x'],
  ['{"id":', ' ', 'x'],
  ['+1', ' 1', 'x'],
  ['Bearer', ' ', '!'],
] as const;
/** A first look at a quarter of the sizes, then the inputs that grew too much measured again at full size. */
const SCREEN = [500, 2_000] as const;
const SIZES = [2_000, 8_000] as const;
const BOUND = 10;

const inputs = (n: number): string[] => {
  const filled = (run: string): string => run.repeat(Math.ceil(n / run.length)).slice(0, n);
  return [
    ...SHAPES.map(([before, run, after]) => before + filled(run) + after),
    ...RUNS.flatMap((run) => AROUND.map(([before, after]) => before + filled(run) + after)),
  ];
};

/** Runs `re` over `text` the way the code does: every match of a global or sticky pattern, else the first. */
function run(re: RegExp, text: string): void {
  re.lastIndex = 0;
  if (!re.global && !re.sticky) {
    re.exec(text);
    return;
  }
  for (let m = re.exec(text); m !== null; m = re.exec(text)) if (m[0] === '') re.lastIndex += 1;
  re.lastIndex = 0;
}

function timeOf(re: RegExp, text: string, times: number): number {
  const start = performance.now();
  for (let i = 0; i < times; i++) run(re, text);
  return performance.now() - start;
}

/** The ratio of the fastest of `trials` timings at each size, the sizes interleaved so load hits both alike. */
function growth(re: RegExp, small: string, large: string, trials: number): number {
  // Enough runs per trial that a fast pattern's trial is not all timer and call overhead.
  const once = Math.max(timeOf(re, small, 1), 1e-3);
  const times = Math.min(200, Math.max(1, Math.ceil(0.5 / once)));
  let s = Infinity;
  let l = Infinity;
  for (let t = 0; t < trials; t++) {
    s = Math.min(s, timeOf(re, small, times));
    l = Math.min(l, timeOf(re, large, times));
  }
  return l / Math.max(s, 1e-3);
}

/**
 * The first input on which `re` grows more than BOUND× from 2,000 to 8,000 characters in three
 * measurements in a row; undefined when none. One run of each input at a quarter of the size
 * first: most inputs are nowhere near the bound, and a run that is (noise, mostly) is measured again.
 */
function superLinear(
  re: RegExp,
  screen: readonly (readonly [string, string])[],
  full: readonly (readonly [string, string])[],
): { input: string; ratio: number } | undefined {
  // V8 interprets a pattern's first run and compiles it for the next: the first run is not measured.
  run(re, screen[0]![0]);
  for (let i = 0; i < full.length; i++) {
    const [small, large] = screen[i]!;
    if (timeOf(re, large, 1) <= BOUND * Math.max(timeOf(re, small, 1), 1e-3)) continue;
    let ratio = Infinity;
    for (let confirm = 0; confirm < 3 && ratio > BOUND; confirm++) ratio = Math.min(ratio, growth(re, full[i]![0], full[i]![1], 5));
    if (ratio > BOUND) return { input: full[i]![0], ratio };
  }
  return undefined;
}

const shape = (input: string): string => JSON.stringify(input.length > 60 ? `${input.slice(0, 30)}…${input.slice(-15)}` : input);

describe('regular expressions of src/ (issue 35)', () => {
  const { literals, built } = patternsOfSource();

  it('knows every pattern built with new RegExp', () => {
    const known = Object.fromEntries(Object.entries(BUILT).map(([f, b]) => [f, b.count]));
    expect(Object.fromEntries(built), 'a new RegExp( in src/: export its pattern and add it to BUILT here').toEqual(known);
    expect(literals.length).toBeGreaterThan(200);
  });

  it('takes time linear in the input on long runs of every kind of character', { timeout: 600_000 }, () => {
    const pairs = (sizes: readonly [number, number]): [string, string][] => {
      const [small, large] = [inputs(sizes[0]), inputs(sizes[1])];
      return small.map((s, i) => [s, large[i]!]);
    };
    const [screen, full] = [pairs(SCREEN), pairs(SIZES)];
    const all: Found[] = [
      ...literals,
      ...Object.entries(BUILT).flatMap(([file, b]) => b.patterns.map((re) => ({ where: `${file} ${re.toString()}`, re }))),
    ];
    const slow: string[] = [];
    for (const { where, re } of all) {
      const found = superLinear(new RegExp(re.source, re.flags), screen, full);
      if (found !== undefined) slow.push(`${where}: ${found.ratio.toFixed(1)}× on ${shape(found.input)}`);
    }
    expect(slow).toEqual([]);
  });
});
