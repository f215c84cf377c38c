/**
 * `limbic brief [DIR]` and `limbic projects [move]` (issue 34 items 3, 4), through the built binary:
 * the brief of a repository's folder, nothing outside a project or with LIMBIC_BRIEF=0, projects
 * listed with their counts, and a renamed remote's memories moved onto the new key.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BRIEF_CLOSE, BRIEF_OPEN } from '../../src/capture/conversation.js';
import { noopLogger } from '../../src/core/logger.js';
import { LazyEmbedder } from '../../src/embed/embedder.js';
import { MemoryService } from '../../src/service/memory-service.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { CLI, tempDir } from '../helpers/fixtures.js';

const exec = promisify(execFile);
const tmp = tempDir('limbic-brief-cli-');
const db = join(tmp.dir, 'memory.db');
const repo = join(tmp.dir, 'shop');
const T0 = Date.UTC(2026, 10, 27);

async function limbic(args: string[], env: Record<string, string> = {}, cwd = tmp.dir) {
  return exec(process.execPath, [CLI, '--db', db, ...args], { cwd, env: { ...process.env, LIMBIC_NO_MODEL: '1', ...env } });
}

beforeAll(async () => {
  mkdirSync(repo);
  execFileSync('git', ['init', '-q'], { cwd: repo });
  execFileSync('git', ['remote', 'add', 'origin', 'git@github.com:acme/shop.git'], { cwd: repo });
  const service = new MemoryService({
    store: openSqliteStore({ path: db }),
    embedder: new LazyEmbedder(async () => {
      throw new Error('no model in this test');
    }),
    clock: () => T0,
    logger: noopLogger,
  });
  const shop = { key: 'github.com/acme/shop', name: 'shop', root: repo, from: 'git-remote' as const };
  await service.capture(
    {
      source: 'claude-code',
      id: 'aaaa0001',
      turns: [
        { role: 'user', text: 'Why is checkout slow?', at: T0 },
        { role: 'user', text: 'We decided: cache the price list for an hour', at: T0 + 60_000 },
      ],
    },
    shop,
  );
  await service.close();
});

afterAll(() => tmp.cleanup());

describe('limbic brief', () => {
  it("prints the fenced brief of the folder's project", async () => {
    const { stdout } = await limbic(['brief', repo]);
    expect(stdout.startsWith(`${BRIEF_OPEN} project="github.com/acme/shop">`)).toBe(true);
    expect(stdout.trimEnd().endsWith(BRIEF_CLOSE)).toBe(true);
    expect(stdout).toContain('"We decided: cache the price list for an hour"');
    expect(stdout).toContain('began "Why is checkout slow?"');
  });

  it('prints nothing outside any project, for a project it knows nothing of, or with LIMBIC_BRIEF=0', async () => {
    const outside = await limbic(['brief', '/']);
    expect(outside.stdout).toBe('');
    expect(outside.stderr).toContain('outside any project');
    expect((await limbic(['brief', repo, '--project', 'github.com/acme/unknown'])).stdout).toBe('');
    const off = await limbic(['brief', repo], { LIMBIC_BRIEF: '0' });
    expect(off.stdout).toBe('');
    expect(off.stderr).toContain('the brief is off');
  });
});

describe('limbic projects', () => {
  it('lists projects with their counts, and moves a renamed remote onto its new key', async () => {
    const listed = JSON.parse((await limbic(['projects', '--json'])).stdout) as { project: string; entities: number }[];
    expect(listed).toEqual([expect.objectContaining({ project: 'github.com/acme/shop', entities: 2, observations: 3 })]);
    const { stdout } = await limbic(['projects', 'move', 'github.com/acme/shop', 'github.com/acme/store']);
    expect(stdout).toBe('Moved 2 entities from github.com/acme/shop to github.com/acme/store.\n');
    expect(JSON.parse((await limbic(['projects', '--json'])).stdout)).toEqual([
      expect.objectContaining({ project: 'github.com/acme/store', entities: 2 }),
    ]);
    // The repository renamed: its folder now resolves to the new key, and the brief follows.
    execFileSync('git', ['remote', 'set-url', 'origin', 'https://github.com/acme/store.git'], { cwd: repo });
    const brief = (await limbic(['brief', repo])).stdout;
    expect(brief).toContain('project="github.com/acme/store"');
    expect(brief).toContain('cache the price list');
    const search = JSON.parse((await limbic(['search', 'price', 'list', '--project', 'github.com/acme/store', '--json'])).stdout) as {
      results: { name: string }[];
    };
    expect(search.results.map((r) => r.name)).toEqual(['Claude Code session 2026-11-27 aaaa0001']);
    expect((await limbic(['projects', 'move', 'github.com/acme/nothing', 'x'])).stdout).toContain('nothing was moved');
  });
});
