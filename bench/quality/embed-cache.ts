/**
 * An on-disk cache of the real model's vectors for benchmark texts, so a second run (another half,
 * another option) does not embed LoCoMo again on a shared CPU. Kept under
 * ~/.cache/limbic/bench (LIMBIC_BENCH_CACHE overrides; never in the repo), one file per model and
 * text kind, keyed by the SHA-256 of the text: a changed text is simply a new key. Records are
 * appended whole ([32-byte hash][dims × float32]) in one write each batch, so two benchmark
 * processes may share the file; a torn tail (a run killed mid-write) is ignored on load.
 * Entity texts are built here with the engine's own tokenizer, exactly as the engine builds them,
 * so embedEntities is cached too.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { embedEntitiesAsPassages, fitsAsPassages, type Embedder, type TextKind } from '../../src/embed/embedder.js';
import type { OnnxEngine } from '../../src/embed/onnx/onnx-embedder.js';

const HASH_BYTES = 32;

export function benchCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.LIMBIC_BENCH_CACHE || join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'limbic', 'bench');
}

/** What a cached embedder did, for the report: texts found on disk and texts the model embedded. */
export interface CacheCounts {
  hits: number;
  misses: number;
}

class VectorFile {
  private readonly vectors = new Map<string, Float32Array>();

  constructor(
    private readonly path: string,
    private readonly dims: number,
  ) {
    if (!existsSync(path)) return;
    const bytes = readFileSync(path);
    const size = HASH_BYTES + dims * 4;
    for (let at = 0; at + size <= bytes.length; at += size) {
      const key = bytes.subarray(at, at + HASH_BYTES).toString('hex');
      // A copy: the file's buffer is not 4-byte aligned at every record.
      const v = new Float32Array(dims);
      Buffer.from(v.buffer).set(bytes.subarray(at + HASH_BYTES, at + size));
      this.vectors.set(key, v);
    }
  }

  get(key: string): Float32Array | undefined {
    return this.vectors.get(key);
  }

  add(entries: readonly (readonly [string, Float32Array])[]): void {
    if (entries.length === 0) return;
    const chunks: Buffer[] = [];
    for (const [key, v] of entries) {
      if (v.length !== this.dims) continue;
      this.vectors.set(key, v);
      chunks.push(Buffer.from(key, 'hex'), Buffer.from(v.buffer, v.byteOffset, v.byteLength));
    }
    appendFileSync(this.path, Buffer.concat(chunks));
  }
}

/** The engine with its vectors cached on disk; `counts` tells how many texts came from the cache. */
export function cachedEmbedder(engine: OnnxEngine, dir = benchCacheDir()): Embedder & { readonly counts: CacheCounts } {
  const safe = engine.id.replace(/[^A-Za-z0-9._-]+/g, '_');
  mkdirSync(dir, { recursive: true });
  const files: Record<TextKind, VectorFile> = {
    query: new VectorFile(join(dir, `${safe}.query.vec`), engine.dims),
    passage: new VectorFile(join(dir, `${safe}.passage.vec`), engine.dims),
  };
  const counts: CacheCounts = { hits: 0, misses: 0 };
  const hash = (text: string): string => createHash('sha256').update(text).digest('hex');
  const embed = async (texts: readonly string[], kind: TextKind): Promise<Float32Array[]> => {
    const file = files[kind];
    const keys = texts.map(hash);
    const out = keys.map((k) => file.get(k));
    const missing = [...new Set(keys.filter((_, i) => out[i] === undefined))];
    counts.hits += texts.length - missing.length;
    counts.misses += missing.length;
    if (missing.length > 0) {
      const index = new Map(keys.map((k, i) => [k, i]));
      const vectors = await engine.embed(
        missing.map((k) => texts[index.get(k) as number] as string),
        kind,
      );
      file.add(missing.map((k, i) => [k, vectors[i] as Float32Array] as const));
    }
    return keys.map((k, i) => out[i] ?? (file.get(k) as Float32Array));
  };
  return {
    id: engine.id,
    dims: engine.dims,
    similarityFloor: engine.similarityFloor,
    embed,
    embedEntities: (items) => embedEntitiesAsPassages({ embed }, (text) => engine.countTokens(text), items),
    fitsOneVector: async (items) => fitsAsPassages((text) => engine.countTokens(text), items),
    counts,
  };
}
