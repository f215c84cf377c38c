/**
 * `limbic import PATH` on chat history (issue 34 item 6), through the built binary: each format told
 * by its content, an unrecognised file refused with a non-zero exit, dates and projects kept, the
 * summary line, and a second import of the same export adding nothing.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { zipSync, strToU8 } from 'fflate';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { EntityRecord } from '../../src/store/transfer-store.js';
import { writeChatGptExport } from '../helpers/chat-export.js';
import { CLI, REPO_ROOT, tempDir } from '../helpers/fixtures.js';

const exec = promisify(execFile);
const FIXTURES = join(REPO_ROOT, 'test/fixtures/capture');
const CHATGPT = join(FIXTURES, 'chatgpt/conversations.json');
const CLAUDE_AI = join(FIXTURES, 'claude-ai/conversations.json');
const CLAUDE_CODE = join(FIXTURES, 'claude-code/-home-dev-shop/3f2a9c1e-8b7d-4e21-9a55-0c1d2e3f4a5b.jsonl');

async function limbic(args: string[], nodeOptions: string[] = []) {
  return exec(process.execPath, [...nodeOptions, CLI, ...args], { env: { ...process.env, LIMBIC_NO_MODEL: '1' } });
}

/** Every entity the database holds, with its observations' times, read straight from the file. */
async function stored(db: string): Promise<EntityRecord[]> {
  const store = openSqliteStore({ path: db, vectors: false });
  try {
    return (await store.transfer?.readEntities(0, 1000))?.records ?? [];
  } finally {
    await store.close();
  }
}

describe('limbic import on chat history', () => {
  let tmp: ReturnType<typeof tempDir>;
  let db: string;
  beforeEach(() => {
    tmp = tempDir();
    db = join(tmp.dir, 'memory.db');
  });
  afterEach(() => tmp.cleanup());

  it('imports a ChatGPT conversations.json (it printed "line 1 skipped: not a JSON object" and exited 0 before)', async () => {
    const { stdout, stderr } = await limbic(['--db', db, 'import', CHATGPT]);
    expect(stderr).not.toMatch(/not a JSON object/);
    expect(JSON.parse(stdout)).toMatchObject({
      format: 'chatgpt',
      conversations: 2,
      turns: 11,
      turnsAdded: 10,
      turnsSkipped: 1,
      skipped: { 'no visible turns': 1, 'not a ChatGPT conversation (no "mapping")': 1 },
      projects: 0,
    });
    expect(stderr).toContain(
      'limbic: imported 2 conversations from a ChatGPT export; 11 turns read: 10 stored, 1 not (already stored, or only an acknowledgement); no secret redacted; 2 items skipped (1 no visible turns, 1 not a ChatGPT conversation (no "mapping")).',
    );
    expect(stderr).toContain('limbic: skipped "Only hidden": no visible turns');
    const sessions = await stored(db);
    expect(sessions.map((s) => s.name).sort()).toEqual([
      'ChatGPT conversation 2024-05-01 6a1b2c3d',
      'ChatGPT conversation 2024-06-01 7b2c3d4e',
    ]);
    const text = JSON.stringify(sessions);
    for (const absent of ['DRAFT-DISCARDED', 'EDITED-AWAY', 'PROFILE-ONLY', 'THOUGHTS-ONLY']) expect(text).not.toContain(absent);
  });

  it("keeps when each turn happened: create_time becomes the observation's time", async () => {
    await limbic(['--db', db, 'import', CHATGPT]);
    const session = (await stored(db)).find((s) => s.name === 'ChatGPT conversation 2024-05-01 6a1b2c3d');
    const at = (content: string) => session?.observations.find((o) => o.content === content)?.createdAt;
    expect(at('user: Which queue library for Node should I use for email jobs?')).toBe(1714550400123);
    expect(at('assistant: BullMQ: it is maintained and runs on Redis.')).toBe(1714550460000);
    // No create_time of its own: when the message before it happened.
    expect(at('assistant: Yes: the redis service is already there.')).toBe(1714550521000);
  });

  it('imports the same export a second time without adding anything', async () => {
    const first = JSON.parse((await limbic(['--db', db, 'import', CHATGPT])).stdout) as { turnsAdded: number };
    const before = await stored(db);
    const { stdout, stderr } = await limbic(['--db', db, 'import', CHATGPT]);
    expect(first.turnsAdded).toBe(10);
    expect(JSON.parse(stdout)).toMatchObject({ conversations: 2, turnsAdded: 0, turnsSkipped: 11 });
    expect(stderr).toContain('11 turns read: 0 stored, 11 not');
    expect(await stored(db)).toEqual(before);
  });

  it("imports the export's zip and a Claude.ai export, told by their content", async () => {
    const zip = join(tmp.dir, 'chatgpt-export.zip');
    writeFileSync(
      zip,
      zipSync({ 'chat.html': strToU8('<html></html>'), 'conversations.json': readFileSync(CHATGPT), 'user.json': strToU8('{}') }),
    );
    expect(JSON.parse((await limbic(['--db', db, 'import', zip])).stdout)).toMatchObject({
      format: 'chatgpt',
      conversations: 2,
      turnsAdded: 10,
    });
    const claude = JSON.parse((await limbic(['--db', db, 'import', CLAUDE_AI])).stdout);
    expect(claude).toMatchObject({ format: 'claude-ai', conversations: 2, skipped: { 'no visible turns': 1 } });
    expect((await stored(db)).map((s) => s.name)).toContain('Claude.ai conversation 2026-03-01 c0a10000');
  });

  it('puts a coding session in the project its cwd resolves to, never the folder name Claude Code gave it', async () => {
    // A repository with an origin remote, where the session ran.
    const repo = join(tmp.dir, 'work', 'shop');
    mkdirSync(join(repo, '.git'), { recursive: true });
    writeFileSync(join(repo, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(
      join(repo, '.git', 'config'),
      '[remote "origin"]\n\turl = git@github.com:acme/shop.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n',
    );
    const projects = join(tmp.dir, 'projects', '-some-other-name');
    mkdirSync(projects, { recursive: true });
    writeFileSync(
      join(projects, 'session.jsonl'),
      readFileSync(CLAUDE_CODE, 'utf8').replaceAll('"cwd":"/home/dev/shop"', `"cwd":${JSON.stringify(repo)}`),
    );
    const { stdout } = await limbic(['--db', db, 'import', join(tmp.dir, 'projects')]);
    expect(JSON.parse(stdout)).toMatchObject({ format: 'folder', conversations: 1, projects: 1 });
    const entities = await stored(db);
    const session = entities.find((e) => e.entityType === 'session');
    expect(session?.name).toBe('Claude Code session 2026-11-20 session');
    expect(session?.project).toBe('github.com/acme/shop');
    expect(entities.find((e) => e.entityType === 'project')?.name).toBe('github.com/acme/shop');
    expect(JSON.stringify(entities)).not.toContain('some-other-name');
  });

  it('reads a folder of sessions: Claude Code, Codex and Gemini CLI alike', async () => {
    const root = join(tmp.dir, 'history');
    cpSync(join(FIXTURES, 'claude-code'), join(root, 'claude'), { recursive: true });
    cpSync(join(FIXTURES, 'codex'), join(root, 'codex'), { recursive: true });
    cpSync(join(FIXTURES, 'gemini'), join(root, 'gemini'), { recursive: true });
    const { stdout, stderr } = await limbic(['--db', db, 'import', root]);
    expect(JSON.parse(stdout)).toMatchObject({ format: 'folder', conversations: 4, skipped: { "a subagent's chat": 1 } });
    expect(stderr).toMatch(/imported 4 conversations from a folder of sessions/);
    const text = JSON.stringify(await stored(db));
    for (const absent of ['SUBAGENT-ONLY', 'LIMBIC-OWN-RESULT', 'limbic-memory-brief', 'system-reminder', 'Kafka'])
      expect(text).not.toContain(absent);
  });

  it('refuses a file that is none of the formats with a non-zero exit, saying what it expected, and stores nothing', async () => {
    const notes = join(tmp.dir, 'notes.json');
    writeFileSync(notes, '[{"id": 1, "body": "a note"}]');
    const refused = await limbic(['--db', db, 'import', notes]).then(
      () => undefined,
      (error: unknown) => error as { code: number; stderr: string; stdout: string },
    );
    expect(refused?.code).toBe(1);
    expect(refused?.stdout).toBe('');
    expect(refused?.stderr).toMatch(/is not a file limbic import reads: a JSON array whose first element is neither/);
    expect(refused?.stderr).toMatch(/--format chatgpt: a ChatGPT export/);
    expect(refused?.stderr).toMatch(/--format memory-jsonl: a memory\.jsonl/);
    expect(refused?.stderr).toMatch(/Nothing was imported/);
    expect(existsSync(db)).toBe(false);
  });

  it('reads a file as --format says, and refuses an unknown format name', async () => {
    const renamed = join(tmp.dir, 'chat.txt');
    cpSync(CLAUDE_CODE, renamed);
    expect(JSON.parse((await limbic(['--db', db, 'import', renamed, '--format', 'claude-code'])).stdout)).toMatchObject({
      format: 'claude-code',
      conversations: 1,
    });
    await expect(limbic(['--db', db, 'import', renamed, '--format', 'slack'])).rejects.toMatchObject({
      stderr: expect.stringMatching(/Allowed choices are memory-jsonl, chatgpt, claude-ai, claude-code, codex, gemini/),
    });
  });

  it('streams an export larger than its heap: a 32 MB heap imports what it could not parse whole', async () => {
    const big = join(tmp.dir, 'conversations.json');
    // 100 conversations of 10 long turns: about 16 MB, whose JSON.parse alone overflows a 32 MB heap.
    await writeChatGptExport(big, 100, 10, 3000);
    const whole = exec(process.execPath, [
      '--max-old-space-size=32',
      '-e',
      `JSON.parse(require('fs').readFileSync(${JSON.stringify(big)}, 'utf8'))`,
    ]);
    await expect(whole).rejects.toThrow(/heap|memory/i);
    const { stdout } = await limbic(['--db', db, 'import', big], ['--max-old-space-size=32']);
    expect(JSON.parse(stdout)).toMatchObject({ conversations: 100, turns: 1000, turnsAdded: 1000 });
  }, 300_000);
});
