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

/** The id of a parsed value that is a single JSON-RPC request (an object with a method and an id), if it is one. */
export function requestIdOf(body: unknown): RequestId | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const { method, id } = body as { method?: unknown; id?: unknown };
  return typeof method === 'string' && (typeof id === 'string' || typeof id === 'number') ? id : undefined;
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

/**
 * How deep arrays and objects may nest in a message (issue 35). No MCP message needs more than a few
 * levels; past a few thousand, the JSON.stringify of the SDK's HTTP adapter (and any other recursive
 * walk of the value) overflows the stack, and the client got HTTP 500 / -32603 for its own mistake.
 * serde_json's default recursion limit.
 */
export const MAX_JSON_DEPTH = 128;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/**
 * Whether JSON text (UTF-8) nests arrays and objects deeper than `limit`: one pass over the bytes,
 * brackets counted outside strings, before anything parses or walks it. A string is skipped with
 * Buffer.indexOf to its closing quote (most of a message's bytes are text): linear, 33-60 ms for a
 * 4 MB text-heavy call on a loaded machine, about twice its JSON.parse. Bytes that are not JSON are left for the parser to refuse.
 * @example nestedDeeperThan(Buffer.from('[[[]]]'), 2) // true
 */
export function nestedDeeperThan(bytes: Buffer, limit: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (c === QUOTE) {
      // The closing quote: the next one not escaped by an odd run of backslashes.
      let end = i;
      for (;;) {
        end = bytes.indexOf(QUOTE, end + 1);
        if (end === -1) return false; // an unterminated string: the parser refuses it
        let slashes = 0;
        while (bytes[end - 1 - slashes] === BACKSLASH) slashes++;
        if (slashes % 2 === 0) break;
      }
      i = end;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
  }
  return false;
}

/** The answer to a message nested deeper than MAX_JSON_DEPTH, with its id when its ends show one. */
export function refuseTooDeep(bytes: Buffer): Refusal {
  const id = requestIdFromEnds(bytes.subarray(0, 256).toString('utf8'), bytes.subarray(Math.max(0, bytes.length - 256)).toString('utf8'));
  return refuse(
    id ?? null,
    INVALID_REQUEST,
    `arrays and objects in it nest more than ${MAX_JSON_DEPTH} levels deep, past this server's limit; no tool needs that: send the arguments and _meta flatter`,
  );
}

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
