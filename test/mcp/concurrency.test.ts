/**
 * Issue #2: clients start one server per window, all on the same file. Two `limbic` processes on one
 * database, each with 20 create_entities calls in flight at once, must keep all 40 entities.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { CLI, tempDir } from '../helpers/fixtures.js';

async function connect(db: string): Promise<Client> {
  const client = new Client({ name: 'concurrency', version: '1' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, '--db', db, '--no-model'], stderr: 'ignore' }));
  return client;
}

describe('two server processes on one database', () => {
  it('keeps all 40 entities from 2 × 20 concurrent create_entities calls', async () => {
    const tmp = tempDir();
    const db = join(tmp.dir, 'shared.db');
    const [a, b] = await Promise.all([connect(db), connect(db)]);
    const burst = (client: Client, prefix: string) =>
      Array.from(
        { length: 20 },
        (_, i) =>
          client.callTool({
            name: 'create_entities',
            arguments: { entities: [{ name: `${prefix}-${i}`, entityType: 'test', observations: [`made by ${prefix}`] }] },
          }) as Promise<CallToolResult>,
      );
    const results = await Promise.all([...burst(a, 'a'), ...burst(b, 'b')]);
    expect(results.filter((r) => r.isError)).toEqual([]);
    for (const client of [a, b]) {
      const graph = (await client.callTool({ name: 'read_graph', arguments: {} })) as CallToolResult;
      const names = (graph.structuredContent as { entities: { name: string }[] }).entities.map((e) => e.name);
      expect(names).toHaveLength(40);
      expect(new Set(names).size).toBe(40);
    }
    await Promise.all([a.close(), b.close()]);
    tmp.cleanup();
  });
});
