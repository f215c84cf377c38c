/**
 * onnxruntime-node as Node loads it from here: a runtime whose native part does not load is named
 * where it really is, with the command that fixes it there (core/native-module.ts), instead of
 * being taken for a broken model that `limbic model install` would fix.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { healthCheck, type HealthCheck } from '../../core/health.js';
import { locateNativeModule, nativeModuleFailure, nativeModuleFix, type NativeModule } from '../../core/native-module.js';
import { packageFolderOf } from '../../core/package-folder.js';

/** The folder Limbic is installed in (its package.json), from dist/, src/ or the hook's bundle. */
const PACKAGE_FOLDER = packageFolderOf(fileURLToPath(import.meta.url), (folder) => existsSync(join(folder, 'package.json')));

/** Its native files ship in the package (no compile step), so a reinstall, not a rebuild, restores them. */
const runtimeModule = (): NativeModule =>
  locateNativeModule('onnxruntime-node', 'the ONNX runtime that runs the embedding model', false, createRequire(import.meta.url).resolve);

/** The message for a runtime that failed to load with `error`. */
export const runtimeFailure = (error: unknown): string =>
  nativeModuleFailure(runtimeModule(), error instanceof Error ? error.message : String(error), PACKAGE_FOLDER);

/** `limbic doctor`'s check of the runtime: it loads, or where it is and how to fix it. */
export async function checkOnnxRuntime(): Promise<HealthCheck> {
  try {
    const ort = await import('onnxruntime-node');
    return healthCheck('onnxruntime', 'ok', `onnxruntime-node loads (${ort.env.versions.node ?? 'version unknown'})`);
  } catch (error) {
    const module = runtimeModule();
    const where = module.dir === undefined ? 'is not installed' : `does not load from ${module.dir}`;
    const first = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
    return healthCheck(
      'onnxruntime',
      'fail',
      `onnxruntime-node ${where} (${first}): no embeddings, so no semantic search`,
      nativeModuleFix(module, PACKAGE_FOLDER),
    );
  }
}
