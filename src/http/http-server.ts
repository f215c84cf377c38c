/**
 * `limbic serve --http`: MCP over the SDK's Streamable HTTP transport, many clients at once on one
 * process. Each MCP session gets its own McpServer and transport, bound at initialize to the token
 * that opened it (and so to one namespace); a later request on that session must carry the same
 * token. The same server answers the web page and its JSON reads. Shutdown stops taking requests,
 * lets the ones under way finish (so a write in flight is committed and answered), then closes
 * every session and memory. Requests still arriving on open connections meanwhile are served
 * (each answer closes its connection), up to HttpLimits.drainMs.
 *
 * No token can take what the others need (issue 26): sessions are bounded per token, per namespace
 * and in all (session-table.ts), requests in flight the same way with a short fair queue
 * (request-gate.ts), and a revoked token's sessions close as soon as the server learns of it.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, isJSONRPCRequest, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { isMemoryError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import {
  INVALID_REQUEST,
  PARSE_ERROR,
  refuse,
  requestIdFromEnds,
  screenMessage,
  usableId,
  type Refusal,
  type RequestId,
} from '../mcp/jsonrpc-screen.js';
import { createMcpServer, type ServerInfo } from '../mcp/server.js';
import type { TokenRecord, TokenStore } from '../store/token-store.js';
import { BodyTooLarge, allowedHostNames, authorize, readBody, rebindingRefusal, sendJson, sendRpcError } from './guard.js';
import type { NamespaceRegistry } from './namespaces.js';
import { withPublicStatistics } from './public-stats.js';
import { gateWritingTools, readOnlyService, readOnlyToolNames } from './read-only.js';
import { RequestGate, type RequestBounds } from './request-gate.js';
import { SessionTable, type SessionBounds, type SessionEntry } from './session-table.js';
import { bearerOf, hashToken } from './tokens.js';
import { serveApi, serveStatic } from './web-api.js';

export interface HttpLimits extends SessionBounds, RequestBounds {
  /** Bytes of one request body; larger → 413. */
  readonly maxBodyBytes: number;
  /** Bytes of one JSON-RPC answer; larger → a JSON-RPC error saying how to ask for less. */
  readonly maxAnswerBytes: number;
  /** A session unused this long is closed (its client re-initializes on its next call). */
  readonly sessionIdleMs: number;
  /** How long shutdown waits for requests under way. */
  readonly drainMs: number;
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
}

export interface RunningHttpServer {
  readonly url: string;
  readonly port: number;
  sessionCount(): number;
  /** Requests received and not yet answered, waiting ones included (SSE streams not counted). */
  inFlightCount(): number;
  /** Requests waiting for a place (request-gate.ts). */
  queuedCount(): number;
  /** Graceful: finishes requests under way, then closes sessions and memories. */
  close(): Promise<void>;
}

interface Session extends SessionEntry {
  readonly transport: StreamableHTTPServerTransport;
  /** Ids of the requests under way on it: the transport routes each answer by id alone. */
  readonly pending: Set<RequestId>;
}

/** The ids of the requests (not notifications or responses) in a screened body. */
const requestIds = (body: unknown): RequestId[] =>
  (Array.isArray(body) ? body : [body]).flatMap((m) => (isJSONRPCRequest(m as JSONRPCMessage) ? [(m as { id: RequestId }).id] : []));

/** Revoked tokens are looked for at most this often when room is needed, besides the periodic sweep. */
const REVOCATION_CHECK_MS = 1_000;

/** The id of a parsed request body, when it has a usable one. */
const idOf = (body: unknown): RequestId | null => {
  const id = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as { id?: unknown }).id : undefined;
  return usableId(id) ? id : null;
};

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

/** The JSON-RPC id of an answer, when `message` is one. */
const answerId = (message: JSONRPCMessage): string | number | undefined =>
  'id' in message && ('result' in message || 'error' in message) ? (message.id ?? undefined) : undefined;

export async function startHttpServer(o: HttpServerOptions): Promise<RunningHttpServer> {
  const allowed = allowedHostNames(o.host, o.allowedHosts);
  const sessions = new SessionTable<Session>(o.limits);
  const gate = new RequestGate(o.limits);
  let inFlight = 0;
  let drained: (() => void) | undefined;
  let closing = false;
  /** Which tools a read-only token may call; asked of the server once, on the first read-only session. */
  let readOnlyTools: Promise<ReadonlySet<string>> | undefined;

  /** Closes the sessions of tokens revoked meanwhile (by this process or another on the same database). */
  let checkedAt = 0;
  const closeRevoked = async (force = false): Promise<void> => {
    if (!force && Date.now() - checkedAt < REVOCATION_CHECK_MS) return;
    checkedAt = Date.now();
    const holders = sessions.holders();
    if (holders.size === 0) return;
    const valid = new Set((await o.tokens.list()).map((t) => t.id));
    const closed = sessions.closeTokens((id) => !valid.has(id));
    if (closed > 0) o.logger.info(`closed ${closed} MCP session${closed === 1 ? '' : 's'} of revoked tokens`);
  };

  const openSession = async (
    token: TokenRecord,
    tokenHash: string,
    place: { commit(session: Session): void },
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
  ): Promise<void> => {
    const base = o.registry.service(token.namespace);
    const service = withPublicStatistics(token.readOnly ? readOnlyService(base, token.namespace) : base);
    const server = createMcpServer(service, o.info, o.logger);
    let id: string | undefined;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      // Each answer as one JSON body, not an SSE stream opened and closed per call: no tool sends
      // anything before its answer, and under load the stream's headers, flushes and extra writes
      // were a visible share of this thread's time (bench/results/http-load-2026-11-23.md).
      enableJsonResponse: true,
      onsessioninitialized: (sessionId) => {
        id = sessionId;
        place.commit({
          id: sessionId,
          transport,
          close: () => server.close(),
          tokenId: token.id,
          tokenHash,
          namespace: token.namespace,
          lastUsed: Date.now(),
          busy: 0,
          pending: new Set(),
        });
      },
    });
    transport.onclose = () => {
      if (id !== undefined) sessions.forget(id);
    };
    // Answers over the limit become an error that says how to ask for less, so no client receives
    // a reply it would choke on. Measuring costs one more JSON.stringify per answer.
    const send = transport.send.bind(transport);
    transport.send = async (message, options) => {
      const rid = answerId(message);
      if (rid !== undefined) {
        const bytes = Buffer.byteLength(JSON.stringify(message));
        if (bytes > o.limits.maxAnswerBytes) {
          return send(
            {
              jsonrpc: '2.0',
              id: rid,
              error: {
                code: -32000,
                message: `The answer is ${bytes} bytes, over this server's limit of ${o.limits.maxAnswerBytes} bytes, and was not sent (a write in it was still made). Ask for less: read_graph and search_nodes take limit/offset, searches take limit.`,
              },
            },
            options,
          );
        }
      }
      return send(message, options);
    };
    await server.connect(transport);
    if (token.readOnly) {
      readOnlyTools ??= readOnlyToolNames(base, o.info, o.logger);
      gateWritingTools(transport, await readOnlyTools, token.namespace);
    }
    await transport.handleRequest(req, res, body);
  };

  const handleMcp = async (token: TokenRecord, tokenHash: string, req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const sessionId = req.headers['mcp-session-id'];
    const session = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (session !== undefined && session.tokenId === token.id) {
      session.lastUsed = Date.now();
      // Busy from now (before its body is read), so the session is not given up under it. A session
      // whose only open request is its SSE stream (GET) is idle: that stream waits for
      // notifications as long as the session lives.
      if (req.method !== 'GET') {
        session.busy++;
        res.once('close', () => {
          session.busy--;
          session.lastUsed = Date.now();
        });
      }
    }
    let body: unknown;
    let id: RequestId | null = null;
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
      id = idOf(body);
    }
    if (typeof sessionId === 'string') {
      if (session === undefined) {
        sendRpcError(res, 404, 'No such MCP session (it ended, idled out, or the server restarted). Initialize a new one.', {}, id);
        return;
      }
      if (session.tokenId !== token.id) {
        sendRpcError(res, 403, 'This MCP session was opened with another token; a session answers only the token that opened it.', {}, id);
        return;
      }
    }
    if (req.method === 'POST') {
      if (session !== undefined) {
        // A second request with the id of one under way would take over its answer, and the first
        // would never be answered (the client waits for its timeout): it is refused instead.
        const ids = requestIds(body);
        const reused = ids.find((rid, i) => session.pending.has(rid) || ids.indexOf(rid) !== i);
        if (reused !== undefined) {
          sendJson(
            res,
            400,
            refuse(
              reused,
              INVALID_REQUEST,
              `id ${JSON.stringify(reused)} is already used by a request under way on this session; give each request its own id`,
            ),
          );
          return;
        }
        for (const rid of ids) session.pending.add(rid);
        res.once('close', () => {
          for (const rid of ids) session.pending.delete(rid);
        });
        await session.transport.handleRequest(req, res, body);
        return;
      }
      if (closing) {
        sendRpcError(res, 503, 'The server is shutting down; retry against the next one.', { 'retry-after': '2' }, id);
        return;
      }
      if (!isInitializeRequest(body)) {
        sendRpcError(res, 400, 'No MCP session: send initialize first, then the session id it returns (header Mcp-Session-Id).', {}, id);
        return;
      }
      if (sessions.full(token.namespace)) {
        await closeRevoked().catch((error: unknown) => o.logger.warn('could not check the tokens for revoked ones', error));
      }
      const place = sessions.reserve(token.id, token.namespace);
      if ('status' in place) {
        sendRpcError(res, place.status, place.message, { 'retry-after': String(place.retryAfterSeconds) }, id);
        return;
      }
      try {
        await openSession(token, tokenHash, place, req, res, body);
      } finally {
        place.cancel(); // gives the place back when initialize opened no session
      }
      return;
    }
    if (session === undefined) {
      sendRpcError(res, 400, 'GET and DELETE need the Mcp-Session-Id header of an initialized session.');
      return;
    }
    await session.transport.handleRequest(req, res);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const refusal = rebindingRefusal(req, allowed);
    if (refusal !== undefined) {
      sendRpcError(res, 403, refusal);
      return;
    }
    const url = new URL(req.url ?? '/', 'http://limbic.invalid');
    if (req.method === 'GET' && serveStatic(url.pathname, res)) return;
    const isMcp = url.pathname === '/mcp';
    const isApi = url.pathname.startsWith('/api/');
    if (!isMcp && !isApi) {
      sendJson(res, 404, { error: `Nothing at ${url.pathname}: MCP is at /mcp, the page at /.` });
      return;
    }
    // While draining, requests already on an open connection are still served (a client may have
    // sent them before the stop), each answer closing its connection; new sessions are refused.
    if (closing) res.setHeader('connection', 'close');
    const auth = await authorize(req, o.tokens);
    const presented = bearerOf(req.headers.authorization);
    const tokenHash = presented === undefined ? '' : hashToken(presented);
    if (!auth.ok) {
      // A token that held sessions and no longer passes was revoked: what it held is freed now.
      const revoked = presented === undefined ? undefined : sessions.tokenOfHash(tokenHash);
      if (revoked !== undefined) {
        const closed = sessions.closeTokens((tokenId) => tokenId === revoked);
        o.logger.info(`token ${revoked} was revoked: closed its ${closed} MCP session${closed === 1 ? '' : 's'}`);
      }
      sendRpcError(res, auth.status, auth.message, { 'www-authenticate': auth.challenge });
      return;
    }
    // An SSE stream (GET /mcp) lasts as long as its session, which is bounded already; every other
    // request takes a place (request-gate.ts) before its body is read.
    if (!(isMcp && req.method === 'GET')) {
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
    }
    if (isMcp) {
      await handleMcp(auth.token, tokenHash, req, res);
      return;
    }
    if (req.method !== 'GET' || !(await serveApi(url, o.registry.service(auth.token.namespace), auth.token, res))) {
      sendJson(res, 404, {
        error: `No ${req.method ?? ''} ${url.pathname}: the page reads /api/session, /api/search, /api/entity and /api/stats.`,
      });
    }
  };

  const http = createServer((req, res) => {
    // An SSE stream (GET /mcp) stays open for the session's life: it is no write to wait for.
    const counted = !(req.method === 'GET' && req.url?.startsWith('/mcp') === true);
    if (counted) inFlight++;
    let done = false;
    const finish = (): void => {
      if (done || !counted) return;
      done = true;
      inFlight--;
      if (inFlight === 0) drained?.();
    };
    res.on('close', finish);
    handle(req, res).catch((error: unknown) => {
      // Messages never include headers, so a token cannot reach the log.
      if (!isMemoryError(error)) o.logger.warn(`${req.method ?? ''} ${req.url ?? ''} failed`, error);
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

  const sweeper = setInterval(
    () => {
      sessions.closeIdle(Date.now() - o.limits.sessionIdleMs);
      closeRevoked(true).catch((error: unknown) => o.logger.warn('could not check the tokens for revoked ones', error));
    },
    Math.min(60_000, o.limits.sessionIdleMs),
  ).unref();

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
    sessionCount: () => sessions.size,
    inFlightCount: () => inFlight,
    queuedCount: () => gate.queued(),
    async close() {
      if (closing) return;
      closing = true;
      clearInterval(sweeper);
      http.close(); // no new connections; the callback would wait for SSE streams, so it is not awaited
      http.closeIdleConnections();
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          drained = resolve;
          setTimeout(resolve, o.limits.drainMs).unref();
        });
      }
      await sessions.closeAll();
      http.closeAllConnections();
      await o.registry.close();
    },
  };
}
