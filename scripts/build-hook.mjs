// Bundles what a lifecycle hook loads once it opens the memory, dist/cli/hook-runtime.js, into one
// file in its place: a client waits for SessionStart's brief, and on Node 20 (no module compile
// cache) loading ~230 modules one by one cost more than building the brief (docs/benchmarks.md,
// "Hooks"). The entry, dist/cli/hook.js, stays as tsc writes it: the events that only hand their
// capture to a background process load nothing more than before. Run by `npm run build` after tsc.
// Native modules and what only the model, PostgreSQL, redaction or an import loads stay outside the
// bundle, loaded from node_modules as before when a hook needs them. Modules find files from the
// package folder (src/core/package-folder.ts), not from their own depth, so the bundle finds the
// same files.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const ENTRY = join(ROOT, 'dist', 'cli', 'hook-runtime.js');
const EXTERNAL = [
  'better-sqlite3',
  'sqlite-vec',
  'usearch',
  'onnxruntime-node',
  '@huggingface/tokenizers',
  'protobufjs',
  'long',
  'undici',
  'pg',
  '@secretlint/*',
  'fflate',
  '@streamparser/json',
];

const result = await build({
  entryPoints: [ENTRY],
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: EXTERNAL,
  // Bundled CommonJS (lunr, stopword) calls require(); ESM has none, so the bundle makes one.
  banner: {
    js: "import { createRequire as limbicCreateRequire } from 'node:module'; const require = limbicCreateRequire(import.meta.url);",
  },
  write: false,
  logLevel: 'warning',
});
const [bundle] = result.outputFiles;
if (bundle === undefined) throw new Error('esbuild wrote no bundle for the hook runtime');
writeFileSync(ENTRY, bundle.text);
console.error(`hook runtime: ${ENTRY} (${(Buffer.byteLength(bundle.text) / 1024).toFixed(0)} KiB, one file)`);
