/**
 * The floor of any call over stateless MCP HTTP, for `npm run bench:http`: a server that reads and
 * writes nothing. It answers each tool with an answer recorded from Limbic in the same run (same
 * text and structuredContent, so the same size), through the same stack as `limbic serve --http`'s
 * 2025-era leg: a node:http server, the v2 SDK's Node adapter (toNodeHandler), and per request a
 * fresh server over a stateless WebStandardStreamableHTTPServerTransport answering one JSON body
 * (as src/http/legacy-json.ts did before it kept its servers). What a call to it costs (HTTP, JSON,
 * the SDK, the client) every server on this stack pays for an answer of that size, so Limbic ÷
 * floor says what Limbic itself adds. No token is checked and no bound applies.
 *
 *   node --import tsx bench/latency/http-floor-server.ts <answers.json>
 *
 * answers.json maps a tool's name to the CallToolResult it answers. The server prints
 * "listening at http://127.0.0.1:PORT/mcp" on stderr.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { McpServer, WebStandardStreamableHTTPServerTransport, type CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';

const [file] = process.argv.slice(2);
if (file === undefined) throw new Error('usage: http-floor-server.ts <answers.json>');
const answers = JSON.parse(readFileSync(file, 'utf8')) as Record<string, CallToolResult>;

/** Any arguments in, any object out: the SDK still parses the input and checks the output against a schema. */
const anyInput = z.looseObject({});
const anyOutput = z.looseObject({});

function floorServer(): McpServer {
  const server = new McpServer({ name: 'http-floor', version: '1' });
  for (const [name, answer] of Object.entries(answers))
    server.registerTool(
      name,
      { inputSchema: anyInput, ...(answer.structuredContent === undefined ? {} : { outputSchema: anyOutput }) },
      // A copy each time, as a server builds its answer per call.
      () => ({ ...answer }),
    );
  return server;
}

const fetch = async (request: Request, options?: { parsedBody?: unknown }): Promise<Response> => {
  if (request.method.toUpperCase() !== 'POST') return new Response(null, { status: 405, headers: { allow: 'POST' } });
  const server = floorServer();
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  try {
    await server.connect(transport);
    return await transport.handleRequest(request, options?.parsedBody === undefined ? {} : { parsedBody: options.parsedBody });
  } finally {
    await transport.close().catch(() => undefined);
    await server.close().catch(() => undefined);
  }
};
const node = toNodeHandler({ fetch });

const http = createServer((req, res) => {
  if (new URL(req.url ?? '/', 'http://floor.invalid').pathname !== '/mcp') {
    res.writeHead(404).end();
    return;
  }
  node(req, res).catch(() => {
    if (!res.headersSent) res.writeHead(500);
    res.end();
  });
});
http.keepAliveTimeout = 65_000;
http.listen(0, '127.0.0.1', () => {
  process.stderr.write(`http-floor: listening at http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp\n`);
});
process.on('SIGTERM', () => {
  http.close();
  http.closeAllConnections();
  process.exit(0);
});
