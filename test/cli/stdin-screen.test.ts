/** Issue 26: malformed JSON-RPC over stdio is answered with a JSON-RPC error, not left to time out. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INVALID_REQUEST, PARSE_ERROR, screenLine } from '../../src/cli/stdin-screen.js';
import { CLI, tempDir } from '../helpers/fixtures.js';

describe('screenLine', () => {
  it('passes messages and blank lines on', () => {
    for (const line of [
      '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
      '{"jsonrpc":"2.0","method":"notifications/initialized"}',
      '{"jsonrpc":"2.0","id":"a","result":{}}',
      '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_graph"}}',
      '   ',
    ])
      expect(screenLine(line), line).toBeUndefined();
  });

  it('answers each kind of malformed line with its id where it has a usable one', () => {
    const cases: [string, string | number | null, number, RegExp][] = [
      ['{"jsonrpc":"2.0","id":1,"method":123}', 1, INVALID_REQUEST, /"method" must be a string/],
      ['{"jsonrpc":"2.0","id":2}', 2, INVALID_REQUEST, /needs "method"/],
      ['{"jsonrpc":"1.0","id":3,"method":"tools/list"}', 3, INVALID_REQUEST, /"jsonrpc" must be "2.0"/],
      ['{"id":"four","method":"tools/list"}', 'four', INVALID_REQUEST, /"jsonrpc" must be "2.0"/],
      ['{"jsonrpc":"2.0","id":5,"method":"tools/call","params":"x"}', 5, INVALID_REQUEST, /"params" must be an object/],
      ['{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}', null, INVALID_REQUEST, /"id" must be a string or a number/],
      ['[{"jsonrpc":"2.0","id":7,"method":"tools/list"}]', null, INVALID_REQUEST, /batches/],
      ['{"jsonrpc":"2.0","id":8,"method":"tools/list"', 8, PARSE_ERROR, /not JSON/],
      ['not json at all', null, PARSE_ERROR, /not JSON/],
      ['42', null, INVALID_REQUEST, /a JSON object/],
    ];
    for (const [line, id, code, message] of cases) {
      const refusal = screenLine(line);
      expect(refusal, line).toMatchObject({ jsonrpc: '2.0', id, error: { code } });
      expect(refusal?.error.message, line).toMatch(message);
    }
  });
});

describe('limbic serve over stdio', () => {
  it('answers malformed lines and keeps serving', async () => {
    const tmp = tempDir();
    const server = spawn(process.execPath, [CLI, '--db', join(tmp.dir, 'memory.db'), '--no-model', 'serve'], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const replies: { id: unknown; error?: { code: number }; result?: unknown }[] = [];
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
      send(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
        }),
      );
      send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
      send('{"jsonrpc":"2.0","id":1,"method":123}');
      send('{"jsonrpc":"2.0","id":2,"method":"tools/list"');
      send('[{"jsonrpc":"2.0","id":3,"method":"tools/list"}]');
      send('{"jsonrpc":"2.0","id":4,"method":"tools/list"}');
      await expect.poll(() => replies.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(5);
      const byId = (id: unknown) => replies.find((r) => r.id === id);
      expect(byId(1)?.error?.code).toBe(-32600);
      expect(byId(2)?.error?.code).toBe(-32700);
      expect(replies.some((r) => r.id === null && r.error?.code === -32600)).toBe(true);
      expect(byId(4)?.result).toBeDefined();
    } finally {
      server.kill();
      tmp.cleanup();
    }
  }, 30_000);
});
