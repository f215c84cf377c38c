/**
 * A stdio server whose client is gone stops promptly, even in the middle of embedding (issue 35):
 * it used to finish the batch under way first, and a batch of long entities (a vector per
 * observation) kept it running for minutes after its client was killed. The built binary with the
 * real model, a real MCP client over its pipes; the client side is then closed as a killed client's
 * is (stdin ends, stdout's reader goes). What was committed must be intact, and what was not
 * embedded still queued and free for the next start to take.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { CLI, tempDir } from '../helpers/fixtures.js';
import { databaseState, rng, sentence } from './fault-harness.js';

/** An MCP client transport over a child's pipes (the SDK's own spawns its child and kills it on close). */
class PipeTransport implements Transport {
  private readonly buffer = new ReadBuffer();
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
  ) {}
  async start(): Promise<void> {
    this.input.on('data', (chunk: Buffer) => {
      this.buffer.append(chunk);
      for (let message = this.buffer.readMessage(); message !== null; message = this.buffer.readMessage()) this.onmessage?.(message);
    });
    this.input.on('close', () => this.onclose?.());
  }
  async send(message: JSONRPCMessage): Promise<void> {
    this.output.write(serializeMessage(message));
  }
  async close(): Promise<void> {
    this.output.end();
    this.input.destroy();
  }
}

/** Entities too long for one vector: each observation gets its own, so one batch of 32 is thousands of passages. */
const ENTITIES = 64;
const OBSERVATIONS = 120;
/** The hang detector: far above the seconds a stop takes, far below the minutes it took. */
const STOPS_WITHIN_MS = 30_000;

describe('a stdio server whose client is gone (issue 35)', () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => ({ dir, cleanup } = tempDir('limbic-client-gone-')));
  afterEach(() => cleanup());

  it('stops within the hang detector while it embeds, its writes intact and the rest still queued', async () => {
    const db = join(dir, 'memory.db');
    const child = spawn(process.execPath, [CLI, '--db', db, 'serve'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = once(child, 'exit').then(([code]) => code as number | null);
    const client = new Client({ name: 'limbic-client-gone', version: '1' });
    try {
      await client.connect(new PipeTransport(child.stdout, child.stdin));
      const random = rng(35);
      for (let from = 0; from < ENTITIES; from += 8) {
        const entities = Array.from({ length: 8 }, (_, i) => ({
          name: `Long ${from + i}`,
          entityType: 'note',
          observations: Array.from({ length: OBSERVATIONS }, () => sentence(random, 12)),
        }));
        const written = (await client.callTool({ name: 'create_entities', arguments: { entities } })) as CallToolResult;
        expect(written.isError, JSON.stringify(written.content)).not.toBe(true);
      }
      // A batch is in hand once the model holds claims on queued entities.
      const look = new Database(db, { readonly: true, fileMustExist: true });
      try {
        await expect
          .poll(() => (look.prepare('SELECT count(*) AS n FROM embedding_queue WHERE claimed_by IS NOT NULL').get() as { n: number }).n, {
            timeout: 120_000,
            interval: 200,
          })
          .toBeGreaterThan(0);
      } finally {
        look.close();
      }
    } finally {
      // The client is killed: its end of stdin closes, and nobody reads stdout any more.
      child.stdin.end();
      child.stdout.destroy();
    }

    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<'hung'>((resolve) => (timer = setTimeout(resolve, STOPS_WITHIN_MS, 'hung')));
    const outcome = await Promise.race([exited, hung]);
    clearTimeout(timer);
    if (outcome === 'hung') {
      child.kill('SIGKILL');
      await exited;
    }
    expect(outcome, `still running ${STOPS_WITHIN_MS} ms after its client left; stderr:\n${stderr}`).not.toBe('hung');

    // What was committed is intact; what was not embedded waits, and the next start can take all of it.
    expect(databaseState(db)).toMatchObject({ integrity: 'ok', entities: ENTITIES, observations: ENTITIES * OBSERVATIONS });
    const after = new Database(db, { readonly: true, fileMustExist: true });
    try {
      // The batch it abandoned was given back, not left claimed.
      expect(after.prepare('SELECT count(*) AS n FROM embedding_queue WHERE claimed_by IS NOT NULL').get()).toEqual({ n: 0 });
    } finally {
      after.close();
    }
    const store = openSqliteStore({ path: db });
    try {
      const vectors = store.vectors;
      if (vectors === undefined) throw new Error('sqlite-vec did not load');
      const { indexed, pending } = await vectors.status();
      expect(pending).toBeGreaterThan(0);
      expect(indexed + pending).toBe(ENTITIES);
      // The dead server's claims do not hold them back.
      expect(await vectors.takeJobs(ENTITIES)).toHaveLength(pending);
    } finally {
      await store.close();
    }
  }, 300_000);

  it('stops as a client leaving (exit 0) when nobody reads its answers any more (EPIPE), though stdin stays open', async () => {
    const child = spawn(process.execPath, [CLI, '--db', join(dir, 'memory.db'), '--no-model', 'serve'], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = once(child, 'exit').then(([code]) => code as number | null);
    const client = new Client({ name: 'limbic-client-gone', version: '1' });
    await client.connect(new PipeTransport(child.stdout, child.stdin));
    // The client's reader goes; its stdin stays open (held by another process of the client, say).
    child.stdout.destroy();
    child.stdin.on('error', () => undefined); // the server may be gone before the last line is written
    const line = `${JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/list' })}\n`;
    const asking = setInterval(() => child.stdin.write(line), 100);
    try {
      expect(await exited, stderr).toBe(0);
    } finally {
      clearInterval(asking);
    }
    expect(stderr).toMatch(/the client stopped reading stdout \(EPIPE\): it is gone; stopping/);
    expect(stderr).not.toMatch(/cannot read again/);
  }, 60_000);
});
