/**
 * `npm run bench:concurrency`: two server processes on one store, each with 20 create_entities calls
 * in flight at once, for Limbic and for the official server; how many of the 40 entities survive.
 * Repeated 5 times each.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const ROOT = join(import.meta.dirname, '..');
const SERVERS = {
  limbic: (dir: string) => ({ args: [join(ROOT, 'dist', 'cli', 'main.js'), '--db', join(dir, 'memory.db'), '--no-model'], env: {} }),
  official: (dir: string) => ({
    args: [join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js')],
    env: { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') },
  }),
};

async function trial(kind: keyof typeof SERVERS): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'limbic-conc-'));
  const spec = SERVERS[kind](dir);
  const connect = async () => {
    const c = new Client({ name: 'bench', version: '1' });
    await c.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: spec.args,
        env: { ...process.env, ...spec.env } as Record<string, string>,
        stderr: 'ignore',
      }),
    );
    return c;
  };
  const [a, b] = await Promise.all([connect(), connect()]);
  const burst = (c: Client, p: string) =>
    Array.from({ length: 20 }, (_, i) =>
      c
        .callTool({ name: 'create_entities', arguments: { entities: [{ name: `${p}-${i}`, entityType: 't', observations: [] }] } })
        .catch(() => undefined),
    );
  await Promise.all([...burst(a, 'a'), ...burst(b, 'b')]);
  const graph = await a.callTool({ name: 'read_graph', arguments: {} });
  const kept = (graph.structuredContent as { entities: unknown[] }).entities.length;
  await Promise.all([a.close(), b.close()]);
  rmSync(dir, { recursive: true, force: true });
  return kept;
}

for (const kind of ['limbic', 'official'] as const) {
  const kept: number[] = [];
  for (let i = 0; i < 5; i++) kept.push(await trial(kind));
  console.log(`${kind}: kept ${kept.join(', ')} of 40 in 5 trials`);
}
