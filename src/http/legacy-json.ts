/**
 * 2025-era MCP over HTTP, stateless: each request is served by a server instance over a fresh
 * transport with no session id, answered as one JSON body, and the transport then torn down. It is
 * the SDK's stateless legacy serving (createMcpHandler's default), with two differences:
 *
 * - An answer is one JSON body instead of an SSE stream opened and closed per call, since no tool
 *   sends anything before its answer, and under load the stream's headers, flushes and extra writes
 *   were a visible share of this thread's time (bench/results/http-load-2026-11-23.md). One JSON
 *   body is also what the answer bound (http-server.ts) measures.
 * - Instances are kept and used again (issue 38): building one (its tools, schemas and prompts) cost
 *   about 1 ms of this thread per request, more than a light call's own work. An instance serves one
 *   request at a time, over that request's transport, and goes back to its pool once the transport is
 *   closed. Only a single request other than `initialize` is served by a kept instance: `initialize`
 *   is what gives an instance state (the client's protocol version and capabilities), so it, a batch
 *   and a notification get an instance of their own, dropped after the answer as before. Every
 *   request is still authorised by its caller (http-server.ts) and carries its own AuthInfo to the
 *   tools; the pool key (the caller's kind: its namespace's handler holds one pool per key) decides
 *   which instances a request may be given, so a read-only caller never gets a writer's instance.
 *
 * Without a session there is no standing GET stream: GET and DELETE answer 405, which 2025-era
 * clients take as "this server has no notification stream" and carry on.
 */
import {
  McpServer,
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  type McpHandlerRequestOptions,
  type McpServerFactory,
  type Server,
} from '@modelcontextprotocol/server';
import { requestIdOf } from '../mcp/jsonrpc-screen.js';

type Instance = McpServer | Server;
const connected = (instance: Instance): boolean => (instance instanceof McpServer ? instance.server : instance).transport !== undefined;

/** Idle instances kept per pool key: enough for the requests a namespace runs at once (request-gate.ts). */
const MAX_IDLE_PER_KEY = 32;

export interface LegacyJsonOptions {
  /**
   * Which kept instances may serve a request of this caller: instances built for one key serve only
   * requests of that key. Undefined: the request gets an instance of its own (the factory decides).
   * @default every request gets an instance of its own
   */
  readonly poolKey?: (authInfo: AuthInfo | undefined) => string | undefined;
}

/** A single JSON-RPC request other than `initialize`: what a kept instance may serve without taking state from it. */
const statelessRequest = (body: unknown): boolean =>
  requestIdOf(body) !== undefined && (body as { method: string }).method !== 'initialize';

/** Serves one 2025-era request (already classified as such) from `factory`. */
export function legacyJsonHandler(
  factory: McpServerFactory,
  options: LegacyJsonOptions = {},
): (request: Request, options?: McpHandlerRequestOptions) => Promise<Response> {
  const idle = new Map<string, Instance[]>();
  const build = async (authInfo: AuthInfo | undefined, request: Request): Promise<Instance> =>
    factory({ era: 'legacy', ...(authInfo === undefined ? {} : { authInfo }), requestInfo: request });

  return async (request, handlerOptions) => {
    if (request.method.toUpperCase() !== 'POST') {
      return Response.json(
        {
          jsonrpc: '2.0',
          id: null,
          error: {
            code: -32000,
            message: 'Method not allowed: this server keeps no sessions, so it has no GET stream and nothing to DELETE.',
          },
        },
        { status: 405, headers: { allow: 'POST' } },
      );
    }
    const authInfo = handlerOptions?.authInfo;
    const parsedBody = handlerOptions?.parsedBody;
    const key = parsedBody !== undefined && statelessRequest(parsedBody) ? options.poolKey?.(authInfo) : undefined;
    const kept = key === undefined ? undefined : idle.get(key)?.pop();
    const server = kept ?? (await build(authInfo, request));
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    let reusable = false;
    try {
      await server.connect(transport);
      const response = await transport.handleRequest(request, {
        ...(authInfo === undefined ? {} : { authInfo }),
        ...(parsedBody === undefined ? {} : { parsedBody }),
      });
      reusable = key !== undefined;
      return response;
    } finally {
      // The answer is whole in the Response (JSON, not a stream): nothing of the pair is needed after it.
      await transport.close().catch(() => undefined);
      // Closing the transport disconnects the instance (the SDK clears it), which may then serve again.
      if (reusable && !connected(server)) {
        const pool = idle.get(key!) ?? idle.set(key!, []).get(key!)!;
        if (pool.length < MAX_IDLE_PER_KEY) pool.push(server);
      } else await server.close().catch(() => undefined);
    }
  };
}
