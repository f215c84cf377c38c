/**
 * transformers.js loaded for text embedding. Its Node build imports sharp (libvips, for image
 * pipelines) at the top: in a profile of the embedding worker (bench/cold-start.ts) that was
 * ~150 ms of the ~200 ms the import took, on the path from a server's start to its first semantic
 * answer. The CommonJS build is loaded with sharp answered by a stand-in that throws when called;
 * the library only keeps a reference to it until an image is loaded, which Limbic never does.
 * When sharp cannot be resolved beside the library, the library loads as it always did.
 */
import { Module, createRequire } from 'node:module';
import { dirname } from 'node:path';
import type * as TransformersModule from '@huggingface/transformers';

export type Transformers = typeof TransformersModule;

const require = createRequire(import.meta.url);

/** The library, loaded once per thread. */
export function loadTransformers(): Transformers {
  standInForSharp();
  return require('@huggingface/transformers') as Transformers;
}

function standInForSharp(): void {
  let path: string;
  try {
    // Resolved from the library's own folder, so it is the file the library's require would load.
    path = require.resolve('sharp', { paths: [dirname(require.resolve('@huggingface/transformers'))] });
  } catch {
    return; // no sharp: the library's own require fails as it always would
  }
  if (require.cache[path] !== undefined) return; // loaded already (by something that needs it)
  const sharp = (): never => {
    throw new Error('Image processing is not loaded in Limbic (it embeds text only).');
  };
  const stand = new Module(path);
  stand.filename = path;
  stand.loaded = true;
  stand.exports = sharp;
  require.cache[path] = stand;
}
