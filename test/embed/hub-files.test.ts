/** A model from the hub by id (src/embed/onnx/hub-files.ts), without the network. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fetchHubModel, HUB_FILES } from '../../src/embed/onnx/hub-files.js';
import { tempDir } from '../helpers/fixtures.js';

const { dir: cache, cleanup } = tempDir('limbic-hub-');
afterAll(() => cleanup());

describe('fetchHubModel', () => {
  it('uses the files already where transformers.js put them (<cache>/<owner>/<name>/…) without fetching', async () => {
    const folder = join(cache, 'Xenova', 'all-MiniLM-L6-v2');
    for (const file of HUB_FILES) {
      mkdirSync(join(folder, file, '..'), { recursive: true });
      writeFileSync(join(folder, file), '{}');
    }
    expect(await fetchHubModel('Xenova/all-MiniLM-L6-v2', cache)).toBe(folder);
  });

  it.each(['../etc', 'a/../../b', '/abs/path', 'a/b/c', '', 'owner/'])('refuses %j, which is not a hub id', async (id) => {
    await expect(fetchHubModel(id, cache)).rejects.toThrow(/is not a model hub id/);
  });
});
