/**
 * A Unigram tokenizer's vocabulary read fast: `tokenizer.vocab.bin` beside tokenizer.json holds
 * the same pieces and scores as flat arrays, and their sorted order (sorted-pieces.ts). JSON.parse
 * of e5's 8.7 MB tokenizer.json (250,002 [piece, score] pairs) took ~200 ms of the embedding
 * worker's start and sorting the pieces takes ~450 ms; this file is read and split in ~30 ms. It
 * is derived data: written by `limbic model install` and after a load from tokenizer.json (where
 * the caller allows it), used only while tokenizer.json has the size and modification time it was
 * made from, and rewritten when it does not match or does not decode.
 *
 * Layout (little-endian):
 *   8 bytes  "LMBVOC02"
 *   4 bytes  length of the header (UTF-8 JSON): { source: { size, mtimeMs }, count, piecesBytes,
 *            tokenizer: tokenizer.json with model.vocab left out }
 *   4 bytes  CRC-32 of everything after these 16 bytes
 *   header, then the pieces as UTF-8 joined by "\n" (no piece holds one, or no file is written),
 *   zero bytes up to a multiple of 8, count float64 scores, count int32 ids in sorted order.
 */
import { randomBytes } from 'node:crypto';
import { endianness } from 'node:os';
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { sortedOrder } from './sorted-pieces.js';

const MAGIC = 'LMBVOC02';
const PREFIX_BYTES = 16;
export const VOCAB_FILE = 'tokenizer.vocab.bin';

/** tokenizer.json's content, its Unigram vocabulary as two arrays. */
export interface UnigramVocabulary {
  /** tokenizer.json without model.vocab. */
  readonly tokenizer: { readonly model: { readonly type: 'Unigram'; readonly unk_id: number }; readonly [key: string]: unknown };
  /** A new array for each read: the caller may change it. */
  readonly pieces: string[];
  readonly scores: ArrayLike<number>;
  /** sortedOrder(pieces). */
  readonly order: Int32Array;
}

interface Header {
  readonly source: { readonly size: number; readonly mtimeMs: number };
  readonly count: number;
  readonly piecesBytes: number;
  readonly tokenizer: UnigramVocabulary['tokenizer'];
}

/**
 * The vocabulary of the tokenizer in `dir`: from its vocab file when that matches tokenizer.json,
 * else from tokenizer.json (writing the vocab file when `write`). Undefined when the tokenizer is
 * not a Unigram one.
 */
export async function readUnigramVocabulary(dir: string, write: boolean): Promise<UnigramVocabulary | undefined> {
  const jsonPath = join(dir, 'tokenizer.json');
  const source = await stat(jsonPath);
  const cached = await readVocabFile(join(dir, VOCAB_FILE), source).catch(() => undefined);
  if (cached !== undefined) return cached;
  const fromJson = parseTokenizerJson(await readFile(jsonPath, 'utf8'));
  if (fromJson !== undefined && write) {
    // In the background: the tokenizer is ready without it, and a folder we cannot write is fine.
    void writeVocabFile(dir, fromJson, source).catch(() => undefined);
  }
  return fromJson;
}

/** Writes the vocabulary file of the tokenizer in `dir` (`limbic model install`); none when it is not Unigram. */
export async function writeUnigramVocabulary(dir: string): Promise<void> {
  const jsonPath = join(dir, 'tokenizer.json');
  const [source, text] = await Promise.all([stat(jsonPath), readFile(jsonPath, 'utf8')]);
  const vocabulary = parseTokenizerJson(text);
  if (vocabulary !== undefined) await writeVocabFile(dir, vocabulary, source);
}

function parseTokenizerJson(text: string): UnigramVocabulary | undefined {
  const json = JSON.parse(text) as { model?: { type?: unknown; unk_id?: unknown; vocab?: unknown } };
  const { model } = json;
  const vocab = model?.vocab;
  if (model?.type !== 'Unigram' || typeof model.unk_id !== 'number' || !Array.isArray(vocab)) return undefined;
  const pieces = new Array<string>(vocab.length);
  const scores = new Float64Array(vocab.length);
  for (let i = 0; i < vocab.length; i++) {
    const entry: unknown = vocab[i];
    if (!Array.isArray(entry) || typeof entry[0] !== 'string' || typeof entry[1] !== 'number') return undefined;
    pieces[i] = entry[0];
    scores[i] = entry[1];
  }
  const { vocab: _vocab, ...rest } = model;
  return { tokenizer: { ...json, model: { ...rest, type: 'Unigram', unk_id: model.unk_id } }, pieces, scores, order: sortedOrder(pieces) };
}

async function readVocabFile(path: string, source: { size: number; mtimeMs: number }): Promise<UnigramVocabulary | undefined> {
  if (endianness() !== 'LE') return undefined;
  const raw = await readFile(path);
  if (raw.length < PREFIX_BYTES || raw.toString('latin1', 0, 8) !== MAGIC || crc32(raw.subarray(PREFIX_BYTES)) !== raw.readUInt32LE(12))
    return undefined;
  const headerBytes = raw.readUInt32LE(8);
  const header = JSON.parse(raw.toString('utf8', PREFIX_BYTES, PREFIX_BYTES + headerBytes)) as Header;
  if (header.source.size !== source.size || header.source.mtimeMs !== source.mtimeMs) return undefined;
  const piecesAt = PREFIX_BYTES + headerBytes;
  const scoresAt = align8(piecesAt + header.piecesBytes);
  const orderAt = scoresAt + header.count * 8;
  if (raw.length !== orderAt + header.count * 4) return undefined;
  const pieces = raw.toString('utf8', piecesAt, piecesAt + header.piecesBytes).split('\n');
  if (pieces.length !== header.count) return undefined;
  // Copies: the file's bytes need not sit at an offset a typed array can view.
  const section = (from: number, to: number): ArrayBuffer => raw.buffer.slice(raw.byteOffset + from, raw.byteOffset + to);
  const scores = new Float64Array(section(scoresAt, orderAt));
  const order = new Int32Array(section(orderAt, raw.length));
  return { tokenizer: header.tokenizer, pieces, scores, order };
}

async function writeVocabFile(dir: string, vocabulary: UnigramVocabulary, source: { size: number; mtimeMs: number }): Promise<void> {
  if (endianness() !== 'LE' || vocabulary.pieces.some((p) => p.includes('\n'))) return;
  const pieces = Buffer.from(vocabulary.pieces.join('\n'), 'utf8');
  const header: Header = {
    source: { size: source.size, mtimeMs: source.mtimeMs },
    count: vocabulary.pieces.length,
    piecesBytes: pieces.length,
    tokenizer: vocabulary.tokenizer,
  };
  const headerBytes = Buffer.from(JSON.stringify(header), 'utf8');
  const piecesEnd = PREFIX_BYTES + headerBytes.length + pieces.length;
  const scores = Float64Array.from(vocabulary.scores);
  const order = Buffer.from(vocabulary.order.buffer, vocabulary.order.byteOffset, vocabulary.order.byteLength);
  const rest = Buffer.concat([headerBytes, pieces, Buffer.alloc(align8(piecesEnd) - piecesEnd), Buffer.from(scores.buffer), order]);
  const prefix = Buffer.alloc(PREFIX_BYTES);
  prefix.write(MAGIC, 0, 'latin1');
  prefix.writeUInt32LE(headerBytes.length, 8);
  prefix.writeUInt32LE(crc32(rest), 12);
  const body = Buffer.concat([prefix, rest]);
  // Renamed into place, so a reader never sees half a file.
  const temp = join(dir, `.${VOCAB_FILE}.${randomBytes(6).toString('hex')}`);
  try {
    await writeFile(temp, body, { flag: 'wx' });
    await rename(temp, join(dir, VOCAB_FILE));
  } finally {
    await rm(temp, { force: true });
  }
}

const align8 = (n: number): number => Math.ceil(n / 8) * 8;
