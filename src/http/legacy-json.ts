/**
 * 2025-era MCP over HTTP, stateless: each request is served by a fresh server instance over a
 * fresh transport with no session id, answered as one JSON body and then torn down. It is the
 * SDK's stateless legacy serving (createMcpHandler's default), with one difference: an answer is
 * one JSON body instead of an SSE stream opened and closed per call, since no tool sends anything
 * before its answer, and under load the stream's headers, flushes and extra writes were a visible
 * share of this thread's time (bench/results/http-load-2026-11-23.md). One JSON body is also what
 * the answer bound (http-server.ts) measures.
 *
 * Without a session there is no standing GET stream: GET and DELETE answer 405, which 2025-era
 * clients take as "this server has no notification stream" and carry on.
 */
import {
  WebStandardStreamableHTTPServerTransport,
  type McpHandlerRequestOptions,
  type McpServerFactory,
} from '@modelcontextprotocol/server';

/** Serves one 2025-era request (already classified as such) from `factory`. */
export function legacyJsonHandler(factory: McpServerFactory): (request: Request, options?: McpHandlerRequestOptions) => Promise<Response> {
  return async (request, options) => {
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
    const authInfo = options?.authInfo;
    const server = await factory({ era: 'legacy', ...(authInfo === undefined ? {} : { authInfo }), requestInfo: request });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    try {
      await server.connect(transport);
      return await transport.handleRequest(request, {
        ...(authInfo === undefined ? {} : { authInfo }),
        ...(options?.parsedBody === undefined ? {} : { parsedBody: options.parsedBody }),
      });
    } finally {
      // The answer is whole in the Response (JSON, not a stream): nothing of the pair is needed after it.
      await transport.close().catch(() => undefined);
      await server.close().catch(() => undefined);
    }
  };
}
