/**
 * Near-duplicate observations (docs/ranking.md, "Maintenance thresholds"): a pair matches when its cosine
 * similarity reaches the threshold, or when one text is at least twice as long as the other and
 * holds most of its words (containment). Pure: the caller supplies the similarities.
 */

/** Lower-cased words with the punctuation around them stripped; inner punctuation stays ("cat's"). */
export function wordSet(text: string): Set<string> {
  const words = new Set<string>();
  for (const raw of text.toLowerCase().split(/\s+/)) {
    const word = raw.replace(/^[\p{P}\p{S}]+|(?<![\p{P}\p{S}])[\p{P}\p{S}]+$/gu, '');
    if (word !== '') words.add(word);
  }
  return words;
}

/** Share of the shorter text's words found in the longer one; 1 when the shorter has no words. */
export function containment(shorter: string, longer: string, words: (text: string) => Set<string> = wordSet): number {
  const small = words(shorter);
  if (small.size === 0) return 1;
  const large = words(longer);
  let shared = 0;
  for (const w of small) if (large.has(w)) shared++;
  return shared / small.size;
}

export interface DuplicateThresholds {
  /** Cosine similarity from which two observations are duplicates. @default 0.85 */
  readonly similarity: number;
  /** Share of the shorter's words in the longer, when one is at least twice as long. @default 0.7 */
  readonly containment: number;
}

export const DEFAULT_DUPLICATE_THRESHOLDS: DuplicateThresholds = { similarity: 0.85, containment: 0.7 };
const LENGTH_RATIO = 2;

export type MatchType = 'cosine' | 'containment';

/** How a pair matches, or undefined. `cosine` is undefined when no model is loaded (words only). */
export function matchPair(
  a: string,
  b: string,
  cosine: number | undefined,
  t: DuplicateThresholds,
  length: (text: string) => number = (s) => [...s].length,
  words: (text: string) => Set<string> = wordSet,
): { type: MatchType; score: number } | undefined {
  if (cosine !== undefined && cosine >= t.similarity) return { type: 'cosine', score: cosine };
  const [shorter, longer] = length(a) <= length(b) ? [a, b] : [b, a];
  const ratio = length(longer) / Math.max(length(shorter), 1);
  if (ratio < LENGTH_RATIO) return undefined;
  const c = containment(shorter, longer, words);
  return c >= t.containment ? { type: 'containment', score: c } : undefined;
}

export interface DuplicatePair {
  readonly a: number;
  readonly b: number;
  readonly type: MatchType;
  readonly score: number;
}

/**
 * Every matching pair (i < j) and the clusters they join (union-find), clusters of two or more,
 * each in input order, the clusters ordered by their first member.
 */
export function findDuplicates(
  texts: readonly string[],
  cosine: ((i: number, j: number) => number) | undefined,
  t: DuplicateThresholds,
): { pairs: DuplicatePair[]; clusters: number[][] } {
  const parent = texts.map((_, i) => i);
  const root = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i] as number] as number;
    return i;
  };
  const pairs: DuplicatePair[] = [];
  // Lengths and word sets once per text, not once per pair (1,000 observations make 500k pairs).
  const lengths = new Map(texts.map((s) => [s, [...s].length]));
  const sets = new Map<string, Set<string>>();
  const length = (s: string): number => lengths.get(s) ?? [...s].length;
  const words = (s: string): Set<string> => {
    let w = sets.get(s);
    if (w === undefined) sets.set(s, (w = wordSet(s)));
    return w;
  };
  for (let i = 0; i < texts.length; i++) {
    for (let j = i + 1; j < texts.length; j++) {
      const m = matchPair(texts[i] as string, texts[j] as string, cosine?.(i, j), t, length, words);
      if (m === undefined) continue;
      pairs.push({ a: i, b: j, type: m.type, score: m.score });
      parent[root(j)] = root(i);
    }
  }
  const groups = new Map<number, number[]>();
  for (let i = 0; i < texts.length; i++) {
    const r = root(i);
    let g = groups.get(r);
    if (g === undefined) groups.set(r, (g = []));
    g.push(i);
  }
  const clusters = [...groups.values()].filter((g) => g.length > 1).sort((x, y) => (x[0] as number) - (y[0] as number));
  return { pairs, clusters };
}

/** Dot product of two unit vectors: their cosine similarity. */
export function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}

/**
 * A model's cosine rescaled so that its unrelated-text level (the embedder's similarityFloor) is 0:
 * e5 puts unrelated texts near 0.74, where the seed system's 0.85 would call half a memory
 * duplicates. Thresholds then mean the same for every model.
 */
export function rescaledCosine(raw: number, floor: number): number {
  return floor <= 0 ? raw : Math.max(0, (raw - floor) / (1 - floor));
}
