/**
 * LIMBIC_QUERY_BATCH (issue 38, item 4): how many waiting search texts the model embeds in one pass.
 * The default is 1 since batches measured slower on a 2-core CPU
 * (bench/results/search-load-2026-11-28-b.md); a larger value is taken through to the model's
 * worker, and a value that is no number of texts is refused, saying what to give.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { App, buildConfig } from '../../src/cli/app.js';
import { ERROR_CODES, MemoryError } from '../../src/core/errors.js';
import type { Embedder } from '../../src/embed/embedder.js';
import { modelCacheDir, tempDir } from '../helpers/fixtures.js';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

const configWith = (value: string | undefined) =>
  buildConfig(
    { db: `${tmp.dir}/memory.db` },
    { LIMBIC_MODEL_CACHE: modelCacheDir(), LIMBIC_OFFLINE: '1', ...(value === undefined ? {} : { LIMBIC_QUERY_BATCH: value }) },
    tmp.dir,
  );

describe('LIMBIC_QUERY_BATCH', () => {
  it('defaults to one text a pass and takes a whole number from 1 to 64', () => {
    expect(configWith(undefined).queryBatch).toBe(1);
    expect(configWith(' 8 ').queryBatch).toBe(8);
    expect(configWith('64').queryBatch).toBe(64);
  });

  it.each(['0', '65', '2.5', 'many', '-1'])('refuses %s, saying what to give', (value) => {
    const refused = (() => {
      try {
        configWith(value);
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(refused).toBeInstanceOf(MemoryError);
    expect((refused as MemoryError).code).toBe(ERROR_CODES.CONFIG_INVALID);
    expect((refused as MemoryError).message).toContain(`LIMBIC_QUERY_BATCH=${value}`);
    expect((refused as MemoryError).message).toContain('from 1 to 64');
  });

  /** The largest batch the server's model formed from 12 searches sent at once (real model, one thread). */
  async function largestBatch(value: string | undefined): Promise<number> {
    const embedder = new App(() => ({})).embedder(configWith(value), 1);
    try {
      const engine = (await embedder.loaded()) as (Embedder & { queryStats(): { largestBatch: number } }) | undefined;
      if (engine === undefined) throw new Error('no model installed: run "limbic model install"');
      const texts = Array.from({ length: 12 }, (_, i) => `question number ${i} about the garden plans`);
      await Promise.all(texts.map((text) => engine.embed([text], 'query')));
      return engine.queryStats().largestBatch;
    } finally {
      await embedder.close();
    }
  }

  it('reaches the model: searches sent at once are embedded one a pass by default, together when asked', async () => {
    expect(await largestBatch(undefined)).toBe(1);
    const asked = await largestBatch('6');
    expect(asked).toBeGreaterThan(1);
    expect(asked).toBeLessThanOrEqual(6);
  }, 180_000);
});
