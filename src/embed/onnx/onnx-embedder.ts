/**
 * The ONNX engine: a sentence-embedding model on the CPU through @huggingface/transformers
 * (onnxruntime-node). Mean pooling over the attention mask, L2 normalisation, batches with dynamic
 * padding, truncation at the model's limit. Imported lazily: start-up and FTS-only use never pay
 * for the runtime.
 */
import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ERROR_CODES, MemoryError } from '../../core/errors.js';
import { embedEntitiesAsPassages, fitsAsPassages, type Embedder, type ModelDescription, type TextKind } from '../embedder.js';
import { installedModels, readManifest, similarityFloorOf, type ModelManifest } from './model-files.js';
import { loadTransformers } from './transformers-runtime.js';
import { loadUnigramTokenizer } from './unigram-vocab.js';

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

interface Extractor {
  (texts: string[], options: { pooling: 'mean'; normalize: boolean }): Promise<{ data: Float32Array; dims: number[] }>;
  tokenizer: { encode(text: string): number[] };
}

/** The engine on the caller's thread; src/embed/onnx/threaded-embedder.ts runs it in a worker. */
export interface OnnxEngine extends Embedder {
  readonly description: ModelDescription;
  /** Tokens the model's own tokenizer makes of a text (special tokens included, no prefix). */
  countTokens(text: string): number;
}

export async function loadOnnxEmbedder(options: OnnxModelOptions): Promise<OnnxEngine> {
  const model = resolveModel(options);
  const transformers = loadTransformers();
  const { env, AutoModel, AutoTokenizer, FeatureExtractionPipeline } = transformers;
  env.allowLocalModels = true;
  env.allowRemoteModels = model.source === 'hub';
  if (model.source === 'hub') env.cacheDir = options.cacheDir;
  else env.localModelPath = dirname(model.location);
  const modelName = model.source === 'hub' ? model.location : basename(model.location);
  let extractor: Extractor;
  try {
    const threads = options.threads;
    const session_options = threads === undefined ? {} : { intraOpNumThreads: threads, interOpNumThreads: 1 };
    // What pipeline('feature-extraction') builds, with a local Unigram tokenizer (e5's) loaded
    // through unigram-vocab.ts: the library's own load of it took most of a start's first answer.
    const [encoder, tokenizer] = await Promise.all([
      AutoModel.from_pretrained(modelName, { dtype: model.dtype, session_options }),
      (model.source === 'hub'
        ? Promise.resolve(undefined)
        : loadUnigramTokenizer(transformers, model.location, model.source === 'cache')
      ).then((fast) => fast ?? AutoTokenizer.from_pretrained(modelName)),
    ]);
    extractor = new FeatureExtractionPipeline({ task: 'feature-extraction', model: encoder, tokenizer }) as unknown as Extractor;
  } catch (cause) {
    throw new MemoryError(
      ERROR_CODES.MODEL_UNAVAILABLE,
      `Could not load the embedding model from ${model.location}: ${(cause as Error).message}. Run "limbic model install" to (re)install it.`,
      { cause },
    );
  }
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
      const out = await extractor(
        ids.map((k) => texts[k] ?? ''),
        { pooling: 'mean', normalize: true },
      );
      const dims = out.dims[1] ?? 0;
      ids.forEach((k, j) => {
        vectors[k] = out.data.slice(j * dims, (j + 1) * dims);
      });
    }
    return vectors;
  };
  const [probe] = await embed(['limbic'], 'query');
  const dims = probe?.length ?? 0;
  const countTokens = (text: string): number => extractor.tokenizer.encode(text).length;
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
