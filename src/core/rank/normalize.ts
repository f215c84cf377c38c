/** Score normalisation shared by the fusion methods. */

/** Min-max normalisation; all-equal values map to 0.5 so none is favoured. */
export function minMaxNormalize(values: readonly number[]): number[] {
  if (values.length === 0) return [];
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const range = max - min;
  return values.map((v) => (range > 0 ? (v - min) / range : 0.5));
}
