/**
 * The tokenizer the engine runs (src/embed/onnx/text-tokenizer.ts, @huggingface/tokenizers without
 * transformers.js) against the ids transformers.js 4.3.1 gave for the same texts and tokenizer
 * files (test/fixtures/tokenizer/expected-ids.json, made by make-expected-ids.ts beside it before
 * the library was removed, issue 27): accents composed and decomposed, CJK, emoji sequences,
 * control characters, whitespace runs, the empty string, literal special tokens, a text past 512
 * tokens; each text alone as the model is fed it (truncated) and counted (not truncated), and one
 * padded batch.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { E5_PACKAGE, MINILM_PACKAGE } from '../../src/embed/onnx/model-files.js';
import { loadTextTokenizer, tokenBatch, type TextTokenizer } from '../../src/embed/onnx/text-tokenizer.js';
import { modelCacheDir, REPO_ROOT } from '../helpers/fixtures.js';

interface Expected {
  readonly cases: readonly { readonly count: number; readonly ids: Readonly<Record<string, readonly number[]>> }[];
  readonly batch: { readonly prefix: string; readonly input_ids: number[][]; readonly attention_mask: number[][] };
}

const fixtures = join(REPO_ROOT, 'test', 'fixtures', 'tokenizer');
const { texts, batch } = JSON.parse(readFileSync(join(fixtures, 'texts.json'), 'utf8')) as { texts: string[]; batch: string[] };
const expected = (JSON.parse(readFileSync(join(fixtures, 'expected-ids.json'), 'utf8')) as { models: Record<string, Expected> }).models;

/** Rows of a [rows, width] int64 array, as numbers. */
const rows = (data: BigInt64Array, [n, width]: readonly [number, number]): number[][] =>
  Array.from({ length: n }, (_, i) => Array.from(data.subarray(i * width, (i + 1) * width), Number));

/** What the model is fed for one text. */
function fed(tokenizer: TextTokenizer, text: string): number[] {
  const one = tokenBatch(tokenizer, [text]);
  return rows(one.inputIds, one.dims)[0] ?? [];
}

function differences(tokenizer: TextTokenizer, want: Expected): string[] {
  const found: string[] = [];
  texts.forEach((text, i) => {
    const c = want.cases[i];
    if (c === undefined) throw new Error(`expected-ids.json has no case ${i}: regenerate it with make-expected-ids.ts`);
    const count = tokenizer.encode(text).length;
    if (count !== c.count) found.push(`${JSON.stringify(text.slice(0, 40))}: ${count} tokens, transformers.js ${c.count}`);
    for (const [prefix, ids] of Object.entries(c.ids)) {
      const ours = fed(tokenizer, prefix + text);
      if (JSON.stringify(ours) !== JSON.stringify(ids))
        found.push(`${JSON.stringify((prefix + text).slice(0, 40))}: ours ${JSON.stringify(ours)}, transformers.js ${JSON.stringify(ids)}`);
    }
  });
  return found;
}

function suite(id: string, dir: string | undefined, why: string) {
  describe(`${id}'s tokenizer against transformers.js's ids`, () => {
    if (dir === undefined) {
      it.skip(`skipped: ${why}`, () => undefined);
      return;
    }
    const want = expected[id];
    if (want === undefined) throw new Error(`expected-ids.json has no ${id}`);

    it('gives the same ids to every text, counted whole and truncated as the model is fed', async () => {
      expect(texts.length).toBe(want.cases.length);
      const tokenizer = await loadTextTokenizer(dir, false);
      expect(differences(tokenizer, want)).toEqual([]);
      // The fixture covers what it says: the empty string, and a text the model sees cut at 512.
      expect(texts).toContain('');
      expect(want.cases.some((c) => c.count > 512 && Object.values(c.ids).every((ids) => ids.length === 512))).toBe(true);
    });

    it('pads a batch to its longest text with the pad token, masked out', async () => {
      const tokenizer = await loadTextTokenizer(dir, false);
      const ours = tokenBatch(
        tokenizer,
        batch.map((t) => want.batch.prefix + t),
      );
      expect(rows(ours.inputIds, ours.dims)).toEqual(want.batch.input_ids);
      expect(rows(ours.attentionMask, ours.dims)).toEqual(want.batch.attention_mask);
    });
  });
}

const e5 = join(modelCacheDir(), E5_PACKAGE.id);
if (!existsSync(join(e5, 'tokenizer.json')))
  throw new Error(`${e5} holds no model: run "node dist/cli/main.js model install" (npm test's pretest does).`);
suite(E5_PACKAGE.id, e5, '');

// MiniLM (WordPiece, BERT's normaliser) is installed only on demand; LIMBIC_MINILM_DIR may name a copy.
const minilm = [process.env.LIMBIC_MINILM_DIR, join(modelCacheDir(), MINILM_PACKAGE.id)].find(
  (d): d is string => d !== undefined && existsSync(join(d, 'tokenizer.json')),
);
suite(MINILM_PACKAGE.id, minilm, `${MINILM_PACKAGE.id} is not installed ("limbic model install minilm", or LIMBIC_MINILM_DIR)`);
