/** Shared test wiring: temp databases, services, in-process MCP clients, embedders. */
import { mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client as EraClient } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult, ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { createMcpHandler, InMemoryTransport as ServerInMemoryTransport } from '@modelcontextprotocol/server';
import { DEFAULT_MODEL_ID } from '../../src/core/config.js';
import { noopLogger } from '../../src/core/logger.js';
import { embedEntitiesAsPassages, LazyEmbedder, type Embedder, type EntityInput } from '../../src/embed/embedder.js';
import { loadOnnxEmbedder, type OnnxEngine } from '../../src/embed/onnx/onnx-embedder.js';
import type { Reranker } from '../../src/embed/reranker.js';
import { createMcpServer } from '../../src/mcp/server.js';
import type { HeavySlotOptions } from '../../src/service/heavy-slots.js';
import { buildKeywordQuery, type KeywordExpr } from '../../src/core/text/keyword-query.js';
import { MemoryService } from '../../src/service/memory-service.js';
import type { Redactor } from '../../src/core/text/redaction.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { connectIn, eraClient, httpClient, type Era } from './mcp-eras.js';

export const REPO_ROOT = join(import.meta.dirname, '..', '..');
export const CLI = join(REPO_ROOT, 'dist', 'cli', 'main.js');

/** A fresh folder in the OS temp dir, removed by the returned cleanup. */
export function tempDir(prefix = 'limbic-test-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Where `limbic model install` put the model (same rules as src/cli/main.ts). */
export function modelCacheDir(): string {
  const env = process.env;
  if (env.LIMBIC_MODEL_CACHE) return env.LIMBIC_MODEL_CACHE;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'limbic', 'models');
}

/**
 * A fake embedder for code where meaning does not matter: deterministic unit vectors from a hash
 * of the words. It is never presented as semantic search.
 */
export class FakeEmbedder implements Embedder {
  readonly id = 'fake-hash-embedder';
  calls = 0;
  constructor(readonly dims = 16) {}
  async embedEntities(items: readonly EntityInput[]): Promise<Float32Array[]> {
    return embedEntitiesAsPassages(this, (t) => this.countTokens(t), items);
  }
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    this.calls++;
    return texts.map((t) => {
      const v = new Float32Array(this.dims);
      for (const word of t.toLowerCase().split(/\W+/).filter(Boolean)) {
        let h = 2166136261;
        for (const ch of word) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
        const slot = Math.abs(h) % this.dims;
        v[slot] = (v[slot] ?? 0) + 1;
      }
      const norm = Math.hypot(...v) || 1;
      return v.map((x) => x / norm);
    });
  }
  countTokens(text: string): number {
    return text.split(/\s+/).filter(Boolean).length + 2;
  }
}

let realEngine: Promise<OnnxEngine> | undefined;
/** The default model, installed by `limbic model install` (npm test's pretest; loaded once per test file). */
export function realEmbedder(): Promise<OnnxEngine> {
  realEngine ??= loadOnnxEmbedder({ modelDir: undefined, cacheDir: modelCacheDir(), modelId: DEFAULT_MODEL_ID, allowRemote: false });
  return realEngine;
}

export type EmbedderChoice = 'none' | 'fake' | 'real' | Embedder;

/**
 * `client` is the v1 SDK's client (the 2025-era one the official memory server's users run), or,
 * for a harness opened in an era, the v2 client speaking that era.
 */
export interface Harness<C = Client> {
  readonly store: Store;
  readonly service: MemoryService;
  readonly client: C;
  /** Calls a tool and returns its result (isError results included). */
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  /** Calls a tool, fails the test on isError, and returns structuredContent. */
  ok<T = Record<string, unknown>>(name: string, args?: Record<string, unknown>): Promise<T>;
  /** Lets post-response work (signal recording) run. */
  settle(): Promise<void>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  readonly embedder?: EmbedderChoice;
  readonly reranker?: Reranker;
  readonly clock?: () => number;
  readonly path?: string;
  /** Another backend's store (PostgreSQL tests); the harness closes it. @default a SQLite file */
  readonly store?: Store;
  /** Slots of the heavy maintenance tools. @default MemoryService's */
  readonly heavySlots?: HeavySlotOptions;
  /** Config.inverseRelations: hierarchical relations in pairs. @default false */
  readonly inverseRelations?: boolean;
  /** What every write goes through (src/service/redaction.ts). @default none: text stored as given */
  readonly redactor?: Redactor;
  /** What the client says it supports at the handshake (an MCP Apps host, say). @default none */
  readonly clientCapabilities?: ClientCapabilities;
  /**
   * Connect a v2 client of this protocol generation instead of the v1 one: 'legacy' over an
   * in-memory pair (the 2025 handshake), 'modern' (2026-07-28) through the HTTP handler's fetch,
   * in process, as the SDK's testing guide does (it has no in-memory modern entry).
   */
  readonly era?: Era;
}

/** A harness whose client is the v2 client of one protocol generation. */
export type EraHarness = Harness<EraClient>;

/** A real SQLite file (or the given store), the service, and a real MCP client connected in-process. */
export async function harness(options: HarnessOptions & { readonly era: Era }): Promise<EraHarness>;
export async function harness(options?: HarnessOptions): Promise<Harness>;
export async function harness(options: HarnessOptions = {}): Promise<Harness | EraHarness> {
  const tmp = options.path === undefined ? tempDir() : undefined;
  const store = options.store ?? openSqliteStore({ path: options.path ?? join(tmp?.dir ?? '', 'memory.db') });
  const choice = options.embedder ?? 'none';
  const embedder = new LazyEmbedder(async () => {
    if (choice === 'none') throw new Error('no model in this test');
    if (choice === 'fake') return new FakeEmbedder();
    if (choice === 'real') return realEmbedder();
    return choice;
  });
  // Searches wait for fresh entities as long as a loaded test machine may need: results, not timing.
  const service = new MemoryService({
    store,
    embedder,
    clock: options.clock ?? Date.now,
    logger: noopLogger,
    reranker: options.reranker,
    catchUpWaitMs: 60_000,
    ...(options.heavySlots === undefined ? {} : { heavySlots: options.heavySlots }),
    inverseRelations: options.inverseRelations,
    redactor: options.redactor,
  });
  const info = { name: 'limbic', version: 'test' };
  const release = async (): Promise<void> => {
    await service.drainEmbeddings().catch(() => 0);
    await service.close();
    tmp?.cleanup();
  };
  /** The harness over a connected client; `stop` closes the server side after the client. */
  const finish = <C extends ToolClient>(client: C, stop: () => Promise<void>): Harness<C> =>
    withCalls(store, service, client, async () => {
      await client.close();
      await stop();
      await release();
    });
  const era = options.era;
  if (era === undefined) {
    const server = createMcpServer(service, info, noopLogger);
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'limbic-test', version: '1.0.0' }, { capabilities: options.clientCapabilities ?? {} });
    await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
    return finish(client, () => server.close());
  }
  if (era === 'legacy') {
    const server = createMcpServer(service, info, noopLogger, { era });
    const [clientTransport, serverTransport] = ServerInMemoryTransport.createLinkedPair();
    await server.connect(serverTransport);
    return finish(await connectIn(era, eraClient(era), clientTransport), () => server.close());
  }
  const handler = createMcpHandler(({ era: served }) =>
    createMcpServer(service, info, noopLogger, { era: served, changes: { publish: (uri) => handler.notify.resourceUpdated(uri) } }),
  );
  return finish(await httpClient(era, 'http://limbic.test/mcp', { fetch: (request) => handler.fetch(request) }), () => handler.close());
}

/** What the harness needs of a client, the 1.x SDK's or the v2 one's. */
interface ToolClient {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}

function withCalls<C extends ToolClient>(store: Store, service: MemoryService, client: C, close: () => Promise<void>): Harness<C> {
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;
  return {
    store,
    service,
    client,
    call,
    async ok<T>(name: string, args: Record<string, unknown> = {}) {
      const result = await call(name, args);
      if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
      return result.structuredContent as T;
    },
    settle: () => service.settled(),
    close,
  };
}

export function textOf(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
}

/**
 * The keyword expression of a query as a user writes it (core/text/keyword-query.ts), for tests that
 * search a KeywordIndex directly: '"tea" OR "coffee"', 'type:project', 'neur*'.
 */
export function keywordExpr(text: string): KeywordExpr {
  const query = buildKeywordQuery(text);
  if (query.expr === undefined) throw new Error(`"${text}" has nothing to search for`);
  return query.expr;
}
