/**
 * Issue 25 item 22 through the built binary over stdio: the paired hierarchical relations are off
 * unless `--inverse-relations` or LIMBIC_INVERSE_RELATIONS asks for them (needs `npm run build`).
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { CLI, tempDir } from '../helpers/fixtures.js';

/** The relations a fresh server made from `Car contains Wheel`. */
async function relationsMade(flags: string[], env: Record<string, string>): Promise<unknown> {
  const tmp = tempDir();
  const client = new Client({ name: 'inverse-relations', version: '1' });
  try {
    const { LIMBIC_INVERSE_RELATIONS: _unset, ...inherited } = process.env;
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, '--db', join(tmp.dir, 'memory.db'), '--no-model', ...flags],
        env: { ...(inherited as Record<string, string>), ...env },
        stderr: 'ignore',
      }),
    );
    const made = (await client.callTool({
      name: 'create_relations',
      arguments: { relations: [{ from: 'Car', to: 'Wheel', relationType: 'contains' }] },
    })) as CallToolResult;
    return made.structuredContent?.relations;
  } finally {
    await client.close();
    tmp.cleanup();
  }
}

const pair = [
  { from: 'Car', to: 'Wheel', relationType: 'contains' },
  { from: 'Wheel', to: 'Car', relationType: 'part_of', context: 'automatic inverse of contains' },
];

describe('the inverse-relations setting (issue 25 item 22)', () => {
  it('is off by default, on with --inverse-relations or LIMBIC_INVERSE_RELATIONS=1', async () => {
    expect(await relationsMade([], {})).toEqual([{ from: 'Car', to: 'Wheel', relationType: 'contains' }]);
    expect(await relationsMade(['--inverse-relations'], {})).toEqual(pair);
    expect(await relationsMade([], { LIMBIC_INVERSE_RELATIONS: '1' })).toEqual(pair);
  });
});
