/**
 * WholeLines (issue 10): the stdio transport is fed one chunk per line, and a line over the limit is
 * dropped as it streams in and reported with its request id.
 */
import { describe, expect, it } from 'vitest';
import { requestIdFromEnds, WholeLines, type DroppedLine } from '../../src/cli/stdin-lines.js';

/** Writes `chunks` through a WholeLines and collects what comes out and what was dropped. */
async function run(max: number, chunks: readonly string[]): Promise<{ out: string[]; dropped: DroppedLine[] }> {
  const dropped: DroppedLine[] = [];
  const lines = new WholeLines(max, (line) => dropped.push(line));
  const out: string[] = [];
  lines.on('data', (chunk: Buffer) => out.push(chunk.toString('utf8')));
  const ended = new Promise((resolve) => lines.on('end', resolve));
  for (const chunk of chunks) lines.write(Buffer.from(chunk, 'utf8'));
  lines.end();
  await ended;
  return { out, dropped };
}

/** A line of exactly `bytes` bytes (before its newline) in the TypeScript SDK's key order. */
const request = (id: number, bytes: number): string => {
  const frame = `{"method":"tools/call","params":{"text":""},"jsonrpc":"2.0","id":${id}}`;
  return frame.replace('"text":""', `"text":"${'x'.repeat(bytes - frame.length)}"`);
};

describe('issue 10: WholeLines hands the stdio transport whole lines and drops the ones over the limit', () => {
  it('joins a line split over many chunks and splits chunks holding several lines', async () => {
    const { out, dropped } = await run(100, ['{"a":', '1}\n{"b"', ':2}\n{"c":3}\n{"d"', ':4}\n']);
    expect(out).toEqual(['{"a":1}\n', '{"b":2}\n', '{"c":3}\n', '{"d":4}\n']);
    expect(dropped).toEqual([]);
  });

  it('passes a line of exactly the limit and drops one byte more, then keeps passing lines', async () => {
    const atLimit = request(1, 100);
    const over = request(2, 101);
    const text = `${atLimit}\n${over}\n{"after":true}\n`;
    // Cut into 7-byte chunks, as a pipe cuts a long line.
    const chunks = Array.from({ length: Math.ceil(text.length / 7) }, (_, i) => text.slice(i * 7, i * 7 + 7));
    const { out, dropped } = await run(100, chunks);
    expect(out).toEqual([`${atLimit}\n`, '{"after":true}\n']);
    expect(dropped).toEqual([{ bytes: 101, id: 2 }]);
  });

  it('reads the id of a dropped line from its start (Python SDK order), its end (TypeScript SDK order), or reports none', async () => {
    const big = 'y'.repeat(2_000);
    const { out, dropped } = await run(500, [
      `{"jsonrpc":"2.0","id":"req-7","method":"tools/call","params":{"q":"${big}"}}\n`,
      `{"method":"tools/call","params":{"q":"${big}"},"jsonrpc":"2.0","id":42}\n`,
      `{"method":"notifications/x","params":{"q":"${big}","id":5}}\n`,
      `not json at all ${big}\n`,
    ]);
    expect(out).toEqual([]);
    expect(dropped.map((d) => d.id)).toEqual(['req-7', 42, undefined, undefined]);
    expect(dropped[3]?.bytes).toBe(`not json at all ${big}`.length);
  });

  it('never takes an id from inside the params', () => {
    expect(requestIdFromEnds('{"method":"x","params":{"id":3', '"params":{"id":3}}')).toBeUndefined();
    expect(requestIdFromEnds('{"method":"x"', ',"jsonrpc":"2.0","id":9}\n')).toBe(9);
    expect(requestIdFromEnds('{"id":"a\\"b",', '')).toBe('a"b');
  });
});
