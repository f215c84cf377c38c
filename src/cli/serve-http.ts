/**
 * `limbic serve --http`: checks the options, refuses an open door (a non-loopback address with no
 * token), starts the HTTP server and stops it gracefully on SIGINT/SIGTERM. Concrete backends come
 * in from app.ts (the composition root).
 */
import { MemoryError, ERROR_CODES } from '../core/errors.js';
import type { ToolProfile } from '../core/config.js';
import type { Logger } from '../core/logger.js';
import type { LazyEmbedder } from '../embed/embedder.js';
import { allowedHostNames, isLoopback } from '../http/guard.js';
import { startHttpServer, type HttpLimits, type RunningHttpServer } from '../http/http-server.js';
import { NamespaceRegistry, tokenFilePath } from '../http/namespaces.js';
import type { ServerInfo } from '../mcp/server.js';
import { redactPassword } from '../core/redact.js';
import type { HeavySlotOptions } from '../service/heavy-slots.js';
import type { Redactor } from '../core/text/redaction.js';
import type { Store } from '../store/store.js';
import type { TokenStore } from '../store/token-store.js';
import { DEFAULT_LIMITS } from './http-limits.js';

export const DEFAULT_HTTP_PORT = 7411;

/** The bounds on requests in flight moved to http-limits.ts (app.ts reads them without this module). */
export { DEFAULT_LIMITS, LIMIT_SETTINGS, httpLimitsFromEnv } from './http-limits.js';

export interface ServeHttpOptions {
  readonly host: string;
  readonly port: number;
  readonly allowedHosts: readonly string[];
  /** Overrides of DEFAULT_LIMITS (tests use small ones). */
  readonly limits?: Partial<HttpLimits> | undefined;
}

export interface ServeHttpDeps {
  /**
   * The --db file or postgres:// URL: the default namespace. On SQLite the others and the token
   * file live beside it; on PostgreSQL they are schemas and a table in that database.
   */
  readonly dbPath: string;
  readonly openStore: (path: string, namespace: string) => Store;
  /** Opens the tokens at tokenFilePath(dbPath): a file, or the database of a URL. */
  readonly openTokens: (location: string) => TokenStore;
  readonly embedder: LazyEmbedder;
  readonly info: ServerInfo;
  readonly logger: Logger;
  /** LIMBIC_AUTO_TUNE_MINUTES, read by the caller: each namespace tunes itself this often. */
  readonly autoTuneMinutes?: number | undefined;
  /** LIMBIC_HEAVY_TOOL_SLOTS and _WAIT_MS, read by the caller: each namespace's heavy tools. */
  readonly heavySlots?: HeavySlotOptions | undefined;
  /** Config.inverseRelations, for every namespace. */
  readonly inverseRelations?: boolean | undefined;
  /** Config.tools: which tools every request's server lists and answers. @default 'all' */
  readonly tools?: ToolProfile | undefined;
  /** What every namespace's writes go through (Config.redact). */
  readonly redactor?: Redactor | undefined;
}

export async function startServeHttp(
  options: ServeHttpOptions,
  deps: ServeHttpDeps,
): Promise<{ server: RunningHttpServer; close: () => Promise<void> }> {
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65_535) {
    throw new MemoryError(
      ERROR_CODES.CONFIG_INVALID,
      `--port ${options.port} is not a port: give a number from 1 to 65535 (0 picks a free one).`,
    );
  }
  const shown = redactPassword(deps.dbPath);
  const tokens = deps.openTokens(tokenFilePath(deps.dbPath));
  let count: number;
  try {
    count = await tokens.count();
  } catch (error) {
    await tokens.close().catch(() => undefined);
    throw error;
  }
  if (count === 0 && !isLoopback(options.host)) {
    await tokens.close();
    throw new MemoryError(
      ERROR_CODES.CONFIG_INVALID,
      `Refusing to listen on ${options.host} with no token configured: a server reachable from the network must admit clients by token. ` +
        `Make one first with "limbic token create --namespace default" (it prints the token once), or serve on 127.0.0.1.`,
    );
  }
  if (count === 0) {
    deps.logger.warn(
      `no token exists yet (${redactPassword(tokenFilePath(deps.dbPath))}): every request will get 401. Make one with "limbic token create --namespace default".`,
    );
  }
  const registry = new NamespaceRegistry({
    dbPath: deps.dbPath,
    openStore: deps.openStore,
    embedder: deps.embedder,
    logger: deps.logger,
    autoTuneMinutes: deps.autoTuneMinutes,
    heavySlots: deps.heavySlots,
    inverseRelations: deps.inverseRelations,
    redactor: deps.redactor,
  });
  let server: RunningHttpServer;
  try {
    server = await startHttpServer({
      host: options.host,
      port: options.port,
      allowedHosts: options.allowedHosts,
      registry,
      tokens,
      info: deps.info,
      logger: deps.logger,
      limits: { ...DEFAULT_LIMITS, ...options.limits },
      tools: deps.tools,
    });
  } catch (error) {
    await registry.close();
    await tokens.close();
    const code = (error as { code?: string }).code;
    if (code === 'EADDRINUSE')
      throw new MemoryError(ERROR_CODES.CONFIG_INVALID, `Port ${options.port} on ${options.host} is in use: pick another with --port.`);
    throw error;
  }
  deps.logger.info(
    `serving MCP over HTTP at ${server.url}/mcp and the page at ${server.url}/ (${count} token${count === 1 ? '' : 's'}; database ${shown})`,
  );
  // A wildcard address listens everywhere, but answers only to the names it knows (DNS-rebinding
  // protection): say which, so a client on the LAN is not left with a bare 403 (issue 25).
  const names = [...allowedHostNames(options.host, options.allowedHosts)].join(', ');
  const wildcard = options.host === '0.0.0.0' || options.host === '::';
  deps.logger.info(
    `it answers requests whose Host is one of: ${names}${wildcard ? "; to reach it by this machine's LAN name or address, add each with --allowed-host NAME" : '; add others with --allowed-host NAME'}`,
  );
  return {
    server,
    close: async () => {
      await server.close();
      await tokens.close();
    },
  };
}

/** Runs until SIGINT/SIGTERM, then stops gracefully (requests under way finish first). */
export async function serveHttp(options: ServeHttpOptions, deps: ServeHttpDeps): Promise<void> {
  const { close } = await startServeHttp(options, deps);
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    deps.logger.info('stopping: finishing the requests under way');
    close().then(
      () => process.exit(0),
      (error: unknown) => {
        deps.logger.warn('shutdown failed', error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
