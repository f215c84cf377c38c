/**
 * Malformed JSON-RPC over stdio gets an answer (issue 26). The SDK's stdio transport drops a line it
 * cannot read as a JSON-RPC message (not JSON, "jsonrpc" missing, "method" not a string, a batch…)
 * and tells only the server, so the client waits for its timeout. Each line is screened first; one
 * that is not a message is answered with the JSON-RPC error the specification gives (parse error
 * -32700, invalid request -32600), with its id when it has a usable one and null otherwise, and is
 * not passed on. Lines over SCREEN_MAX_BYTES pass unscreened (reading them twice would cost the
 * MCP thread; the transport still reads them).
 */
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { requestIdFromEnds, type RequestId } from './stdin-lines.js';

/** Lines up to this size are screened. */
export const SCREEN_MAX_BYTES = 64 * 1024;

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

/** The error to send for a line that is not a JSON-RPC message, or undefined for a line to pass on. */
export interface Refusal {
  readonly jsonrpc: '2.0';
  readonly id: RequestId | null;
  readonly error: { readonly code: number; readonly message: string };
}

const refuse = (id: RequestId | null, code: number, why: string): Refusal => ({
  jsonrpc: '2.0',
  id,
  error: { code, message: `${code === PARSE_ERROR ? 'Parse error' : 'Invalid Request'}: ${why}. Nothing was done.` },
});

const usableId = (id: unknown): id is RequestId => typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));

/**
 * The answer to a line that is not a JSON-RPC message; undefined when the line is one (or blank,
 * or too long to screen).
 * @example screenLine('{"jsonrpc":"2.0","id":1,"method":123}') // id 1, -32600, "method" must be a string
 */
export function screenLine(line: string): Refusal | undefined {
  const text = line.trim();
  if (text === '' || Buffer.byteLength(text) > SCREEN_MAX_BYTES) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return refuse(requestIdFromEnds(text.slice(0, 256), text.slice(-256)) ?? null, PARSE_ERROR, 'the line is not JSON');
  }
  if (Array.isArray(value))
    return refuse(null, INVALID_REQUEST, 'batches (JSON arrays) are not accepted: send each message on a line of its own');
  if (typeof value !== 'object' || value === null) return refuse(null, INVALID_REQUEST, 'a message is a JSON object');
  const m = value as Record<string, unknown>;
  const hasId = 'id' in m;
  const id = usableId(m.id) ? m.id : null;
  if (hasId && id === null) return refuse(null, INVALID_REQUEST, '"id" must be a string or a number');
  if (m.jsonrpc !== '2.0') return refuse(id, INVALID_REQUEST, '"jsonrpc" must be "2.0"');
  if ('method' in m && typeof m.method !== 'string') return refuse(id, INVALID_REQUEST, '"method" must be a string');
  if (!('method' in m) && !('result' in m) && !('error' in m))
    return refuse(id, INVALID_REQUEST, 'a request needs "method" (a response, "result" or "error")');
  if ('params' in m && (typeof m.params !== 'object' || m.params === null || Array.isArray(m.params)))
    return refuse(id, INVALID_REQUEST, '"params" must be an object');
  // Anything else the transport would drop without a word.
  if (!JSONRPCMessageSchema.safeParse(value).success) return refuse(id, INVALID_REQUEST, 'it is not a JSON-RPC 2.0 message');
  return undefined;
}
