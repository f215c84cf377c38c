/** Telling a file's format by its content, refusing what is none, and reading folders and zips of them. */
import { copyFileSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { strToU8, Zip, ZipDeflate, zipSync } from 'fflate';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ERROR_CODES, MemoryError } from '../../src/core/errors.js';
import { detectFormat, readConversations, type Detected } from '../../src/capture/readers/formats.js';
import type { ReadItem } from '../../src/capture/readers/read-item.js';
import { REPO_ROOT, tempDir } from '../helpers/fixtures.js';

const FIXTURES = join(REPO_ROOT, 'test/fixtures/capture');
const CLAUDE_CODE_DIR = join(FIXTURES, 'claude-code');
const CLAUDE_CODE = join(CLAUDE_CODE_DIR, '-home-dev-shop/3f2a9c1e-8b7d-4e21-9a55-0c1d2e3f4a5b.jsonl');
const CODEX_DIR = join(FIXTURES, 'codex/sessions');
const CODEX = join(CODEX_DIR, '2025/10/29/rollout-2025-10-29T00-59-38-019a2d7a-41c4-78b1-b7cc-a45d62a89cd5.jsonl');
const GEMINI_DIR = join(FIXTURES, 'gemini/tmp');
const GEMINI = join(GEMINI_DIR, 'shop/chats/session-2026-11-21T08-00-9d8c7b6a.jsonl');
const GEMINI_LEGACY = join(
  GEMINI_DIR,
  '5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8/chats/session-2025-09-01T10-00-aaaa1111.json',
);
const CHATGPT = join(FIXTURES, 'chatgpt/conversations.json');
const CLAUDE_AI = join(FIXTURES, 'claude-ai/conversations.json');

async function collect(path: string, detected?: Detected): Promise<ReadItem[]> {
  const items: ReadItem[] = [];
  for await (const item of readConversations(path, detected ?? (await detectFormat(path)))) items.push(item);
  return items;
}

const ids = (items: readonly ReadItem[]): string[] =>
  items.flatMap((i) => (i.kind === 'conversation' ? [`${i.conversation.source}:${i.conversation.id}`] : []));
const skips = (items: readonly ReadItem[]): string[] =>
  items.flatMap((i) => (i.kind === 'skipped' ? [`${i.reason} (${i.where ?? ''})`] : []));

async function refusedWith(path: string): Promise<string> {
  const error = await detectFormat(path).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(MemoryError);
  expect((error as MemoryError).code).toBe(ERROR_CODES.IMPORT_FAILED);
  return (error as MemoryError).message;
}

describe('detectFormat', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir();
  });
  afterEach(() => tmp.cleanup());

  it.each([
    ['a ChatGPT conversations.json', CHATGPT, 'chatgpt'],
    ['a Claude.ai conversations.json', CLAUDE_AI, 'claude-ai'],
    ['a Claude Code transcript', CLAUDE_CODE, 'claude-code'],
    ['a Codex session', CODEX, 'codex'],
    ['a Gemini CLI chat', GEMINI, 'gemini'],
    ['an older Gemini CLI chat (one JSON object)', GEMINI_LEGACY, 'gemini'],
  ])('tells %s by its content', async (_what, path, format) => {
    // The name says nothing: a copy named otherwise is told the same.
    const copy = join(tmp.dir, 'export.data');
    copyFileSync(path, copy);
    expect(await detectFormat(copy)).toEqual({ kind: 'file', format });
  });

  it('tells the official memory.jsonl (also after marker lines, also empty) as before', async () => {
    const memory = join(tmp.dir, 'memory.jsonl');
    writeFileSync(
      memory,
      '{"type":"_aim","source":"mcp-knowledge-graph"}\n{"type":"entity","name":"A","entityType":"t","observations":[]}\n',
    );
    expect(await detectFormat(memory)).toEqual({ kind: 'file', format: 'memory-jsonl' });
    writeFileSync(memory, '');
    expect(await detectFormat(memory)).toEqual({ kind: 'file', format: 'memory-jsonl' });
  });

  it("tells a ChatGPT export's zip and a Claude.ai export's zip by the conversations inside", async () => {
    const chatgptZip = join(tmp.dir, 'a.zip');
    writeFileSync(
      chatgptZip,
      zipSync({ 'chat.html': strToU8('<html></html>'), 'conversations.json': readFileSync(CHATGPT), 'file-XYZ.png': new Uint8Array(1000) }),
    );
    expect(await detectFormat(chatgptZip)).toEqual({ kind: 'file', format: 'chatgpt' });
    const claudeZip = join(tmp.dir, 'b.zip');
    writeFileSync(claudeZip, zipSync({ 'users.json': strToU8('[]'), 'conversations.json': readFileSync(CLAUDE_AI) }));
    expect(await detectFormat(claudeZip)).toEqual({ kind: 'file', format: 'claude-ai' });
    expect(await detectFormat(tmp.dir)).toEqual({ kind: 'directory' });
  });

  it('refuses a file that is none of the formats, saying what it found and what it reads', async () => {
    const cases: [string, string | Uint8Array, RegExp][] = [
      ['numbers.json', '[1, 2, 3]', /first element is neither a ChatGPT conversation/],
      ['notes.csv', 'name,age\nada,36\n', /not JSON \(it begins "name,age"\)/],
      ['other.jsonl', '{"level":"info","msg":"started"}\n{"level":"warn","msg":"slow"}\n', /first lines are none of these formats/],
      ['broken.json', '[{"mapping": ', /not valid JSON/],
      ['photos.zip', zipSync({ 'a.png': new Uint8Array(10) }), /zip without a conversations\.json/],
    ];
    for (const [name, content, found] of cases) {
      const path = join(tmp.dir, name);
      writeFileSync(path, content);
      const message = await refusedWith(path);
      expect(message).toMatch(found);
      if (!name.endsWith('.zip')) {
        expect(message).toMatch(/Nothing was imported/);
        for (const format of ['memory-jsonl', 'chatgpt', 'claude-ai', 'claude-code', 'codex', 'gemini'])
          expect(message).toContain(`--format ${format}`);
      }
    }
  });
});

describe('readConversations', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir();
  });
  afterEach(() => tmp.cleanup());

  it('reads every conversation of an export, saying which were skipped and why', async () => {
    const items = await collect(CHATGPT);
    expect(ids(items)).toEqual(['chatgpt:6a1b2c3d-0000-4000-8000-000000000001', 'chatgpt:7b2c3d4e-0000-4000-8000-000000000002']);
    expect(skips(items)).toEqual(['no visible turns (Only hidden)', 'not a ChatGPT conversation (no "mapping") ()']);
    expect(ids(await collect(CLAUDE_AI))).toEqual([
      'claude-ai:c0a10000-0000-4000-8000-0000000000a1',
      'claude-ai:c0a10000-0000-4000-8000-0000000000a2',
    ]);
  });

  it("streams the conversations out of the export's zip, passing over the other entries", async () => {
    // Written as a stream (sizes in data descriptors after each entry), as export services do.
    const chunks: Uint8Array[] = [];
    const zip = new Zip((error, data) => {
      if (error !== null) throw error;
      chunks.push(data);
    });
    for (const [name, bytes] of [
      ['file-XYZ.png', new Uint8Array(300_000).map((_, i) => (i * 7919) % 251)],
      ['conversations.json', readFileSync(CHATGPT)],
      ['chat.html', strToU8('<html>CHAT-HTML-ONLY</html>')],
    ] as const) {
      const entry = new ZipDeflate(name, { level: 6 });
      zip.add(entry);
      entry.push(bytes, true);
    }
    zip.end();
    const path = join(tmp.dir, 'export.zip');
    writeFileSync(path, Buffer.concat(chunks));
    const items = await collect(path);
    expect(ids(items)).toEqual(['chatgpt:6a1b2c3d-0000-4000-8000-000000000001', 'chatgpt:7b2c3d4e-0000-4000-8000-000000000002']);
  });

  it('reads each session of a folder by its own content, leaving subagents out', async () => {
    const root = join(tmp.dir, 'all');
    mkdirSync(root);
    cpSync(CLAUDE_CODE_DIR, join(root, 'claude'), { recursive: true });
    cpSync(CODEX_DIR, join(root, 'codex'), { recursive: true });
    cpSync(GEMINI_DIR, join(root, 'gemini'), { recursive: true });
    writeFileSync(join(root, 'notes.jsonl'), '{"level":"info"}\n');
    const items = await collect(root);
    expect(ids(items).sort()).toEqual([
      'claude-code:3f2a9c1e-8b7d-4e21-9a55-0c1d2e3f4a5b',
      'codex:019a2d7a-41c4-78b1-b7cc-a45d62a89cd5',
      'gemini:9d8c7b6a-1111-4222-8333-444455556666',
      'gemini:aaaa1111-2222-4333-8444-555566667777',
    ]);
    expect(skips(items).sort()).toEqual([
      "a subagent's chat (gemini/shop/chats/9d8c7b6a-1111-4222-8333-444455556666/helper-1.jsonl)",
      'not a session file (notes.jsonl)',
    ]);
    expect(JSON.stringify(items)).not.toContain('SUBAGENT-ONLY');
  });

  it('refuses a folder with no session in it', async () => {
    writeFileSync(join(tmp.dir, 'notes.jsonl'), '{"level":"info"}\n');
    await expect(collect(tmp.dir)).rejects.toThrow(/none of Claude Code's, Codex's or Gemini CLI's sessions/);
    const empty = join(tmp.dir, 'empty');
    mkdirSync(empty);
    await expect(collect(empty)).rejects.toThrow(/no session files/);
  });

  it('reads a file as the format forced on it', async () => {
    const items = await collect(CODEX, { kind: 'file', format: 'codex' });
    expect(ids(items)).toEqual(['codex:019a2d7a-41c4-78b1-b7cc-a45d62a89cd5']);
  });
});
