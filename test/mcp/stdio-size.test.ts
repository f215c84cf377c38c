/**
 * Calls near the size limits, over stdio against the built binary (issue 10). The MCP SDK's stdio
 * transport closes on a line over its buffer (10 MiB by default), and the server process then ended
 * with nothing on stderr. A call's text is now bounded (LIMITS.maxCallTextBytes) so that
 * create_entities' answer, which repeats it twice, stays under the 10 MiB that SDK clients accept,
 * and a message far over that bound is dropped unread and answered with an error.
 */
import { join } from 'node:path';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../src/core/limits.js';
import { CLI, tempDir, textOf } from '../helpers/fixtures.js';
import { startStdioLimbic, type StdioLimbic } from '../helpers/fuzz-calls.js';

const LIMIT = LIMITS.maxCallTextBytes;

/** Distinct ASCII observations of at most maxObservationChars each, whose lengths sum to `total`. */
function observationsOf(total: number): string[] {
  const out: string[] = [];
  for (let left = total; left > 0;) {
    const n = Math.min(left, LIMITS.maxObservationChars);
    const head = `observation ${out.length}: `;
    out.push((head + 'lorem ipsum dolor sit amet '.repeat(Math.ceil(n / 27))).slice(0, n));
    left -= n;
  }
  return out;
}

/** One create_entities argument whose strings (name, type, observations) weigh exactly `bytes`. */
function entityOfBytes(name: string, bytes: number): { entities: { name: string; entityType: string; observations: string[] }[] } {
  const entityType = 'blob';
  return { entities: [{ name, entityType, observations: observationsOf(bytes - name.length - entityType.length) }] };
}

describe('issue 10: calls near the size limits over stdio never end `limbic serve`', () => {
  const tmp = tempDir();
  let server: StdioLimbic;
  const call = async (name: string, args: Record<string, unknown>): Promise<CallToolResult> =>
    (await server.client.callTool({ name, arguments: args })) as CallToolResult;

  beforeAll(async () => {
    server = await startStdioLimbic(CLI, join(tmp.dir, 'memory.db'));
  });

  afterAll(async () => {
    await server.close();
    tmp.cleanup();
  });

  it('answers a 12 MB create_entities (over the SDK default line buffer) with an isError naming the per-call limit', async () => {
    // The fuzz run's case: one entity of 600 observations of 20,000 characters, within every per-field limit.
    const args = { entities: [{ name: 'twelve-mb', entityType: 'blob', observations: observationsOf(600 * LIMITS.maxObservationChars) }] };
    expect(Buffer.byteLength(JSON.stringify(args))).toBeGreaterThan(10 * 1024 * 1024);
    const result = await call('create_entities', args);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(new RegExp(`limit is ${LIMIT} bytes .*split`));
  });

  it('answers a message over 8x the text limit with a protocol error, without reading it, and keeps serving', async () => {
    const maxMessageBytes = 8 * LIMIT;
    const args = { entities: [{ name: 'too-long', entityType: 'blob', observations: observationsOf(maxMessageBytes + 1) }] };
    const refused = await server.client.callTool({ name: 'create_entities', arguments: args }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(McpError);
    expect((refused as McpError).code).toBe(ErrorCode.InvalidRequest);
    expect((refused as McpError).message).toMatch(new RegExp(`over this server's limit of ${maxMessageBytes} bytes .*Split the call`));
    // stderr is a separate pipe: its line may land a moment after the answer.
    const logged = /A message of \d+ bytes is over this server's limit .* Answered request \d+\./;
    for (let i = 0; i < 100 && !logged.test(server.stderr()); i++) await new Promise((r) => setTimeout(r, 20));
    expect(server.stderr()).toMatch(logged);
    expect((await call('search_nodes', { query: 'too-long' })).isError).toBeFalsy();
  });

  it('refuses a call one byte over the limit and stores nothing of it', async () => {
    const result = await call('create_entities', entityOfBytes('one-over', LIMIT + 1));
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain(`${LIMIT + 1} bytes`);
    expect(textOf(result)).toMatch(new RegExp(`limit is ${LIMIT} bytes .*split`));
    const opened = await call('open_nodes', { names: ['one-over', 'twelve-mb', 'too-long'] });
    expect((opened.structuredContent as { entities: unknown[] }).entities).toEqual([]);
  });

  it('stores a call of exactly the limit, answers it in full, and keeps answering', async () => {
    const args = entityOfBytes('at-limit', LIMIT);
    const result = await call('create_entities', args);
    expect(result.isError).toBeFalsy();
    const stored = (result.structuredContent as { entities: { name: string; observations: string[] }[] }).entities;
    expect(stored.map((e) => e.name)).toEqual(['at-limit']);
    expect(stored[0]?.observations).toEqual(args.entities[0]?.observations);

    expect(
      (await call('create_entities', { entities: [{ name: 'after', entityType: 'probe', observations: ['still here'] }] })).isError,
    ).toBeFalsy();
    const found = await call('search_nodes', { query: 'still here' });
    expect((found.structuredContent as { entities: { name: string }[] }).entities.map((e) => e.name)).toEqual(['after']);
  });

  it('refuses a read answer the client could not take, and an entity that would outgrow one answer, keeping the session (issue 26)', async () => {
    // Four entities of about 2.6 MB each, every call within every limit: together no answer can carry them.
    const grown = ['grown-0', 'grown-1', 'grown-2', 'grown-3'];
    await call('create_entities', { entities: grown.map((name) => ({ name, entityType: 'blob', observations: [] })) });
    for (const [i, name] of grown.entries()) {
      const contents = observationsOf(130 * LIMITS.maxObservationChars).map((o) => `call ${i}: ${o}`.slice(0, LIMITS.maxObservationChars));
      expect((await call('add_observations', { observations: [{ entityName: name, contents }] })).isError).toBeFalsy();
    }
    for (const [tool, args] of [
      ['open_nodes', { names: grown }],
      ['search_nodes', { query: 'lorem ipsum' }],
      ['read_graph', {}],
    ] as const) {
      const answer = await call(tool, args);
      expect(answer.isError, tool).toBe(true);
      expect(textOf(answer)).toMatch(/The answer is \d+\.\d MiB, more than the 9\.0 MiB an MCP client takes in one message/);
      // The advice names an argument and a value (issue 35); the same call with it answers.
      const named = [...textOf(answer).matchAll(/\b(relations_limit|observations_limit|limit): (\d+)/g)].map((m) => [m[1], Number(m[2])]);
      expect(named.length, textOf(answer)).toBeGreaterThan(0);
      const followed = await call(tool, { ...args, ...Object.fromEntries(named) });
      expect(followed.isError, textOf(followed).slice(0, 300)).toBeFalsy();
    }
    // One entity stays readable: what would grow it past one answer is refused, whole, across calls.
    const more = observationsOf(100 * LIMITS.maxObservationChars).map((o) => `more: ${o}`.slice(0, LIMITS.maxObservationChars));
    const refused = await call('add_observations', { observations: [{ entityName: 'grown-0', contents: more }] });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(new RegExp(`over the ${LIMITS.maxEntityTextBytes} bytes one entity may hold.*Nothing was added`));
    const one = await call('open_nodes', { names: ['grown-0'] });
    expect(one.isError).toBeFalsy();
    expect((one.structuredContent as { entities: { observations: string[] }[] }).entities[0]?.observations).toHaveLength(130);
    // The session and the server are still there.
    const small = await call('open_nodes', { names: ['after'] });
    expect((small.structuredContent as { entities: { name: string }[] }).entities.map((e) => e.name)).toEqual(['after']);
  }, 120_000);
});
