/**
 * Architecture rules as a test (STYLE.md rule 10, DESIGN.md "Architecture"): walks src/, parses every
 * module specifier with the TypeScript parser (so comments and strings never count) and fails on
 * imports that point the wrong way.
 */
import { describe, it, expect } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, posix, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SRC = join(ROOT, 'src');

/** Folders holding a concrete backend: only src/cli/app.ts (and the folder itself) may import them. */
const CONCRETE_BACKENDS = ['src/store/sqlite/', 'src/store/postgres/', 'src/embed/onnx/'] as const;
/** Interfaces with one subfolder per backend; sibling backends never import each other. */
const BACKEND_PARENTS = ['src/store/', 'src/embed/'] as const;
/** Drivers owned by one backend folder each. */
const DRIVER_OWNERS: Readonly<Record<string, string>> = {
  'better-sqlite3': 'src/store/sqlite/',
  'sqlite-vec': 'src/store/sqlite/',
  usearch: 'src/store/sqlite/',
  pg: 'src/store/postgres/',
  pgvector: 'src/store/postgres/',
  '@huggingface/tokenizers': 'src/embed/onnx/',
  'onnxruntime-node': 'src/embed/onnx/',
};
/** Heavy runtimes are loaded with `await import()` so start-up and FTS-only use never pay for them. */
const LAZY_PACKAGES = ['@huggingface/tokenizers', 'onnxruntime-node', 'pg', 'usearch'] as const;
/** The packages src/core may use: pure code and data, no I/O (schemas; stopword lists: stopword, lunr + lunr-languages). */
const CORE_PACKAGES = ['zod', 'stopword', 'lunr', 'lunr-languages'] as const;
const COMPOSITION_ROOT = 'src/cli/app.ts';

interface RawImport {
  readonly specifier: string;
  /** `import()` (or `require()`), evaluated at run time rather than at load. */
  readonly dynamic: boolean;
  /** Erased at compile time: `import type`, `export type … from`, `import('x').T` in a type. */
  readonly typeOnly: boolean;
}

type Target =
  | { readonly kind: 'project'; readonly path: string }
  | { readonly kind: 'builtin'; readonly name: string }
  | { readonly kind: 'package'; readonly name: string }
  | { readonly kind: 'unknown' };

interface Edge extends RawImport {
  /** Importing file, relative to the repository root with "/" separators ("src/core/jsonl.ts"). */
  readonly from: string;
  readonly target: Target;
}

/** Every module specifier of one source file: static, re-exports, dynamic, require, type imports. */
function parseImports(source: string, fileName = 'module.ts'): RawImport[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: RawImport[] = [];
  const literal = (node: ts.Node | undefined): string | undefined =>
    node !== undefined && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : undefined;
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const specifier = literal(node.moduleSpecifier);
      if (specifier !== undefined) found.push({ specifier, dynamic: false, typeOnly: node.importClause?.isTypeOnly ?? false });
    } else if (ts.isExportDeclaration(node)) {
      const specifier = literal(node.moduleSpecifier);
      if (specifier !== undefined) found.push({ specifier, dynamic: false, typeOnly: node.isTypeOnly });
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const specifier = literal(node.moduleReference.expression);
      if (specifier !== undefined) found.push({ specifier, dynamic: false, typeOnly: node.isTypeOnly });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const specifier = literal(node.argument.literal);
      if (specifier !== undefined) found.push({ specifier, dynamic: false, typeOnly: true });
    } else if (ts.isCallExpression(node)) {
      const isImport = node.expression.kind === ts.SyntaxKind.ImportKeyword;
      const isRequire = ts.isIdentifier(node.expression) && node.expression.text === 'require';
      if (isImport || isRequire) {
        // A computed specifier cannot be checked, so it is recorded as such and reported.
        found.push({ specifier: literal(node.arguments[0]) ?? '<computed>', dynamic: true, typeOnly: false });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

function toPosix(path: string): string {
  return path.split(sep).join(posix.sep);
}

/** Where a specifier written in `fromAbs` points. Relative ".js" specifiers name the ".ts" source. */
function resolveTarget(fromAbs: string, specifier: string): Target {
  if (specifier === '<computed>') return { kind: 'unknown' };
  if (specifier.startsWith('.') || specifier.startsWith('/')) {
    const abs = resolve(dirname(fromAbs), specifier)
      .replace(/\.js$/, '.ts')
      .replace(/\.mjs$/, '.mts')
      .replace(/\.cjs$/, '.cts');
    return { kind: 'project', path: toPosix(relative(ROOT, abs)) };
  }
  const bare = specifier.startsWith('node:') ? specifier.slice(5) : specifier;
  if (specifier.startsWith('node:') || builtinModules.includes(bare.split('/')[0] ?? '')) return { kind: 'builtin', name: specifier };
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
  return { kind: 'package', name };
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return walk(path);
    return /\.(ts|mts|cts|tsx)$/.test(entry.name) ? [path] : [];
  });
}

function collectEdges(): { files: string[]; edges: Edge[] } {
  const files = walk(SRC);
  const edges = files.flatMap((abs) =>
    parseImports(readFileSync(abs, 'utf8'), abs).map((raw) => ({
      ...raw,
      from: toPosix(relative(ROOT, abs)),
      target: resolveTarget(abs, raw.specifier),
    })),
  );
  return { files: files.map((f) => toPosix(relative(ROOT, f))), edges };
}

const inFolder = (path: string, folder: string): boolean => path.startsWith(folder);
const backendOf = (path: string, parent: string): string | undefined =>
  inFolder(path, parent) ? path.slice(parent.length).split('/').slice(0, -1)[0] : undefined;

/** Every rule broken by these edges, one readable line each. */
function layeringViolations(edges: readonly Edge[]): string[] {
  const out: string[] = [];
  for (const e of edges) {
    const t = e.target;
    const at = `${e.from} imports '${e.specifier}'`;
    if (t.kind === 'unknown') out.push(`${at}: a computed import() cannot be checked`);

    // src/core does no I/O and imports no other project folder.
    if (inFolder(e.from, 'src/core/')) {
      if (t.kind === 'builtin') out.push(`${at}: src/core must not use Node built-ins`);
      if (t.kind === 'package' && !CORE_PACKAGES.some((p) => p === t.name))
        out.push(`${at}: src/core may only use ${CORE_PACKAGES.join(', ')}`);
      if (t.kind === 'project' && !inFolder(t.path, 'src/core/')) out.push(`${at}: src/core must not import outside src/core`);
    }

    if (t.kind === 'project') {
      // Backends never import each other.
      for (const parent of BACKEND_PARENTS) {
        const mine = backendOf(e.from, parent);
        const theirs = backendOf(t.path, parent);
        if (mine !== undefined && theirs !== undefined && mine !== theirs) {
          out.push(`${at}: backend ${parent}${mine}/ must not import backend ${parent}${theirs}/`);
        }
      }
      // Only the composition root names concrete backends.
      for (const backend of CONCRETE_BACKENDS) {
        if (inFolder(t.path, backend) && !inFolder(e.from, backend) && e.from !== COMPOSITION_ROOT) {
          out.push(`${at}: only ${COMPOSITION_ROOT} may import the concrete backend ${backend}`);
        }
      }
      // The MCP adapter goes through the service, never a store.
      if (inFolder(e.from, 'src/mcp/') && inFolder(t.path, 'src/store/')) out.push(`${at}: src/mcp must not import src/store`);
      // Use cases depend on interfaces only.
      if (inFolder(e.from, 'src/service/') && CONCRETE_BACKENDS.some((b) => inFolder(t.path, b))) {
        out.push(`${at}: src/service must depend on interfaces, not concrete backends`);
      }
    }

    if (t.kind === 'package') {
      const owner = DRIVER_OWNERS[t.name];
      if (owner !== undefined && !inFolder(e.from, owner)) out.push(`${at}: the driver '${t.name}' belongs to ${owner}`);
      if (LAZY_PACKAGES.some((p) => p === t.name) && !e.dynamic && !e.typeOnly) {
        out.push(`${at}: '${t.name}' is heavy and must be loaded with await import()`);
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

describe('parseImports', () => {
  it('finds static, side-effect, re-export, type-only, dynamic and require specifiers', () => {
    const source = `
      import a from './a.js';
      import { b,
        c } from "./b.js";
      import type { T } from '../types.js';
      import './side-effect.js';
      import * as ns from 'node:fs';
      export { d } from './d.js';
      export * from './star.js';
      export type { U } from './u.js';
      const lazy = await import('./lazy.js');
      const old = require('./old.js');
      type X = import('./typed.js').X;
      const computed = await import(name);
    `;
    expect(parseImports(source)).toEqual([
      { specifier: './a.js', dynamic: false, typeOnly: false },
      { specifier: './b.js', dynamic: false, typeOnly: false },
      { specifier: '../types.js', dynamic: false, typeOnly: true },
      { specifier: './side-effect.js', dynamic: false, typeOnly: false },
      { specifier: 'node:fs', dynamic: false, typeOnly: false },
      { specifier: './d.js', dynamic: false, typeOnly: false },
      { specifier: './star.js', dynamic: false, typeOnly: false },
      { specifier: './u.js', dynamic: false, typeOnly: true },
      { specifier: './lazy.js', dynamic: true, typeOnly: false },
      { specifier: './old.js', dynamic: true, typeOnly: false },
      { specifier: './typed.js', dynamic: false, typeOnly: true },
      { specifier: '<computed>', dynamic: true, typeOnly: false },
    ]);
  });

  it('ignores import-like text in comments and strings', () => {
    const source = `
      // import x from 'node:fs';
      /** @example import { y } from '../store/sqlite/sqlite-store.js' */
      const s = "import z from 'node:os'";
      const t = \`export * from './nowhere.js'\`;
    `;
    expect(parseImports(source)).toEqual([]);
  });
});

describe('resolveTarget', () => {
  const from = join(SRC, 'core/rank/limbic.ts');

  it('maps relative .js specifiers to the .ts source under the repository root', () => {
    expect(resolveTarget(from, './constants.js')).toEqual({ kind: 'project', path: 'src/core/rank/constants.ts' });
    expect(resolveTarget(from, '../../store/store.js')).toEqual({ kind: 'project', path: 'src/store/store.ts' });
  });

  it('tells built-ins (with or without node:) from packages, keeping scopes', () => {
    expect(resolveTarget(from, 'node:fs')).toEqual({ kind: 'builtin', name: 'node:fs' });
    expect(resolveTarget(from, 'fs/promises')).toEqual({ kind: 'builtin', name: 'fs/promises' });
    expect(resolveTarget(from, 'zod')).toEqual({ kind: 'package', name: 'zod' });
    expect(resolveTarget(from, '@modelcontextprotocol/sdk/server/mcp.js')).toEqual({ kind: 'package', name: '@modelcontextprotocol/sdk' });
  });
});

describe('layeringViolations catches each forbidden import', () => {
  const edge = (from: string, specifier: string, extra: Partial<RawImport> = {}): Edge => {
    const raw: RawImport = { specifier, dynamic: false, typeOnly: false, ...extra };
    return { ...raw, from, target: resolveTarget(join(ROOT, from), specifier) };
  };

  it.each([
    ['src/core/jsonl.ts', 'node:fs', /src\/core must not use Node built-ins/],
    ['src/core/jsonl.ts', 'path', /src\/core must not use Node built-ins/],
    ['src/core/rank/limbic.ts', 'better-sqlite3', /src\/core may only use zod/],
    ['src/core/jsonl.ts', '../store/store.js', /src\/core must not import outside src\/core/],
    ['src/core/rank/limbic.ts', '../../service/recall.js', /src\/core must not import outside src\/core/],
    ['src/core/types.ts', '../../package.json', /src\/core must not import outside src\/core/],
    [
      'src/store/sqlite/sqlite-store.ts',
      '../postgres/postgres-store.js',
      /backend src\/store\/sqlite\/ must not import backend src\/store\/postgres\//,
    ],
    [
      'src/store/postgres/postgres-store.ts',
      '../sqlite/schema.js',
      /backend src\/store\/postgres\/ must not import backend src\/store\/sqlite\//,
    ],
    ['src/embed/onnx/onnx-embedder.ts', '../other/other-embedder.js', /backend src\/embed\/onnx\/ must not import/],
    ['src/service/recall.ts', '../store/sqlite/sqlite-store.js', /src\/service must depend on interfaces/],
    ['src/service/recall.ts', '../store/postgres/postgres-store.js', /src\/service must depend on interfaces/],
    ['src/service/recall.ts', '../embed/onnx/onnx-embedder.js', /src\/service must depend on interfaces/],
    ['src/mcp/server.ts', '../store/store.js', /src\/mcp must not import src\/store/],
    ['src/mcp/server.ts', '../store/sqlite/sqlite-store.js', /src\/mcp must not import src\/store/],
    ['src/cli/import-file.ts', '../store/sqlite/sqlite-store.js', /only src\/cli\/app.ts may import/],
    ['src/cli/import-file.ts', '../embed/onnx/model-files.js', /only src\/cli\/app.ts may import/],
    ['src/http/server.ts', '../store/postgres/postgres-store.js', /only src\/cli\/app.ts may import/],
    ['src/service/recall.ts', 'better-sqlite3', /the driver 'better-sqlite3' belongs to src\/store\/sqlite\//],
    ['src/embed/onnx/onnx-embedder.ts', 'onnxruntime-node', /must be loaded with await import/],
  ])('%s → %s', (from, specifier, message) => {
    const violations = layeringViolations([edge(from, specifier)]);
    expect(
      violations.some((v) => message.test(v)),
      violations.join('\n'),
    ).toBe(true);
  });

  it('flags a type-only import into src/store from src/mcp too', () => {
    expect(layeringViolations([edge('src/mcp/server.ts', '../store/store.js', { typeOnly: true })])).toHaveLength(1);
  });

  it('flags a dynamic import into a concrete backend from outside the composition root', () => {
    const violations = layeringViolations([edge('src/mcp/server.ts', '../embed/onnx/onnx-embedder.js', { dynamic: true })]);
    expect(violations).toEqual([
      "src/mcp/server.ts imports '../embed/onnx/onnx-embedder.js': only src/cli/app.ts may import the concrete backend src/embed/onnx/",
    ]);
  });

  it('flags a computed import()', () => {
    expect(layeringViolations([edge('src/cli/main.ts', '<computed>', { dynamic: true })])).toHaveLength(1);
  });

  it.each([
    ['src/core/rank/limbic.ts', './constants.js'],
    ['src/core/rank/limbic.ts', '../types.js'],
    ['src/core/config.ts', 'zod'],
    ['src/cli/app.ts', '../store/sqlite/sqlite-store.js'],
    ['src/cli/app.ts', '../embed/onnx/model-files.js'],
    ['src/store/sqlite/sqlite-store.ts', './schema.js'],
    ['src/store/sqlite/sqlite-store.ts', '../store.js'],
    ['src/store/sqlite/sqlite-store.ts', 'better-sqlite3'],
    ['src/service/recall.ts', '../store/store.js'],
    ['src/service/recall.ts', '../embed/embedder.js'],
    ['src/mcp/server.ts', '../service/memory-service.js'],
  ])('allows %s → %s', (from, specifier) => {
    expect(layeringViolations([edge(from, specifier)])).toEqual([]);
  });

  it('allows a heavy runtime through await import() inside its backend only', () => {
    expect(layeringViolations([edge('src/embed/onnx/onnx-embedder.ts', '@huggingface/tokenizers', { dynamic: true })])).toEqual([]);
    expect(layeringViolations([edge('src/embed/onnx/onnx-embedder.ts', '@huggingface/tokenizers')])).toHaveLength(1);
  });
});

describe('src/ respects the layering', () => {
  const { files, edges } = collectEdges();
  const targetsOf = (from: string): string[] =>
    edges.filter((e) => e.from === from && e.target.kind === 'project').map((e) => (e.target as { path: string }).path);

  it('self-check: the walker found the source files and their imports', () => {
    expect(files.length).toBeGreaterThanOrEqual(10);
    expect(files).toContain('src/cli/main.ts');
    expect(files).toContain('src/core/rank/limbic.ts');
    expect(edges.length).toBeGreaterThanOrEqual(30);
    for (const folder of ['src/core/', 'src/service/', 'src/mcp/', 'src/store/', 'src/cli/']) {
      expect(
        edges.some((e) => inFolder(e.from, folder)),
        folder,
      ).toBe(true);
    }
  });

  it('self-check: known imports are seen (static, multi-line, dynamic)', () => {
    expect(targetsOf('src/cli/app.ts')).toContain('src/store/sqlite/sqlite-store.ts');
    expect(targetsOf('src/service/memory-service.ts')).toContain('src/core/types.ts');
    expect(targetsOf('src/core/rank/limbic.ts')).toContain('src/core/rank/constants.ts');
    expect(edges.some((e) => e.dynamic && e.target.kind === 'project')).toBe(true);
  });

  it('self-check: every relative import resolves to an existing source file', () => {
    const missing = edges.filter((e) => e.target.kind === 'project' && !existsSync(join(ROOT, e.target.path)));
    expect(missing.map((e) => `${e.from} → ${e.specifier}`)).toEqual([]);
  });

  it('has no forbidden import', () => {
    expect(layeringViolations(edges)).toEqual([]);
  });
});

/** Where a source file reads `process.env` (property access or destructuring), by line. */
function environmentReads(source: string, fileName = 'module.ts'): number[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const lines: number[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isPropertyAccessExpression(node) &&
      node.name.text === 'env' &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'process'
    ) {
      lines.push(file.getLineAndCharacterOfPosition(node.getStart()).line + 1);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return lines;
}

describe('only the composition root reads the environment', () => {
  it('finds a read, and not one in a comment or a string', () => {
    expect(environmentReads('const db = process.env.LIMBIC_DB;\nconst { HOME } = process.env;')).toEqual([1, 2]);
    expect(environmentReads('// process.env.LIMBIC_DB\nconst s = "process.env";')).toEqual([]);
  });

  it(`no module but ${COMPOSITION_ROOT} reads process.env`, () => {
    const readers: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith('.ts')) {
          const rel = relative(ROOT, path).split(sep).join(posix.sep);
          for (const line of environmentReads(readFileSync(path, 'utf8'), path)) readers.push(`${rel}:${line}`);
        }
      }
    };
    walk(SRC);
    expect(readers.some((r) => r.startsWith(`${COMPOSITION_ROOT}:`))).toBe(true);
    expect(readers.filter((r) => !r.startsWith(`${COMPOSITION_ROOT}:`))).toEqual([]);
  });
});
