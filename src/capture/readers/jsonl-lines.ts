/**
 * Lines of a JSONL file from a byte offset, each with the byte offset just past it, so a reader
 * can resume exactly where the previous read stopped. A last line without its newline is taken
 * only when it parses (a client still writing it leaves half a JSON object, read next time).
 */
import { createReadStream, statSync } from 'node:fs';

export interface JsonlLine {
  /** The line parsed, or undefined when it is not valid JSON. */
  readonly value: unknown;
  /** Byte offset just past the line (and its newline). */
  readonly end: number;
}

const NEWLINE = 0x0a;

function parse(bytes: Buffer): unknown {
  const text = bytes.toString('utf8').trim();
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Every line from `fromOffset` on. A file shorter than `fromOffset` (replaced or truncated since)
 * is read from its start.
 */
export async function* readJsonlLines(path: string, fromOffset = 0): AsyncGenerator<JsonlLine> {
  const size = statSync(path).size;
  const start = fromOffset > size ? 0 : Math.max(0, fromOffset);
  let offset = start;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for await (const chunk of createReadStream(path, { start })) {
    const buffer = chunk as Buffer;
    let from = 0;
    for (let nl = buffer.indexOf(NEWLINE, from); nl !== -1; nl = buffer.indexOf(NEWLINE, from)) {
      const piece = buffer.subarray(from, nl);
      const line = pendingBytes === 0 ? piece : Buffer.concat([...pending, piece]);
      offset += line.length + 1;
      pending = [];
      pendingBytes = 0;
      from = nl + 1;
      yield { value: parse(line), end: offset };
    }
    if (from < buffer.length) {
      pending.push(buffer.subarray(from));
      pendingBytes += buffer.length - from;
    }
  }
  if (pendingBytes > 0) {
    const value = parse(Buffer.concat(pending));
    if (value !== undefined) yield { value, end: offset + pendingBytes };
  }
}

/** The first line (from the start) for which `pick` returns a value, reading no further than needed. */
export async function firstInFile<T>(path: string, pick: (value: unknown) => T | undefined): Promise<T | undefined> {
  for await (const line of readJsonlLines(path, 0)) {
    const found = pick(line.value);
    if (found !== undefined) return found;
  }
  return undefined;
}
