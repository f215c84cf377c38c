/**
 * `limbic serve --http`: checks the options, refuses an open door (a non-loopback address with no
 * token), starts the HTTP server and stops it gracefully on SIGINT/SIGTERM. Concrete backends come
 * in from app.ts (the composition root).
 */
import { isIP } from 'node:net';
import { MemoryError, ERROR_CODES } from '../core/errors.js';
import type { ToolProfile } from '../core/config.js';
import type { Logger } from '../core/logger.js';
import type { LazyEmbedder } from '../embed/embedder.js';
import { isLoopback } from '../http/guard.js';
import { answeredHostNames, startHttpServer, type HttpLimits, type RunningHttpServer } from '../http/http-server.js';
import { NamespaceRegistry, tokenFilePath } from '../http/namespaces.js';
import type { ServerInfo } from '../mcp/server.js';
import { redactPassword } from '../core/redact.js';
import type { HeavySlotOptions } from '../service/heavy-slots.js';
import type { Redactor } from '../core/text/redaction.js';
import type { Store } from '../store/store.js';
import type { TokenStore } from '../store/token-store.js';
import type { OAuthOptions } from '../http/oauth/options.js';
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
  /**
   * --public-url or LIMBIC_PUBLIC_URL: the origin (scheme://host[:port]) clients reach this server
   * by through a tunnel or reverse proxy; the OAuth issuer and resource. Undefined: from each
   * request's Host. Checked by publicOrigin().
   */
  readonly publicUrl?: string | undefined;
  /** --oauth-client-host or LIMBIC_OAUTH_CLIENT_HOSTS: hosts whose client metadata documents may live on private addresses. */
  readonly oauthClientHosts?: readonly string[] | undefined;
}

const PUBLIC_URL_EXAMPLE = 'e.g. https://memory.example.com (MCP clients then use https://memory.example.com/mcp)';

/**
 * The origin a --public-url names ("https://memory.example.com", no trailing slash), or an error
 * saying what to give: http or https, a host and maybe a port; no path, query, fragment or user.
 * @example publicOrigin('https://Memory.Example.com/') // 'https://memory.example.com'
 */
export function publicOrigin(value: string): string {
  const refuse = (why: string): never => {
    // A URL with a user or password in it is not echoed: that part is a secret.
    const shown = value.includes('@') ? '' : ` "${value}"`;
    throw new MemoryError(
      ERROR_CODES.CONFIG_INVALID,
      `--public-url (LIMBIC_PUBLIC_URL)${shown} ${why}: give the origin clients reach this server by, scheme, host and port only, ${PUBLIC_URL_EXAMPLE}.`,
    );
  };
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return refuse('is not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return refuse(`has the scheme ${url.protocol.slice(0, -1)}, not http or https`);
  if (url.username !== '' || url.password !== '') return refuse('carries a user name or password');
  if (url.pathname !== '/') return refuse(`has a path (${url.pathname}); the MCP endpoint is always /mcp under it`);
  if (value.includes('?') || value.includes('#')) return refuse('has a query or a fragment');
  return url.origin;
}

/**
 * The host names of --oauth-client-host, lower-cased: a name or an address, never a URL or a port.
 * @example clientHostNames(['Docs.Example.com', '[::1]']) // ['docs.example.com', '::1']
 */
export function clientHostNames(hosts: readonly string[]): string[] {
  return hosts.map((raw) => {
    const host = raw
      .trim()
      .replace(/^\[|\]$/g, '')
      .toLowerCase();
    const name = host.length <= 253 && /^[a-z0-9-]+(?:\.[a-z0-9-]+)*$/.test(host);
    if (!name && isIP(host) === 0) {
      throw new MemoryError(
        ERROR_CODES.CONFIG_INVALID,
        `--oauth-client-host (LIMBIC_OAUTH_CLIENT_HOSTS) "${raw}" is not a host name or address: give the host alone, as localhost or docs.example.com (no scheme, port or path).`,
      );
    }
    return host;
  });
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
  const publicUrl = options.publicUrl === undefined ? undefined : publicOrigin(options.publicUrl);
  // What the OAuth server is told (HttpServerOptions.oauth, an OAuthOptions).
  const oauth: OAuthOptions = { publicUrl, clientHosts: clientHostNames(options.oauthClientHosts ?? []) };
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
        `Make one first with "limbic token create --namespace default" (it prints the token once), or serve on 127.0.0.1 ` +
        `(a tunnel or a reverse proxy on this machine reaches it there; with --public-url, OAuth clients are then approved with "limbic auth code").`,
    );
  }
  if (count === 0) {
    deps.logger.warn(
      `no bearer token exists yet (${redactPassword(tokenFilePath(deps.dbPath))}): a client needs an OAuth approval ("limbic auth code") or a token ("limbic token create --namespace default"); until then every request to /mcp gets 401.`,
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
      oauth,
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
  const names = [...answeredHostNames({ host: options.host, allowedHosts: options.allowedHosts, oauth })].join(', ');
  const wildcard = options.host === '0.0.0.0' || options.host === '::';
  deps.logger.info(
    `it answers requests whose Host is one of: ${names}${wildcard ? "; to reach it by this machine's LAN name or address, add each with --allowed-host NAME" : '; add others with --allowed-host NAME'}`,
  );
  // Where OAuth clients start (docs/oauth.md): the issuer is the public URL, else the address a client used.
  const base = oauth.publicUrl ?? server.url;
  deps.logger.info(
    `OAuth: clients discover it at ${base}/.well-known/oauth-protected-resource/mcp` +
      `${oauth.publicUrl === undefined ? ' (issuer: the address each client uses; behind a tunnel or proxy, set --public-url)' : ` (issuer ${oauth.publicUrl})`}; ` +
      `approve one by typing a code from "limbic auth code [--namespace NAME] [--read-only]" into the consent page it opens` +
      `${oauth.clientHosts.length === 0 ? '' : `; client metadata documents may be fetched from private addresses of: ${oauth.clientHosts.join(', ')}`}`,
  );
  if (oauth.publicUrl?.startsWith('http:') === true && !isLoopback(new URL(oauth.publicUrl).hostname)) {
    deps.logger.warn(
      `the public URL ${oauth.publicUrl} is plain http: approval codes and tokens cross the network readable; serve it over https (a tunnel or a reverse proxy with TLS)`,
    );
  }
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
