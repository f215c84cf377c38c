/**
 * `limbic serve --http`: checks the options, refuses an open door (a non-loopback address with no
 * token), starts the HTTP server and stops it gracefully on SIGINT/SIGTERM. Concrete backends come
 * in from app.ts (the composition root).
 */
import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import { isIP } from 'node:net';
import { MemoryError, ERROR_CODES } from '../core/errors.js';
import type { ToolProfile } from '../core/config.js';
import type { Logger } from '../core/logger.js';
import type { LazyEmbedder } from '../embed/embedder.js';
import { isLoopback } from '../http/guard.js';
import { startPrimary } from '../http/cluster-primary.js';
import { WorkerLink, processChannel } from '../http/cluster-worker.js';
import {
  answeredHostNames,
  startHttpServer,
  type HttpLimits,
  type HttpServerOptions,
  type RunningHttpServer,
} from '../http/http-server.js';
import { NamespaceRegistry, tokenFilePath } from '../http/namespaces.js';
import type { ServerInfo } from '../mcp/server.js';
import { redactPassword } from '../core/redact.js';
import type { HeavySlotOptions } from '../service/heavy-slots.js';
import type { Redactor } from '../core/text/redaction.js';
import type { Store } from '../store/store.js';
import type { TokenStore } from '../store/token-store.js';
import type { OAuthOptions } from '../http/oauth/options.js';
import { DEFAULT_LIMITS } from './http-limits.js';
import { plural } from '../core/text/plural.js';

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
  /**
   * --workers or LIMBIC_HTTP_WORKERS: processes accepting on the port (cluster-primary.ts); 1 is
   * one process answering alone. Checked by workerCount(). @default 1
   */
  readonly workers?: number | undefined;
}

/**
 * The number of worker processes a --workers value (or LIMBIC_HTTP_WORKERS) asks for: a whole
 * number from 1; unset, one. Not one per core by default: on 2 cores two workers answered the light
 * calls 25% slower than one process and the mixed calls no faster, at twice the memory
 * (bench/results/http-load-2026-11-28-merged.md); more cores are not measured yet.
 * @example workerCount('2') // 2
 */
export function workerCount(value: string | undefined, cores: number = availableParallelism()): number {
  const raw = value?.trim();
  if (raw === undefined || raw === '') return 1;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 256) {
    throw new MemoryError(
      ERROR_CODES.CONFIG_INVALID,
      `--workers (LIMBIC_HTTP_WORKERS) "${raw}" is not a number of processes: give a whole number from 1 to 256 (1, the default, serves from one process; this machine has ${cores} cores).`,
    );
  }
  return n;
}

/**
 * The threads each process's model worker runs on: with one process, every core but the one that
 * answers requests (as before workers); with N, an equal share of the cores, at least one, so N
 * model workers do not each claim the whole machine.
 */
export function modelThreads(workers: number, cores: number = availableParallelism()): number {
  return workers <= 1 ? Math.max(1, cores - 1) : Math.max(1, Math.floor(cores / workers));
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

/** What a start checked: the OAuth settings, and the tokens there are. */
interface Checked {
  readonly oauth: OAuthOptions;
  readonly count: number;
}

/**
 * The checks before anything listens: a port, a public URL, and no open door (a non-loopback
 * address with no token). `tokens` is left open for the caller.
 */
async function checkStart(options: ServeHttpOptions, deps: Pick<ServeHttpDeps, 'dbPath' | 'logger'>, tokens: TokenStore): Promise<Checked> {
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65_535) {
    throw new MemoryError(
      ERROR_CODES.CONFIG_INVALID,
      `--port ${options.port} is not a port: give a number from 1 to 65535 (0 picks a free one).`,
    );
  }
  const publicUrl = options.publicUrl === undefined ? undefined : publicOrigin(options.publicUrl);
  // What the OAuth server is told (HttpServerOptions.oauth, an OAuthOptions).
  const oauth: OAuthOptions = { publicUrl, clientHosts: clientHostNames(options.oauthClientHosts ?? []) };
  const count = await tokens.count();
  if (count === 0 && !isLoopback(options.host)) {
    throw new MemoryError(
      ERROR_CODES.CONFIG_INVALID,
      `Refusing to listen on ${options.host} with no token configured: a server reachable from the network must admit clients by token. ` +
        `Make one first with "limbic token create --namespace default" (it prints the token once), or serve on 127.0.0.1 ` +
        `(a tunnel or a reverse proxy on this machine reaches it there; with --public-url, OAuth clients are then approved with "limbic auth code").`,
    );
  }
  return { oauth, count };
}

/** checkStart with the tokens opened here: closed again on a refusal. */
async function checkedTokens(
  options: ServeHttpOptions,
  deps: Pick<ServeHttpDeps, 'dbPath' | 'logger' | 'openTokens'>,
): Promise<Checked & { tokens: TokenStore }> {
  const tokens = deps.openTokens(tokenFilePath(deps.dbPath));
  try {
    return { ...(await checkStart(options, deps, tokens)), tokens };
  } catch (error) {
    await tokens.close().catch(() => undefined);
    throw error;
  }
}

/** The lines a start logs once (by the primary when there are workers): where it answers, and how clients reach it. */
function announce(logger: Logger, options: ServeHttpOptions, dbPath: string, url: string, checked: Checked, workers?: number): void {
  const { oauth, count } = checked;
  if (count === 0) {
    logger.warn(
      `no bearer token exists yet (${redactPassword(tokenFilePath(dbPath))}): a client needs an OAuth approval ("limbic auth code") or a token ("limbic token create --namespace default"); until then every request to /mcp gets 401.`,
    );
  }
  logger.info(
    `serving MCP over HTTP at ${url}/mcp and the page at ${url}/ (${workers === undefined ? '' : `${plural(workers, 'worker process', 'worker processes')}; `}${plural(count, 'token')}; database ${redactPassword(dbPath)})`,
  );
  // A wildcard address listens everywhere, but answers only to the names it knows (DNS-rebinding
  // protection): say which, so a client on the LAN is not left with a bare 403 (issue 25).
  const names = [...answeredHostNames({ host: options.host, allowedHosts: options.allowedHosts, oauth })].join(', ');
  const wildcard = options.host === '0.0.0.0' || options.host === '::';
  logger.info(
    `it answers requests whose Host is one of: ${names}${wildcard ? "; to reach it by this machine's LAN name or address, add each with --allowed-host NAME" : '; add others with --allowed-host NAME'}`,
  );
  // Where OAuth clients start (docs/oauth.md): the issuer is the public URL, else the address a client used.
  const base = oauth.publicUrl ?? url;
  logger.info(
    `OAuth: clients discover it at ${base}/.well-known/oauth-protected-resource/mcp` +
      `${oauth.publicUrl === undefined ? ' (issuer: the address each client uses; behind a tunnel or proxy, set --public-url)' : ` (issuer ${oauth.publicUrl})`}; ` +
      `approve one by typing a code from "limbic auth code [--namespace NAME] [--read-only]" into the consent page it opens` +
      `${oauth.clientHosts.length === 0 ? '' : `; client metadata documents may be fetched from private addresses of: ${oauth.clientHosts.join(', ')}`}`,
  );
  if (oauth.publicUrl?.startsWith('http:') === true && !isLoopback(new URL(oauth.publicUrl).hostname)) {
    logger.warn(
      `the public URL ${oauth.publicUrl} is plain http: approval codes and tokens cross the network readable; serve it over https (a tunnel or a reverse proxy with TLS)`,
    );
  }
}

/**
 * Starts one process's server. `worker`: this process is one of `--workers N` (its gates and change
 * relay are the primary's, and the primary announces the start); undefined, it serves alone.
 */
export async function startServeHttp(
  options: ServeHttpOptions,
  deps: ServeHttpDeps,
  worker?: HttpServerOptions['worker'],
): Promise<{ server: RunningHttpServer; close: () => Promise<void> }> {
  const checked = await checkedTokens(options, deps);
  const { oauth, tokens } = checked;
  const registry = new NamespaceRegistry({
    dbPath: deps.dbPath,
    openStore: deps.openStore,
    embedder: deps.embedder,
    logger: deps.logger,
    autoTuneMinutes: deps.autoTuneMinutes,
    heavySlots: deps.heavySlots,
    inverseRelations: deps.inverseRelations,
    redactor: deps.redactor,
    searches: worker?.searches,
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
      worker,
    });
  } catch (error) {
    await registry.close();
    await tokens.close();
    const code = (error as { code?: string }).code;
    if (code === 'EADDRINUSE')
      throw new MemoryError(ERROR_CODES.CONFIG_INVALID, `Port ${options.port} on ${options.host} is in use: pick another with --port.`);
    throw error;
  }
  if (worker === undefined) announce(deps.logger, options, deps.dbPath, server.url, checked);
  return {
    server,
    close: async () => {
      await server.close();
      await tokens.close();
    },
  };
}

/** ServeHttpDeps with the embedder made on demand: a primary of `--workers N` loads no model. */
export type ServeDeps = Omit<ServeHttpDeps, 'embedder'> & {
  /** The process's embedder, its model worker on `threads` threads (modelThreads). */
  readonly embedder: (threads: number) => LazyEmbedder;
};

/** Runs `stop` once, on SIGINT or SIGTERM, and ends the process with its outcome. */
function stopOnSignal(logger: Logger, stop: () => Promise<void>, message?: string): () => void {
  let stopping = false;
  const once = (): void => {
    if (stopping) return;
    stopping = true;
    if (message !== undefined) logger.info(message);
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.warn('shutdown failed', error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', once);
  process.on('SIGTERM', once);
  return once;
}

/**
 * Runs until SIGINT/SIGTERM, then stops gracefully (requests under way finish first). With
 * `workers` over 1 this process is the primary of that many workers (cluster-primary.ts), each of
 * which runs this same command and lands in serveHttpWorker.
 */
export async function serveHttp(options: ServeHttpOptions, deps: ServeDeps): Promise<void> {
  const workers = options.workers ?? 1;
  if (cluster.isWorker) return serveHttpWorker(options, deps, workers);
  if (workers > 1) return serveHttpPrimary(options, deps, workers);
  const { close } = await startServeHttp(options, { ...deps, embedder: deps.embedder(modelThreads(1)) });
  stopOnSignal(deps.logger, close, 'stopping: finishing the requests under way');
}

/**
 * The primary: checks what a start checks (once, so a refusal is said once), forks the workers,
 * announces the server when every one accepts requests, and on SIGINT/SIGTERM drains them all.
 */
async function serveHttpPrimary(options: ServeHttpOptions, deps: ServeDeps, workers: number): Promise<void> {
  const { tokens, ...checked } = await checkedTokens(options, deps);
  await tokens.close();
  // Rejects with the first worker's reason when one cannot start (the port in use, most often).
  const primary = await startPrimary({ workers, limits: { ...DEFAULT_LIMITS, ...options.limits }, logger: deps.logger });
  announce(deps.logger, options, deps.dbPath, primary.url, checked, workers);
  deps.logger.info(`worker processes: pids ${primary.pids().join(', ')}`);
  stopOnSignal(deps.logger, () => primary.stop(), `stopping: the ${workers} workers finish the requests under way`);
}

/**
 * A worker: the whole one-process server, quiet at start (the primary announces it), its request
 * places and change notifications shared through the primary. It drains on SIGINT/SIGTERM, and
 * exits when its channel to the primary closes (the primary was killed): never an orphan.
 */
async function serveHttpWorker(options: ServeHttpOptions, deps: ServeDeps, workers: number): Promise<void> {
  const id = cluster.worker?.id ?? 0;
  const logger: Logger = {
    info: (message) => deps.logger.info(`worker ${id}: ${message}`),
    warn: (message, error) => deps.logger.warn(`worker ${id}: ${message}`, error),
  };
  const link = new WorkerLink(processChannel());
  let started: Awaited<ReturnType<typeof startServeHttp>>;
  try {
    started = await startServeHttp(
      options,
      { ...deps, logger, embedder: deps.embedder(modelThreads(workers)) },
      { id, gates: link.gates, relay: link.relay, searches: link.searches, wrongCodes: link.wrongCodes },
    );
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const code = (error as { code?: unknown }).code;
    // The primary says it once for all; this process ends when the message is sent.
    process.send?.({ t: 'failed', message, ...(typeof code === 'string' ? { code } : {}) }, () => process.exit(1));
    return;
  }
  stopOnSignal(logger, started.close);
  // node:cluster ends a worker at once when its channel to the primary closes (the primary was
  // killed: its listening socket is gone too), so requests still under way here are cut off; each
  // write is one transaction, committed whole or not at all.
  process.prependOnceListener('disconnect', () => logger.warn('the primary process is gone: exiting now'));
  link.send({ t: 'listening', url: started.server.url });
}
