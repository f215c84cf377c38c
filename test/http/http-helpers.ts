/**
 * Wiring for the HTTP tests: a real server on loopback over real SQLite files (or a real PostgreSQL
 * database, a schema per namespace), and SDK clients.
 */
import type { Redactor } from '../../src/core/text/redaction.js';
import { request } from 'node:http';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startServeHttp, type ServeHttpOptions } from '../../src/cli/serve-http.js';
import { noopLogger } from '../../src/core/logger.js';
import { LazyEmbedder, type Embedder } from '../../src/embed/embedder.js';
import type { RunningHttpServer } from '../../src/http/http-server.js';
import { namespaceSchema, tokenFilePath } from '../../src/http/namespaces.js';
import { createToken } from '../../src/http/tokens.js';
import { openPgStore } from '../../src/store/postgres/pg-store.js';
import { openPgTokenStore } from '../../src/store/postgres/pg-tokens.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { openSqliteTokenStore } from '../../src/store/sqlite/sqlite-tokens.js';
import type { Store } from '../../src/store/store.js';
import type { TokenStore } from '../../src/store/token-store.js';
import { tempDir } from '../helpers/fixtures.js';
import { httpClient, type Era } from '../helpers/mcp-eras.js';

export interface TestServer {
  readonly dir: string;
  readonly dbPath: string;
  readonly server: RunningHttpServer;
  readonly url: string;
  /** Makes a token in the server's token store (as `limbic token create` does). */
  token(namespace: string, readOnly?: boolean): Promise<{ token: string; id: string }>;
  revoke(id: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * `embedder`: undefined runs keyword-only, as `--no-model` does. `pgUrl`: serve a PostgreSQL
 * database (an empty one per server) instead of a SQLite file in a temporary folder. `redactor`:
 * what every namespace's writes go through (serve's Config.redact); none by default.
 */
export async function startTestServer(
  options: Partial<ServeHttpOptions> = {},
  embedder?: () => Promise<Embedder>,
  wrapStore: (store: Store) => Store = (store) => store,
  pgUrl?: string,
  redactor?: Redactor,
): Promise<TestServer> {
  const { dir, cleanup } = tempDir('limbic-http-');
  const dbPath = pgUrl ?? join(dir, 'memory.db');
  const openTokens = (location: string): TokenStore => (pgUrl === undefined ? openSqliteTokenStore(location) : openPgTokenStore(location));
  const tokens = openTokens(tokenFilePath(dbPath));
  const started = await startServeHttp(
    { host: '127.0.0.1', port: 0, allowedHosts: [], ...options },
    {
      dbPath,
      openStore: (path, namespace) =>
        wrapStore(
          pgUrl === undefined ? openSqliteStore({ path }) : openPgStore({ url: path, schema: namespaceSchema(namespace), poolSize: 4 }),
        ),
      openTokens,
      embedder: new LazyEmbedder(embedder ?? (() => Promise.reject(new Error('no model in this test (keyword search only)')))),
      info: { name: 'limbic', version: 'test' },
      logger: noopLogger,
      redactor,
    },
  );
  let closed = false;
  return {
    dir,
    dbPath,
    server: started.server,
    url: started.server.url,
    async token(namespace, readOnly = false) {
      const made = await createToken(tokens, { namespace, readOnly });
      return { token: made.token, id: made.record.id };
    },
    revoke: async (id) => void (await tokens.revoke(id)),
    async close() {
      if (!closed) {
        closed = true;
        await started.close();
      }
      await tokens.close();
      cleanup();
    },
  };
}

/** What the HTTP tests ask of a client besides tool calls: the same in both SDK generations. */
export interface McpClientView {
  listTools(): Promise<{ tools: { name: string; annotations?: { readOnlyHint?: boolean } }[] }>;
  readResource(params: { uri: string }): Promise<{ contents: ({ uri: string } & ({ text: string } | { blob: string }))[] }>;
  getServerCapabilities(): { resources?: { subscribe?: boolean } } | undefined;
}

export interface HttpClient {
  readonly client: McpClientView;
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  ok<T = Record<string, unknown>>(name: string, args?: Record<string, unknown>): Promise<T>;
  close(): Promise<void>;
}

/**
 * A client over Streamable HTTP with a bearer token, connected. 'legacy': the v1 SDK's client
 * (`@modelcontextprotocol/sdk` 1.x, what the MCP Inspector and the official memory server's users
 * run), with its `initialize`; 'modern': the v2 client pinned to 2026-07-28.
 */
export async function connect(url: string, token: string | undefined, era: Era = 'legacy'): Promise<HttpClient> {
  let client: McpClientView & {
    callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
    close(): Promise<void>;
  };
  if (era === 'modern') {
    client = await httpClient(era, `${url}/mcp`, token === undefined ? {} : { token });
  } else {
    const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      requestInit: token === undefined ? {} : { headers: { Authorization: `Bearer ${token}` } },
    });
    const v1 = new Client({ name: 'limbic-http-test', version: '0' });
    await v1.connect(transport);
    client = v1;
  }
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;
  return {
    client,
    call,
    async ok<T>(name: string, args: Record<string, unknown> = {}) {
      const result = await call(name, args);
      if (result.isError === true) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
      return result.structuredContent as T;
    },
    close: () => client.close(),
  };
}

/** The HTTP status a client's error reports: `status` in the v2 SDK, `code` in the v1 SDK. */
export const httpStatusOf = (error: Error | undefined): unknown => {
  const e = error as (Error & { status?: number; code?: unknown }) | undefined;
  return e?.status ?? e?.code;
};

export const textOf = (r: CallToolResult): string => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

/** A raw request with exactly these headers (fetch will not send a forged Host or Origin). */
export function rawRequest(
  url: string,
  options: { method?: string; path?: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        method: options.method ?? 'POST',
        path: options.path ?? '/mcp',
        headers: options.headers,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

export const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
});

/**
 * A store wrapper that holds every call of one graph method until released, so requests are truly
 * under way at once; `entered` counts the calls that reached the store.
 */
export function holdGraphMethod(method: string): {
  wrap: (store: Store) => Store;
  entered: () => number;
  releaseOne: () => void;
  releaseAll: () => void;
} {
  const waiting: (() => void)[] = [];
  let entered = 0;
  let open = false;
  const wrap = (store: Store): Store => {
    const graph = new Proxy(store.graph, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (property !== method || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
        return async (...args: unknown[]) => {
          entered++;
          if (!open) await new Promise<void>((resolve) => waiting.push(resolve));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    return new Proxy(store, {
      get: (target, property, receiver) => (property === 'graph' ? graph : (Reflect.get(target, property, receiver) as unknown)),
    });
  };
  return {
    wrap,
    entered: () => entered,
    releaseOne: () => waiting.shift()?.(),
    releaseAll: () => {
      open = true;
      for (const release of waiting.splice(0)) release();
    },
  };
}
