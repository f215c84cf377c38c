/**
 * What makes a value a JSON-RPC message the SDK's transports will take, checked before they see it
 * (issue 26). A transport drops what it cannot read as a message (stdio) or answers it with an
 * error whose id is null (Streamable HTTP), so the client that sent a request with an id waits for
 * its timeout or cannot tell which call failed. A screened value that is not a message gets the
 * error the specification gives (parse error -32700, invalid request -32600), carrying the
 * request's id whenever it has a usable one.
 */
import { parseJSONRPCMessage } from '@modelcontextprotocol/server';

/** A JSON-RPC request id. */
export type RequestId = string | number;

const ID = String.raw`"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,200}")`;
/** `{"jsonrpc":"2.0","id":…` or `{"id":…` at the start (the Python SDK's order). */
export const ID_AT_START = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?${ID}`);
/** `…,"id":…}` or `…"id":…,"jsonrpc":"2.0"}` at the end (the TypeScript SDK's order). */
export const ID_AT_END = new RegExp(String.raw`,\s*${ID}\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$`);

/** The id of a JSON-RPC request from the first and last bytes of its text (not JSON, or too long to read), if they show it. */
export function requestIdFromEnds(head: string, tail: string): RequestId | undefined {
  const found = ID_AT_START.exec(head)?.[1] ?? ID_AT_END.exec(tail)?.[1];
  if (found === undefined) return undefined;
  try {
    return JSON.parse(found) as RequestId;
  } catch {
    return undefined;
  }
}

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

/** The error to send for a value that is not a JSON-RPC message. */
export interface Refusal {
  readonly jsonrpc: '2.0';
  readonly id: RequestId | null;
  readonly error: { readonly code: number; readonly message: string };
}

export const refuse = (id: RequestId | null, code: number, why: string): Refusal => ({
  jsonrpc: '2.0',
  id,
  error: { code, message: `${code === PARSE_ERROR ? 'Parse error' : 'Invalid Request'}: ${why}. Nothing was done.` },
});

export const usableId = (id: unknown): id is RequestId => typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));

/**
 * Why one parsed value (not a batch) is not a JSON-RPC message, or undefined when it is one.
 * @example screenMessage({ jsonrpc: '2.0', id: 1, method: 123 }) // id 1, -32600, "method" must be a string
 */
export function screenMessage(value: unknown): Refusal | undefined {
  if (Array.isArray(value)) return refuse(null, INVALID_REQUEST, 'a batch inside a batch is not a message');
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
  // Anything else the transport would drop or refuse without the id.
  try {
    parseJSONRPCMessage(value);
  } catch {
    return refuse(id, INVALID_REQUEST, 'it is not a JSON-RPC 2.0 message');
  }
  return undefined;
}
