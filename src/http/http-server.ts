/**
 * `limbic serve --http`: MCP over Streamable HTTP, many clients at once on one process, and the
 * web page with its JSON reads. Stateless (issue 28): every request carries its own bearer token,
 * checked against the token store each time, and is served by a server instance for its token's
 * namespace (the reading tools only for a read-only token): built for a 2026-07-28 request, taken
 * from the namespace's kept instances of that kind for a 2025-era one (legacy-json.ts). No session
 * or caller state is kept between requests, so there is no session to hijack or to bound, and several
 * processes behind a plain load balancer (one PostgreSQL database) answer any request alike.
 *
 * Both protocol generations on one endpoint: a 2026-07-28 request (it carries the per-request
 * `_meta` envelope) goes to the SDK's handler, one per namespace, which also holds that namespace's
 * subscriptions/listen streams; a 2025-era request goes to a stateless 2025 transport
 * (legacy-json.ts). 2025-era clients get no change notifications over HTTP: without a session there
 * is no GET stream to send them on (docs/http.md).
 *
 * Shutdown stops taking connections, lets the requests under way finish (so a write in flight is
 * committed and answered), then closes the listen streams and memories. Requests still arriving on
 * open connections meanwhile are served (each answer closes its connection), up to HttpLimits.drainMs.
 *
 * No token can take what the others need (issue 26): requests in flight are bounded per token, per
 * namespace and in all, with a short fair queue (request-gate.ts).
 *
 * It is also its own OAuth 2.1 authorization server (issue 36, src/http/oauth/): discovery
 * documents, /register, /authorize with its consent page, /token, /revoke. An OAuth access token
 * is served like a bearer token: its grant's id counts in the request gate and the listen streams,
 * its grant's namespace and read-only flag decide the request's server.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler, type NodeMcpRequestHandler } from '@modelcontextprotocol/node';
import {
  createMcpHandler,
  isJSONRPCRequest,
  isLegacyRequest,
  type AuthInfo,
  type JSONRPCMessage,
  type McpHandlerRequestOptions,
  type McpHttpHandler,
  type McpRequestContext,
} from '@modelcontextprotocol/server';
import { isMemoryError } from '../core/errors.js';
import type { ToolProfile } from '../core/config.js';
import type { Logger } from '../core/logger.js';
import {
  INVALID_REQUEST,
  PARSE_ERROR,
  nestedDeeperThan,
  refuse,
  refuseTooDeep,
  requestIdFromEnds,
  requestIdOf,
  screenMessage,
  type Refusal,
} from '../mcp/jsonrpc-screen.js';
import { createMcpServer, type ServerInfo } from '../mcp/server.js';
import type { TokenRecord, TokenStore } from '../store/token-store.js';
import { BodyTooLarge, allowedHostNames, authorize, readBody, rebindingRefusal, sendJson, sendRpcError } from './guard.js';
import { legacyJsonHandler } from './legacy-json.js';
import { ListenStreams, type ChangeRelay } from './listen-streams.js';
import type { NamespaceRegistry, SearchRelay } from './namespaces.js';
import { withPublicStatistics } from './public-stats.js';
import { readOnlyGate, readOnlyService } from './read-only.js';
import { RequestGate, heavyBounds, type Gate, type RequestBounds } from './request-gate.js';
import { serveApi, serveStatic } from './web-api.js';
import { OAuthServer } from './oauth/oauth-server.js';
import type { OAuthOptions } from './oauth/options.js';
import type { WrongCodeBound } from './oauth/rate-limit.js';

export interface HttpLimits extends RequestBounds {
  /** Bytes of one request body; larger → 413. */
  readonly maxBodyBytes: number;
  /** Bytes of one JSON-RPC answer; larger → a JSON-RPC error saying how to ask for less. */
  readonly maxAnswerBytes: number;
  /** How long shutdown waits for requests under way. */
  readonly drainMs: number;
  /** Heavy calls (heavyCall) running at once, all tokens together; each also holds a request place. */
  readonly maxHeavyInFlight: number;
  /** Heavy calls running at once for one token. */
  readonly maxHeavyInFlightPerToken: number;
  /** subscriptions/listen streams open at once on one namespace (all its tokens together). */
  readonly maxStreamsPerNamespace: number;
  /** subscriptions/listen streams open at once for one token: a share well below the namespace's. */
  readonly maxStreamsPerToken: number;
  /** How often the tokens of open listen streams are checked against the store (a revoked token's close), in ms. */
  readonly streamRecheckMs: number;
}

export interface HttpServerOptions {
  readonly host: string;
  readonly port: number;
  /** Host names besides loopback and the bound host that requests may name (Host, Origin). */
  readonly allowedHosts: readonly string[];
  readonly registry: NamespaceRegistry;
  readonly tokens: TokenStore;
  readonly info: ServerInfo;
  readonly logger: Logger;
  readonly limits: HttpLimits;
  /** Which tools each request's server lists and answers (Config.tools). @default 'all' */
  readonly tools?: ToolProfile | undefined;
  /**
   * The authorization server's settings (--public-url, --oauth-client-host). It always runs: a grant
   * needs a code from `limbic auth code` (or a bearer token) typed at its consent page.
   * @default { publicUrl: undefined, clientHosts: [] }
   */
  readonly oauth?: OAuthOptions | undefined;
  /**
   * One worker of `serve --http --workers N` (cluster-worker.ts): its requests take their places
   * in the primary's gates, its writes reach the listen streams of the other workers and theirs its
   * own, and every answer names it (`x-limbic-worker`). Undefined: one process, its own gates.
   */
  readonly worker?: HttpWorker | undefined;
}

/** What a worker of `serve --http --workers N` shares through its primary (cluster-worker.ts WorkerLink). */
export interface HttpWorker {
  readonly id: number;
  readonly gates: { readonly requests: Gate; readonly heavy: Gate };
  readonly relay: ChangeRelay;
  /** Re-finding's searches, heard by every worker's rings (the registry's; namespaces.ts SearchRelay). */
  readonly searches?: SearchRelay | undefined;
  readonly wrongCodes: WrongCodeBound;
}

export interface RunningHttpServer {
  readonly url: string;
  readonly port: number;
  /** Requests received and not yet answered, waiting ones included (subscriptions/listen streams not counted). */
  inFlightCount(): number;
  /** Requests waiting for a place (request-gate.ts). */
  queuedCount(): number;
  /** subscriptions/listen streams open now: of one token, or in all (listen-streams.ts). */
  streamCount(tokenId?: string): number;
  /** Graceful: finishes requests under way, then closes listen streams and memories. */
  close(): Promise<void>;
}

/** What a request's instance is built for, passed through the SDK as its AuthInfo. */
interface Caller {
  readonly namespace: string;
  readonly readOnly: boolean;
}

const callerOf = (authInfo: AuthInfo | undefined): Caller | undefined => {
  const extra = authInfo?.extra;
  return typeof extra?.namespace === 'string' ? { namespace: extra.namespace, readOnly: extra.readOnly === true } : undefined;
};

/** The AuthInfo of a verified token: its id, never the bearer, and what it may do. */
const authInfoOf = (token: TokenRecord): AuthInfo => ({
  token: token.id,
  clientId: token.id,
  scopes: token.readOnly ? ['memory:read'] : ['memory:read', 'memory:write'],
  extra: { namespace: token.namespace, readOnly: token.readOnly },
});

/**
 * Why a parsed body is not JSON-RPC the transport would answer with the request's id, as the
 * answer to send: one error, or for a batch one per message with an id (the well-formed requests
 * of a batch holding a malformed one are not run either, and say so).
 */
function screenBody(body: unknown): Refusal | Refusal[] | undefined {
  if (!Array.isArray(body)) return screenMessage(body);
  if (body.length === 0) return refuse(null, INVALID_REQUEST, 'an empty batch holds no message');
  const refusals = body.map((m) => screenMessage(m));
  if (refusals.every((r) => r === undefined)) return undefined;
  return body.flatMap((m, i) => {
    const refusal = refusals[i];
    if (refusal !== undefined) return [refusal];
    const message = m as JSONRPCMessage;
    return isJSONRPCRequest(message)
      ? [refuse(message.id, INVALID_REQUEST, 'another message in this batch is malformed, so none was run')]
      : [];
  });
}

/** Tools whose answer can hold the whole graph or many entities (up to a 1,000-entity page). */
const HEAVY_TOOLS = new Set(['read_graph', 'search_nodes', 'open_nodes', 'hybrid_search', 'search_semantic']);

/**
 * Whether a parsed body asks for heavy work (a large read or a search, or the graph resource):
 * such a call holds the event loop tens of milliseconds at a time, so few run at once, one per
 * token, and a flood of them leaves the light calls of others their turns (issue 35).
 */
function heavyCall(body: unknown): boolean {
  if (Array.isArray(body)) return body.some(heavyCall);
  if (typeof body !== 'object' || body === null) return false;
  const { method, params } = body as { method?: unknown; params?: { name?: unknown } };
  return method === 'resources/read' || (method === 'tools/call' && HEAVY_TOOLS.has(String(params?.name)));
}

/**
 * `response` when its JSON body is within `maxBytes`; otherwise an error with the answer's id that
 * says how to ask for less, so no client receives a reply it would choke on. SSE (the listen
 * streams) passes as it is. Measuring costs reading the body once more.
 */
async function withinAnswerBound(response: Response, maxBytes: number): Promise<Response> {
  if (response.body === null || !(response.headers.get('content-type') ?? '').startsWith('application/json')) return response;
  const { text, headers } = await boundedAnswer(response, maxBytes);
  return new Response(text, { status: response.status, statusText: response.statusText, headers });
}

/**
 * A JSON answer's text within `maxBytes`, or the error that replaces it, and the headers to send it
 * with (without the answer's content-length, which no longer holds once it is replaced).
 */
async function boundedAnswer(response: Response, maxBytes: number): Promise<{ text: string; headers: Headers }> {
  const text = await response.text();
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  const bytes = Buffer.byteLength(text);
  if (bytes <= maxBytes) return { text, headers };
  const answer = JSON.parse(text) as unknown;
  const id = typeof answer === 'object' && answer !== null && 'id' in answer ? (answer as { id: unknown }).id : null;
  const message = `The answer is ${bytes} bytes, over this server's limit of ${maxBytes} bytes, and was not sent (a write in it was still made). Ask for less: read_graph and search_nodes take limit/offset, searches take limit.`;
  return { text: JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message } }), headers };
}

/**
 * The web Request of a POST whose body is already parsed (and passed on parsed): its URL, headers
 * and an abort signal for the client leaving, without the body, which the SDK's Node adapter
 * (toWebRequest) would serialise again only for nothing to read it.
 */
function bodylessRequest(req: IncomingMessage, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(':') || name === 'content-length' || name === 'transfer-encoding') continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  return new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, { method: 'POST', headers, signal });
}

/** A request target without its query string or fragment: what a log line may show. */
export function pathOf(target: string | undefined): string {
  const text = target ?? '';
  const query = text.indexOf('?');
  const fragment = text.indexOf('#');
  const end = Math.min(query === -1 ? text.length : query, fragment === -1 ? text.length : fragment);
  return text.slice(0, end);
}

/**
 * The host names requests may name (Host, Origin): loopback, the bound host, --allowed-host, and the
 * public URL's host, since clients reach a server behind a proxy or tunnel by its public name.
 */
export function answeredHostNames(o: Pick<HttpServerOptions, 'host' | 'allowedHosts' | 'oauth'>): Set<string> {
  const publicUrl = o.oauth?.publicUrl;
  return allowedHostNames(o.host, publicUrl === undefined ? o.allowedHosts : [...o.allowedHosts, new URL(publicUrl).hostname]);
}

export async function startHttpServer(o: HttpServerOptions): Promise<RunningHttpServer> {
  const oauthOptions: OAuthOptions = o.oauth ?? { publicUrl: undefined, clientHosts: [] };
  const allowed = answeredHostNames(o);
  const oauth = new OAuthServer({ options: oauthOptions, tokens: o.tokens, logger: o.logger, wrongCodes: o.worker?.wrongCodes });
  const gate: Gate = o.worker?.gates.requests ?? new RequestGate(o.limits);
  const heavyGate: Gate = o.worker?.gates.heavy ?? new RequestGate(heavyBounds(o.limits));
  const streams = new ListenStreams({
    maxPerToken: o.limits.maxStreamsPerToken,
    recheckMs: o.limits.streamRecheckMs,
    tokens: o.tokens,
    logger: o.logger,
  });
  let inFlight = 0;
  let drained: (() => void) | undefined;
  let closing = false;

  /** One SDK handler per namespace, made on its first MCP request: its listen streams hear only of its own writes. */
  const handlers = new Map<
    string,
    { readonly handler: McpHttpHandler; readonly node: NodeMcpRequestHandler; readonly announce: (uri: string) => void }
  >();
  const mcpOf = (namespace: string): NodeMcpRequestHandler => {
    const made = handlers.get(namespace);
    if (made !== undefined) return made.node;
    // Runs per 2026-07-28 request and per 2025-era instance made: cheap, over the namespace's one
    // service (opened once by the registry).
    const factory = ({ era, authInfo }: McpRequestContext) => {
      const caller = callerOf(authInfo);
      if (caller?.namespace !== namespace) throw new Error('an MCP request reached the handler of another namespace');
      const base = o.registry.service(namespace);
      const service = withPublicStatistics(caller.readOnly ? readOnlyService(base, namespace) : base);
      return createMcpServer(service, o.info, o.logger, {
        era,
        // A write by a client of either generation reaches the 2026-07-28 clients listening on this
        // namespace, once the streams of revoked tokens are closed (listen-streams.ts).
        changes: {
          publish: (uri) => {
            announce(uri);
            o.worker?.relay.publish(namespace, uri);
          },
        },
        toolGate: caller.readOnly ? readOnlyGate(namespace) : undefined,
        tools: o.tools,
      });
    };
    const onerror = (error: Error): void => o.logger.warn('MCP request failed', error);
    const announce = (uri: string): void => void streams.recheck().then(() => handler.notify.resourceUpdated(uri));
    const handler = createMcpHandler(factory, {
      legacy: 'reject',
      maxRequestBodySize: o.limits.maxBodyBytes,
      maxSubscriptions: o.limits.maxStreamsPerNamespace,
      onerror,
    });
    // 2025-era requests reuse instances (legacy-json.ts), one pool per kind of caller: a read-only
    // token's request is only ever given an instance built for a read-only caller of this namespace.
    const legacy = legacyJsonHandler(factory, {
      poolKey: (authInfo) => {
        const caller = callerOf(authInfo);
        return caller?.namespace === namespace ? (caller.readOnly ? 'read-only' : 'read-write') : undefined;
      },
    });
    const fetch = async (request: Request, options?: McpHandlerRequestOptions): Promise<Response> => {
      const isLegacy = await isLegacyRequest(request, options?.parsedBody, { maxRequestBodySize: o.limits.maxBodyBytes });
      const response = isLegacy ? await legacy(request, options) : await handler.fetch(request, options);
      return withinAnswerBound(response, o.limits.maxAnswerBytes);
    };
    const adapted = toNodeHandler({ fetch }, { maxRequestBodySize: o.limits.maxBodyBytes, onerror });
    /**
     * A 2025-era POST (its answer is always one JSON body, legacy-json.ts) is served here without the
     * SDK's Node adapter: the body goes on parsed, not serialised into a Request again, and the
     * answer's text, once measured against the bound, is written as it is instead of being wrapped in
     * a Response and streamed. Everything else (2026-07-28 requests, their listen streams) goes
     * through the adapter.
     */
    const node: NodeMcpRequestHandler = async (req, res, body) => {
      const incoming = req as IncomingMessage & { auth?: AuthInfo };
      const reply = res as ServerResponse;
      if (incoming.method !== 'POST' || body === undefined) return adapted(req, res, body);
      const left = new AbortController();
      let answered = false;
      reply.once('close', () => {
        if (!answered) left.abort();
      });
      const request = bodylessRequest(incoming, left.signal);
      if (!(await isLegacyRequest(request, body, { maxRequestBodySize: o.limits.maxBodyBytes }))) return adapted(req, res, body);
      let response: Response;
      try {
        response = await legacy(request, { ...(incoming.auth === undefined ? {} : { authInfo: incoming.auth }), parsedBody: body });
      } catch (error) {
        onerror(error instanceof Error ? error : new Error(String(error)));
        const id = requestIdOf(body) ?? null;
        response = Response.json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id }, { status: 500 });
      }
      const json = response.body !== null && (response.headers.get('content-type') ?? '').startsWith('application/json');
      const { text, headers } = json
        ? await boundedAnswer(response, o.limits.maxAnswerBytes)
        : { text: undefined, headers: response.headers };
      answered = true;
      if (reply.destroyed) return;
      const head: Record<string, string> = {};
      for (const [name, value] of headers) head[name] = value;
      if (text !== undefined) head['content-length'] = String(Buffer.byteLength(text));
      reply.writeHead(response.status, head);
      reply.end(text ?? (await response.text()));
    };
    handlers.set(namespace, { handler, node, announce });
    return node;
  };
  // Another worker's write: announced here only where this worker holds that namespace's handler (its listen streams).
  o.worker?.relay.subscribe((namespace, uri) => handlers.get(namespace)?.announce(uri));

  /**
   * `stream()` is called when the request turns out to be a subscriptions/listen stream: it lasts
   * until the client leaves and only waits for changes, so it gives back its request place and is
   * not counted in flight; such streams are bounded per namespace by the handler (maxSubscriptions)
   * and per token here (listen-streams.ts), and closed when their token is revoked.
   */
  const handleMcp = async (token: TokenRecord, req: IncomingMessage, res: ServerResponse, stream: () => void): Promise<void> => {
    let body: unknown;
    if (req.method === 'POST') {
      let raw: Buffer;
      try {
        raw = await readBody(req, o.limits.maxBodyBytes);
      } catch (error) {
        if (error instanceof BodyTooLarge) {
          sendRpcError(res, 413, error.message, { connection: 'close' });
          req.resume();
          return;
        }
        throw error;
      }
      // Before anything parses or walks it: the SDK's adapter serialises the body again, recursively.
      if (nestedDeeperThan(raw)) {
        sendJson(res, 400, refuseTooDeep(raw));
        return;
      }
      const text = raw.toString('utf8');
      try {
        body = JSON.parse(text);
      } catch (error) {
        const why = `the body is not JSON (${error instanceof Error ? error.message : String(error)})`;
        const found = requestIdFromEnds(text.slice(0, 256), text.slice(-256)) ?? null;
        sendJson(res, 400, refuse(found, PARSE_ERROR, why));
        return;
      }
      const refusal = screenBody(body);
      if (refusal !== undefined) {
        sendJson(res, 400, refusal);
        return;
      }
      if (isJSONRPCRequest(body as JSONRPCMessage) && (body as { method: string }).method === 'subscriptions/listen') {
        const full = streams.open(token.id, res);
        if (full !== undefined) {
          sendRpcError(res, 429, full, { 'retry-after': '5' }, (body as { id: string | number }).id);
          return;
        }
        stream();
      }
    }
    if (heavyCall(body)) {
      const left = new AbortController();
      res.once('close', () => left.abort());
      const place = await heavyGate.acquire(token.id, token.namespace, left.signal);
      if (!place.ok) {
        if (!res.destroyed) sendRpcError(res, place.status, place.message, { 'retry-after': String(place.retryAfterSeconds) });
        return;
      }
      res.once('close', place.release);
    }
    // The SDK reads the verified token from here (toNodeHandler passes it on as the request's AuthInfo).
    Object.assign(req, { auth: authInfoOf(token) });
    await mcpOf(token.namespace)(req, res, body);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, stream: () => void): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://limbic.invalid');
    if (o.worker !== undefined) res.setHeader('x-limbic-worker', String(o.worker.id));
    const refusal = rebindingRefusal(req, allowed, !oauth.isCorsPath(url.pathname));
    if (refusal !== undefined) {
      sendRpcError(res, 403, refusal);
      return;
    }
    if (req.method === 'GET' && serveStatic(url.pathname, res)) return;
    // While draining, requests already on an open connection are still served (a client may have
    // sent them before the stop), each answer closing its connection.
    if (closing) res.setHeader('connection', 'close');
    if (await oauth.route(req, res, url)) return;
    const isMcp = url.pathname === '/mcp';
    const isApi = url.pathname.startsWith('/api/');
    if (!isMcp && !isApi) {
      sendJson(res, 404, {
        error: `Nothing at ${url.pathname}: MCP is at /mcp, the page at /, OAuth discovery at /.well-known/oauth-protected-resource/mcp.`,
      });
      return;
    }
    // Every request shows its token (or an OAuth access token), checked against the store each
    // time: a token or grant revoked by this process or another on the same database is refused
    // from its next request on.
    const auth = await authorize(req, o.tokens, oauth);
    if (!auth.ok) {
      sendRpcError(res, auth.status, auth.message, { 'www-authenticate': auth.challenge });
      return;
    }
    // Every request takes a place (request-gate.ts) before its body is read; a subscriptions/listen
    // stream gives its place back once it is acknowledged (below), as it only waits for changes.
    let gone = false;
    const abandoned = new AbortController();
    res.once('close', () => {
      gone = true;
      abandoned.abort();
    });
    const admission = await gate.acquire(auth.token.id, auth.token.namespace, abandoned.signal);
    if (!admission.ok) {
      if (!gone) sendRpcError(res, admission.status, admission.message, { 'retry-after': String(admission.retryAfterSeconds) });
      req.resume();
      return;
    }
    if (gone) {
      admission.release();
      return;
    }
    res.once('close', admission.release);
    if (isMcp) {
      await handleMcp(auth.token, req, res, () => {
        admission.release();
        stream();
      });
      return;
    }
    if (req.method !== 'GET' || !(await serveApi(url, o.registry.service(auth.token.namespace), auth.token, res))) {
      sendJson(res, 404, {
        error: `No ${req.method ?? ''} ${url.pathname}: the page reads /api/session, /api/search, /api/entity and /api/stats.`,
      });
    }
  };

  const http = createServer((req, res) => {
    inFlight++;
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      inFlight--;
      if (inFlight === 0) drained?.();
    };
    res.on('close', finish);
    handle(req, res, finish).catch((error: unknown) => {
      // Messages never include headers, and the line shows the path alone, so neither a token nor
      // search text a client put in the query string (GET /api/search?q=…) reaches the log.
      if (!isMemoryError(error)) o.logger.warn(`${req.method ?? ''} ${pathOf(req.url)} failed`, error);
      if (!res.headersSent)
        sendRpcError(
          res,
          500,
          `Internal error: ${error instanceof Error ? error.message : String(error)}. Nothing was changed unless the answer said so; please report it if it repeats.`,
        );
      else res.end();
    });
  });
  http.requestTimeout = 120_000;
  http.headersTimeout = 30_000;
  // Longer than clients keep idle connections (undici: 4 s, or the server's hint less 1 s), so a
  // client never reuses a socket the server is closing at that moment (ECONNRESET under load).
  http.keepAliveTimeout = 65_000;

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(o.port, o.host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const port = (http.address() as AddressInfo).port;
  const shownHost = o.host.includes(':') ? `[${o.host}]` : o.host;

  return {
    url: `http://${shownHost}:${port}`,
    port,
    inFlightCount: () => inFlight,
    queuedCount: () => gate.queued(),
    streamCount: (tokenId) => streams.count(tokenId),
    async close() {
      if (closing) return;
      closing = true;
      streams.stop();
      oauth.close();
      http.close(); // no new connections; the callback would wait for listen streams, so it is not awaited
      http.closeIdleConnections();
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          drained = resolve;
          setTimeout(resolve, o.limits.drainMs).unref();
        });
      }
      await Promise.all([...handlers.values()].map(({ handler }) => handler.close().catch(() => undefined)));
      http.closeAllConnections();
      await o.registry.close();
    },
  };
}
