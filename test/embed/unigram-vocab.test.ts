/**
 * The e5 tokenizer as the embedding worker loads it (src/embed/onnx/unigram-vocab.ts: the
 * @huggingface/tokenizers tokenizer with its vocabulary searched in sorted order, read from
 * tokenizer.vocab.bin) against the library's own load of the same files: the same ids on the
 * reference sentences and on seeded random text, from tokenizer.json and from the vocabulary file,
 * which is rewritten when stale or damaged.
 */
import { copyFileSync, existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { E5_PACKAGE } from '../../src/embed/onnx/model-files.js';
import { VOCAB_FILE } from '../../src/embed/onnx/unigram-vocab-file.js';
import { loadUnigramTokenizer } from '../../src/embed/onnx/unigram-vocab.js';
import { rng } from '../../bench/latency/generate.js';
import { modelCacheDir, REPO_ROOT, tempDir } from '../helpers/fixtures.js';

const modelDir = join(modelCacheDir(), E5_PACKAGE.id);
const reference = JSON.parse(readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'e5', 'reference.json'), 'utf8')) as {
  tokens: { prefix: string; text: string }[];
};

let library: Tokenizer;
/** tokenizer_config.json. */
let config: object;
/** A copy of the model's tokenizer files, so the vocabulary file is made here and not in the cache. */
let dir: string;
let cleanup: () => void;

/** Ids of the `fast` tokenizer that differ from the library's, as readable lines. */
function differences(fast: Tokenizer, texts: readonly string[]): string[] {
  return texts
    .map((text) => ({ text, ours: fast.encode(text).ids, theirs: library.encode(text).ids }))
    .filter((t) => JSON.stringify(t.ours) !== JSON.stringify(t.theirs))
    .map((t) => `${JSON.stringify(t.text)}: ours ${JSON.stringify(t.ours)}, library ${JSON.stringify(t.theirs)}`);
}

/** Seeded text mixing scripts, pieces of the vocabulary, controls, spaces, emoji and special tokens. */
function randomTexts(count: number, seed: number): string[] {
  const random = rng(seed);
  const pieces = library.model?.vocab ?? [];
  const ranges: [number, number][] = [
    [0x20, 0x7e],
    [0xa0, 0x24f],
    [0x370, 0x3ff],
    [0x400, 0x4ff],
    [0x590, 0x6ff],
    [0x900, 0x97f],
    [0xe00, 0xe7f],
    [0x3040, 0x30ff],
    [0x4e00, 0x9fff],
    [0xac00, 0xd7a3],
    [0x1f300, 0x1f6ff],
    [0x0, 0x1f],
    [0x2000, 0x206f],
    [0xfe00, 0xffff],
  ];
  const specials = ['<s>', '</s>', '<unk>', '<pad>', '<mask>', '\u2581', '  ', '\t\n'];
  const texts: string[] = [];
  for (let n = 0; n < count; n++) {
    let text = '';
    const length = 1 + Math.floor(random() * 40);
    for (let i = 0; i < length; i++) {
      const pick = random();
      if (pick < 0.3) text += (pieces[Math.floor(random() * pieces.length)] ?? '').replace(/\u2581/g, ' ');
      else if (pick < 0.35) text += specials[Math.floor(random() * specials.length)];
      else {
        const [lo, hi] = ranges[Math.floor(random() * ranges.length)] ?? [0x61, 0x7a];
        text += String.fromCodePoint(lo + Math.floor(random() * (hi - lo + 1)));
      }
    }
    texts.push(text);
  }
  return texts;
}

const sentences = (): string[] => reference.tokens.map((t) => t.prefix + t.text);

beforeAll(async () => {
  if (!existsSync(join(modelDir, 'tokenizer.json')))
    throw new Error(`${modelDir} holds no model: run "node dist/cli/main.js model install" (npm test's pretest does).`);
  config = JSON.parse(readFileSync(join(modelDir, 'tokenizer_config.json'), 'utf8')) as object;
  library = new Tokenizer(JSON.parse(readFileSync(join(modelDir, 'tokenizer.json'), 'utf8')) as object, config);
  ({ dir, cleanup } = tempDir('limbic-vocab-'));
  for (const file of ['tokenizer.json', 'tokenizer_config.json']) copyFileSync(join(modelDir, file), join(dir, file));
});

afterAll(() => cleanup());

/** Loads from `dir`, waiting for the vocabulary file the load writes in the background. */
async function load(): Promise<Tokenizer> {
  const fast = await loadUnigramTokenizer(dir, config, true);
  if (fast === undefined) throw new Error('the e5 tokenizer did not load as a Unigram tokenizer');
  for (let i = 0; i < 100 && !existsSync(join(dir, VOCAB_FILE)); i++) await new Promise((r) => setTimeout(r, 50));
  return fast;
}

describe('the e5 tokenizer with its vocabulary searched in sorted order', () => {
  it("gives the library's ids from tokenizer.json, and writes the vocabulary file", async () => {
    const fast = await load();
    expect(existsSync(join(dir, VOCAB_FILE))).toBe(true);
    expect(differences(fast, sentences())).toEqual([]);
    expect(differences(fast, randomTexts(3000, 1))).toEqual([]);
  });

  it("gives the library's ids from the vocabulary file, on the sentences and 5,000 random texts", async () => {
    const written = readFileSync(join(dir, VOCAB_FILE));
    const fast = await load();
    // Read, not rewritten.
    expect(readFileSync(join(dir, VOCAB_FILE)).equals(written)).toBe(true);
    expect(differences(fast, sentences())).toEqual([]);
    expect(differences(fast, randomTexts(5_000, 2))).toEqual([]);
    expect(differences(fast, [`passage: ${'memoria '.repeat(1000)}`])).toEqual([]);
  });

  it("answers the library's piece-to-id Map: lookups, added tokens, size and iteration", async () => {
    const fast = await load();
    const ours = fast.model?.tokens_to_ids;
    const theirs = library.model?.tokens_to_ids;
    if (ours === undefined || theirs === undefined) throw new Error('no tokens_to_ids');
    for (const token of ['<s>', '</s>', '<unk>', '<pad>', '<mask>', '\u2581the', '\u2581memoria', 'not a piece at all', '']) {
      expect([token, ours.get(token), ours.has(token)]).toEqual([token, theirs.get(token), theirs.has(token)]);
    }
    expect(ours.size).toBe(theirs.size);
    expect([...ours.entries()]).toEqual([...theirs.entries()]);
    expect(fast.model?.vocab).toEqual(library.model?.vocab);
  });

  it('ignores and rewrites a vocabulary file that is stale or damaged', async () => {
    const file = join(dir, VOCAB_FILE);
    const good = readFileSync(file);
    // Damaged: one byte of the pieces flipped.
    const damaged = Buffer.from(good);
    damaged[damaged.length - 2_000_000] = (damaged[damaged.length - 2_000_000] ?? 0) ^ 0x20;
    writeFileSync(file, damaged);
    const fromJson = await loadUnigramTokenizer(dir, config, false);
    if (fromJson === undefined) throw new Error('the e5 tokenizer did not load');
    expect(differences(fromJson, sentences())).toEqual([]);
    // Stale: tokenizer.json changed after the file was made (its modification time says so).
    writeFileSync(file, good);
    utimesSync(join(dir, 'tokenizer.json'), new Date(), new Date(Date.now() + 60_000));
    const fast = await loadUnigramTokenizer(dir, config, true);
    expect(fast).toBeDefined();
    for (let i = 0; i < 100 && readFileSync(file).equals(good); i++) await new Promise((r) => setTimeout(r, 50));
    expect(readFileSync(file).equals(good)).toBe(false);
    expect(differences(await load(), sentences())).toEqual([]);
  });

  it('leaves a tokenizer that is not Unigram to the library (a WordPiece one, as MiniLM has)', async () => {
    const other = tempDir('limbic-vocab-wordpiece-');
    try {
      const tokenizer = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8')) as { model: object };
      tokenizer.model = {
        type: 'WordPiece',
        unk_token: '<unk>',
        continuing_subword_prefix: '##',
        max_input_chars_per_word: 100,
        vocab: { '<unk>': 0, a: 1 },
      };
      writeFileSync(join(other.dir, 'tokenizer.json'), JSON.stringify(tokenizer));
      copyFileSync(join(dir, 'tokenizer_config.json'), join(other.dir, 'tokenizer_config.json'));
      expect(await loadUnigramTokenizer(other.dir, config, true)).toBeUndefined();
      expect(existsSync(join(other.dir, VOCAB_FILE))).toBe(false);
    } finally {
      other.cleanup();
    }
  });
});
