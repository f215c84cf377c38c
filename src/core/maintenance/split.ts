/**
 * Entity splitting (docs/ranking.md, "Maintenance thresholds"): an entity over its type's size threshold is split into
 * topics, found by meaning (average-linkage clustering of observation vectors, cut at cosine
 * distance 0.5) or, without a model or when meaning finds one topic or all singletons, by shared
 * keywords (TF-IDF). Topics are named by their most distinctive words (c-TF-IDF). Pure.
 *
 * Departures from the seed system, each a bug it has: words of any script count (its tokenizer
 * kept only Spanish letters); an observation without keywords joins "Other" instead of becoming a
 * one-observation topic; `needs_split` needs two topics (a split into one entity is a rename).
 */
import { contentWords } from '../text/stopwords.js';

/** Observations an entity may hold before a split is proposed, by type (case and accents ignored). */
export function splitThreshold(entityType: string): number {
  const t = entityType.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
  if (t === 'sesion' || t === 'session') return 15;
  if (t === 'proyecto' || t === 'project') return 25;
  return 20;
}

/**
 * Cosine distance at which average linkage stops merging: the seed system's 0.5 (scipy fcluster
 * t=0.5) on raw cosines of a model whose unrelated texts sit near 0. On cosines rescaled to a
 * model's floor (e5: 0.74 -> 0), texts on one topic sit at 0.2-0.5 and 0.5 left 21 clusters of 24
 * observations on three topics; 0.8 found the three (measured with multilingual-e5-small).
 */
export const CUT_DISTANCE = 0.5;
export const CUT_DISTANCE_RESCALED = 0.8;

export interface SplitAnalysis {
  readonly entity_name: string;
  readonly entity_type: string;
  readonly observation_count: number;
  readonly threshold: number;
  readonly needs_split: boolean;
  readonly topics: Record<string, string[]>;
  readonly split_score: number;
  /** How the topics were found: "semantic", "keywords", or "none" under the threshold. */
  readonly method: 'semantic' | 'keywords' | 'none';
}

/**
 * Analyses one entity. `similarity(i, j)` is the cosine of two observations (rescaled to the
 * model's floor), or undefined without a model.
 */
export function analyzeSplit(
  name: string,
  entityType: string,
  observations: readonly string[],
  similarity: ((i: number, j: number) => number) | undefined,
  cutDistance = CUT_DISTANCE,
): SplitAnalysis {
  const n = observations.length;
  const threshold = splitThreshold(entityType);
  const base = { entity_name: name, entity_type: entityType, observation_count: n, threshold };
  if (n <= threshold) return { ...base, needs_split: false, topics: {}, split_score: round4(n / threshold), method: 'none' };
  let groups = similarity === undefined ? undefined : semanticGroups(n, similarity, cutDistance);
  let method: SplitAnalysis['method'] = 'semantic';
  let topics: Record<string, string[]>;
  if (groups !== undefined && groups.length > 1 && groups.length < n) {
    topics = nameGroups(groups.map((g) => g.map((i) => observations[i] as string)));
  } else {
    method = 'keywords';
    groups = undefined;
    topics = keywordTopics(observations);
  }
  const count = Object.keys(topics).length;
  const score = n / threshold + Math.min(count / Math.max(n, 1), 0.5);
  return { ...base, needs_split: score > 1 && count >= 2, topics, split_score: round4(score), method };
}

const round4 = (x: number): number => Math.round(x * 10_000) / 10_000;

/** Average-linkage agglomerative clustering; groups in order of their first member. */
export function semanticGroups(n: number, similarity: (i: number, j: number) => number, cutDistance = CUT_DISTANCE): number[][] {
  const dist: number[][] = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const d = Math.min(2, Math.max(0, 1 - similarity(i, j)));
      (dist[i] as number[])[j] = d;
      (dist[j] as number[])[i] = d;
    }
  }
  const members: (number[] | undefined)[] = Array.from({ length: n }, (_, i) => [i]);
  for (;;) {
    let best = Infinity;
    let a = -1;
    let b = -1;
    for (let i = 0; i < n; i++) {
      if (members[i] === undefined) continue;
      for (let j = i + 1; j < n; j++) {
        if (members[j] === undefined) continue;
        const d = (dist[i] as number[])[j] as number;
        if (d < best) [best, a, b] = [d, i, j];
      }
    }
    if (a < 0 || best > cutDistance) break;
    const ma = members[a] as number[];
    const mb = members[b] as number[];
    // Lance-Williams for average linkage: the merged cluster's distance is the size-weighted mean.
    for (let k = 0; k < n; k++) {
      if (k === a || k === b || members[k] === undefined) continue;
      const d =
        ((dist[a] as number[])[k] as number) * (ma.length / (ma.length + mb.length)) +
        ((dist[b] as number[])[k] as number) * (mb.length / (ma.length + mb.length));
      (dist[a] as number[])[k] = d;
      (dist[k] as number[])[a] = d;
    }
    members[a] = [...ma, ...mb].sort((x, y) => x - y);
    members[b] = undefined;
  }
  return members.filter((m): m is number[] => m !== undefined).sort((x, y) => (x[0] as number) - (y[0] as number));
}

/** Content words: letters of any script, 4 characters or more, no stopword of the text's language (stopwords.ts). */
export function topicWords(text: string): string[] {
  return contentWords(text.toLowerCase().match(/\p{L}[\p{L}\p{M}]*/gu) ?? []).filter((w) => [...w].length >= 4);
}

/**
 * What an entity keeps when a split moves every one of its observations out (issue 33): approving
 * every proposed split, the normal way to use propose_entity_split, left the original an empty
 * entity that searches could only find by name. It stays the parent (it `contains` the new
 * entities), holding this one observation on where its observations went, so its name still leads
 * to them by words and by meaning.
 * @example splitSummary(['Ana - Work', 'Ana - Family'], Date.UTC(2026, 10, 27))
 *   // 'Split on 2026-11-27 into Ana - Work and Ana - Family, which hold its observations now (open_nodes reads them).'
 */
export function splitSummary(children: readonly string[], now: number): string {
  const names = children.length <= 1 ? children.join('') : `${children.slice(0, -1).join(', ')} and ${children.at(-1) ?? ''}`;
  return `Split on ${new Date(now).toISOString().slice(0, 10)} into ${names}, which hold its observations now (open_nodes reads them).`;
}

const capitalize = (w: string): string => w.charAt(0).toUpperCase() + w.slice(1);

/** Names each group by its two most distinctive words (c-TF-IDF); a name is never reused. */
export function nameGroups(groups: readonly (readonly string[])[]): Record<string, string[]> {
  const words = groups.map((g) => g.flatMap(topicWords));
  const df = new Map<string, number>();
  for (const ws of words) for (const w of new Set(ws)) df.set(w, (df.get(w) ?? 0) + 1);
  const topics: Record<string, string[]> = {};
  groups.forEach((group, k) => {
    const ws = words[k] as string[];
    const counts = new Map<string, number>();
    for (const w of ws) counts.set(w, (counts.get(w) ?? 0) + 1);
    const scored = [...counts].map(([w, c]) => ({ w, c, s: (c / ws.length) * Math.log(groups.length / (df.get(w) ?? 1)) }));
    scored.sort((x, y) => y.s - x.s || y.c - x.c);
    let name =
      scored.length === 0
        ? `Topic ${k + 1}`
        : scored
            .slice(0, 2)
            .map((x) => capitalize(x.w))
            .join(' ');
    if (Object.hasOwn(topics, name)) name = `${name} ${k + 1}`;
    topics[name] = [...group];
  });
  return topics;
}

/** Topics by shared keywords: each observation joins its best keyword among the ten strongest. */
export function keywordTopics(observations: readonly string[]): Record<string, string[]> {
  const docs = observations.map(topicWords);
  const n = docs.length;
  const df = new Map<string, number>();
  for (const ws of docs) for (const w of new Set(ws)) df.set(w, (df.get(w) ?? 0) + 1);
  const weight = new Map<string, number>();
  for (const ws of docs) {
    for (const w of new Set(ws)) {
      const d = df.get(w) ?? 0;
      if (d < 2 || d === n) continue; // a word in one observation, or in all, separates nothing
      const tf = ws.filter((x) => x === w).length / ws.length;
      weight.set(w, (weight.get(w) ?? 0) + tf * Math.log(n / d));
    }
  }
  const keywords = [...weight]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 10)
    .map(([w]) => w);
  const topics: Record<string, string[]> = {};
  observations.forEach((text, i) => {
    const present = new Set(docs[i]);
    const key = keywords.find((w) => present.has(w));
    const name = key === undefined ? 'Other' : capitalize(key);
    (topics[name] ??= []).push(text);
  });
  if (Object.keys(topics).length < 2 && n >= 4) {
    const half = Math.floor(n / 2);
    return { 'Part 1': observations.slice(0, half), 'Part 2': observations.slice(half) };
  }
  return topics;
}
