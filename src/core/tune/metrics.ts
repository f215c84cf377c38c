/** The tuner's metrics (docs/ranking.md, "Tuning metrics"). */

/**
 * NDCG@K with gain 2^rel − 1 and discount log₂(i + 2); the ideal is the same relevances sorted
 * descending. 0 when nothing is relevant or K is 0.
 * @example ndcgAtK([0, 1, 0], 3) // (1/log₂3) / 1 ≈ 0.631
 */
export function ndcgAtK(relevance: readonly number[], k: number): number {
  const cut = Math.min(k, relevance.length);
  if (cut <= 0) return 0;
  const dcg = (rels: readonly number[]): number => {
    let sum = 0;
    for (let i = 0; i < cut; i++) sum += (2 ** (rels[i] ?? 0) - 1) / Math.log2(i + 2);
    return sum;
  };
  const ideal = dcg([...relevance].sort((a, b) => b - a));
  return ideal === 0 ? 0 : dcg(relevance) / ideal;
}

/**
 * Lift@K: the share of relevance in the top K over the share in the whole list,
 * (Σrel[:K] / min(K, n)) / (Σrel / n); 0 when nothing is relevant. 1 is no better than chance.
 * @example liftAtK([1, 0, 0, 0], 2) // (1/2) / (1/4) = 2
 */
export function liftAtK(relevance: readonly number[], k: number): number {
  const n = relevance.length;
  const total = relevance.reduce((s, r) => s + r, 0);
  if (n === 0 || total === 0 || k <= 0) return 0;
  const top = relevance.slice(0, k).reduce((s, r) => s + r, 0);
  return top / Math.min(k, n) / (total / n);
}
