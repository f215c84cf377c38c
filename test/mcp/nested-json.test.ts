/**
 * Deeply nested JSON in a call's arguments or `_meta` is the client's error, answered as one
 * (issue 35, item 11): HTTP 400 with JSON-RPC -32600 and the request's id, not HTTP 500 / -32603
 * from a stack overflow in the SDK's adapter (it serialises the body again, recursively). Over
 * HTTP (a real server on loopback) and over stdio (the built binary), each then still serving.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../../src/mcp/jsonrpc-screen.js';
import { CLI, tempDir } from '../helpers/fixtures.js';
import { INITIALIZE, rawRequest, startTestServer } from '../http/http-helpers.js';

const nested = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const call = (id: number, args: string, meta = ''): string =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"search_nodes","arguments":${args}${meta === '' ? '' : `,"_meta":${meta}`}}}`;

describe('nestedDeeperThan', () => {
  it('counts arrays and objects, not brackets inside strings or escaped quotes', () => {
    const bytes = (text: string) => Buffer.from(text, 'utf8');
    expect(nestedDeeperThan(bytes('[[[]]]'), 2)).toBe(true);
    expect(nestedDeeperThan(bytes('[[[]]]'), 3)).toBe(false);
    expect(nestedDeeperThan(bytes('{"a":{"b":[1]}}'), 3)).toBe(false);
    expect(nestedDeeperThan(bytes('{"a":{"b":[{}]}}'), 3)).toBe(true);
    expect(nestedDeeperThan(bytes(`{"q":"${'['.repeat(1000)}"}`), 2)).toBe(false);
    expect(nestedDeeperThan(bytes(`{"q":"\\"${'{'.repeat(1000)}"}`), 2)).toBe(false);
    // A string ending in an escaped backslash ends at its quote; the brackets after it count.
    expect(nestedDeeperThan(bytes(String.raw`{"q":"x\\","r":[[[]]]}`), 3)).toBe(true);
    expect(nestedDeeperThan(bytes(String.raw`{"q":"x\\","r":[[[]]]}`), 4)).toBe(false);
    expect(nestedDeeperThan(bytes(String.raw`{"q":"x\\\"[[[[","r":[]}`), 2)).toBe(false);
    expect(nestedDeeperThan(bytes('{"q":"never closed [[[['), 1)).toBe(false);
    expect(nestedDeeperThan(bytes(`["é€🧠",${nested(MAX_JSON_DEPTH - 1)}]`))).toBe(false);
    expect(nestedDeeperThan(bytes(`["é€🧠",${nested(MAX_JSON_DEPTH)}]`))).toBe(true);
  });
});

describe('deeply nested JSON over HTTP', () => {
  it('is answered 400 / -32600 with the id, in arguments and in _meta; a call within the bound is served', async () => {
    const server = await startTestServer();
    try {
      const { token } = await server.token('default');
      const headers = {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
      };
      expect((await rawRequest(server.url, { headers, body: INITIALIZE })).status).toBe(200);
      const cases: [number, string][] = [
        [2, call(2, `{"query":"a","x":${nested(5_000)}}`)],
        [3, call(3, '{"query":"a"}', `{"x":${nested(5_000)}}`)],
        [4, call(4, `{"query":"a","x":${nested(200_000)}}`)],
      ];
      for (const [id, body] of cases) {
        const answer = await rawRequest(server.url, { headers, body });
        expect(answer.status, body.slice(0, 80)).toBe(400);
        const parsed = JSON.parse(answer.body) as { id: unknown; error: { code: number; message: string } };
        expect(parsed.id).toBe(id);
        expect(parsed.error.code).toBe(-32600);
        expect(parsed.error.message).toMatch(/nest more than 128 levels deep.*send the arguments and _meta flatter/);
      }
      const within = await rawRequest(server.url, { headers, body: call(5, `{"query":"a","x":${nested(100)}}`) });
      expect(within.status).toBe(200);
      expect(JSON.parse(within.body)).toMatchObject({ id: 5, result: { structuredContent: { entities: [] } } });
    } finally {
      await server.close();
    }
  });
});

describe('deeply nested JSON over stdio', () => {
  it('is answered -32600 with the id, in short lines and in lines past the full screen; the server keeps serving', async () => {
    const tmp = tempDir();
    const server = spawn(process.execPath, [CLI, '--db', join(tmp.dir, 'memory.db'), '--no-model', 'serve'], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const replies: { id: unknown; error?: { code: number; message: string }; result?: unknown }[] = [];
    let buffered = '';
    server.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        replies.push(JSON.parse(buffered.slice(0, nl)) as (typeof replies)[number]);
        buffered = buffered.slice(nl + 1);
      }
    });
    const send = (line: string): boolean => server.stdin.write(`${line}\n`);
    try {
      send(INITIALIZE);
      send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
      send(call(2, `{"query":"a","x":${nested(5_000)}}`));
      send(call(3, '{"query":"a"}', `{"x":${nested(5_000)}}`));
      // Over 64 KiB: past the line screen's parse, still scanned for depth.
      send(call(4, `{"query":"a","x":${nested(100_000)}}`));
      send(call(5, `{"query":"a","x":${nested(100)}}`));
      await expect.poll(() => replies.filter((r) => r.id === 5).length, { timeout: 20_000 }).toBe(1);
      for (const id of [2, 3, 4]) {
        const reply = replies.find((r) => r.id === id);
        expect(reply?.error?.code, `id ${id}`).toBe(-32600);
        expect(reply?.error?.message).toMatch(/nest more than 128 levels deep/);
      }
      expect(replies.find((r) => r.id === 5)?.result).toMatchObject({ structuredContent: { entities: [] } });
    } finally {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill();
      await exited;
      tmp.cleanup();
    }
  }, 30_000);
});
