/** The real ONNX model installed by `limbic model install` (all-MiniLM-L6-v2, int8). */
import { describe, expect, it } from 'vitest';
import { isMemoryError } from '../../src/core/errors.js';
import { resolveModel } from '../../src/embed/onnx/onnx-embedder.js';
import { installedModels, verifyInstalledModel } from '../../src/embed/onnx/model-files.js';
import { modelCacheDir, realEmbedder, tempDir } from '../helpers/fixtures.js';

const dot = (a: Float32Array, b: Float32Array): number => a.reduce((s, x, i) => s + x * (b[i] ?? 0), 0);

describe('ONNX embedder (real model)', () => {
  it('is installed with verified checksums', () => {
    const installed = installedModels(modelCacheDir());
    expect(installed.length).toBeGreaterThan(0);
    const model = installed[0];
    expect(model?.manifest.dims).toBe(384);
    expect(verifyInstalledModel(model?.dir ?? '')).toEqual([]);
  });

  it('places car nearer automobile than banana', async () => {
    const e = await realEmbedder();
    const [car, automobile, banana] = await e.embed(['car', 'automobile', 'banana'], 'passage');
    if (!car || !automobile || !banana) throw new Error('missing vectors');
    // e5's similarities sit close together (0.8-0.95), MiniLM's spread wider: an ordering with a margin.
    expect(dot(car, automobile)).toBeGreaterThan(dot(car, banana) + 0.05);
  });

  it('makes unit vectors of the model size, the same for the same text', async () => {
    const e = await realEmbedder();
    expect(e.dims).toBe(384);
    const [a, b] = await e.embed(['the same text', 'the same text'], 'passage');
    expect(a?.length).toBe(384);
    expect(Math.sqrt(dot(a ?? new Float32Array(), a ?? new Float32Array()))).toBeCloseTo(1, 5);
    expect(Array.from(a ?? [])).toEqual(Array.from(b ?? []));
  });

  it('agrees between batched and single encodings within 1e-5', async () => {
    const e = await realEmbedder();
    const texts = ['short', 'a much longer sentence about the history of the automobile industry in Germany', 'banana bread'];
    const batch = await e.embed(texts, 'passage');
    for (let i = 0; i < texts.length; i++) {
      const [single] = await e.embed([texts[i] ?? ''], 'passage');
      const diff = Math.max(...Array.from(single ?? []).map((x, j) => Math.abs(x - (batch[i]?.[j] ?? 0))));
      expect(diff).toBeLessThan(1e-5);
    }
  });

  it('counts tokens with the model tokenizer and truncates long input instead of failing', async () => {
    const e = await realEmbedder();
    // Special tokens included: at least one per word plus the two that frame a text.
    expect(e.countTokens('hello world')).toBeGreaterThanOrEqual(4);
    expect(e.countTokens('hello world hello world')).toBeGreaterThan(e.countTokens('hello world'));
    const long = 'memory '.repeat(2000);
    expect(e.countTokens(long)).toBeGreaterThan(512);
    const [v] = await e.embed([long], 'passage');
    expect(v?.length).toBe(384);
  });

  it('says how to install a model when none is found', () => {
    const tmp = tempDir();
    try {
      resolveModel({ modelDir: undefined, cacheDir: tmp.dir, modelId: 'nothing-here', allowRemote: false });
      expect.unreachable('resolveModel should throw');
    } catch (error) {
      expect(isMemoryError(error)).toBe(true);
      expect((error as Error).message).toMatch(/limbic model install/);
    } finally {
      tmp.cleanup();
    }
  });
});
