/**
 * Every repository path the docs and the code's comments cite exists (issue 27): a reader who
 * clones Limbic can follow each one. Also holds README.md to its 150 lines.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Paths written from the repository root: `src/core/config.ts`, `bench/results/`, `docs/ranking.md`. */
const ROOTED = /(?<![\w./-])(?:src|docs|bench|test|web|spec|\.ci)\/[\w./-]*[\w/]/g;
/** Any Markdown file named in a comment (`seed-system.md`, `../shared/DESIGN.md`, `README.md`). */
const MARKDOWN = /(?<![\w./-])(?:\.\.?\/)*[\w./-]*\w\.md\b/g;
/** Markdown links: [text](target). */
const LINK = /\]\(([^)\s]+)\)/g;

function filesUnder(dir: string, ending: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith(ending))
    .map((f) => join(dir, f));
}

/** The comments of a TypeScript file, each with the line it starts on (leading and trailing comments of every node). */
function commentsOf(file: string): { line: number; text: string }[] {
  const text = readFileSync(join(root, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const seen = new Map<number, { line: number; text: string }>();
  const collect = (ranges: readonly ts.CommentRange[] | undefined): void => {
    for (const r of ranges ?? []) {
      if (!seen.has(r.pos)) seen.set(r.pos, { line: source.getLineAndCharacterOfPosition(r.pos).line + 1, text: text.slice(r.pos, r.end) });
    }
  };
  const visit = (node: ts.Node): void => {
    collect(ts.getLeadingCommentRanges(text, node.pos));
    collect(ts.getTrailingCommentRanges(text, node.end));
    ts.forEachChild(node, visit);
  };
  visit(source);
  collect(ts.getLeadingCommentRanges(text, source.endOfFileToken.pos));
  return [...seen.values()].flatMap(({ line, text: comment }) => comment.split('\n').map((part, i) => ({ line: line + i, text: part })));
}

/** Whether `path` (relative to `base`, a folder of the repository) names a file or folder inside the repository. */
function inRepository(base: string, path: string): boolean {
  const target = resolve(root, base, path.split('#')[0] ?? '');
  return (target === root || target.startsWith(root + sep)) && existsSync(target);
}

/** A bare file name (`DEPENDENCIES.md`): at the root or in docs/. */
const bareName = (path: string): boolean => !path.includes('/') && (existsSync(join(root, path)) || existsSync(join(root, 'docs', path)));

function missingIn(file: string, line: number, text: string, base: string, options: { markdownNames: boolean }): string[] {
  const missing = new Set<string>();
  for (const [path] of text.matchAll(ROOTED)) if (!inRepository('.', path)) missing.add(`${file}:${line}: ${path}`);
  if (options.markdownNames) {
    for (const [path] of text.matchAll(MARKDOWN)) {
      if (ROOTED.test(path)) {
        ROOTED.lastIndex = 0;
        continue;
      }
      ROOTED.lastIndex = 0;
      if (!bareName(path) && !inRepository(base, path)) missing.add(`${file}:${line}: ${path}`);
    }
  }
  for (const [, target] of text.matchAll(LINK)) {
    if (target === undefined || /^[a-z]+:/i.test(target) || target.startsWith('#')) continue;
    if (!inRepository(base, target)) missing.add(`${file}:${line}: ${target}`);
  }
  return [...missing];
}

const documents = ['README.md', 'CHANGELOG.md', ...filesUnder('docs', '.md')].filter((f) => existsSync(join(root, f)));

describe('paths cited in the repository', () => {
  it('every path in README.md, CHANGELOG.md and docs/*.md exists', () => {
    const missing = documents.flatMap((file) =>
      readFileSync(join(root, file), 'utf8')
        .split('\n')
        .flatMap((text, i) => missingIn(file, i + 1, text, dirname(file), { markdownNames: false })),
    );
    expect(missing).toEqual([]);
  });

  it('every path and document a comment in src/ cites exists in the repository', () => {
    const missing = filesUnder('src', '.ts').flatMap((file) =>
      commentsOf(file).flatMap(({ line, text }) => missingIn(file, line, text, '.', { markdownNames: true })),
    );
    expect(missing).toEqual([]);
  });

  it('README.md is at most 150 lines, with docs/ for depth', () => {
    const lines = readFileSync(join(root, 'README.md'), 'utf8').trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(150);
  });

  it('finds a missing path, so the checks above can fail', () => {
    expect(missingIn('x.md', 1, 'see `src/core/no-such-file.ts` and [a](docs/nowhere.md)', '.', { markdownNames: false })).toHaveLength(2);
    expect(missingIn('x.ts', 1, '// spec/limbic-system.md and seed-system.md', '.', { markdownNames: true })).toHaveLength(2);
    expect(missingIn('x.ts', 1, '// ../shared/DESIGN.md', '.', { markdownNames: true })).toHaveLength(1);
    expect(missingIn('x.ts', 1, '// docs/ranking.md, DEPENDENCIES.md, src/core/', '.', { markdownNames: true })).toEqual([]);
    expect(statSync(join(root, 'docs')).isDirectory()).toBe(true);
  });
});
