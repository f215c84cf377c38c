/**
 * Benchmark vectors that behave like the real model's at sizes it cannot embed here (1M entities
 * would take a day on 2 cores). Random unit vectors are the wrong stand-in: in 384 dimensions they
 * are all nearly orthogonal, while e5's vectors share a large common direction (unrelated texts sit
 * near cosine 0.75) and form clusters, which is what makes int8 quantization and any approximate
 * index work or fail.
 *
 * So a pool of real text is embedded once with the real model (LoCoMo turns and observations,
 * XQuAD paragraphs and their sentences, read in place from ../shared/data; the vectors are cached
 * under ~/.cache/limbic/bench, never in the repository), and each entity's vector is derived from
 * it: the pool's mean direction, plus the centred part of one pool vector and smaller centred parts
 * of one or two others, plus a little noise, scaled so the centred part keeps the pool's length.
 * Queries are real-model vectors of held-out questions (LoCoMo and XQuAD questions, never in the pool).
 * distributionFacts() measures how close the result is to the pool; the benchmark reports it.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { passFitsOneVector, type Embedder } from '../../src/embed/embedder.js';
import { processAlive } from '../../src/os/process-alive.js';
import { requireData } from '../quality/harness.js';
import { rng } from './generate.js';

interface LocomoSample {
  conversation: Record<string, unknown>;
  observation?: Record<string, Record<string, [string, string][]>>;
  qa: { question: string; category: number }[];
}
interface Squad {
  data: { paragraphs: { context: string; qas: { question: string }[] }[] }[];
}

const readJson = <T>(relative: string): T => JSON.parse(readFileSync(requireData(relative), 'utf8')) as T;

/** The pool's texts (passages) and the held-out questions, in a fixed order. */
function texts(): { pool: string[]; questions: string[] } {
  const pool: string[] = [];
  const questions: string[] = [];
  const locomo = readJson<LocomoSample[]>('locomo/locomo10.json');
  for (const sample of locomo) {
    for (const [key, turns] of Object.entries(sample.conversation)) {
      if (!/^session_\d+$/.test(key) || !Array.isArray(turns)) continue;
      for (const turn of turns as { speaker: string; text: string }[]) pool.push(`${turn.speaker}: ${turn.text}`);
    }
    for (const session of Object.values(sample.observation ?? {}))
      for (const facts of Object.values(session)) for (const [fact] of facts) pool.push(fact);
  }
  const locomoQuestions = locomo.flatMap((s) => s.qa.filter((q) => q.category !== 5).map((q) => q.question));
  const xquadQuestions: string[] = [];
  for (const lang of ['en', 'es']) {
    for (const article of readJson<Squad>(`xquad/xquad.${lang}.json`).data) {
      for (const p of article.paragraphs) {
        pool.push(p.context);
        for (const sentence of p.context.split(/(?<=[.!?])\s+(?=[A-ZÁÉÍÓÚÑ¿¡])/)) if (sentence.length >= 30) pool.push(sentence);
        if (lang === 'en') xquadQuestions.push(...p.qas.map((q) => q.question));
      }
    }
  }
  // Alternate the two sources so any prefix of the list mixes conversation and encyclopaedia questions.
  for (let i = 0; i < Math.max(locomoQuestions.length, xquadQuestions.length); i++) {
    const a = locomoQuestions[(i * 7) % locomoQuestions.length];
    const b = xquadQuestions[(i * 5) % xquadQuestions.length];
    if (a !== undefined) questions.push(a);
    if (b !== undefined) questions.push(b);
  }
  return { pool: [...new Set(pool)], questions: [...new Set(questions)] };
}

/** Where `list`'s vectors are cached: by model, kind and the texts' hash. */
export function cacheFile(model: Pick<Embedder, 'id'>, list: readonly string[], kind: 'query' | 'passage', label: string): string {
  const dir = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'limbic', 'bench');
  const hash = createHash('sha256')
    .update(`${model.id}\n${kind}\n${list.join('\n')}`)
    .digest('hex')
    .slice(0, 16);
  return join(dir, `${label}-${model.id.replace(/[^\w.-]/g, '_')}-${hash}.f32`);
}

/** Vectors of `list` by the model, cached (cacheFile); waits while another live process embeds the same list. */
async function embedCached(model: Embedder, list: readonly string[], kind: 'query' | 'passage', label: string): Promise<Float32Array[]> {
  const file = cacheFile(model, list, kind, label);
  const lock = `${file}.lock`;
  const dims = model.dims;
  for (;;) {
    const owner = existsSync(lock) ? Number(readFileSync(lock, 'utf8')) : NaN;
    if (!(owner > 0 && owner !== process.pid && processAlive(owner))) break;
    process.stderr.write(`bench: ${label}: waiting for process ${owner}, which is embedding the same texts\n`);
    await new Promise((resolve) => setTimeout(resolve, 10_000));
  }
  if (existsSync(file)) {
    const bytes = readFileSync(file);
    if (bytes.byteLength === list.length * dims * 4) {
      const all = new Float32Array(bytes.buffer, bytes.byteOffset, list.length * dims).slice();
      return Array.from({ length: list.length }, (_, i) => all.subarray(i * dims, (i + 1) * dims));
    }
  }
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(lock, String(process.pid));
  // Appended batch by batch, so an interrupted first run leaves the next one less to embed.
  const partial = `${file}.partial`;
  const out: Float32Array[] = [];
  if (existsSync(partial)) {
    const bytes = readFileSync(partial);
    const done = Math.min(list.length, Math.floor(bytes.byteLength / (dims * 4)));
    const all = new Float32Array(bytes.buffer, bytes.byteOffset, done * dims).slice();
    for (let i = 0; i < done; i++) out.push(all.subarray(i * dims, (i + 1) * dims));
    writeFileSync(partial, bytes.subarray(0, done * dims * 4));
  }
  const started = performance.now();
  const resumed = out.length;
  for (let i = resumed; i < list.length; i += 32) {
    const batch = await model.embed(list.slice(i, i + 32), kind);
    appendFileSync(partial, Buffer.concat(batch.map((v) => Buffer.from(v.buffer, v.byteOffset, v.byteLength))));
    out.push(...batch);
    if (i % 1024 === 0 && i > 0) {
      const rate = (i - resumed) / ((performance.now() - started) / 1000);
      process.stderr.write(`bench: ${label}: ${i} / ${list.length} embedded (${rate.toFixed(0)}/s)\n`);
    }
  }
  const all = new Float32Array(list.length * dims);
  out.forEach((v, i) => all.set(v, i * dims));
  writeFileSync(file, Buffer.from(all.buffer));
  rmSync(partial, { force: true });
  rmSync(lock, { force: true });
  return out;
}

/** The cache file of the pool's vectors (for a process that embeds it while another waits). */
export const poolCacheFile = (model: Pick<Embedder, 'id'>): string => cacheFile(model, texts().pool, 'passage', 'pool');

export interface RealTextVectors {
  /** Real-model passage vectors of the pool's texts. */
  readonly pool: readonly Float32Array[];
  /** Real-model query vectors of held-out questions (not in the pool). */
  readonly queries: readonly Float32Array[];
}

export async function realTextVectors(model: Embedder, queryCount: number): Promise<RealTextVectors> {
  const { pool, questions } = texts();
  return {
    pool: await embedCached(model, pool, 'passage', 'pool'),
    queries: await embedCached(model, questions.slice(0, queryCount), 'query', 'questions'),
  };
}

const dot = (a: Float32Array, b: Float32Array): number => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
};

function unit(v: Float32Array): Float32Array {
  const n = Math.sqrt(dot(v, v));
  for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) / n;
  return v;
}

/**
 * Entity vectors derived from the pool (see the top of this file): deterministic for a seed.
 * `noise`: the Gaussian noise's length relative to the centred part's.
 */
export function derivedVectors(pool: readonly Float32Array[], seed: number, noise = 0.15): () => Float32Array {
  const dims = pool[0]?.length ?? 0;
  const mean = new Float32Array(dims);
  for (const v of pool) for (let i = 0; i < dims; i++) mean[i] = (mean[i] as number) + (v[i] as number) / pool.length;
  const centred = pool.map((v) => v.map((x, i) => x - (mean[i] as number)));
  const spread = Math.sqrt(centred.reduce((s, c) => s + dot(c, c), 0) / pool.length);
  const r = rng(seed);
  const gauss = (): number => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
  const pick = (): Float32Array => centred[Math.floor(r() * centred.length)] as Float32Array;
  return () => {
    const parts: [Float32Array, number][] = [[pick(), 1]];
    parts.push([pick(), 0.2 + 0.4 * r()]);
    if (r() < 0.5) parts.push([pick(), 0.3 * r()]);
    const mixed = new Float32Array(dims);
    for (const [c, w] of parts) for (let i = 0; i < dims; i++) mixed[i] = (mixed[i] as number) + w * (c[i] as number);
    for (let i = 0; i < dims; i++) mixed[i] = (mixed[i] as number) + (noise * spread * gauss()) / Math.sqrt(dims);
    const length = Math.sqrt(dot(mixed, mixed));
    const v = new Float32Array(dims);
    for (let i = 0; i < dims; i++) v[i] = (mean[i] as number) + ((mixed[i] as number) * spread) / length;
    return unit(v);
  };
}

export interface DistributionFacts {
  /** Mean cosine of random pairs of the set. */
  readonly meanPairCosine: number;
  /** Nearest-neighbour cosine (within the set) of sampled members: p10, p50, p90. */
  readonly nnCosine: readonly [number, number, number];
  /** The held-out queries' best cosine against the set: p10, p50, p90. */
  readonly queryTopCosine: readonly [number, number, number];
  /** The queries' 30th best cosine minus their best, p50: how crowded the top 30 is. */
  readonly queryTop30Gap: number;
}

const percentiles = (xs: number[]): [number, number, number] => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number): number => s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? NaN;
  return [at(0.1), at(0.5), at(0.9)];
};

/** Measured facts of a vector set, by exact float scans (`samples` members and every query). */
export function distributionFacts(
  set: readonly Float32Array[],
  queries: readonly Float32Array[],
  samples = 200,
  seed = 3,
): DistributionFacts {
  const r = rng(seed);
  const any = (): number => Math.floor(r() * set.length);
  let pairSum = 0;
  const pairs = 20_000;
  for (let i = 0; i < pairs; i++) pairSum += dot(set[any()] as Float32Array, set[any()] as Float32Array);
  const nn: number[] = [];
  for (let s = 0; s < samples; s++) {
    const i = any();
    const v = set[i] as Float32Array;
    let best = -1;
    for (let j = 0; j < set.length; j++) if (j !== i) best = Math.max(best, dot(v, set[j] as Float32Array));
    nn.push(best);
  }
  const top: number[] = [];
  const gaps: number[] = [];
  for (const q of queries) {
    const sims = set.map((v) => dot(q, v)).sort((a, b) => b - a);
    top.push(sims[0] ?? NaN);
    gaps.push((sims[29] ?? NaN) - (sims[0] ?? NaN));
  }
  return {
    meanPairCosine: pairSum / pairs,
    nnCosine: percentiles(nn),
    queryTopCosine: percentiles(top),
    queryTop30Gap: percentiles(gaps)[1],
  };
}

/**
 * The model for searches: held-out questions' real vectors stand for the benchmark's query texts
 * (whose words match the synthetic graph for the keyword leg); any other text goes to the model.
 */
export function heldOutQueries(model: Embedder, texts: readonly string[], vectors: readonly Float32Array[]): Embedder {
  const vectorOf = new Map(texts.map((t, i) => [t, vectors[i % vectors.length] as Float32Array]));
  return {
    id: model.id,
    dims: model.dims,
    similarityFloor: model.similarityFloor,
    embedEntities: (items) => model.embedEntities(items),
    ...passFitsOneVector(model),
    embed: async (list, kind) => {
      const v = list.length === 1 && kind === 'query' ? vectorOf.get(list[0] ?? '') : undefined;
      return v === undefined ? model.embed(list, kind) : [v];
    },
  };
}
