/**
 * The ONNX engine: a sentence-embedding model on the CPU through onnxruntime-node, its tokenizer
 * through @huggingface/tokenizers (text-tokenizer.ts). Mean pooling over the attention mask, L2
 * normalisation (mean-pooling.ts), batches with dynamic padding, truncation at the model's limit:
 * what transformers.js's feature-extraction pipeline did, without that library. The runtime and
 * the tokenizer are imported lazily: start-up and FTS-only use never pay for them.
 */
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import type * as Ort from 'onnxruntime-node';
import { ERROR_CODES, MemoryError } from '../../core/errors.js';
import { embedEntitiesAsPassages, fitsAsPassages, type Embedder, type ModelDescription, type TextKind } from '../embedder.js';
import { installedModels, readManifest, similarityFloorOf, type ModelManifest } from './model-files.js';
import { fetchHubModel } from './hub-files.js';
import { meanPoolNormalized } from './mean-pooling.js';
import { runtimeFailure } from './native-runtime.js';
import { loadTextTokenizer, tokenBatch, type TextTokenizer } from './text-tokenizer.js';

export interface OnnxModelOptions {
  /** A folder holding one model (config.json, tokenizer.json, onnx/*.onnx). */
  readonly modelDir: string | undefined;
  /** Where installed models live. */
  readonly cacheDir: string;
  /** Model id to look for in the cache and, when allowed, on the hub. */
  readonly modelId: string;
  /** Fetch from the model hub when nothing is installed locally. */
  readonly allowRemote: boolean;
  /** Texts per forward pass. @default 16 */
  readonly batchSize?: number;
  /**
   * Threads for one forward pass (onnxruntime's intra-op pool). A server gives the model one core
   * less than the machine has, so the thread answering MCP always has one. @default all cores
   */
  readonly threads?: number;
}

interface ResolvedModel extends ModelDescription {
  readonly dtype: 'fp32' | 'q8';
  readonly similarityFloor: number;
  /** Prepended to search text and to stored text, when the model was trained with them (e5). */
  readonly prefixes: Readonly<Record<TextKind, string>>;
}

const NO_PREFIXES: Readonly<Record<TextKind, string>> = { query: '', passage: '' };

function prefixesOf(manifest: ModelManifest | undefined): Record<TextKind, string> {
  return { query: manifest?.queryPrefix ?? '', passage: manifest?.passagePrefix ?? '' };
}

function dtypeOf(dir: string): 'fp32' | 'q8' {
  const manifest = readManifest(dir);
  if (manifest !== undefined) return manifest.dtype;
  return existsSync(join(dir, 'onnx', 'model.onnx')) ? 'fp32' : 'q8';
}

/** --model-dir, then the cache (the configured id, then any installed model), then the hub. */
export function resolveModel(options: OnnxModelOptions): ResolvedModel {
  if (options.modelDir !== undefined) {
    if (!existsSync(join(options.modelDir, 'tokenizer.json'))) {
      throw new MemoryError(
        ERROR_CODES.MODEL_UNAVAILABLE,
        `The model folder ${options.modelDir} has no tokenizer.json. Point --model-dir / LIMBIC_MODEL_DIR at a folder with config.json, tokenizer.json and onnx/model.onnx.`,
      );
    }
    const manifest = readManifest(options.modelDir);
    return {
      id: manifest?.id ?? basename(options.modelDir),
      dims: manifest?.dims,
      source: 'model-dir',
      location: options.modelDir,
      dtype: dtypeOf(options.modelDir),
      prefixes: prefixesOf(manifest),
      similarityFloor: similarityFloorOf(manifest, manifest?.id ?? basename(options.modelDir)),
    };
  }
  const wanted = join(options.cacheDir, basename(options.modelId));
  if (existsSync(join(wanted, 'tokenizer.json'))) {
    const manifest = readManifest(wanted);
    return {
      id: basename(options.modelId),
      dims: manifest?.dims,
      source: 'cache',
      location: wanted,
      dtype: dtypeOf(wanted),
      prefixes: prefixesOf(manifest),
      similarityFloor: similarityFloorOf(manifest, basename(options.modelId)),
    };
  }
  const installed = installedModels(options.cacheDir)[0];
  if (installed !== undefined) {
    return {
      id: installed.manifest.id,
      dims: installed.manifest.dims,
      source: 'cache',
      location: installed.dir,
      dtype: installed.manifest.dtype,
      prefixes: prefixesOf(installed.manifest),
      similarityFloor: similarityFloorOf(installed.manifest, installed.manifest.id),
      note: `${options.modelId} is not installed; using the installed ${installed.manifest.id} (${installed.manifest.source})`,
    };
  }
  if (options.allowRemote) {
    // Hub models used here (MiniLM family) take no instruction prefixes.
    return {
      id: options.modelId,
      dims: undefined,
      source: 'hub',
      location: options.modelId,
      dtype: 'q8',
      prefixes: NO_PREFIXES,
      similarityFloor: 0,
    };
  }
  throw new MemoryError(
    ERROR_CODES.MODEL_UNAVAILABLE,
    `No embedding model is installed in ${options.cacheDir}. Run "limbic model install" (or pass --model-dir). Every tool but the semantic search keeps working meanwhile.`,
  );
}

/** The engine on the caller's thread; src/embed/onnx/threaded-embedder.ts runs it in a worker. */
export interface OnnxEngine extends Embedder {
  readonly description: ModelDescription;
  /** Tokens the model's own tokenizer makes of a text (special tokens included, no prefix). */
  countTokens(text: string): number;
}

/** onnxruntime-node's CPU session options for a model; `threads` sizes its intra-op pool. */
function sessionOptions(threads: number | undefined): Ort.InferenceSession.SessionOptions {
  return {
    executionProviders: ['cpu'],
    // Errors only: the runtime is verbose on load (transformers.js set the same level).
    logSeverityLevel: 3,
    ...(threads === undefined ? {} : { intraOpNumThreads: threads, interOpNumThreads: 1 }),
  };
}

/** A runtime whose native part does not load: its own message, not "the model is broken". */
class RuntimeLoadError extends MemoryError {}

/** The runtime, loaded once per thread (src/cli/app.ts sets its telemetry off first). */
const loadOnnxRuntime = (): Promise<typeof Ort> =>
  import('onnxruntime-node').catch((cause: unknown) => {
    throw new RuntimeLoadError(ERROR_CODES.MODEL_UNAVAILABLE, runtimeFailure(cause), { cause });
  });

export async function loadOnnxEmbedder(options: OnnxModelOptions): Promise<OnnxEngine> {
  const model = resolveModel(options);
  let session: Ort.InferenceSession;
  let tokenizer: TextTokenizer;
  let ort: typeof Ort;
  try {
    const dir = model.source === 'hub' ? await fetchHubModel(model.location, options.cacheDir) : model.location;
    const graph = join(dir, 'onnx', model.dtype === 'fp32' ? 'model.onnx' : 'model_quantized.onnx');
    // The tokenizer's files are read while the runtime loads the graph.
    [{ ort, session }, tokenizer] = await Promise.all([
      loadOnnxRuntime().then(async (runtime) => ({
        ort: runtime,
        session: await runtime.InferenceSession.create(graph, sessionOptions(options.threads)),
      })),
      loadTextTokenizer(dir, model.source === 'cache'),
    ]);
  } catch (cause) {
    if (cause instanceof RuntimeLoadError) throw cause;
    throw new MemoryError(
      ERROR_CODES.MODEL_UNAVAILABLE,
      `Could not load the embedding model from ${model.location}: ${(cause as Error).message}. Run "limbic model install" to (re)install it.`,
      { cause },
    );
  }
  /** One forward pass: the batch's token vectors, mean-pooled and normalised. */
  const forward = async (texts: readonly string[]): Promise<Float32Array[]> => {
    const batch = tokenBatch(tokenizer, texts);
    const dims = [...batch.dims];
    const feeds: Record<string, Ort.Tensor> = {};
    for (const name of session.inputNames) {
      if (name === 'input_ids') feeds[name] = new ort.Tensor('int64', batch.inputIds, dims);
      else if (name === 'attention_mask') feeds[name] = new ort.Tensor('int64', batch.attentionMask, dims);
      // One text per row, so one segment: BERT's token types are all 0.
      else if (name === 'token_type_ids') feeds[name] = new ort.Tensor('int64', new BigInt64Array(batch.inputIds.length), dims);
      else throw new Error(`the model takes an input "${name}" that a text-embedding model does not have`);
    }
    const outputs = await session.run(feeds);
    // The token vectors, under the names the feature-extraction pipeline looked for.
    const hidden = outputs.last_hidden_state ?? outputs.logits ?? outputs.token_embeddings;
    if (hidden?.type !== 'float32' || hidden.dims.length !== 3) {
      throw new Error(`the model gives no float32 token vectors (last_hidden_state) but ${session.outputNames.join(', ')}`);
    }
    const [rows = 0, tokens = 0, width = 0] = hidden.dims;
    return meanPoolNormalized(hidden.data as Float32Array, [rows, tokens, width], batch.attentionMask);
  };
  const batchSize = options.batchSize ?? 16;
  const embed = async (raw: readonly string[], kind: TextKind): Promise<Float32Array[]> => {
    const prefix = model.prefixes[kind];
    const texts = prefix === '' ? raw : raw.map((t) => prefix + t);
    // Batches of similar length: a batch is padded to its longest text, and attention costs grow
    // with it, so mixing a 10-token and a 300-token text makes the short one cost like the long one.
    const order = texts.map((_, i) => i).sort((a, b) => (texts[a]?.length ?? 0) - (texts[b]?.length ?? 0));
    const vectors: Float32Array[] = new Array<Float32Array>(texts.length);
    for (let i = 0; i < order.length; i += batchSize) {
      const ids = order.slice(i, i + batchSize);
      const out = await forward(ids.map((k) => texts[k] ?? ''));
      ids.forEach((k, j) => {
        vectors[k] = out[j] as Float32Array;
      });
    }
    return vectors;
  };
  const [probe] = await embed(['limbic'], 'query');
  const dims = probe?.length ?? 0;
  const countTokens = (text: string): number => tokenizer.encode(text).length;
  return {
    id: model.id,
    dims,
    similarityFloor: model.similarityFloor,
    embed,
    embedEntities: (items) => embedEntitiesAsPassages({ embed }, countTokens, items),
    fitsOneVector: async (items) => fitsAsPassages(countTokens, items),
    countTokens,
    description: { id: model.id, dims, source: model.source, location: model.location, note: model.note },
  };
}
