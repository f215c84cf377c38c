/**
 * Search scoping over a real client (issue 34 item 3): the built server, started over stdio in a
 * repository's folder as Claude Code starts it, resolves that project from git and never shows
 * another project's captured sessions; started outside any project (`/`) it hides nothing; `project`
 * on a call searches another project or all of them.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Project } from '../../src/capture/project.js';
import { noopLogger } from '../../src/core/logger.js';
import { LazyEmbedder } from '../../src/embed/embedder.js';
import { MemoryService } from '../../src/service/memory-service.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { CLI, tempDir } from '../helpers/fixtures.js';

const T0 = Date.UTC(2026, 10, 27);
const SESSION_A = 'Claude Code session 2026-11-27 aaaa0001';
const SESSION_B = 'Claude Code session 2026-11-27 bbbb0001';

const tmp = tempDir('limbic-scope-');
const db = join(tmp.dir, 'memory.db');
const repoA = join(tmp.dir, 'a');
const repoB = join(tmp.dir, 'b');

beforeAll(async () => {
  for (const [dir, remote] of [
    [repoA, 'git@github.com:acme/a.git'],
    [repoB, 'https://github.com/acme/b'],
  ] as const) {
    mkdirSync(dir);
    execFileSync('git', ['init', '-q'], { cwd: dir });
    execFileSync('git', ['remote', 'add', 'origin', remote], { cwd: dir });
  }
  const service = new MemoryService({
    store: openSqliteStore({ path: db }),
    embedder: new LazyEmbedder(async () => {
      throw new Error('no model in this test');
    }),
    clock: () => T0,
    logger: noopLogger,
  });
  const A: Project = { key: 'github.com/acme/a', name: 'a', root: repoA, from: 'git-remote' };
  const B: Project = { key: 'github.com/acme/b', name: 'b', root: repoB, from: 'git-remote' };
  await service.capture(
    { source: 'claude-code', id: 'aaaa0001', startedAt: T0, turns: [{ role: 'user', text: 'Tune the kestrel cache in A' }] },
    A,
  );
  await service.capture(
    { source: 'claude-code', id: 'bbbb0001', startedAt: T0, turns: [{ role: 'user', text: 'The kestrel cache of B: private' }] },
    B,
  );
  await service.createEntities([{ name: 'Kestrel cache', entityType: 'note', observations: ['A kestrel cache note for everyone'] }]);
  await service.close();
});

afterAll(() => tmp.cleanup());

async function serverIn(cwd: string): Promise<Client> {
  const client = new Client({ name: 'scope', version: '1' });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [CLI, '--db', db, '--no-model'], cwd, stderr: 'ignore' }),
  );
  return client;
}

async function found(client: Client, tool: 'hybrid_search' | 'search_semantic', project?: string): Promise<string[]> {
  const result = await client.callTool({
    name: tool,
    arguments: { query: 'kestrel cache', ...(project === undefined ? {} : { project }) },
  });
  if (result.isError === true) throw new Error(JSON.stringify(result.content));
  return (result.structuredContent as { results: { name: string }[] }).results.map((r) => r.name);
}

describe('a stdio server started in a project folder', () => {
  it("shows its project's sessions and global memories, never another project's sessions", async () => {
    const client = await serverIn(join(repoA));
    try {
      for (const tool of ['hybrid_search', 'search_semantic'] as const) {
        const names = await found(client, tool);
        expect(names, tool).toEqual(expect.arrayContaining([SESSION_A, 'Kestrel cache']));
        expect(names, tool).not.toContain(SESSION_B);
      }
      const nodes = await client.callTool({ name: 'search_nodes', arguments: { query: 'kestrel' } });
      const nodeNames = (nodes.structuredContent as { entities: { name: string }[] }).entities.map((e) => e.name);
      expect(nodeNames).toEqual(expect.arrayContaining([SESSION_A, 'Kestrel cache']));
      expect(nodeNames).not.toContain(SESSION_B);
      expect(await found(client, 'hybrid_search', 'github.com/acme/b')).not.toContain(SESSION_A);
      expect(await found(client, 'hybrid_search', '*')).toEqual(expect.arrayContaining([SESSION_A, SESSION_B]));
    } finally {
      await client.close();
    }
  });

  it('hides nothing when started outside any project', async () => {
    const client = await serverIn('/');
    try {
      expect(await found(client, 'hybrid_search')).toEqual(expect.arrayContaining([SESSION_A, SESSION_B, 'Kestrel cache']));
    } finally {
      await client.close();
    }
  });
});
