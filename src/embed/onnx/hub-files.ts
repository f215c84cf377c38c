/**
 * A model that `limbic model install` does not know, fetched from the Hugging Face hub by its id
 * (LIMBIC_MODEL=Xenova/all-MiniLM-L6-v2) when remote models are allowed: only the files the engine
 * reads, the int8 graph (onnx/model_quantized.onnx) and the tokenizer, put where transformers.js
 * put them when it fetched for Limbic (`<cache>/<id>/<file>`), so a model it fetched before is
 * used as it is. Public models only (no token is sent), through Node's fetch as before (no proxy).
 * Each file is written beside and renamed, so a half-fetched file is never read.
 */
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ERROR_CODES, MemoryError } from '../../core/errors.js';

const HUB = 'https://huggingface.co';

/** What the engine reads of a hub model (its dtype is 'q8'). */
export const HUB_FILES = ['tokenizer.json', 'tokenizer_config.json', 'onnx/model_quantized.onnx'] as const;

/** A hub id: `name` or `owner/name`, letters, digits, `-`, `_`, `.` (never a path that climbs out). */
const HUB_ID = /^(?:[\w-][\w.-]*\/)?[\w-][\w.-]*$/;

/**
 * The folder holding hub model `id`'s files in `cacheDir`, fetching those not there yet.
 * @example await fetchHubModel('Xenova/all-MiniLM-L6-v2', cacheDir) // '<cacheDir>/Xenova/all-MiniLM-L6-v2'
 */
export async function fetchHubModel(id: string, cacheDir: string, files: readonly string[] = HUB_FILES): Promise<string> {
  if (!HUB_ID.test(id) || id.includes('..')) {
    throw new MemoryError(ERROR_CODES.MODEL_UNAVAILABLE, `"${id}" is not a model hub id (owner/name). Set LIMBIC_MODEL to one.`);
  }
  const dir = join(cacheDir, ...id.split('/'));
  for (const file of files) {
    const target = join(dir, file);
    if (existsSync(target)) continue;
    const url = `${HUB}/${id}/resolve/main/${file}`;
    let bytes: Uint8Array;
    try {
      const response = await fetch(url);
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      bytes = new Uint8Array(await response.arrayBuffer());
    } catch (cause) {
      throw new MemoryError(
        ERROR_CODES.MODEL_UNAVAILABLE,
        `Could not fetch ${url} (${(cause as Error).message}). Check the model id and that the hub is reachable, or run "limbic model install".`,
        { cause },
      );
    }
    await mkdir(dirname(target), { recursive: true });
    const partial = `${target}.${process.pid}.partial`;
    try {
      await writeFile(partial, bytes);
      await rename(partial, target);
    } finally {
      await rm(partial, { force: true });
    }
  }
  return dir;
}
