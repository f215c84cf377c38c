/**
 * `limbic doctor`'s view of the embedding model: which one a server would load (the same rules as
 * the engine: --model-dir, then the cache, then the hub), whether its files are all there, and
 * whether they still hash to what the installer recorded.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { healthCheck, type HealthCheck } from '../../core/health.js';
import { installingElsewhere, notInstalledSentence } from '../model-state.js';
import { DEFAULT_PACKAGE, installsUnderWay, readManifest, verifyInstalledModel } from './model-files.js';
import { resolveModel, type OnnxModelOptions } from './onnx-embedder.js';

export interface ModelCheckOptions extends OnnxModelOptions {
  /** --no-model / LIMBIC_NO_MODEL: keyword search only, by choice. */
  readonly noModel: boolean;
  /** How to run limbic, for fixes. */
  readonly cli: string;
}

/** The model check, and the id of the model that would embed (undefined when none would). */
export function checkModel(options: ModelCheckOptions): { check: HealthCheck; modelId: string | undefined } {
  const install = `${options.cli} model install`;
  if (options.noModel) {
    return { check: healthCheck('model', 'ok', 'switched off (--no-model / LIMBIC_NO_MODEL): keyword search only'), modelId: undefined };
  }
  let model: ReturnType<typeof resolveModel> | undefined;
  try {
    model = resolveModel(options);
  } catch (error) {
    if (options.modelDir !== undefined) {
      return { check: healthCheck('model', 'fail', (error as Error).message.split('. ')[0] ?? String(error), install), modelId: undefined };
    }
    model = undefined; // nothing installed, and offline: below
  }
  if (model === undefined || model.source === 'hub') {
    // Another process installing it (a server's first start, "limbic model install") is not a problem.
    const others = installsUnderWay(options.cacheDir, DEFAULT_PACKAGE.id);
    if (others.length > 0) {
      const detail = `${installingElsewhere(DEFAULT_PACKAGE.id, others)}: a running server uses it as soon as it is ready`;
      return { check: healthCheck('model', 'ok', detail), modelId: undefined };
    }
    const context = { cacheDir: options.cacheDir, modelId: DEFAULT_PACKAGE.id, cli: options.cli };
    // Not installed yet on a fresh install is how every install starts, not a failure: the first start installs it.
    if (options.allowRemote && options.modelId === DEFAULT_PACKAGE.id) {
      return { check: healthCheck('model', 'ok', notInstalledSentence({ ...context, offline: false })), modelId: undefined };
    }
    const detail = options.allowRemote
      ? `${options.modelId} is not installed in ${options.cacheDir}: a start fetches it from the model hub, which must be reachable; semantic search waits until then`
      : notInstalledSentence({ ...context, offline: true });
    return { check: healthCheck('model', 'fail', detail, install), modelId: undefined };
  }
  const where = `${model.id} in ${model.location}${model.note === undefined ? '' : ` (${model.note})`}`;
  if (readManifest(model.location) === undefined) {
    // A folder given with --model-dir, not installed by Limbic: nothing to hash against.
    const onnx = ['model.onnx', 'model_quantized.onnx'].some((f) => existsSync(join(model.location, 'onnx', f)));
    return onnx
      ? { check: healthCheck('model', 'ok', `${where}; no manifest, so its files are not checksummed`), modelId: model.id }
      : {
          check: healthCheck(
            'model',
            'fail',
            `${where} has no onnx/model.onnx or onnx/model_quantized.onnx`,
            `point --model-dir at a complete model, or ${install}`,
          ),
          modelId: model.id,
        };
  }
  const bad = verifyInstalledModel(model.location);
  if (bad.length > 0) {
    return {
      check: healthCheck(
        'model',
        'fail',
        `${where}: ${bad.join(', ')} missing or not matching the sha256 recorded at install`,
        `${install} (reinstalls it)`,
      ),
      modelId: model.id,
    };
  }
  return { check: healthCheck('model', 'ok', `${where}, ${model.dims ?? '?'} dims, files match their sha256`), modelId: model.id };
}
