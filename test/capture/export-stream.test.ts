/** A chat export far larger than the heap is read one conversation at a time: bounded memory, from a file or a zip. */
import { execFile } from 'node:child_process';
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { Zip, ZipDeflate } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeChatGptExport } from '../helpers/chat-export.js';
import { REPO_ROOT, tempDir } from '../helpers/fixtures.js';

const exec = promisify(execFile);
const CHILD = join(REPO_ROOT, 'test/helpers/count-conversations.ts');
/** A heap far below what the export takes parsed whole (checked below), above what the reader needs. */
const HEAP_MB = 24;
const CONVERSATIONS = 1200;
const MESSAGES = 40;

/** Writes `source` into a zip at `path` as one deflated entry, streamed. */
async function zipFile(source: string, path: string): Promise<void> {
  const out = createWriteStream(path);
  const zip = new Zip((error, data) => {
    if (error !== null) throw error;
    out.write(data);
  });
  const entry = new ZipDeflate('conversations.json', { level: 1 });
  zip.add(entry);
  await pipeline(createReadStream(source), async (chunks: AsyncIterable<Buffer>) => {
    for await (const chunk of chunks) entry.push(chunk, false);
    entry.push(new Uint8Array(0), true);
  });
  zip.end();
  await new Promise<void>((resolve) => out.end(resolve));
}

describe('reading a large export in bounded memory', () => {
  const tmp = tempDir();
  const json = join(tmp.dir, 'conversations.json');
  const zip = join(tmp.dir, 'export.zip');
  beforeAll(async () => {
    await writeChatGptExport(json, CONVERSATIONS, MESSAGES);
    await zipFile(json, zip);
  }, 120_000);
  afterAll(() => tmp.cleanup());

  it(`the export itself does not fit a ${HEAP_MB} MB heap when parsed whole`, async () => {
    expect(statSync(json).size).toBeGreaterThan(25e6);
    const whole = exec(process.execPath, [
      `--max-old-space-size=${HEAP_MB}`,
      '-e',
      `JSON.parse(require('fs').readFileSync(${JSON.stringify(json)}, 'utf8'))`,
    ]);
    await expect(whole).rejects.toThrow(/heap|memory/i);
  }, 120_000);

  it.each([
    ['conversations.json', json],
    ["the export's zip", zip],
  ])(
    `reads every conversation of %s within a ${HEAP_MB} MB heap`,
    async (_what, path) => {
      const { stdout } = await exec(process.execPath, [`--max-old-space-size=${HEAP_MB}`, '--import', 'tsx', CHILD, path], {
        cwd: REPO_ROOT,
      });
      // Each conversation: its visible thread of MESSAGES turns; the discarded draft is not among them.
      expect(JSON.parse(stdout)).toEqual({ conversations: CONVERSATIONS, turns: CONVERSATIONS * MESSAGES });
    },
    180_000,
  );
});
