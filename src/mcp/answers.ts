/** How tool answers are shaped and bounded, for every tool module of the MCP adapter. */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { LIMITS } from '../core/limits.js';
import { redactionNotice, type RedactionCount } from '../core/text/redaction.js';
import { graphAdvice } from './graph-advice.js';

/**
 * The nine official tools' answers as the official server shapes them: structuredContent plus text,
 * which is the pretty JSON of `shown` (the official server shows the bare array for the create/add
 * tools). The official server writes that text as `JSON.stringify(result, null, 2)` (docs/answers.md),
 * so a drop-in keeps it.
 */
export function structured(value: Record<string, unknown>, shown: unknown = value): CallToolResult {
  return withinAnswerBound({
    content: [{ type: 'text', text: typeof shown === 'string' ? shown : JSON.stringify(shown, null, 2) }],
    structuredContent: value,
  });
}

/** The tools that answer with a graph, whose refusal names the one argument that shrinks it (graph-advice.ts). */
export type GraphTool = 'read_graph' | 'search_nodes' | 'open_nodes';

/**
 * read_graph, search_nodes and open_nodes: the official shape, as structured() gives it; an answer
 * over the bound is refused with the argument, and its value, that brings it within (issue 35).
 */
export function structuredGraph(tool: GraphTool, value: Record<string, unknown>): CallToolResult {
  const text = JSON.stringify(value, null, 2);
  const result: CallToolResult = { content: [{ type: 'text', text }], structuredContent: value };
  const bytes = overAnswerBound(result, text.length);
  if (bytes === undefined) return result;
  return {
    content: [{ type: 'text', text: overBoundMessage('The answer', bytes, 'Ask for less at once', graphAdvice(tool, value, bytes)) }],
    isError: true,
  };
}

/**
 * Limbic's own tools: structuredContent is the whole answer (every field, nulls included, as
 * documented in docs/answers.md); the text an agent reads is `shown` (by default the same answer)
 * as one line of JSON without nulls, whose whitespace and empty fields only cost context.
 */
export function compact(value: Record<string, unknown>, shown: unknown = value): CallToolResult {
  return withinAnswerBound({ content: [{ type: 'text', text: compactJson(shown) }], structuredContent: value });
}

/**
 * JSON without whitespace and without nulls: a null property is left out, a null array item dropped.
 * @example compactJson({ a: 1, b: null, c: [null, 2] }) // '{"a":1,"c":[2]}'
 */
export function compactJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null) return undefined;
    return Array.isArray(v) && v.includes(null) ? v.filter((item) => item !== null) : v;
  });
}

/** Characters of text under which no answer can reach the bound (measured exactly above it). */
const SURELY_SMALL_CHARS = 512 * 1024;

const mib = (n: number): string => (n / 2 ** 20).toFixed(1);

/** How to ask for less, named in every refusal of an answer over the bound. */
export const HOW_TO_PAGE =
  'read_graph and search_nodes take limit and offset (and read_graph compact: true), open_nodes fewer names, search_semantic and hybrid_search a smaller limit; ' +
  "read_graph, search_nodes and open_nodes take observations_offset and observations_limit to return each entity's observations a page at a time " +
  '(for one large entity: open_nodes with its name and observations_limit: 100, then observations_offset: next_observations_offset until it is absent).';

/**
 * The size of a message that carries `payload` as its JSON-RPC result, when it is over
 * LIMITS.maxAnswerBytes; undefined when it is within (cheaply, when `textChars` is small).
 */
export function overAnswerBound(payload: unknown, textChars: number): number | undefined {
  if (textChars < SURELY_SMALL_CHARS) return undefined;
  const bytes = Buffer.byteLength(JSON.stringify({ jsonrpc: '2.0', id: 0, result: payload }));
  return bytes > LIMITS.maxAnswerBytes ? bytes : undefined;
}

/** The sentence that refuses `what` of `bytes`: the bound, and what to ask instead (by default every way to page). */
export function overBoundMessage(what: string, bytes: number, instead = 'Ask for less at once', how = HOW_TO_PAGE): string {
  return `${what} is ${mib(bytes)} MiB, more than the ${mib(LIMITS.maxAnswerBytes)} MiB an MCP client takes in one message, so it was not sent. ${instead}: ${how}`;
}

/**
 * An answer the client could not take is refused (isError) with its size and what to ask instead:
 * over stdio the MCP SDK's clients drop a message over 10 MiB and close the session (issue 26).
 */
function withinAnswerBound(result: CallToolResult): CallToolResult {
  const first = result.content[0];
  const bytes = overAnswerBound(result, first?.type === 'text' ? first.text.length : 0);
  if (bytes === undefined) return result;
  return { content: [{ type: 'text', text: overBoundMessage('The answer', bytes) }], isError: true };
}

/** Where an answer's `_meta` lists what the call redacted, by type and count. */
export const REDACTIONS_META = 'limbic/redactions';

/**
 * A write that redacted something says so, never with the values: a second text item after the
 * answer (the first item, and structuredContent, stay exactly the official shape, which clients
 * parse), and the counts in `_meta` for a program. With nothing redacted the answer is unchanged.
 */
export function withRedactions(result: CallToolResult, counts: readonly RedactionCount[]): CallToolResult {
  if (counts.length === 0 || result.isError === true) return result;
  return {
    ...result,
    content: [...result.content, { type: 'text', text: redactionNotice(counts) }],
    _meta: { ...result._meta, [REDACTIONS_META]: counts.map((c) => ({ type: c.type, count: c.count })) },
  };
}
