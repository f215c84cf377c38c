/**
 * Synthetic knowledge graphs for the latency benchmark: entities with 5 observations of 8-24 words
 * drawn from a Zipf vocabulary (so a few words are in most entities, as in real text), a type from
 * 20, and about one relation per entity. Deterministic for a given size and seed.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ren',
  'to',
  'sa',
  'vi',
  'dor',
  'el',
  'qu',
  'an',
  'tis',
  'po',
  'ne',
  'ru',
  'ba',
  'cy',
  'fen',
  'go',
  'hal',
];
const FUNCTION_WORDS = ['the', 'of', 'and', 'to', 'in', 'is', 'for', 'on', 'with', 'that', 'by', 'at', 'from', 'as', 'was', 'it'];
export const TYPES = [
  'person',
  'project',
  'meeting',
  'decision',
  'bug',
  'feature',
  'customer',
  'note',
  'task',
  'idea',
  'document',
  'place',
  'event',
  'tool',
  'team',
  'release',
  'incident',
  'metric',
  'skill',
  'topic',
];

/** A small, fast, seedable PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Random unit vectors: a stand-in where the real model would take too long (labelled in reports). */
export const randomUnit = (dims: number, seed: number) => {
  const r = rng(seed);
  return () => {
    const v = new Float32Array(dims);
    let n = 0;
    for (let i = 0; i < dims; i++) n += (v[i] = r() - 0.5) ** 2;
    n = Math.sqrt(n);
    for (let i = 0; i < dims; i++) v[i] = (v[i] ?? 0) / n;
    return v;
  };
};

export class Vocabulary {
  readonly words: string[];
  private readonly cdf: Float64Array;

  /** `size` words; word i has weight 1 / (i + 1)^s. The first are English function words. */
  constructor(size: number, s: number, random: () => number) {
    const words = new Set<string>(FUNCTION_WORDS);
    while (words.size < size) {
      const n = 2 + Math.floor(random() * 3);
      let w = '';
      for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(random() * SYLLABLES.length)];
      words.add(w);
    }
    this.words = [...words];
    this.cdf = new Float64Array(size);
    let sum = 0;
    for (let i = 0; i < size; i++) this.cdf[i] = sum += 1 / (i + 1) ** s;
    for (let i = 0; i < size; i++) this.cdf[i] = (this.cdf[i] ?? 0) / sum;
  }

  pick(random: () => number): string {
    const x = random();
    let lo = 0;
    let hi = this.cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.cdf[mid] ?? 1) < x) lo = mid + 1;
      else hi = mid;
    }
    return this.words[lo] ?? 'the';
  }

  sentence(random: () => number, min: number, max: number): string {
    const n = min + Math.floor(random() * (max - min + 1));
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(this.pick(random));
    return out.join(' ');
  }
}

export const entityName = (i: number): string => `Entity ${i}`;

/** Writes a memory.jsonl (the official format) of `size` entities; resolves to the relation count. */
export async function writeGraph(path: string, size: number, seed = 42): Promise<number> {
  const random = rng(seed);
  const vocab = new Vocabulary(20_000, 1.07, random);
  const out = createWriteStream(path);
  const lines: string[] = [];
  const flush = async () => {
    if (!out.write(lines.join(''))) await once(out, 'drain');
    lines.length = 0;
  };
  for (let i = 0; i < size; i++) {
    const observations = Array.from({ length: 5 }, () => vocab.sentence(random, 8, 24));
    const type = TYPES[Math.floor(random() * TYPES.length)] ?? 'note';
    lines.push(`${JSON.stringify({ type: 'entity', name: entityName(i), entityType: type, observations })}\n`);
    if (lines.length >= 1000) await flush();
  }
  let relations = 0;
  for (let i = 1; i < size; i++) {
    const j = Math.floor(random() * i);
    lines.push(`${JSON.stringify({ type: 'relation', from: entityName(i), to: entityName(j), relationType: 'relates_to' })}\n`);
    relations++;
    if (lines.length >= 1000) await flush();
  }
  await flush();
  out.end();
  await once(out, 'finish');
  return relations;
}

/** Queries for the benchmark: natural-language-like, mixing common and mid-frequency words. */
export function queries(count: number, seed = 7): { text: string; substring: string }[] {
  const random = rng(seed);
  const vocab = new Vocabulary(20_000, 1.07, rng(42));
  // Substring probes: longer words of middling frequency, so a search_nodes answer is tens to
  // hundreds of entities (a probe matching most of the graph makes a response past the MCP SDK's
  // 10 MB stdio message limit, for any server).
  const probes = vocab.words.slice(500, 5000).filter((w) => w.length >= 7);
  return Array.from({ length: count }, () => {
    const mid = probes[Math.floor(random() * probes.length)] ?? 'kalomiren';
    const text = `${vocab.pick(random)} ${mid} ${vocab.sentence(random, 3, 6)} ${vocab.words[Math.floor(random() * 8)] ?? 'the'}`;
    return { text, substring: mid };
  });
}

/**
 * Substrings that 1-5% of the entities contain (the official test: name, type or an observation,
 * case-insensitive), measured on this graph: observation words of 5+ letters in 1-4% of the
 * entities as words, kept when their substring share is 1-5%. The workload a user tried (issue 13),
 * where the answer, not the search, is most of the work.
 */
export function broadQueries(entities: readonly { name: string; entityType: string; observations: string[] }[], count: number) {
  const hay = entities.map((e) => [e.name, e.entityType, ...e.observations].join('\u0000').toLowerCase());
  const df = new Map<string, number>();
  for (const e of entities)
    for (const w of new Set(e.observations.flatMap((o) => o.split(' ')))) if (w.length >= 5) df.set(w, (df.get(w) ?? 0) + 1);
  const words = [...df]
    .filter(([, n]) => n >= 0.01 * entities.length && n <= 0.04 * entities.length)
    .map(([w]) => w)
    .sort();
  const picked: { query: string; share: number }[] = [];
  for (const query of words) {
    const share = hay.filter((h) => h.includes(query)).length / entities.length;
    if (share >= 0.01 && share <= 0.05) picked.push({ query, share });
    if (picked.length === count) break;
  }
  return picked;
}
