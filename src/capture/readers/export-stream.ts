/**
 * A chat export's `conversations.json` — a JSON array that reaches a gigabyte — one conversation
 * at a time in bounded memory, from the file itself or from inside the export's zip. The parser is
 * @streamparser/json (DEPENDENCIES.md): it holds only the element being parsed, and gives each
 * element as it closes; the zip is inflated by fflate as it is read. Nothing waits for the whole
 * file: each conversation is handed on (and stored) before the next bytes are read.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { JSONParser } from '@streamparser/json';
import { Unzip, UnzipInflate, type UnzipFile } from 'fflate';
import { ERROR_CODES, MemoryError } from '../../core/errors.js';

/** Bytes read from a file at a time. */
const CHUNK_BYTES = 1 << 20;
/**
 * Bytes of a zip read at a time: fflate inflates each read at once, and JSON compresses 10 to 30
 * times, so a read must be small for what it inflates to stay small.
 */
const ZIP_CHUNK_BYTES = 64 * 1024;

/** The first bytes of a zip archive (a local file header). */
export const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

/** The entries of a chat export's zip that hold its conversations. */
const CONVERSATIONS_ENTRY = /(?:^|\/)conversations(?:-\d+)?\.json$/i;

export interface ByteProgress {
  /** Called as the file is read, with the bytes read so far. */
  (bytesRead: number): void;
}

async function* fileChunks(path: string, onBytes?: ByteProgress, chunkBytes = CHUNK_BYTES): AsyncGenerator<Uint8Array> {
  const file: FileHandle = await open(path, 'r');
  try {
    let read = 0;
    for (;;) {
      const buffer = Buffer.allocUnsafe(chunkBytes);
      const { bytesRead } = await file.read(buffer, 0, chunkBytes, read);
      if (bytesRead === 0) return;
      read += bytesRead;
      onBytes?.(read);
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    await file.close();
  }
}

/** True when the file begins like a zip archive. */
export async function isZip(path: string): Promise<boolean> {
  const file = await open(path, 'r');
  try {
    const head = Buffer.alloc(4);
    const { bytesRead } = await file.read(head, 0, 4, 0);
    return bytesRead === 4 && head.equals(ZIP_MAGIC);
  } finally {
    await file.close();
  }
}

/**
 * The bytes of the zip's conversations file(s), inflated as the archive is read. Other entries
 * (images, audio, HTML) are passed over: started with a sink, since fflate keeps the bytes of an
 * entry nobody started.
 */
async function* zipEntryChunks(path: string, onBytes?: ByteProgress, wanted: RegExp = CONVERSATIONS_ENTRY): AsyncGenerator<Uint8Array> {
  const queue: Uint8Array[] = [];
  let failure: Error | undefined;
  let found = 0;
  const unzip = new Unzip((file: UnzipFile) => {
    if (wanted.test(file.name)) {
      found++;
      file.ondata = (error, data) => {
        if (error !== null) failure ??= error;
        else if (data.length > 0) queue.push(data);
      };
    } else {
      file.ondata = () => undefined;
    }
    file.start();
  });
  unzip.register(UnzipInflate);
  for await (const chunk of fileChunks(path, onBytes, ZIP_CHUNK_BYTES)) {
    unzip.push(chunk, false);
    if (failure !== undefined) throw unreadableZip(path, failure);
    while (queue.length > 0) yield queue.shift() as Uint8Array;
  }
  unzip.push(new Uint8Array(0), true);
  if (failure !== undefined) throw unreadableZip(path, failure);
  while (queue.length > 0) yield queue.shift() as Uint8Array;
  if (found === 0) {
    throw new MemoryError(
      ERROR_CODES.IMPORT_FAILED,
      `${path} is a zip without a conversations.json. Pass the zip of a ChatGPT export (Settings → Data controls → Export) or of a Claude.ai export (Settings → Privacy → Export data), or the conversations.json inside it.`,
    );
  }
}

function unreadableZip(path: string, cause: Error): MemoryError {
  return new MemoryError(
    ERROR_CODES.IMPORT_FAILED,
    `Could not read the zip ${path} (${cause.message}). Unzip it and pass its conversations.json.`,
    {
      cause,
    },
  );
}

/** The raw bytes of an export's conversations: from the file, or from inside its zip. */
export async function* exportBytes(path: string, onBytes?: ByteProgress): AsyncGenerator<Uint8Array> {
  if (await isZip(path)) yield* zipEntryChunks(path, onBytes);
  else yield* fileChunks(path, onBytes);
}

/**
 * Each element of the top-level JSON array in `chunks`, in order, parsed. Throws (IMPORT_FAILED)
 * when the document is not an array or is not valid JSON, saying where.
 */
export async function* jsonArrayElements(chunks: AsyncIterable<Uint8Array>, label: string): AsyncGenerator<unknown> {
  const values: unknown[] = [];
  const parser = new JSONParser({ paths: ['$.*'], keepStack: false });
  let failure: Error | undefined;
  parser.onValue = ({ value }) => {
    values.push(value);
  };
  parser.onError = (error) => {
    failure ??= error;
  };
  let checked = false;
  for await (const chunk of chunks) {
    if (!checked) {
      const first = chunk.find((b) => b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09 && b !== 0xef && b !== 0xbb && b !== 0xbf);
      if (first === undefined) continue;
      if (first !== 0x5b /* [ */) {
        throw new MemoryError(
          ERROR_CODES.IMPORT_FAILED,
          `${label} is not a JSON array of conversations (it begins with "${String.fromCharCode(first)}").`,
        );
      }
      checked = true;
      // A UTF-8 byte order mark is not JSON.
      const bom = chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf;
      parser.write(bom ? chunk.subarray(3) : chunk);
    } else parser.write(chunk);
    if (failure !== undefined) throw invalidJson(label, failure);
    while (values.length > 0) yield values.shift();
  }
  if (!checked) return;
  if (!parser.isEnded) parser.end();
  if (failure !== undefined) throw invalidJson(label, failure);
  while (values.length > 0) yield values.shift();
}

function invalidJson(label: string, cause: Error): MemoryError {
  return new MemoryError(
    ERROR_CODES.IMPORT_FAILED,
    `${label} is not valid JSON (${cause.message}); the conversations before that point were imported. Export it again, or check that the download finished.`,
    { cause },
  );
}
