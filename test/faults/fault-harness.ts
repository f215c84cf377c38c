/**
 * Helpers for the fault tests: seeded memory.jsonl files, the built `limbic` binary as a child
 * process that can be SIGKILLed, MCP clients over its stdio, and what a killed database holds.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { watch, writeFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import Database from 'better-sqlite3';
import { decodeFts5Structure, pagesToMerge, segmentCount, STRUCTURE_ROWID } from '../../src/store/sqlite/fts5/fts5-structure.js';
import { CLI } from '../helpers/fixtures.js';

/** mulberry32, seedable, so a failing kill point replays from its seed (shared with the benchmarks). */
import { rng } from '../../bench/latency/generate.js';

export { rng };

const SYLLABLES = ['ka', 'lo', 'mi', 'ren', 'to', 'sa', 'vi', 'dor', 'el', 'qu', 'an', 'tis', 'po', 'ne', 'ru', 'ba', 'cy', 'fen'];

/** A made-up word; a vocabulary of thousands keeps the keyword indexes realistically large. */
export function word(random: () => number): string {
  let w = '';
  const n = 2 + Math.floor(random() * 3);
  for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(random() * SYLLABLES.length)] ?? 'ka';
  return w;
}

export function sentence(random: () => number, words: number): string {
  return Array.from({ length: words }, () => word(random)).join(' ');
}

/** Writes a memory.jsonl of `entities` entities (4 observations each) and one relation per entity. */
export function writeMemoryFile(path: string, entities: number, seed: number): { entities: number; relations: number } {
  const random = rng(seed);
  const lines: string[] = [];
  for (let i = 0; i < entities; i++) {
    const observations = Array.from({ length: 4 }, () => sentence(random, 6 + Math.floor(random() * 10)));
    lines.push(JSON.stringify({ type: 'entity', name: `Entity ${i}`, entityType: 'note', observations }));
  }
  for (let i = 1; i < entities; i++) {
    lines.push(
      JSON.stringify({ type: 'relation', from: `Entity ${i}`, to: `Entity ${Math.floor(random() * i)}`, relationType: 'relates_to' }),
    );
  }
  writeFileSync(path, `${lines.join('\n')}\n`);
  return { entities, relations: entities - 1 };
}

export interface LimbicProcess {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
}

/** Runs the built binary with these arguments; stdout and stderr are collected. */
export function runLimbic(args: readonly string[], env: Record<string, string> = {}): LimbicProcess {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return { child, stdout: () => out, stderr: () => err, exited };
}

export async function sigkill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = once(child, 'exit');
  child.kill('SIGKILL');
  await gone;
}

export interface McpServer {
  readonly client: Client;
  /** The server's process id, for SIGKILL. */
  readonly pid: number;
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  stderr(): string;
  /** SIGKILLs the server; the client's pending calls fail. */
  kill(): Promise<void>;
  close(): Promise<void>;
}

/** A `limbic` server over stdio, as an MCP client starts it. */
export async function startServer(db: string, options: { model: boolean }): Promise<McpServer> {
  const args = [CLI, '--db', db, ...(options.model ? [] : ['--no-model'])];
  // The whole environment, not the SDK's short default list: LIMBIC_MODEL_CACHE or XDG_CACHE_HOME
  // may say where the model is installed.
  const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
  const transport = new StdioClientTransport({ command: process.execPath, args, env, stderr: 'pipe' });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const client = new Client({ name: 'limbic-fault-test', version: '1' });
  await client.connect(transport);
  const pid = transport.pid;
  if (pid === null) throw new Error('the server process has no pid');
  return {
    client,
    pid,
    call: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult,
    stderr: () => err,
    async kill() {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
      await client.close().catch(() => undefined);
    },
    close: () => client.close(),
  };
}

/** Polls until `check` returns a value other than undefined; throws after `timeoutMs`. */
export async function waitFor<T>(check: () => T | undefined | Promise<T | undefined>, timeoutMs: number, everyMs = 5): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/**
 * Resolves with `check`'s first value other than undefined. It is checked at the start and then
 * only when a file in `dir` changes (a commit writes the WAL, a checkpoint the database: what a
 * database holds changes only then), at most once per `spacingMs`, and once a second in case a
 * change went unreported. Polling as fast as it can instead made a test's looks (46 ms each at a
 * load of 20) take one of the two cores from the process under test. Throws after `timeoutMs`.
 */
export async function waitForChange<T>(
  dir: string,
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs: number,
  spacingMs = 50,
): Promise<T> {
  let changed = true;
  let wake: (() => void) | undefined;
  const signal = (): void => {
    changed = true;
    wake?.();
  };
  const watcher = watch(dir, signal);
  const tick = setInterval(signal, 1_000);
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      if (changed) {
        changed = false;
        const value = await check();
        if (value !== undefined) return value;
        await new Promise((resolve) => setTimeout(resolve, spacingMs));
      }
      if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
      if (!changed) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()) + 1);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
      }
    }
  } finally {
    watcher.close();
    clearInterval(tick);
  }
}

export interface DatabaseState {
  readonly integrity: string;
  readonly entities: number;
  readonly observations: number;
  readonly relations: number;
  /** Keyword-index pages a compaction still has to merge (0: compacted). */
  readonly pagesToMerge: number;
  /** Segments in the two keyword indexes together (2: both compacted). */
  readonly segments: number;
}

/**
 * What a database holds. With `integrity`, after a kill: a fresh connection (which recovers the WAL
 * of a killed writer, as the next Limbic start would) runs SQLite's integrity_check and FTS5's own
 * on both keyword indexes. Without, a read-only look while a child writes. Undefined while the file
 * has no schema yet.
 */
export function databaseState(path: string, options: { integrity: boolean } = { integrity: true }): DatabaseState | undefined {
  const db = new Database(path, { fileMustExist: true, readonly: !options.integrity });
  try {
    db.pragma('busy_timeout = 10000');
    const tables = new Set(
      db
        .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")
        .all()
        .map((r) => r.name),
    );
    if (!tables.has('entity_trigram_data')) return undefined;
    const count = (table: string): number => db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM ${table}`).get()?.n ?? 0;
    let pages = 0;
    let segments = 0;
    for (const table of ['entity_fts', 'entity_trigram']) {
      const row = db.prepare<[number], { block: Buffer }>(`SELECT block FROM ${table}_data WHERE id = ?`).get(STRUCTURE_ROWID);
      if (row === undefined) continue;
      const structure = decodeFts5Structure(row.block);
      pages += pagesToMerge(structure);
      segments += segmentCount(structure);
    }
    return {
      integrity: options.integrity ? integrity(db) : 'not checked',
      entities: count('entities'),
      observations: count('observations'),
      relations: count('relations'),
      pagesToMerge: pages,
      segments,
    };
  } finally {
    db.close();
  }
}

function integrity(db: Database.Database): string {
  const sqlite = db.pragma('integrity_check', { simple: true }) as string;
  if (sqlite !== 'ok') return sqlite;
  for (const table of ['entity_fts', 'entity_trigram']) {
    try {
      db.exec(`INSERT INTO ${table} (${table}) VALUES ('integrity-check')`);
    } catch (error) {
      return `${table}: ${(error as Error).message}`;
    }
  }
  return 'ok';
}
