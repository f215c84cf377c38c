/**
 * One open_nodes on a hub (issue 35, item 6): an entity with 150,000 relations in a SQLite memory,
 * opened once through the built server over stdio. Prints the call's time, whether it answered or
 * was refused, the answer's size, and the server process's peak resident memory (VmHWM) after it.
 * Run it on a tree before and after a change to compare (the tree's `dist` must be built).
 *
 * `flock /tmp/limbic-bench.lock npx tsx bench/hub-open.ts [relations]` (about 15 seconds).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';

const RELATIONS = Number(process.argv[2] ?? 150_000);
const dir = mkdtempSync(join(tmpdir(), 'limbic-hub-'));
const db = join(dir, 'memory.db');

/** A memory line of /proc/<pid>/status, in MB. */
function memoryOf(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`));
  return Math.round(Number(/(\d+)/.exec(line ?? '')?.[1] ?? 0) / 1024);
}

try {
  const store = openSqliteStore({ path: db });
  const now = Date.now();
  await store.graph.createEntities([{ name: 'Hub', entityType: 'hub', observations: ['the hub of the harbour'] }], now);
  const relations = Array.from({ length: RELATIONS }, (_, i) => ({ from: 'Hub', to: `Leaf ${i}`, relationType: 'links' }));
  await store.graph.importBatch({ entities: [], relations }, now);
  await store.close();

  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(process.cwd(), 'dist', 'cli', 'main.js'), '--db', db, '--no-model'],
    env: { ...process.env } as Record<string, string>,
    stderr: 'ignore',
    // The SDK's default line buffer (10 MiB) would drop a refused-size answer before we saw it.
    maxBufferSize: 64 * 1024 * 1024,
  } as ConstructorParameters<typeof StdioClientTransport>[0]);
  const client = new Client({ name: 'limbic-bench', version: '1.0.0' });
  await client.connect(transport);
  const pid = transport.pid ?? 0;
  const before = memoryOf(pid, 'VmHWM');
  const start = performance.now();
  const result = (await client.callTool({ name: 'open_nodes', arguments: { names: ['Hub'] } })) as CallToolResult;
  const ms = performance.now() - start;
  const peak = memoryOf(pid, 'VmHWM');
  const answer = result.structuredContent as { relations?: unknown[]; relationCount?: number } | undefined;
  const bytes = Buffer.byteLength(JSON.stringify(result));
  console.log(
    JSON.stringify({
      relations: RELATIONS,
      answered: result.isError !== true,
      shown: answer?.relations?.length ?? 0,
      relationCount: answer?.relationCount,
      answerMiB: +(bytes / 2 ** 20).toFixed(2),
      ms: Math.round(ms),
      peakRssMB: { beforeCall: before, afterCall: peak },
    }),
  );
  await client.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
