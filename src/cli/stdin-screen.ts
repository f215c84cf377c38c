/**
 * Malformed JSON-RPC over stdio gets an answer (issue 26). The SDK's stdio transport drops a line it
 * cannot read as a JSON-RPC message (not JSON, "jsonrpc" missing, "method" not a string, a batch…)
 * and tells only the server, so the client waits for its timeout. Each line is screened first; one
 * that is not a message is answered with the JSON-RPC error the specification gives (parse error
 * -32700, invalid request -32600), with its id when it has a usable one and null otherwise, and is
 * not passed on. Lines over SCREEN_MAX_BYTES are not parsed twice (it would cost the MCP thread;
 * the transport still reads them), only scanned once for nesting too deep to parse safely (issue 35).
 */
import {
  INVALID_REQUEST,
  PARSE_ERROR,
  nestedDeeperThan,
  refuse,
  refuseTooDeep,
  screenMessage,
  type Refusal,
} from '../mcp/jsonrpc-screen.js';
import { requestIdFromEnds } from './stdin-lines.js';

export { INVALID_REQUEST, PARSE_ERROR, type Refusal };

/** Lines up to this size are screened. */
export const SCREEN_MAX_BYTES = 64 * 1024;

/**
 * The answer to a line that is not a JSON-RPC message; undefined when the line is one (or blank,
 * or too long to screen).
 * @example screenLine('{"jsonrpc":"2.0","id":1,"method":123}') // id 1, -32600, "method" must be a string
 */
export function screenLine(line: string): Refusal | undefined {
  const text = line.trim();
  if (text === '' || Buffer.byteLength(text) > SCREEN_MAX_BYTES) return undefined;
  const bytes = Buffer.from(text, 'utf8');
  if (nestedDeeperThan(bytes)) return refuseTooDeep(bytes);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return refuse(requestIdFromEnds(text.slice(0, 256), text.slice(-256)) ?? null, PARSE_ERROR, 'the line is not JSON');
  }
  if (Array.isArray(value))
    return refuse(null, INVALID_REQUEST, 'batches (JSON arrays) are not accepted: send each message on a line of its own');
  return screenMessage(value);
}

/**
 * The answer to a line as it arrives: one nested past MAX_JSON_DEPTH is refused whatever its size (a
 * single pass over its bytes, in the order of a parse), then screenLine for lines up to
 * SCREEN_MAX_BYTES; undefined passes the line on.
 */
export function screenLineBytes(line: Buffer): Refusal | undefined {
  if (line.length <= SCREEN_MAX_BYTES + 2) return screenLine(line.toString('utf8'));
  return nestedDeeperThan(line) ? refuseTooDeep(trimmed(line)) : undefined;
}

/** The line without the white space around it (its newline), for reading the id from its ends. */
function trimmed(line: Buffer): Buffer {
  const space = (c: number | undefined): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
  let start = 0;
  let end = line.length;
  while (start < end && space(line[start])) start++;
  while (end > start && space(line[end - 1])) end--;
  return line.subarray(start, end);
}
