/**
 * Bad input at volume (issue 10, part 5): a seeded generator of MCP tool calls, the oracle that
 * says what each call must answer, and a runner that sends them through a real MCP client.
 *
 * Calls start valid (they grow and shrink a real graph, so deletes and lookups hit real entities)
 * and are then mutated where the tool's advertised input schema (from listTools) says what a
 * field is: wrong types at every depth, missing and unknown fields, strings at and past their
 * limits, lone surrogates, deep nesting, NUL bytes, FTS5 and SQL syntax, emoji and RTL marks, empty
 * and oversized arrays, numbers out of range. The oracle judges each call independently of Limbic:
 * it checks the arguments against that same JSON schema (plus the rules a JSON schema cannot say:
 * well-formed Unicode, ISO dates) and against a model of the graph, so it knows whether the call
 * must succeed, or must fail with a message naming which fields.
 *
 * Shared by test/mcp/fuzz.test.ts (CI-sized) and bench/fuzz.ts (100,000 calls). A failure prints
 * the seed and the call's index; the same seed replays the same sequence.
 */
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MAX_JSON_DEPTH } from '../../src/mcp/jsonrpc-screen.js';
import { processAlive } from '../../src/os/process-alive.js';

// ---------- seeded PRNG ----------

/** sfc32 seeded through splitmix32: small, fast, and the same sequence on every platform. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(readonly seed: number) {
    let s = seed >>> 0;
    const split = (): number => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = split();
    this.b = split();
    this.c = split();
    this.d = split();
    for (let i = 0; i < 12; i++) this.next();
  }

  /** A float in [0, 1). */
  next(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** Picks by weight: `[[3, 'a'], [1, 'b']]` gives 'a' three times as often. */
  weighted<T>(choices: readonly (readonly [number, T])[]): T {
    const total = choices.reduce((sum, [w]) => sum + w, 0);
    let r = this.next() * total;
    for (const [w, value] of choices) {
      if ((r -= w) < 0) return value;
    }
    return (choices[choices.length - 1] as readonly [number, T])[1];
  }
}

// ---------- value pools ----------

const WORDS = [
  'alice',
  'bob',
  'acme',
  'anvil',
  'memory',
  'graph',
  'project',
  'deadline',
  'meeting',
  'python',
  'typescript',
  'sqlite',
  'vector',
  'limbic',
  'recall',
  'tea',
  'spanish',
  'works',
  'likes',
  'paris',
  'invoice',
  'garden',
  'sesión',
  'café',
  'naïve',
  'mañana',
  'Straße',
  '東京',
  'данные',
  'مرحبا',
  'שלום',
  'ελληνικά',
  'हिन्दी',
  '🧠',
];

/** Well-formed text that is hostile to parsers, indexes and terminals; all of it is valid input. */
export const NASTY_STRINGS: readonly string[] = [
  ' ',
  '\t\n\r',
  '\u0000',
  'nul\u0000inside',
  '\u0000\u0000\u0000',
  'trailing nul\u0000',
  '😀',
  '🧠🔥 emoji 👩‍👩‍👧‍👦',
  '🇪🇸🇯🇵',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
  '𠜎𠜱𠝹𠱓',
  '\u200F\u202Bright-to-left\u202C',
  '\u202Eevil\u202C.txt',
  'مرحبا بالعالم',
  'שלום עולם',
  '\u061C\u200E\u200F',
  '\u200B\u200C\u200D\uFEFF',
  'e\u0301\u0301\u0301',
  'Z\u0364\u0354\u0367\u0311a\u0356\u032D\u0308',
  '\u2028\u2029',
  '\uFFFF\uFFFE',
  '"',
  '""',
  '"unterminated phrase',
  'a AND',
  'OR',
  'NOT',
  'AND OR NOT',
  'NEAR(a b, 2)',
  'NEAR(',
  '*',
  'pre*',
  '^start',
  'name:alice',
  'type:',
  'obs:x',
  'entity_type:x',
  '(',
  ')',
  '((a))',
  '{a b}:c',
  '-',
  '+',
  'a - b',
  'col:"x y"',
  "'",
  'a"b',
  ':',
  "'; DROP TABLE entities; --",
  "' OR '1'='1",
  '%',
  '_',
  '%_%',
  '\\',
  '\\\\%',
  '1; SELECT * FROM sqlite_master',
  '/* */',
  '--',
  "x' UNION SELECT name FROM sqlite_master --",
  "json_each('[1]')",
  'NULL',
  'null',
  'undefined',
  'NaN',
  'Infinity',
  '-0',
  '1e400',
  '0x1F',
  'true',
  '[]',
  '{}',
  '${x}',
  '{{x}}',
  '<script>alert(1)</script>',
  '../../../etc/passwd',
  'C:\\Windows\\system32',
  'x'.repeat(300),
];

/** Strings that are not well-formed UTF-16: a lone or reversed surrogate. Never valid input. */
export const ILL_FORMED_STRINGS: readonly string[] = [
  '\uD800',
  '\uDBFF',
  '\uDC00',
  '\uDFFF',
  'a\uD800b',
  '\uDC00\uD800',
  'end\uD83D',
  '\uDE00start',
  'x\uD83D\uD83Dy',
];

const VALID_DATES = [
  '2026-03-28',
  '2026-03-28T10:00:00Z',
  '2000-01-01T00:00:00.000Z',
  '1999-12-31T23:59:59+02:00',
  '2030-06-15T08:30',
  '2026',
  '2024-02-29',
];
/** Strings Date.parse accepts or that look like dates, but that are not ISO 8601 calendar dates. */
const INVALID_DATES = [
  '0',
  'March 7',
  'yesterday',
  '2026-13-01',
  '2026-02-30',
  '2023-02-29',
  '2026-01-01T25:00:00Z',
  '28/03/2026',
  '',
  '1e400',
];

const STATUSES = ['activo', 'pausado', 'completado', 'archivado', 'active', 'paused', 'completed', 'archived'];
const BAD_ENUM_STRINGS = ['ACTIVE', 'Activo', ' active', 'active ', 'deleted', '', 'activo\u0000', 'FTS', 'semantic ', 'RRF'];
const UNKNOWN_KEYS = [
  'extra',
  'Name',
  'entity_type',
  'strength',
  'confidence',
  'metadata',
  '__proto__',
  'constructor',
  '',
  '😀',
  'a.b',
  'status ',
  'limit_',
];

// ---------- JSON schema (as listTools advertises it) ----------

export interface JsonSchema {
  readonly type?: string;
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean | JsonSchema;
  readonly items?: JsonSchema;
  readonly enum?: readonly unknown[];
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly minimum?: number;
  readonly maximum?: number;
}

export interface ToolSpec {
  readonly name: string;
  readonly inputSchema: JsonSchema;
}

export type Path = readonly (string | number)[];

/** A path as the MCP SDK (v2) prints it in a validation message: `entities.0.name`. */
export function formatPath(path: Path): string {
  return path.map(String).join('.');
}

/** Fields whose strings must be ISO 8601 dates: a rule the advertised JSON schema cannot state. */
const isDateField = (path: Path): boolean =>
  path.length === 2 && path[0] === 'filters' && /^(created|updated)_(after|before)$/.test(String(path[1]));

const isWellFormed = (s: string): boolean => !/\p{Cs}/u.test(s);

function codePoints(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const unit = s.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < s.length) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

// ---------- the oracle ----------

/** What a call must answer. */
export type Expectation =
  | { readonly outcome: 'ok' }
  /** isError, and the text names each of `mustName` and says what was expected. */
  | { readonly outcome: 'error'; readonly mustName: readonly string[]; readonly pattern: RegExp }
  /** Valid input whose answer depends on something the generator does not model (keyword hits without a model). */
  | { readonly outcome: 'ok-or-error'; readonly pattern: RegExp };

interface Issue {
  readonly path: Path;
  /** For an unknown key: the key, which the message must name too. */
  readonly key?: string;
}

/** Words a schema message uses to say what was expected. */
export const EXPECTATION_WORDS = /expected|must|limit|at most|at least|one of|unrecognized|unknown|required|well-formed|ISO 8601/i;

function typeMatches(schema: JsonSchema, value: unknown): boolean {
  switch (schema.type) {
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    default:
      return true;
  }
}

/** Checks a value against the advertised schema and Limbic's extra rules, collecting every issue. */
export function validate(schema: JsonSchema, value: unknown, path: Path = [], issues: Issue[] = []): Issue[] {
  if (!typeMatches(schema, value)) {
    issues.push({ path });
    return issues;
  }
  if (schema.enum !== undefined && !schema.enum.includes(value)) issues.push({ path });
  if (typeof value === 'string') {
    // JSON Schema (and zod) count a string's length in code points, not UTF-16 units.
    const length = codePoints(value);
    if (schema.maxLength !== undefined && length > schema.maxLength) issues.push({ path });
    if (schema.minLength !== undefined && length < schema.minLength) issues.push({ path });
    if (!isWellFormed(value)) issues.push({ path });
    if (isDateField(path) && !VALID_DATES.includes(value)) issues.push({ path });
  } else if (typeof value === 'number') {
    if (schema.maximum !== undefined && value > schema.maximum) issues.push({ path });
    if (schema.minimum !== undefined && value < schema.minimum) issues.push({ path });
  } else if (Array.isArray(value)) {
    const tooMany = schema.maxItems !== undefined && value.length > schema.maxItems;
    const tooFew = schema.minItems !== undefined && value.length < schema.minItems;
    // An array of the wrong size is refused as a whole; its items are not reported one by one.
    if (tooMany || tooFew) issues.push({ path });
    else if (schema.items !== undefined) value.forEach((item, i) => validate(schema.items as JsonSchema, item, [...path, i], issues));
  } else if (typeof value === 'object' && value !== null && schema.type === 'object') {
    const record = value as Record<string, unknown>;
    const properties = schema.properties ?? {};
    for (const key of schema.required ?? []) if (!Object.hasOwn(record, key)) issues.push({ path: [...path, key] });
    for (const [key, child] of Object.entries(properties)) {
      if (Object.hasOwn(record, key)) validate(child, record[key], [...path, key], issues);
    }
    if (schema.additionalProperties === false) {
      for (const key of Object.keys(record)) if (!Object.hasOwn(properties, key)) issues.push({ path, key });
    }
  }
  return issues;
}

/** What Limbic must answer to valid arguments, given the graph and whether a model is loaded. */
function semanticExpectation(tool: string, args: Record<string, unknown>, model: GraphModel, semantic: boolean): Expectation {
  const missing = (name: string): Expectation => ({
    outcome: 'error',
    mustName: [`Entity with name ${name} not found`],
    pattern: /create_entities/,
  });
  switch (tool) {
    case 'add_observations': {
      // Limbic's supersedes: the first bad item (missing entity, or a text that is no current
      // observation) decides the message; the model follows the answer's `superseded`.
      if ((args.observations as { supersedes?: string }[]).some((o) => o.supersedes !== undefined)) {
        return { outcome: 'ok-or-error', pattern: /not a current observation|cannot replace itself|not found/ };
      }
      for (const item of args.observations as { entityName: string }[]) if (!model.has(item.entityName)) return missing(item.entityName);
      return { outcome: 'ok' };
    }
    case 'set_entity_status': {
      // The two names of one field: one is required, and given both, they must agree.
      if (args.entity_name === undefined && args.name === undefined)
        return { outcome: 'error', mustName: ['entity_name'], pattern: /entity_name is required/ };
      if (args.entity_name !== undefined && args.name !== undefined && nfc(args.entity_name as string) !== nfc(args.name as string))
        return { outcome: 'error', mustName: ['entity_name'], pattern: /two different entities/ };
      const target = (args.entity_name ?? args.name) as string;
      return model.has(target) ? { outcome: 'ok' } : missing(target);
    }
    case 'search_semantic':
      return semantic ? { outcome: 'ok' } : { outcome: 'ok-or-error', pattern: /embedding model/ };
    case 'hybrid_search': {
      const modes = args.search_modes as string[] | undefined;
      if (!semantic && modes?.includes('semantic') === true) {
        return { outcome: 'error', mustName: ['"semantic"'], pattern: /unavailable.*search_modes \["fts"\]/ };
      }
      if (args.rerank === true) return { outcome: 'error', mustName: ['rerank'], pattern: /cross-encoder/ };
      return { outcome: 'ok' };
    }
    // Maintenance tools (issue 16, part 3): an entity or relation the graph lacks is refused by name.
    case 'find_duplicate_observations':
    case 'analyze_entity_split':
    case 'propose_entity_split':
      return model.has(args.entity_name as string) ? { outcome: 'ok' } : missing(args.entity_name as string);
    case 'end_relation':
      return model.relations.has(relationKey(args as { from: string; to: string; relationType: string }))
        ? { outcome: 'ok' }
        : { outcome: 'error', mustName: [`-[${String(args.relationType)}]->`], pattern: /not found.*open_nodes/ };
    case 'add_reflection': {
      const absent = ((args.about ?? []) as string[]).find((name) => !model.has(name));
      return absent === undefined ? { outcome: 'ok' } : missing(absent);
    }
    case 'execute_entity_split': {
      if (!model.has(args.entity_name as string)) return missing(args.entity_name as string);
      const parent = args.parent_entity_name as string | undefined;
      if (parent !== undefined && !model.has(parent)) return missing(parent);
      // Random splits name observations the original lacks, or names already taken: refused whole.
      return { outcome: 'ok-or-error', pattern: /not a current observation|exists already|given to both|given twice/ };
    }
    default:
      return { outcome: 'ok' };
  }
}

/** The oracle: schema issues first (Limbic refuses the whole call), then the graph's rules. */
export function expectationFor(spec: ToolSpec, args: Record<string, unknown>, model: GraphModel, semantic: boolean): Expectation {
  // The SDK copies `arguments` into a fresh object before a tool sees it, and a top-level
  // "__proto__" key does not survive the copy: the server never sees it, so it cannot refuse it.
  if (Object.hasOwn(args, '__proto__')) {
    return expectationFor(spec, Object.fromEntries(Object.entries(args).filter(([k]) => k !== '__proto__')), model, semantic);
  }
  const issues = validate(spec.inputSchema, args);
  if (issues.length > 0) {
    const names = new Set<string>();
    for (const issue of issues) {
      if (issue.path.length > 0) names.add(formatPath(issue.path));
      if (issue.key !== undefined) names.add(`"${issue.key}"`);
    }
    return { outcome: 'error', mustName: [...names], pattern: EXPECTATION_WORDS };
  }
  return semanticExpectation(spec.name, args, model, semantic);
}

// ---------- the graph model ----------

interface ModelEntity {
  readonly observations: Set<string>;
  chars: number;
}

/** Text as the server stores and compares it: in NFC, whatever form a call sent (issue 26). */
const nfc = (text: string): string => text.normalize('NFC');

const relationKey = (r: { from: string; to: string; relationType: string }): string =>
  JSON.stringify([nfc(r.from), nfc(r.to), nfc(r.relationType)]);

/** What the graph must hold, updated from the answers to successful calls. */
export class GraphModel {
  readonly entities = new Map<string, ModelEntity>();
  readonly relations = new Map<string, { from: string; to: string; relationType: string; context?: string }>();
  /** JSON characters stored, so the generator keeps read_graph answers to a size a client can read. */
  storedChars = 0;

  has(name: string): boolean {
    return this.entities.has(nfc(name));
  }

  names(): string[] {
    return [...this.entities.keys()];
  }

  get observationCount(): number {
    let n = 0;
    for (const e of this.entities.values()) n += e.observations.size;
    return n;
  }

  /** A reflection (add_reflection, run_consolidation): an entity with its text, linked reflects_on. */
  private addReflection(name: string, observations: readonly string[], about: readonly string[]): void {
    const chars = JSON.stringify(name).length + JSON.stringify('Reflection').length;
    this.entities.set(name, { observations: new Set(), chars });
    this.storedChars += chars;
    for (const o of observations) this.addObservation(name, o);
    for (const to of about) {
      const r = { from: name, to, relationType: 'reflects_on' };
      this.relations.set(relationKey(r), r);
    }
  }

  private addObservation(name: string, content: string): void {
    const entity = this.entities.get(name);
    if (entity === undefined || entity.observations.has(content)) return;
    entity.observations.add(content);
    const size = JSON.stringify(content).length;
    entity.chars += size;
    this.storedChars += size;
  }

  private removeEntity(name: string): void {
    const entity = this.entities.get(name);
    if (entity !== undefined) this.storedChars -= entity.chars;
    this.entities.delete(name);
    for (const [key, r] of this.relations) if (r.from === name || r.to === name) this.relations.delete(key);
  }

  /** Applies a successful call: what it added comes from the answer, what it removed from the arguments. */
  apply(tool: string, args: Record<string, unknown>, structured: Record<string, unknown> | undefined): void {
    switch (tool) {
      case 'create_entities':
        for (const e of (structured?.entities ?? []) as { name: string; entityType: string; observations: string[] }[]) {
          const chars = JSON.stringify(e.name).length + JSON.stringify(e.entityType).length;
          this.entities.set(e.name, { observations: new Set(), chars });
          this.storedChars += chars;
          for (const o of e.observations) this.addObservation(e.name, o);
        }
        return;
      case 'create_relations':
        // An answer lists a relation with its context when it has one (issue 25).
        for (const r of (structured?.relations ?? []) as { from: string; to: string; relationType: string; context?: string }[])
          this.relations.set(relationKey(r), r);
        return;
      case 'add_observations':
        for (const r of (structured?.results ?? []) as { entityName: string; addedObservations: string[]; superseded?: string }[]) {
          for (const o of r.addedObservations) this.addObservation(r.entityName, o);
          const entity = this.entities.get(r.entityName);
          if (r.superseded !== undefined && entity?.observations.delete(r.superseded) === true) {
            entity.chars -= JSON.stringify(r.superseded).length;
            this.storedChars -= JSON.stringify(r.superseded).length;
          }
        }
        return;
      case 'delete_entities':
        for (const name of args.entityNames as string[]) this.removeEntity(nfc(name));
        return;
      case 'delete_observations':
        for (const d of args.deletions as { entityName: string; observations: string[] }[]) {
          const entity = this.entities.get(nfc(d.entityName));
          if (entity === undefined) continue;
          for (const o of d.observations.map(nfc)) {
            if (!entity.observations.delete(o)) continue;
            const size = JSON.stringify(o).length;
            entity.chars -= size;
            this.storedChars -= size;
          }
        }
        return;
      case 'delete_relations':
        for (const r of args.relations as { from: string; to: string; relationType: string }[]) this.relations.delete(relationKey(r));
        return;
      case 'add_reflection': {
        const r = structured?.reflection as { name: string; content: string; about: string[]; author?: string; mood?: string } | undefined;
        if (r !== undefined) {
          const meta = [...(r.author === undefined ? [] : [`author: ${r.author}`]), ...(r.mood === undefined ? [] : [`mood: ${r.mood}`])];
          this.addReflection(r.name, [r.content, ...meta], r.about);
        }
        return;
      }
      case 'run_consolidation':
        for (const r of (structured?.reflections_created ?? []) as { name: string; content: string; sources: string[] }[]) {
          this.addReflection(r.name, [r.content, 'source: consolidation run'], r.sources);
        }
        return;
      case 'execute_entity_split': {
        const original = nfc(args.entity_name as string);
        const parent = nfc((args.parent_entity_name as string | undefined) ?? original);
        for (const given of args.approved_splits as { name: string; entity_type?: string; observations: string[] }[]) {
          const split = { name: nfc(given.name), observations: given.observations.map(nfc) };
          this.entities.set(split.name, { observations: new Set(), chars: JSON.stringify(split.name).length });
          this.storedChars += JSON.stringify(split.name).length;
          for (const o of split.observations) {
            this.addObservation(split.name, o);
            const from = this.entities.get(original);
            if (from?.observations.delete(o) === true) {
              from.chars -= JSON.stringify(o).length;
              this.storedChars -= JSON.stringify(o).length;
            }
          }
          for (const r of [
            { from: parent, to: split.name, relationType: 'contains' },
            { from: split.name, to: parent, relationType: 'part_of' },
          ]) {
            // A relation that was there already (relations may name entities yet to exist) keeps its context.
            this.relations.set(relationKey(r), this.relations.get(relationKey(r)) ?? r);
          }
        }
        // A split that moved every observation leaves the original its summary (issue 33).
        const summary = (structured?.result as { original_summary?: unknown } | undefined)?.original_summary;
        if (typeof summary === 'string') this.addObservation(original, summary);
        return;
      }
      default:
    }
  }

  /** Differences between the model and a read_graph answer (empty when they agree). */
  diff(graph: {
    entities: { name: string; observations: string[] }[];
    relations: { from: string; to: string; relationType: string; context?: string }[];
  }): string[] {
    const problems: string[] = [];
    const seen = new Set<string>();
    for (const e of graph.entities) {
      seen.add(e.name);
      const want = this.entities.get(e.name);
      if (want === undefined) {
        problems.push(`unexpected entity ${JSON.stringify(e.name)}`);
        continue;
      }
      const got = new Set(e.observations);
      if (got.size !== e.observations.length) problems.push(`duplicate observations in ${JSON.stringify(e.name)}`);
      const missing = [...want.observations].filter((o) => !got.has(o));
      const extra = e.observations.filter((o) => !want.observations.has(o));
      if (missing.length + extra.length > 0) {
        problems.push(`observations of ${JSON.stringify(e.name)}: missing ${abbreviate(missing)}, unexpected ${abbreviate(extra)}`);
      }
    }
    for (const name of this.entities.keys()) if (!seen.has(name)) problems.push(`missing entity ${JSON.stringify(name)}`);
    const got = new Map(graph.relations.map((r) => [relationKey(r), r.context]));
    for (const [key, r] of this.relations) {
      if (!got.has(key)) problems.push(`missing relation ${key}`);
      else if (got.get(key) !== r.context)
        problems.push(`relation ${key}: context ${JSON.stringify(got.get(key))}, not ${JSON.stringify(r.context)}`);
    }
    for (const key of got.keys()) if (!this.relations.has(key)) problems.push(`unexpected relation ${key}`);
    return problems;
  }
}

// ---------- generating calls ----------

export interface FuzzCall {
  readonly index: number;
  readonly tool: string;
  readonly args: Record<string, unknown>;
  /** How the call was made: "valid", or the mutations applied. */
  readonly how: string;
  readonly expect: Expectation;
}

export interface GeneratorOptions {
  /** Whether Limbic has an embedding model (decides what semantic searches must answer). */
  readonly semantic: boolean;
  /** Share of calls that are mutated (default 0.65). */
  readonly mutateShare?: number;
  /**
   * Largest request, in UTF-8 bytes of JSON (default 4 MiB). The SDK's stdio transports drop the
   * connection on a line over 10 MiB, in either direction, and create_entities answers with its
   * input twice (text and structuredContent): a bigger valid call kills the server today (see
   * the report of issue 10, part 5), so the fuzzer stays under it.
   */
  readonly maxRequestBytes?: number;
  /** Stored JSON characters past which the generator deletes entities, so read_graph stays readable. */
  readonly maxStoredChars?: number;
  /** Entities past which the generator deletes some. */
  readonly maxEntities?: number;
}

const TOOL_WEIGHTS: Readonly<Record<string, number>> = {
  create_entities: 12,
  create_relations: 8,
  add_observations: 8,
  delete_entities: 5,
  delete_observations: 5,
  delete_relations: 4,
  read_graph: 1,
  search_nodes: 8,
  open_nodes: 7,
  search_semantic: 6,
  hybrid_search: 10,
  get_statistics: 3,
  set_entity_status: 5,
  // Maintenance and reflections (issue 16): light, so the official tools keep their share of a run.
  end_relation: 3,
  add_reflection: 3,
  search_reflections: 2,
  run_consolidation: 2,
  find_duplicate_observations: 2,
  consolidation_report: 2,
  analyze_entity_split: 2,
  propose_entity_split: 2,
  execute_entity_split: 2,
  find_split_candidates: 2,
};

/** Defines a property even when its name is `__proto__`, as JSON.parse would. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * How deep a tools/call message carrying `args` nests: the message and its params are two levels
 * above the arguments (strings do not count, as the server's screen counts them).
 */
function nestingOf(args: unknown): number {
  const depth = (value: unknown): number =>
    value !== null && typeof value === 'object' ? 1 + Math.max(0, ...Object.values(value).map(depth)) : 0;
  return 2 + depth(args);
}

function deepNest(rng: Rng, depth: number): unknown {
  let value: unknown = rng.pick(['x', 1, null, true]);
  const asArray = rng.chance(0.5);
  for (let i = 0; i < depth; i++) value = asArray ? [value] : { a: value };
  return value;
}

/** A string of exactly `length` code points (what a schema's maxLength counts) repeating `pattern`. */
function fit(pattern: string, length: number): string {
  const points = [...pattern];
  return Array.from({ length: Math.max(0, length) }, (_, i) => points[i % points.length] as string).join('');
}

export class CallGenerator {
  readonly model = new GraphModel();
  private readonly rng: Rng;
  private readonly specs: Map<string, ToolSpec>;
  private readonly toolChoices: (readonly [number, string])[];
  private counter = 0;
  private index = 0;
  private readonly mutateShare: number;
  private readonly maxRequestBytes: number;
  private readonly maxStoredChars: number;
  private readonly maxEntities: number;

  constructor(
    seed: number,
    tools: readonly ToolSpec[],
    private readonly options: GeneratorOptions,
  ) {
    this.rng = new Rng(seed);
    this.specs = new Map(tools.map((t) => [t.name, t]));
    // A tool this generator does not know yet is still called, with arguments built from its schema.
    this.toolChoices = tools.map((t) => [TOOL_WEIGHTS[t.name] ?? 5, t.name] as const);
    this.mutateShare = options.mutateShare ?? 0.65;
    this.maxRequestBytes = options.maxRequestBytes ?? 4 * 1024 * 1024;
    this.maxStoredChars = options.maxStoredChars ?? 1_500_000;
    this.maxEntities = options.maxEntities ?? 1_500;
  }

  /** The next call: valid, or a mutation of a valid one, with what it must answer. */
  next(): FuzzCall {
    const index = this.index++;
    if (this.model.storedChars > this.maxStoredChars || this.model.entities.size > this.maxEntities)
      return this.finish(index, 'delete_entities', this.prune(), 'valid (prune)');
    const tool = this.rng.weighted(this.toolChoices);
    const valid = this.validArgs(tool);
    if (!this.rng.chance(this.mutateShare)) return this.finish(index, tool, valid, 'valid');
    for (let attempt = 0; attempt < 5; attempt++) {
      const args = structuredClone(valid);
      const hows: string[] = [];
      const touched: Path[] = [];
      const count = this.rng.weighted([
        [80, 1],
        [15, 2],
        [5, 3],
      ] as const);
      for (let i = 0; i < count; i++) {
        const how = this.mutate(tool, args, touched);
        if (how !== undefined) hows.push(how);
      }
      if (Buffer.byteLength(JSON.stringify(args)) <= this.maxRequestBytes)
        return this.finish(index, tool, args, hows.join('; ') || 'valid (no mutation applied)');
    }
    return this.finish(index, tool, valid, 'valid');
  }

  private finish(index: number, tool: string, args: Record<string, unknown>, how: string): FuzzCall {
    const spec = this.specs.get(tool) as ToolSpec;
    return { index, tool, args, how, expect: expectationFor(spec, args, this.model, this.options.semantic) };
  }

  // ----- valid arguments -----

  private fresh(): string {
    this.counter++;
    const rng = this.rng;
    if (rng.chance(0.8)) return `${rng.pick(WORDS)}-${this.counter}`;
    return `${rng.pick(NASTY_STRINGS).slice(0, 900)}#${this.counter}`;
  }

  private known(): string | undefined {
    const names = this.model.names();
    return names.length === 0 ? undefined : this.rng.pick(names);
  }

  private nameOrFresh(pKnown: number): string {
    return (this.rng.chance(pKnown) ? this.known() : undefined) ?? this.fresh();
  }

  private text(): string {
    const rng = this.rng;
    const words = Array.from({ length: rng.int(1, 12) }, () => (rng.chance(0.12) ? rng.pick(NASTY_STRINGS) : rng.pick(WORDS)));
    return words.join(' ');
  }

  private query(): string {
    const rng = this.rng;
    return rng.weighted<() => string>([
      [4, () => this.text()],
      [2, () => rng.pick(NASTY_STRINGS)],
      // A prefix of a name, cut between code points so a surrogate pair stays whole.
      [2, () => [...(this.known() ?? rng.pick(WORDS))].slice(0, rng.int(1, 6)).join('')],
      [1, () => `${rng.pick(WORDS)} ${rng.pick(['AND', 'OR', 'NOT', 'NEAR'])} ${rng.pick(WORDS)}${rng.pick(['', '*', '"', ')'])}`],
    ])();
  }

  private observations(max: number): string[] {
    return Array.from({ length: this.rng.int(0, max) }, () => this.text());
  }

  private validArgs(tool: string): Record<string, unknown> {
    const rng = this.rng;
    switch (tool) {
      case 'create_entities': {
        const n = rng.weighted([
          [50, 1],
          [35, rng.int(2, 5)],
          [14, rng.int(6, 50)],
          [1, 1000],
        ] as const);
        const big = n >= 1000;
        return {
          entities: Array.from({ length: n }, () => ({
            name: big ? `bulk-${++this.counter}` : this.nameOrFresh(0.1),
            entityType: rng.chance(0.9) ? rng.pick(['person', 'company', 'project', 'place', 'idea']) : rng.pick(NASTY_STRINGS),
            observations: big ? [this.text()] : this.observations(4),
            ...(rng.chance(0.2) ? { status: rng.pick(STATUSES) } : {}),
          })),
        };
      }
      case 'create_relations':
        return {
          relations: Array.from({ length: rng.int(1, 5) }, () => ({
            from: this.nameOrFresh(0.85),
            to: this.nameOrFresh(0.85),
            relationType: rng.chance(0.9) ? rng.pick(['knows', 'works_at', 'owns', 'likes', 'part_of']) : rng.pick(NASTY_STRINGS),
            ...(rng.chance(0.2) ? { context: this.text() } : {}),
          })),
        };
      case 'add_observations': {
        if (this.model.entities.size === 0) return this.validArgs('create_entities');
        return {
          observations: Array.from({ length: rng.int(1, 3) }, () => ({
            entityName: this.known() as string,
            contents: this.observations(3),
            ...(rng.chance(0.2) ? { kind: rng.pick(['generic', 'metadata', 'note', '🏷️']) } : {}),
          })),
        };
      }
      case 'delete_entities':
        return { entityNames: Array.from({ length: rng.int(1, 4) }, () => this.nameOrFresh(0.8)) };
      case 'delete_observations': {
        const name = this.known();
        const observations = name === undefined ? [] : [...(this.model.entities.get(name)?.observations ?? [])];
        const chosen = observations.filter(() => rng.chance(0.5));
        if (rng.chance(0.3)) chosen.push(this.text());
        return { deletions: [{ entityName: name ?? this.fresh(), observations: chosen }] };
      }
      case 'delete_relations': {
        const relations = [...this.model.relations.values()].filter(() => rng.chance(0.3)).slice(0, 5);
        if (relations.length === 0 || rng.chance(0.3))
          relations.push({ from: this.nameOrFresh(0.5), to: this.nameOrFresh(0.5), relationType: 'knows' });
        return { relations };
      }
      case 'read_graph':
      case 'get_statistics':
        return {};
      case 'search_nodes':
        return { query: rng.chance(0.03) ? '' : this.query() };
      case 'open_nodes':
        return {
          names: Array.from({ length: rng.int(0, 5) }, () => this.nameOrFresh(0.7)),
          ...(rng.chance(0.15) ? { kinds: [rng.pick(['generic', 'metadata', 'note', '🏷️'])] } : {}),
          ...(rng.chance(0.15) ? { include_kinds: rng.chance(0.8) } : {}),
        };
      case 'search_semantic':
        return { query: this.query() || 'x', ...(rng.chance(0.5) ? { limit: rng.int(1, 100) } : {}) };
      case 'hybrid_search':
        return this.hybridArgs();
      case 'set_entity_status': {
        const name = this.known();
        if (name === undefined) return this.validArgs('create_entities');
        // entity_name, or the name the tool took first.
        return { [rng.chance(0.5) ? 'entity_name' : 'name']: name, status: rng.pick(STATUSES) };
      }
      default:
        return sampleValid(rng, this.specs.get(tool)?.inputSchema ?? {}, 0) as Record<string, unknown>;
    }
  }

  private hybridArgs(): Record<string, unknown> {
    const rng = this.rng;
    const args: Record<string, unknown> = { query: this.query() || 'x' };
    if (rng.chance(0.3)) args.limit = rng.int(1, 100);
    if (rng.chance(0.2)) args.offset = rng.int(0, 50);
    if (rng.chance(0.3)) args.search_modes = rng.pick([['fts'], ['semantic'], ['fts', 'semantic']]);
    if (rng.chance(0.3)) args.fusion_method = rng.pick(['rrf', 'weighted']);
    if (rng.chance(0.2)) args.rrf_k = rng.int(1, 1000);
    if (rng.chance(0.2)) args.weights = { fts: rng.next(), vector: rng.next() * 2, ...(rng.chance(0.5) ? { graph: rng.next() } : {}) };
    if (rng.chance(0.2)) args.limbic = rng.chance(0.5);
    if (rng.chance(0.05)) args.rerank = rng.chance(0.5);
    if (rng.chance(0.2)) args.explain_query = rng.chance(0.5);
    if (rng.chance(0.3)) {
      const filters: Record<string, unknown> = {};
      if (rng.chance(0.4)) filters.entity_types = [rng.pick(['person', 'company', 'project'])];
      if (rng.chance(0.3)) filters.status = [rng.pick(STATUSES)];
      if (rng.chance(0.2)) filters.observation_kinds = [rng.pick(['generic', 'metadata'])];
      if (rng.chance(0.3))
        filters[rng.pick(['created_after', 'created_before', 'updated_after', 'updated_before'])] = rng.pick(VALID_DATES);
      if (rng.chance(0.3)) filters.names = Array.from({ length: rng.int(1, 3) }, () => this.nameOrFresh(0.8));
      args.filters = filters;
    }
    return args;
  }

  /** Deletes the largest entities and then the oldest, so stored text and read_graph stay bounded. */
  private prune(): Record<string, unknown> {
    const bySize = [...this.model.entities]
      .sort((a, b) => b[1].chars - a[1].chars)
      .slice(0, 50)
      .map(([name]) => name);
    const oldest = this.model.names().slice(0, 200);
    return { entityNames: [...new Set([...bySize, ...oldest])] };
  }

  // ----- mutations -----

  /** Applies one mutation somewhere in `args` (not inside or above an earlier one); returns what it did. */
  private mutate(tool: string, args: Record<string, unknown>, touched: Path[]): string | undefined {
    const spec = this.specs.get(tool) as ToolSpec;
    const overlaps = (p: Path) => touched.some((t) => isPrefix(t, p) || isPrefix(p, t));
    const nodes = collectNodes(this.rng, spec.inputSchema, args).filter((n) => !overlaps(n.path));
    if (nodes.length === 0) return undefined;
    const node = this.rng.pick(nodes);
    const how = this.mutateNode(node, args);
    if (how !== undefined) touched.push(node.path);
    return how === undefined ? undefined : `${how} at ${formatPath(node.path) || '(root)'}`;
  }

  private mutateNode(node: SchemaNode, root: Record<string, unknown>): string | undefined {
    const rng = this.rng;
    const { schema, value, path } = node;
    const set = (v: unknown): void => {
      if (path.length === 0) {
        for (const key of Object.keys(root)) delete root[key];
        Object.assign(root, v);
      } else setAt(root, path, v);
    };
    const kinds: (readonly [number, () => string | undefined])[] = [];
    if (path.length > 0) {
      kinds.push([
        4,
        () => {
          const v = wrongValue(rng, schema);
          set(v);
          return `wrong type (${describe(v)})`;
        },
      ]);
      if (typeof path[path.length - 1] === 'string') {
        kinds.push([
          2,
          () => {
            deleteAt(root, path);
            return 'missing field';
          },
        ]);
      }
    }
    if (schema.type === 'object' && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      kinds.push([
        2,
        () => {
          const key = rng.pick(UNKNOWN_KEYS);
          setOwn(
            value as Record<string, unknown>,
            key,
            rng.chance(0.1) ? deepNest(rng, rng.int(10, 1000)) : rng.pick([1, 'x', null, [], {}]),
          );
          return `unknown field ${JSON.stringify(key)}`;
        },
      ]);
      if (path.length === 0) {
        kinds.push([
          1,
          () => {
            set({});
            return 'empty arguments';
          },
        ]);
      }
      const absent = Object.keys(schema.properties ?? {}).filter((k) => !Object.hasOwn(value, k));
      if (absent.length > 0) {
        kinds.push([
          2,
          () => {
            const key = rng.pick(absent);
            (value as Record<string, unknown>)[key] = rng.chance(0.5)
              ? sampleValid(rng, schema.properties?.[key] ?? {}, 0)
              : wrongValue(rng, schema.properties?.[key] ?? {});
            return `optional field ${key} added`;
          },
        ]);
      }
    }
    if (schema.type === 'string') kinds.push([6, () => this.stringEdge(schema, path, set)]);
    if (schema.type === 'number' || schema.type === 'integer') kinds.push([4, () => numberEdge(rng, schema, set)]);
    if (schema.type === 'array') kinds.push([4, () => this.arrayEdge(schema, value, set)]);
    if (kinds.length === 0) return undefined;
    return rng.weighted(kinds)();
  }

  private stringEdge(schema: JsonSchema, path: Path, set: (v: unknown) => void): string {
    const rng = this.rng;
    const limit = schema.maxLength;
    if (schema.enum !== undefined && rng.chance(0.6)) {
      const v = rng.pick(BAD_ENUM_STRINGS);
      set(v);
      return `enum value ${JSON.stringify(v)}`;
    }
    if (isDateField(path) && rng.chance(0.7)) {
      const v = rng.pick([...INVALID_DATES, ...VALID_DATES]);
      set(v);
      return `date ${JSON.stringify(v)}`;
    }
    const put = (v: string, label: string): string => {
      set(v);
      return label;
    };
    const pattern = rng.pick(['x', 'é', '😀', 'a\u0000', '\u202E', 'ab ']);
    return rng.weighted<() => string>([
      [3, () => put(rng.pick(NASTY_STRINGS), 'nasty string')],
      [2, () => put(rng.pick(ILL_FORMED_STRINGS), 'lone surrogate')],
      [1, () => put(`${this.text()}${rng.pick(ILL_FORMED_STRINGS)}`, 'lone surrogate after text')],
      [1, () => put('', 'empty string')],
      [
        2,
        () =>
          limit === undefined
            ? put(fit(pattern, 50_000), 'long string (no limit)')
            : put(fit(pattern, limit), `string at the limit of ${limit}`),
      ],
      [
        2,
        () =>
          limit === undefined
            ? put(fit(pattern, 100_000), 'long string (no limit)')
            : put(fit(pattern, limit + 1), `string of ${limit + 1}, one past the limit`),
      ],
      [
        1,
        () => {
          const n = Math.min(rng.pick([2, 10, 100]) * (limit ?? 10_000), 800_000);
          return put(fit(pattern, n), `huge string of ${n}`);
        },
      ],
      // A limit counts code points: this is at (or one past) the limit, and twice as long in UTF-16 units.
      [
        1,
        () => {
          const n = (limit ?? 100) + (rng.chance(0.5) ? 1 : 0);
          return put('😀'.repeat(n), `${n} emoji (limit ${limit ?? 'none'})`);
        },
      ],
    ])();
  }

  private arrayEdge(schema: JsonSchema, value: unknown, set: (v: unknown) => void): string {
    const rng = this.rng;
    const items = Array.isArray(value) ? value : [];
    const max = schema.maxItems;
    const item = (): unknown =>
      items.length > 0 && rng.chance(0.5) ? structuredClone(rng.pick(items)) : sampleValid(rng, schema.items ?? {}, 1);
    const put = (v: unknown[], label: string): string => {
      set(v);
      return label;
    };
    const n = max ?? 1000;
    return rng.weighted<() => string>([
      [3, () => put([], 'empty array')],
      [1, () => put([...items, ...items], 'duplicated items')],
      [2, () => put(Array.from({ length: n }, item), `array of ${n} items (the limit)`)],
      [2, () => put(Array.from({ length: n + 1 }, item), `array of ${n + 1} items`)],
      [
        1,
        () =>
          put(
            Array.from({ length: 5_000 }, () => rng.pick([1, 'x', null])),
            'array of 5000 scalars',
          ),
      ],
      [
        2,
        () => {
          const copy = items.length === 0 ? [null] : [...items];
          copy[rng.int(0, copy.length - 1)] = wrongValue(rng, schema.items ?? {});
          return put(copy, 'one wrong-typed item');
        },
      ],
    ])();
  }
}

// ---------- schema-guided helpers ----------

interface SchemaNode {
  readonly path: Path;
  readonly value: unknown;
  readonly schema: JsonSchema;
}

const isPrefix = (a: Path, b: Path): boolean => a.length <= b.length && a.every((seg, i) => seg === b[i]);

/** Every place in `value` that the schema describes (a sample of the elements of long arrays). */
function collectNodes(rng: Rng, schema: JsonSchema, value: unknown, path: Path = [], out: SchemaNode[] = []): SchemaNode[] {
  out.push({ path, value, schema });
  if (Array.isArray(value) && schema.items !== undefined) {
    const indices = value.length <= 20 ? value.map((_, i) => i) : Array.from({ length: 5 }, () => rng.int(0, value.length - 1));
    for (const i of new Set(indices)) collectNodes(rng, schema.items, value[i], [...path, i], out);
  } else if (typeof value === 'object' && value !== null && schema.properties !== undefined) {
    for (const [key, child] of Object.entries(schema.properties)) {
      if (Object.hasOwn(value, key)) collectNodes(rng, child, (value as Record<string, unknown>)[key], [...path, key], out);
    }
  }
  return out;
}

function setAt(root: Record<string, unknown>, path: Path, value: unknown): void {
  let target: unknown = root;
  for (const seg of path.slice(0, -1)) target = (target as Record<string | number, unknown>)[seg];
  const last = path[path.length - 1] as string | number;
  if (typeof last === 'string') setOwn(target as Record<string, unknown>, last, value);
  else (target as unknown[])[last] = value;
}

function deleteAt(root: Record<string, unknown>, path: Path): void {
  let target: unknown = root;
  for (const seg of path.slice(0, -1)) target = (target as Record<string | number, unknown>)[seg];
  delete (target as Record<string, unknown>)[path[path.length - 1] as string];
}

/** A value the schema does not allow, of a different JSON type (or an out-of-range one). */
function wrongValue(rng: Rng, schema: JsonSchema): unknown {
  const candidates: unknown[] = [
    0,
    -1,
    1.5,
    1e308,
    -1e308,
    2 ** 53 + 2,
    true,
    false,
    null,
    '',
    'NaN',
    'Infinity',
    '-Infinity',
    '1e400',
    '5',
    'true',
    'null',
    [],
    [1],
    ['a'],
    [null],
    {},
    { a: 1 },
    { name: 'x' },
  ];
  for (let attempt = 0; attempt < 20; attempt++) {
    const v = rng.chance(0.1) ? deepNest(rng, rng.int(10, 1000)) : rng.pick(candidates);
    if (!typeMatches(schema, v)) return v;
  }
  return null;
}

function numberEdge(rng: Rng, schema: JsonSchema, set: (v: unknown) => void): string {
  const min = schema.minimum ?? -1e9;
  const max = schema.maximum ?? 1e9;
  const v = rng.pick([min, max, min - 1, max + 1, min - 0.5, (min + max) / 2 + 0.5, 1e308, -1e308, 2 ** 53, 2 ** 31, -0, 0]);
  set(v);
  return `number ${v}`;
}

/** A valid value for a schema, built from the schema alone (for tools the generator does not know). */
export function sampleValid(rng: Rng, schema: JsonSchema, depth: number): unknown {
  if (schema.enum !== undefined) return rng.pick(schema.enum);
  switch (schema.type) {
    case 'string': {
      const s = rng.chance(0.3) ? rng.pick(NASTY_STRINGS) : `${rng.pick(WORDS)}-${rng.int(0, 1_000_000)}`;
      const fitted = s.slice(0, schema.maxLength ?? s.length);
      return isWellFormed(fitted) && fitted.length >= (schema.minLength ?? 0) ? fitted : 'x'.repeat(Math.max(1, schema.minLength ?? 1));
    }
    case 'integer':
      return rng.int(schema.minimum ?? 0, Math.min(schema.maximum ?? 100, (schema.minimum ?? 0) + 100));
    case 'number':
      return (schema.minimum ?? 0) + rng.next() * Math.min(1, (schema.maximum ?? 1) - (schema.minimum ?? 0));
    case 'boolean':
      return rng.chance(0.5);
    case 'array': {
      const n = depth > 2 ? (schema.minItems ?? 0) : rng.int(schema.minItems ?? 0, Math.min(2, schema.maxItems ?? 2));
      return Array.from({ length: n }, () => sampleValid(rng, schema.items ?? {}, depth + 1));
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(schema.properties ?? {})) {
        if ((schema.required ?? []).includes(key) || (depth < 2 && rng.chance(0.3))) out[key] = sampleValid(rng, child, depth + 1);
      }
      return out;
    }
    default:
      return 'x';
  }
}

function describe(v: unknown): string {
  if (Array.isArray(v)) return `array(${v.length})`;
  if (v === null) return 'null';
  if (typeof v === 'object') return 'object';
  if (typeof v === 'string') return `string ${JSON.stringify(v.slice(0, 20))}`;
  return `${typeof v} ${String(v)}`;
}

/** A call or value shortened for a log line: long strings, long arrays and deep nesting summarised. */
export function abbreviate(value: unknown, depth = 0): string {
  const shrink = (v: unknown, d: number): unknown => {
    if (d > 12) return `<nested deeper than ${12}>`;
    if (typeof v === 'string') return v.length > 120 ? `${v.slice(0, 60)}…<${v.length} chars>` : v;
    if (Array.isArray(v)) {
      const head = v.slice(0, 8).map((x) => shrink(x, d + 1));
      return v.length > 8 ? [...head, `…<${v.length} items>`] : head;
    }
    if (typeof v === 'object' && v !== null) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) setOwn(out, k, shrink(x, d + 1));
      return out;
    }
    return v;
  };
  return JSON.stringify(shrink(value, depth));
}

// ---------- running ----------

export interface FuzzOptions extends GeneratorOptions {
  readonly seed: number;
  readonly calls: number;
  /** Share of requests whose `arguments` is not an object at all (a protocol error is the right answer). */
  readonly malformedShare?: number;
  /** Called every `progressEvery` calls. */
  readonly onProgress?: (done: number, report: FuzzReport) => void;
  readonly progressEvery?: number;
  /** Stops after this many oracle failures (default 20). */
  readonly maxFailures?: number;
}

export interface FuzzFailure {
  readonly seed: number;
  readonly index: number;
  readonly tool: string;
  readonly how: string;
  readonly problem: string;
  readonly args: string;
  readonly answer: string;
}

export interface ToolCounts {
  calls: number;
  isError: number;
  mustSucceed: number;
  mustFail: number;
  /** Time spent waiting for this tool's answers, and the longest wait. */
  ms: number;
  maxMs: number;
  /** Answers that took longer than a second (the MCP thread was busy that long). */
  overOneSecond: number;
}

export interface FuzzReport {
  readonly seed: number;
  calls: number;
  byTool: Record<string, ToolCounts>;
  isError: number;
  /** Calls the oracle said must succeed. */
  mustSucceed: number;
  /** Calls the oracle said must fail (bad input, or a missing entity). */
  mustFail: number;
  /** Valid calls whose outcome depends on keyword hits (search_semantic without a model). */
  either: number;
  /** Tool calls answered with a JSON-RPC error instead of a result. */
  protocolErrors: number;
  /**
   * Calls whose arguments nest deeper than the server reads (MAX_JSON_DEPTH, issue 35): refused
   * before anything parses them, as a JSON-RPC error (-32600) that says so, not a tool result.
   */
  refusedTooDeep: number;
  /** The connection to the server was lost. */
  crashes: number;
  /** Requests whose `arguments` was not an object, and how many were answered (with a JSON-RPC error). */
  malformed: { sent: number; answered: number; codes: Record<string, number> };
  /** get_statistics counts compared with the model. */
  statisticsChecked: number;
  /** The call that took longest to answer. */
  slowest: { tool: string; index: number; how: string; ms: number };
  failures: FuzzFailure[];
  /** Distinct error messages with numbers and quoted values blanked, and how often each came. */
  messageShapes: Map<string, number>;
  ms: number;
}

const textOf = (r: CallToolResult): string => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

const shapeOf = (text: string): string =>
  text
    .replace(/"(?:[^"\\]|\\.)*"/g, '"…"')
    .replace(/\d+/g, 'N')
    .replace(/at [\w.[\]]+/g, 'at PATH')
    .slice(0, 300);

/** Judges one answer against the expectation; undefined when it is right. */
export function judge(call: FuzzCall, result: CallToolResult): string | undefined {
  const text = textOf(result);
  const isError = result.isError === true;
  const e = call.expect;
  if (e.outcome === 'ok') return isError ? 'a valid call was answered with isError' : undefined;
  if (e.outcome === 'ok-or-error') return isError && !e.pattern.test(text) ? `error text does not match ${e.pattern}` : undefined;
  if (!isError) return 'bad input was accepted';
  // A name is echoed in NFC, the form it is stored in.
  const unnamed = e.mustName.filter((name) => !text.includes(name) && !text.includes(nfc(name)));
  if (unnamed.length > 0)
    return `the error does not name ${unnamed.slice(0, 5).join(', ')}${unnamed.length > 5 ? ` (+${unnamed.length - 5})` : ''}`;
  if (!e.pattern.test(text)) return `the error does not say what was expected (${e.pattern})`;
  return undefined;
}

export const isConnectionLoss = (error: unknown): boolean =>
  error instanceof Error && /Connection closed|Not connected|EPIPE|ECONNRESET/i.test(error.message);

/** Lists the server's tools: the generator mutates what the server advertises. */
export async function listToolSpecs(client: Client): Promise<ToolSpec[]> {
  const { tools } = await client.listTools();
  return tools.map((t) => ({ name: t.name, inputSchema: t.inputSchema as JsonSchema }));
}

/** Sends `calls` generated calls through the client, judging each; stops early on a crash. */
export async function runFuzz(client: Client, options: FuzzOptions): Promise<FuzzReport & { model: GraphModel }> {
  const started = performance.now();
  const tools = await listToolSpecs(client);
  const generator = new CallGenerator(options.seed, tools, options);
  const side = new Rng(options.seed ^ 0x5bd1e995);
  const report: FuzzReport = {
    seed: options.seed,
    calls: 0,
    byTool: Object.fromEntries(
      tools.map((t) => [t.name, { calls: 0, isError: 0, mustSucceed: 0, mustFail: 0, ms: 0, maxMs: 0, overOneSecond: 0 }]),
    ),
    isError: 0,
    mustSucceed: 0,
    mustFail: 0,
    either: 0,
    protocolErrors: 0,
    refusedTooDeep: 0,
    crashes: 0,
    malformed: { sent: 0, answered: 0, codes: {} },
    statisticsChecked: 0,
    slowest: { tool: '', index: -1, how: '', ms: 0 },
    failures: [],
    messageShapes: new Map(),
    ms: 0,
  };
  const maxFailures = options.maxFailures ?? 20;
  const fail = (call: FuzzCall, problem: string, answer: string): void => {
    report.failures.push({
      seed: options.seed,
      index: call.index,
      tool: call.tool,
      how: call.how,
      problem,
      args: abbreviate(call.args),
      answer: answer.slice(0, 600),
    });
  };

  for (let i = 0; i < options.calls && report.crashes === 0 && report.failures.length < maxFailures; i++) {
    if (side.chance(options.malformedShare ?? 0.005)) {
      report.malformed.sent++;
      try {
        const params = { name: side.pick(tools).name, arguments: side.pick<unknown>([[1], 'q', null, 42, true]) };
        await client.request({ method: 'tools/call', params } as unknown as Parameters<Client['request']>[0], CallToolResultSchema);
      } catch (error) {
        if (isConnectionLoss(error)) {
          report.crashes++;
          break;
        }
        report.malformed.answered++;
        const code = String((error as { code?: unknown }).code);
        report.malformed.codes[code] = (report.malformed.codes[code] ?? 0) + 1;
      }
    }
    const call = generator.next();
    const counts = report.byTool[call.tool] as ToolCounts;
    report.calls++;
    counts.calls++;
    if (call.expect.outcome === 'ok') {
      report.mustSucceed++;
      counts.mustSucceed++;
    } else if (call.expect.outcome === 'error') {
      report.mustFail++;
      counts.mustFail++;
    } else report.either++;
    let result: CallToolResult;
    const sent = performance.now();
    try {
      result = (await client.callTool({ name: call.tool, arguments: call.args }, undefined, { timeout: 120_000 })) as CallToolResult;
      const ms = performance.now() - sent;
      counts.ms += ms;
      counts.maxMs = Math.max(counts.maxMs, ms);
      if (ms > 1_000) counts.overOneSecond++;
      if (ms > report.slowest.ms) report.slowest = { tool: call.tool, index: call.index, how: call.how, ms };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (isConnectionLoss(error)) {
        report.crashes++;
        fail(call, 'the connection was lost (crash)', message);
      } else if (nestingOf(call.args) > MAX_JSON_DEPTH && /nest more than \d+ levels deep/.test(message)) {
        // Refused whatever the oracle says: an official tool ignores an unknown field, but not one
        // nested past the bound, which no parse reaches (docs/migrating.md, "Differences").
        report.refusedTooDeep++;
      } else {
        report.protocolErrors++;
        fail(call, 'a protocol error instead of a tool result', message);
      }
      continue;
    }
    if (result.isError === true) {
      report.isError++;
      counts.isError++;
      const shape = shapeOf(textOf(result));
      report.messageShapes.set(shape, (report.messageShapes.get(shape) ?? 0) + 1);
    } else {
      generator.model.apply(call.tool, call.args, result.structuredContent);
    }
    const problem = judge(call, result);
    if (problem !== undefined) fail(call, problem, textOf(result));
    if (call.tool === 'get_statistics' && result.isError !== true) {
      report.statisticsChecked++;
      const stats = result.structuredContent as { entities: number; observations: number; relations: number };
      const model = generator.model;
      const want = { entities: model.entities.size, observations: model.observationCount, relations: model.relations.size };
      const got = { entities: stats.entities, observations: stats.observations, relations: stats.relations };
      if (JSON.stringify(want) !== JSON.stringify(got))
        fail(call, `get_statistics counts ${JSON.stringify(got)} differ from the model's ${JSON.stringify(want)}`, textOf(result));
    }
    if ((i + 1) % (options.progressEvery ?? 1000) === 0) options.onProgress?.(i + 1, report);
  }
  report.ms = performance.now() - started;
  return Object.assign(report, { model: generator.model });
}

/** Compares the graph the server holds with the model; returns the differences. */
export async function compareGraph(client: Client, model: GraphModel): Promise<string[]> {
  const result = (await client.callTool({ name: 'read_graph', arguments: {} })) as CallToolResult;
  if (result.isError === true) return [`read_graph failed: ${textOf(result)}`];
  return model.diff(result.structuredContent as Parameters<GraphModel['diff']>[0]);
}

export interface StoreCheck {
  readonly integrity: string;
  readonly foreignKeyViolations: number;
  /** FTS5's own check of both keyword indexes: 'ok' or the error. */
  readonly fts: string;
  /** Stored names, types and observations that are not well-formed text (U+FFFD from a lone surrogate). */
  readonly illFormedText: number;
}

/** Opens the database file after the server closed it and checks it the ways SQLite can. */
export function checkStoreFile(path: string): StoreCheck {
  const db = new Database(path);
  try {
    sqliteVec.load(db);
    const integrity = (db.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check).join('; ');
    const foreignKeyViolations = (db.pragma('foreign_key_check') as unknown[]).length;
    let fts = 'ok';
    for (const table of ['entity_fts', 'entity_trigram']) {
      try {
        db.prepare(`INSERT INTO ${table}(${table}) VALUES ('integrity-check')`).run();
      } catch (error) {
        fts = `${table}: ${(error as Error).message}`;
      }
    }
    const texts = db.prepare(
      `SELECT name AS t FROM entities UNION ALL SELECT entity_type FROM entities UNION ALL SELECT content FROM observations
       UNION ALL SELECT from_name FROM relations UNION ALL SELECT to_name FROM relations UNION ALL SELECT relation_type FROM relations`,
    );
    let illFormedText = 0;
    for (const row of texts.iterate() as Iterable<{ t: string }>) if (row.t.includes('\uFFFD') || !isWellFormed(row.t)) illFormedText++;
    return { integrity, foreignKeyViolations, fts, illFormedText };
  } finally {
    db.close();
  }
}

export interface StdioLimbic {
  readonly client: Client;
  /** The server's stderr so far (the last 64 KiB), for a report when it dies. */
  stderr(): string;
  /** Closes the client, which ends the server, and waits for the process to exit. */
  close(): Promise<void>;
}

/** Starts the built binary over stdio, as an MCP client would, and connects a real client to it. */
export async function startStdioLimbic(
  cli: string,
  dbPath: string,
  extraArgs: readonly string[] = ['--no-model'],
  /** The client's line buffer; the SDK's default (10 MiB) drops the connection on a longer answer. */
  maxBufferSize?: number,
): Promise<StdioLimbic> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, '--db', dbPath, ...extraArgs],
    env: { ...process.env } as Record<string, string>,
    stderr: 'pipe',
    ...(maxBufferSize === undefined ? {} : { maxBufferSize }),
  });
  let log = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    log = (log + chunk.toString('utf8')).slice(-65_536);
  });
  const client = new Client({ name: 'limbic-fuzz', version: '1.0.0' });
  await client.connect(transport);
  const pid = transport.pid;
  return {
    client,
    stderr: () => log,
    async close() {
      await client.close();
      // The server checkpoints and closes its database when stdin closes; wait for it to be gone.
      for (let i = 0; i < 200 && pid !== null && processAlive(pid); i++) await new Promise((r) => setTimeout(r, 25));
    },
  };
}
