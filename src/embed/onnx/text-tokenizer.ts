/**
 * A model's tokenizer as the engine runs it: @huggingface/tokenizers (pure JavaScript) reading the
 * model folder's tokenizer.json and tokenizer_config.json, plus what transformers.js added on top
 * of that library for its feature-extraction pipeline, which Limbic ran until issue 27 (the
 * library alone is 0.6 MB; transformers.js brought onnxruntime-web, 141 MB, and sharp):
 *
 * - special tokens added (`<s> … </s>`, `[CLS] … [SEP]`), as the tokenizer's post-processor says;
 * - truncation at tokenizer_config.json's `model_max_length`, after the special tokens were added,
 *   so a text over the limit loses its closing token there too (tokenizer.json's own `truncation`
 *   and `padding` are ignored, as they were);
 * - a batch padded to its longest text with the pad token (`pad_token`, else `eos_token`), the
 *   padding masked out.
 *
 * test/embed/text-tokenizer.test.ts holds the ids to the ones transformers.js 4.3.1 gave
 * (test/fixtures/tokenizer/expected-ids.json).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Tokenizer } from '@huggingface/tokenizers';
import { loadUnigramTokenizer } from './unigram-vocab.js';

export interface TextTokenizer {
  /** Ids with the special tokens, not truncated: what a text's length is counted by. */
  encode(text: string): number[];
  /** The longest input the model takes, in tokens (Infinity when the config sets none). */
  readonly maxLength: number;
  /** The id a batch is padded with. */
  readonly padId: number;
}

/** A batch as the model takes it: [texts, longest] int64 row-major; padding has mask 0. */
export interface TokenBatch {
  readonly inputIds: BigInt64Array;
  readonly attentionMask: BigInt64Array;
  readonly dims: readonly [number, number];
}

/**
 * The tokenizer of the model folder `dir`. A Unigram one (e5's) is loaded through
 * unigram-vocab.ts, which may write tokenizer.vocab.bin into `dir` when `writeVocabFile`.
 */
export async function loadTextTokenizer(dir: string, writeVocabFile: boolean): Promise<TextTokenizer> {
  const config = JSON.parse(await readFile(join(dir, 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>;
  const tokenizer = (await loadUnigramTokenizer(dir, config, writeVocabFile)) ?? (await loadLibraryTokenizer(dir, config));
  const maxLength = config.model_max_length;
  const pad = tokenFromConfig(config, 'pad_token') ?? tokenFromConfig(config, 'eos_token');
  return {
    encode: (text) => tokenizer.encode(text).ids,
    maxLength: typeof maxLength === 'number' ? maxLength : Infinity,
    // No pad token at all: any id does, the mask hides it (transformers.js would have failed).
    padId: (pad === undefined ? undefined : tokenizer.token_to_id(pad)) ?? 0,
  };
}

async function loadLibraryTokenizer(dir: string, config: object): Promise<Tokenizer> {
  // Imported here: only the embedding worker tokenizes.
  const [{ Tokenizer }, json] = await Promise.all([import('@huggingface/tokenizers'), readFile(join(dir, 'tokenizer.json'), 'utf8')]);
  return new Tokenizer(JSON.parse(json) as object, config);
}

/** A special token as tokenizer_config.json writes it: a string, or an AddedToken object. */
function tokenFromConfig(config: Record<string, unknown>, key: string): string | undefined {
  const value = config[key];
  if (typeof value === 'string' && value !== '') return value;
  const content = (value as { content?: unknown } | null | undefined)?.content;
  return typeof content === 'string' && content !== '' ? content : undefined;
}

/**
 * Tokenizes `texts` (at least one) into one batch: each truncated at the model's limit, all padded
 * to the longest.
 * @example tokenBatch(tokenizer, ['query: hola', 'query: buenos días']).dims // [2, 7]
 */
export function tokenBatch(tokenizer: TextTokenizer, texts: readonly string[]): TokenBatch {
  const rows = texts.map((text) => {
    const ids = tokenizer.encode(text);
    return ids.length > tokenizer.maxLength ? ids.slice(0, tokenizer.maxLength) : ids;
  });
  const width = rows.reduce((longest, row) => Math.max(longest, row.length), 0);
  const inputIds = new BigInt64Array(rows.length * width).fill(BigInt(tokenizer.padId));
  const attentionMask = new BigInt64Array(rows.length * width);
  rows.forEach((row, i) => {
    row.forEach((id, j) => {
      inputIds[i * width + j] = BigInt(id);
      attentionMask[i * width + j] = 1n;
    });
  });
  return { inputIds, attentionMask, dims: [rows.length, width] };
}
