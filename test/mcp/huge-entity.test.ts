/**
 * An entity as large as it may grow stays readable over stdio (issue 26, item 2). Observations
 * full of quotes (an agent storing JSON) double in JSON and double again in the text, so an entity
 * within the per-entity bound, built by several acknowledged add_observations calls, can be over
 * what one answer may carry. open_nodes and read_graph then return it a page of observations at a
 * time; the whole answer, and the memory://knowledge-graph resource, are refused with the bound and
 * the way to page, and the session goes on. The built binary, a real MCP client over stdio.
 */
import { join } from 'node:path';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../src/core/limits.js';
import { CLI, tempDir, textOf } from '../helpers/fixtures.js';
import { startStdioLimbic, type StdioLimbic } from '../helpers/fuzz-calls.js';

interface Paged {
  name: string;
  observations: string[];
  observationCount?: number;
  next_observations_offset?: number;
}

const CALLS = 4;
const PER_CALL = 50;

/** One observation of maxObservationChars: a JSON list of grades, every other character a quote. */
function jsonLog(call: number, i: number): string {
  const head = `call ${call} note ${i}: grades [`;
  return (head + '"A","B",'.repeat(Math.ceil(LIMITS.maxObservationChars / 8))).slice(0, LIMITS.maxObservationChars);
}

describe('issue 26: an entity too large for one answer is read in pages over stdio', () => {
  const tmp = tempDir();
  let server: StdioLimbic;
  const added: string[] = [];
  const call = async (name: string, args: Record<string, unknown>): Promise<CallToolResult> =>
    (await server.client.callTool({ name, arguments: args })) as CallToolResult;

  beforeAll(async () => {
    server = await startStdioLimbic(CLI, join(tmp.dir, 'memory.db'));
    expect((await call('create_entities', { entities: [{ name: 'ops-log', entityType: 'log', observations: [] }] })).isError).toBeFalsy();
    for (let c = 0; c < CALLS; c++) {
      const contents = Array.from({ length: PER_CALL }, (_, i) => jsonLog(c, i));
      const answer = await call('add_observations', { observations: [{ entityName: 'ops-log', contents }] });
      expect(answer.isError, textOf(answer).slice(0, 300)).toBeFalsy();
      added.push(...contents);
    }
    // Within the per-entity bound, close to it.
    const bytes = added.reduce((sum, o) => sum + Buffer.byteLength(o), 0);
    expect(bytes).toBeLessThanOrEqual(LIMITS.maxEntityTextBytes);
    expect(bytes).toBeGreaterThan(0.9 * LIMITS.maxEntityTextBytes);
  }, 120_000);

  afterAll(async () => {
    await server.close();
    tmp.cleanup();
  });

  it('refuses the whole entity with an isError that names the bound and how to page', async () => {
    const whole = await call('open_nodes', { names: ['ops-log'] });
    expect(whole.isError).toBe(true);
    expect(textOf(whole)).toMatch(/The answer is \d+\.\d MiB, more than the 9\.0 MiB an MCP client takes in one message/);
    // The advice names the argument that shrinks it, with a value that fits (issue 35): following it answers.
    const advice =
      /call open_nodes again with the same arguments and observations_limit: (\d+), then observations_offset: next_observations_offset/.exec(
        textOf(whole),
      );
    expect(advice, textOf(whole)).not.toBeNull();
    const followed = await call('open_nodes', { names: ['ops-log'], observations_limit: Number(advice?.[1]) });
    expect(followed.isError, textOf(followed).slice(0, 300)).toBeFalsy();
  }, 60_000);

  it('returns every observation through open_nodes pages, in order', async () => {
    const read: string[] = [];
    let offset: number | undefined = 0;
    let pages = 0;
    while (offset !== undefined) {
      const page = await call('open_nodes', { names: ['ops-log'], observations_offset: offset, observations_limit: 60 });
      expect(page.isError, textOf(page).slice(0, 300)).toBeFalsy();
      const entity = (page.structuredContent as { entities: Paged[] }).entities[0];
      expect(entity?.observationCount).toBe(CALLS * PER_CALL);
      read.push(...(entity?.observations ?? []));
      offset = entity?.next_observations_offset;
      expect(++pages).toBeLessThanOrEqual(4);
    }
    expect(pages).toBe(4);
    expect(read).toEqual(added);
  }, 60_000);

  it('returns a page of it through read_graph', async () => {
    const page = await call('read_graph', { observations_offset: 180, observations_limit: 60 });
    expect(page.isError, textOf(page).slice(0, 300)).toBeFalsy();
    const entity = (page.structuredContent as { entities: Paged[] }).entities[0];
    expect(entity?.observations).toEqual(added.slice(180));
    expect(entity?.observationCount).toBe(200);
    expect(entity?.next_observations_offset).toBeUndefined();
    expect((await call('read_graph', {})).isError).toBe(true);
  }, 60_000);

  it('refuses memory://knowledge-graph over the bound with what to read instead, and keeps the session', async () => {
    const refused = await server.client.readResource({ uri: 'memory://knowledge-graph' }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(McpError);
    expect((refused as McpError).message).toMatch(/memory:\/\/knowledge-graph is \d+\.\d MiB, more than the 9\.0 MiB.*read_graph tool/);
    const small = await call('open_nodes', { names: ['ops-log'], observations_limit: 1 });
    expect((small.structuredContent as { entities: Paged[] }).entities[0]?.observations).toEqual(added.slice(0, 1));
  }, 60_000);
});
