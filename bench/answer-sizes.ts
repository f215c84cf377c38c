/**
 * What a search answer costs an agent (issue 33): the characters of the text each search tool
 * answers, over a real MCP client, on a memory of 40 ordinary entities (3 to 5 observations) and
 * one of 300 observations (an operations log, about 90 characters each), with the real model.
 * Run it on a tree before and after a change to compare.
 *
 * `npx tsx bench/answer-sizes.ts` (about a minute; run as `flock /tmp/limbic-bench.lock …`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { noopLogger } from '../src/core/logger.js';
import { LazyEmbedder } from '../src/embed/embedder.js';
import { createMcpServer } from '../src/mcp/server.js';
import { MemoryService } from '../src/service/memory-service.js';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { loadModel } from './quality/harness.js';

const TOPICS = ['billing', 'backups', 'the Frankfurt region', 'the on-call rota', 'the staging cluster', 'invoices', 'DNS', 'the VPN'];
const ordinary = Array.from({ length: 40 }, (_, i) => ({
  name: `Service ${i}`,
  entityType: 'service',
  observations: Array.from(
    { length: 3 + (i % 3) },
    (_, j) => `Service ${i} depends on ${TOPICS[(i + j) % TOPICS.length]} and is owned by team ${(i * 7 + j) % 9}`,
  ),
}));
const log = {
  name: 'ops-log',
  entityType: 'log',
  observations: Array.from(
    { length: 300 },
    (_, i) =>
      `ops log ${i}: the nightly backup of the billing database finished${i === 211 ? ' and moved to the Frankfurt region' : ', no errors'}`,
  ),
};

const SHAPES: readonly { readonly label: string; readonly tool: string; readonly args: Record<string, unknown> }[] = [
  {
    label: '`search_semantic` limit 3, the long entity first',
    tool: 'search_semantic',
    args: { query: 'nightly backup of the billing database', limit: 3 },
  },
  { label: '`search_semantic` limit 10', tool: 'search_semantic', args: { query: 'nightly backup of the billing database', limit: 10 } },
  {
    label: '`search_semantic` limit 10, a question the log does not answer',
    tool: 'search_semantic',
    args: { query: 'who owns DNS?', limit: 10 },
  },
  { label: '`hybrid_search` limit 3', tool: 'hybrid_search', args: { query: 'backup Frankfurt', limit: 3 } },
  { label: '`hybrid_search` limit 10', tool: 'hybrid_search', args: { query: 'backup Frankfurt', limit: 10 } },
];

const engine = await loadModel();
const dir = mkdtempSync(join(tmpdir(), 'limbic-answer-sizes-'));
const store = openSqliteStore({ path: join(dir, 'memory.db') });
const service = new MemoryService({ store, embedder: new LazyEmbedder(async () => engine), clock: Date.now, logger: noopLogger });
const server = createMcpServer(service, { name: 'limbic', version: 'bench' }, noopLogger);
const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
const client = new Client({ name: 'answer-sizes', version: '1.0.0' });
await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
try {
  await client.callTool({ name: 'create_entities', arguments: { entities: [...ordinary, log] } });
  await service.drainEmbeddings();
  const rows: string[] = [];
  for (const shape of SHAPES) {
    const result = (await client.callTool({ name: shape.tool, arguments: shape.args })) as CallToolResult;
    const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
    const results = (result.structuredContent as { results?: { name: string; observations: string[] }[] } | undefined)?.results ?? [];
    const shown = results.find((r) => r.name === 'ops-log')?.observations.length;
    rows.push(
      `| ${shape.label} | ${result.isError === true ? `error: ${text.slice(0, 60)}` : text.length.toLocaleString('en-US')} | ${shown ?? 'not found'} |`,
    );
  }
  process.stdout.write(
    [
      '| query | characters of text | observations of ops-log shown |',
      '|---|---|---|',
      ...rows,
      '',
      `Model ${engine.id}; 40 entities of 3-5 observations and one of 300. Command: npx tsx bench/answer-sizes.ts`,
      '',
    ].join('\n'),
  );
} finally {
  await client.close();
  await service.close();
  rmSync(dir, { recursive: true, force: true });
}
