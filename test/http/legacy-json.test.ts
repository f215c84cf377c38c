/**
 * The 2025-era stateless leg's kept instances (src/http/legacy-json.ts, issue 38): a request is
 * served by an instance kept for its caller's kind instead of one built for it, never by an
 * instance of another kind, never by one that served `initialize`, and never by one serving
 * another request at that moment. Driven with web-standard Requests, as http-server.ts passes them
 * (with the parsed body).
 */
import { McpServer, type McpRequestContext } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { legacyJsonHandler } from '../../src/http/legacy-json.js';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** A factory whose instances answer `who` with the kind they were built for and their serial number. */
function countingFactory(hold?: Promise<void>) {
  let built = 0;
  const factory = ({ authInfo }: McpRequestContext) => {
    const serial = ++built;
    const kind = String(authInfo?.extra?.kind);
    const server = new McpServer({ name: 'kept', version: '0' });
    server.registerTool(
      'who',
      { inputSchema: z.object({}), outputSchema: z.object({ kind: z.string(), serial: z.number() }) },
      async () => {
        await hold;
        return { content: [{ type: 'text', text: `${kind} ${serial}` }], structuredContent: { kind, serial } };
      },
    );
    return server;
  };
  return { factory, built: () => built };
}

const authOf = (kind: string) => ({ token: kind, clientId: kind, scopes: [], extra: { kind } });
const poolKey = (authInfo: { extra?: Record<string, unknown> } | undefined) => String(authInfo?.extra?.kind);

async function post(handler: ReturnType<typeof legacyJsonHandler>, body: Record<string, unknown>, kind: string): Promise<unknown> {
  const request = new Request('http://127.0.0.1/mcp', { method: 'POST', headers: HEADERS, body: JSON.stringify(body) });
  const response = await handler(request, { authInfo: authOf(kind), parsedBody: body });
  return response.json();
}

const callWho = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'who', arguments: {} } });
const initialize = (id: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '0' } },
});
const answerOf = (reply: unknown) =>
  (reply as { result: { structuredContent: { kind: string; serial: number } } }).result.structuredContent;

describe('2025-era stateless leg: kept instances', () => {
  it('serves request after request of one caller kind from one kept instance', async () => {
    const { factory, built } = countingFactory();
    const handler = legacyJsonHandler(factory, { poolKey });
    for (let i = 1; i <= 5; i++) expect(answerOf(await post(handler, callWho(i), 'writer'))).toEqual({ kind: 'writer', serial: 1 });
    expect(built()).toBe(1);
  });

  it('never gives a request an instance kept for another kind of caller', async () => {
    const { factory } = countingFactory();
    const handler = legacyJsonHandler(factory, { poolKey });
    for (let i = 0; i < 6; i++) {
      const kind = i % 2 === 0 ? 'read-only' : 'read-write';
      expect(answerOf(await post(handler, callWho(i), kind)).kind).toBe(kind);
    }
  });

  it('serves initialize with an instance of its own that is never used again', async () => {
    const { factory, built } = countingFactory();
    const handler = legacyJsonHandler(factory, { poolKey });
    const init = (await post(handler, initialize(1), 'writer')) as { result: { protocolVersion: string } };
    expect(init.result.protocolVersion).toBe('2025-06-18');
    expect(built()).toBe(1);
    // The next call is not served by the instance that took initialize's state (serial 1).
    expect(answerOf(await post(handler, callWho(2), 'writer')).serial).toBe(2);
    expect(answerOf(await post(handler, callWho(3), 'writer')).serial).toBe(2);
    await post(handler, initialize(4), 'writer');
    expect(answerOf(await post(handler, callWho(5), 'writer')).serial).toBe(2);
    expect(built()).toBe(3);
  });

  it('gives requests under way at once an instance each, and keeps them all for the next ones', async () => {
    let release!: () => void;
    const hold = new Promise<void>((resolve) => (release = resolve));
    const { factory, built } = countingFactory(hold);
    const handler = legacyJsonHandler(factory, { poolKey });
    const first = Array.from({ length: 8 }, (_, i) => post(handler, callWho(i), 'writer'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    release();
    const serials = (await Promise.all(first)).map((reply) => answerOf(reply).serial);
    expect(new Set(serials).size).toBe(8);
    expect(built()).toBe(8);
    const again = await Promise.all(Array.from({ length: 8 }, (_, i) => post(handler, callWho(100 + i), 'writer')));
    expect(again.map((reply) => answerOf(reply).serial).every((serial) => serials.includes(serial))).toBe(true);
    expect(built()).toBe(8);
  });

  it('without a pool key every request gets an instance of its own, as before', async () => {
    const { factory, built } = countingFactory();
    const handler = legacyJsonHandler(factory);
    for (let i = 1; i <= 3; i++) await post(handler, callWho(i), 'writer');
    expect(built()).toBe(3);
  });
});
