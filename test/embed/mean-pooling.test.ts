/** Mean pooling and normalisation of token vectors (src/embed/onnx/mean-pooling.ts), at its edges. */
import { describe, expect, it } from 'vitest';
import { meanPoolNormalized } from '../../src/embed/onnx/mean-pooling.js';

const length = (v: Float32Array): number => Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));

describe('meanPoolNormalized', () => {
  it('averages the kept tokens and scales the mean to length 1', () => {
    // One row, two tokens of 2 dims: (1, 2) and (5, 6); mean (3, 4), length 5.
    const [v] = meanPoolNormalized(Float32Array.of(1, 2, 5, 6), [1, 2, 2], BigInt64Array.of(1n, 1n));
    expect(Array.from(v ?? [])).toEqual([Math.fround(0.6), Math.fround(0.8)]);
  });

  it('ignores the padding the mask hides, whatever its values', () => {
    const [v] = meanPoolNormalized(Float32Array.of(3, 4, 1e30, -7), [1, 2, 2], BigInt64Array.of(1n, 0n));
    expect(Array.from(v ?? [])).toEqual([Math.fround(0.6), Math.fround(0.8)]);
  });

  it('pools each row of a batch over its own tokens', () => {
    const hidden = Float32Array.of(1, 0, 0, 0, 0, 0, /* row 2 */ 0, 2, 0, 0, 0, 2);
    const [a, b] = meanPoolNormalized(hidden, [2, 2, 3], BigInt64Array.of(1n, 0n, 1n, 1n));
    expect(Array.from(a ?? [])).toEqual([1, 0, 0]);
    expect(Array.from(b ?? [])).toEqual([0, Math.fround(Math.SQRT1_2), Math.fround(Math.SQRT1_2)]);
    expect(length(b ?? new Float32Array())).toBeCloseTo(1, 6);
  });

  it('gives nothing for no rows, and NaN (as the library did) for a row with every token masked', () => {
    expect(meanPoolNormalized(new Float32Array(0), [0, 0, 384], new BigInt64Array(0))).toEqual([]);
    const [v] = meanPoolNormalized(Float32Array.of(1, 2), [1, 1, 2], BigInt64Array.of(0n));
    expect(Array.from(v ?? []).every(Number.isNaN)).toBe(true);
  });
});
