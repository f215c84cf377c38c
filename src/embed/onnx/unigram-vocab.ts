/**
 * A Unigram tokenizer (multilingual-e5's: 250,002 SentencePiece pieces) loaded in a small part of
 * the time @huggingface/tokenizers takes. On load the library builds a character trie of every piece
 * (about a million Map nodes) and a Map from piece to id: 0.9-1.2 s of the 1.3 s the e5 tokenizer
 * took, on the path from a server's start to its first semantic answer (a profile of the
 * embedding worker, bench/cold-start.ts). Its Unigram model asks the trie one question, which
 * pieces begin at a position of the text (shortest first), and the Map for ids: sorted-pieces.ts
 * answers both from the pieces in sorted order, which the vocabulary file stores, so nothing is
 * built at all (unigram-vocab-file.ts also spares parsing the 8.7 MB tokenizer.json).
 *
 * Everything else stays the library's: the normalizer, pre-tokenizer, special tokens, the lattice
 * and its Viterbi search, post-processing. The library builds the tokenizer from the same
 * tokenizer.json with the vocabulary cut to its first pieces (so its trie and Map are tiny), then
 * its Unigram model is given the whole vocabulary and the sorted search in place of the trie and
 * the Map. Those fields are public in the library's types; when they are not as expected (another
 * version of the library) this returns undefined and the caller loads the tokenizer the library's
 * way: slower, never different. test/embed/unigram-vocab.test.ts checks that both give the same ids.
 */
import type { Tokenizer } from '@huggingface/tokenizers';
import { PieceIds, RUN_LIMIT, SortedPieces } from './sorted-pieces.js';
import { readUnigramVocabulary } from './unigram-vocab-file.js';

/** The Unigram model fields this module sets (as in @huggingface/tokenizers 0.2's Unigram). */
interface UnigramModel {
  vocab: string[];
  scores: number[];
  tokens_to_ids: Map<string, number>;
  trie: { common_prefix_search(chars: readonly string[] | string, start?: number): Iterable<string> };
  unk_token_id?: number;
  min_score: number;
  unk_score: number;
  bos_token: string;
  bos_token_id?: number;
  eos_token: string;
  eos_token_id?: number;
}

/**
 * The tokenizer in `dir` (its tokenizer.json; `config` is its tokenizer_config.json) searching its
 * vocabulary in sorted order, or undefined when it is not a Unigram tokenizer or the library does
 * not look as expected. `writeVocabFile`: may write tokenizer.vocab.bin into `dir` (unigram-vocab-file.ts).
 */
export async function loadUnigramTokenizer(dir: string, config: object, writeVocabFile: boolean): Promise<Tokenizer | undefined> {
  const vocabulary = await readUnigramVocabulary(dir, writeVocabFile);
  if (vocabulary === undefined) return undefined;
  const { tokenizer, pieces, scores, order } = vocabulary;
  const unk = tokenizer.model.unk_id;
  if (unk < 0 || unk >= pieces.length || pieces.length >= RUN_LIMIT) return undefined;
  // The library builds its trie of these pieces only: up to <unk>, so every id it looks up exists.
  const first = pieces.slice(0, unk + 1).map((piece, i) => [piece, scores[i] ?? 0]);
  // Imported here: only the embedding worker tokenizes.
  const { Tokenizer } = await import('@huggingface/tokenizers');
  const small = new Tokenizer({ ...tokenizer, model: { ...tokenizer.model, vocab: first } }, config);
  const model: unknown = small.model;
  if (!isUnigramModel(model)) return undefined;
  const added = (tokenizer as { added_tokens?: readonly { id: number; content: string }[] }).added_tokens ?? [];
  install(model, pieces, Array.from(scores), order, added);
  return small;
}

/** Gives the model the whole vocabulary, as the library's constructors would have, and the sorted search. */
function install(
  model: UnigramModel,
  pieces: string[],
  scores: number[],
  order: Int32Array,
  added: readonly { id: number; content: string }[],
): void {
  // The library's trie and Map hold the vocabulary as written, before added tokens (below) rename
  // an id (the Map then holds both names); the search keeps the pieces as written.
  const sorted = new SortedPieces(added.every((t) => pieces[t.id] === t.content) ? pieces : [...pieces], order);
  const ids = new PieceIds(sorted);
  // As the library's Tokenizer constructor does for each added token, after building the model.
  for (const token of added) {
    ids.set(token.content, token.id);
    pieces[token.id] = token.content;
  }
  // As the library's Unigram constructor does: an unknown character scores below every piece.
  let min = Infinity;
  for (const score of scores) if (score < min) min = score;
  model.vocab = pieces;
  model.scores = scores;
  model.tokens_to_ids = ids;
  model.min_score = min;
  model.unk_score = min - 10;
  if (model.unk_token_id !== undefined) scores[model.unk_token_id] = model.unk_score;
  model.bos_token_id = ids.get(model.bos_token);
  model.eos_token_id = ids.get(model.eos_token);
  model.trie = sorted;
}

function isUnigramModel(value: unknown): value is UnigramModel {
  // The library's models are callable objects (functions).
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  const m = value as Partial<Record<keyof UnigramModel, unknown>> & { populate_nodes?: unknown };
  const trie = m.trie as { common_prefix_search?: unknown } | undefined;
  return (
    Array.isArray(m.vocab) &&
    Array.isArray(m.scores) &&
    m.tokens_to_ids instanceof Map &&
    typeof trie?.common_prefix_search === 'function' &&
    typeof m.populate_nodes === 'function' &&
    typeof m.bos_token === 'string' &&
    typeof m.eos_token === 'string'
  );
}
