/**
 * `limbic doctor`'s view of the embedding model: which one a server would load (the same rules as
 * the engine: --model-dir, then the cache, then the hub), whether its files are all there, and
 * whether they still hash to what the installer recorded.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { healthCheck, type HealthCheck } from '../../core/health.js';
import { readManifest, verifyInstalledModel } from './model-files.js';
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
  let model: ReturnType<typeof resolveModel>;
  try {
    model = resolveModel(options);
  } catch (error) {
    return { check: healthCheck('model', 'fail', (error as Error).message.split('. ')[0] ?? String(error), install), modelId: undefined };
  }
  if (model.source === 'hub') {
    return {
      check: healthCheck(
        'model',
        'fail',
        `no embedding model is installed in ${options.cacheDir}: semantic search waits until one is (a server tries to install it in the background)`,
        install,
      ),
      modelId: undefined,
    };
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
