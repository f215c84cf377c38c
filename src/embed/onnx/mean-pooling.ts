/**
 * A sentence vector from a model's token vectors: the mean over the tokens the attention mask
 * keeps, scaled to length 1. The arithmetic is transformers.js 4.3.1's (`mean_pooling`, then
 * `Tensor.normalize(2, -1)`), step for step and rounded to float32 where it rounds, so the vectors
 * Limbic stored while it ran that library are the ones it makes now, bit for bit.
 */

/**
 * One L2-normalised mean vector per row of `hidden` ([rows, tokens, dims], row-major), over the
 * tokens whose `mask` ([rows, tokens]) is 1.
 * @example meanPoolNormalized(Float32Array.of(3, 4, 9, 9), [1, 2, 2], BigInt64Array.of(1n, 0n)) // [Float32Array [0.6, 0.8]]
 */
export function meanPoolNormalized(
  hidden: Float32Array,
  shape: readonly [number, number, number],
  mask: BigInt64Array | Int32Array | Float32Array,
): Float32Array[] {
  const [rows, tokens, dims] = shape;
  const vectors: Float32Array[] = [];
  for (let i = 0; i < rows; i++) {
    const vector = new Float32Array(dims);
    const offset = i * tokens * dims;
    for (let k = 0; k < dims; k++) {
      // Summed over every position, the masked ones times 0, as the library does.
      let sum = 0;
      let count = 0;
      for (let j = 0; j < tokens; j++) {
        const keep = Number(mask[i * tokens + j]);
        count += keep;
        sum += (hidden[offset + j * dims + k] as number) * keep;
      }
      vector[k] = sum / count;
    }
    // The library sums the squares into a float32 cell (rounding after each addition) and takes
    // the root with ** (1 / 2), which need not round as Math.sqrt does.
    const squares = new Float32Array(1);
    for (let k = 0; k < dims; k++) squares[0] = (squares[0] as number) + (vector[k] as number) ** 2;
    squares[0] = (squares[0] as number) ** (1 / 2);
    const norm = squares[0] as number;
    for (let k = 0; k < dims; k++) vector[k] = (vector[k] as number) / norm;
    vectors.push(vector);
  }
  return vectors;
}
