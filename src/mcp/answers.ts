/** How tool answers are shaped and bounded, for every tool module of the MCP adapter. */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { LIMITS } from '../core/limits.js';

/**
 * Results as the official server shapes them: structuredContent plus text, which is the pretty JSON
 * of `shown` (the official server shows the bare array for the create/add tools).
 */
export function structured(value: Record<string, unknown>, shown: unknown = value): CallToolResult {
  const result: CallToolResult = {
    content: [{ type: 'text', text: typeof shown === 'string' ? shown : JSON.stringify(shown, null, 2) }],
    structuredContent: value,
  };
  return withinAnswerBound(result);
}

/** Characters of text under which no answer can reach the bound (measured exactly above it). */
const SURELY_SMALL_CHARS = 512 * 1024;

/**
 * An answer the client could not take is refused (isError) with its size and what to ask instead:
 * over stdio the MCP SDK's clients drop a message over 10 MiB and close the session (issue 26).
 */
function withinAnswerBound(result: CallToolResult): CallToolResult {
  const first = result.content[0];
  if (first?.type !== 'text' || first.text.length < SURELY_SMALL_CHARS) return result;
  const bytes = Buffer.byteLength(JSON.stringify({ jsonrpc: '2.0', id: 0, result }));
  if (bytes <= LIMITS.maxAnswerBytes) return result;
  const mib = (n: number): string => (n / 2 ** 20).toFixed(1);
  return {
    content: [
      {
        type: 'text',
        text:
          `The answer is ${mib(bytes)} MiB, more than the ${mib(LIMITS.maxAnswerBytes)} MiB an MCP client takes in one message, so it was not sent. ` +
          'Ask for less at once: read_graph and search_nodes take limit and offset (and read_graph compact: true), ' +
          'open_nodes fewer names, search_semantic and hybrid_search a smaller limit.',
      },
    ],
    isError: true,
  };
}
