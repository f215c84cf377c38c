/**
 * One script of tool calls against the official server (@modelcontextprotocol/server-memory, a dev
 * dependency) and against the built `limbic` binary, both over stdio, compared field by field.
 * search_nodes results are compared as sets: Limbic ranks them, the official server keeps file order.
 * Limbic runs the script twice when a PostgreSQL can be started (test/helpers/pg-server.ts): on a
 * SQLite file and on `--db postgres://...`; both must answer as the official server does.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, REPO_ROOT, tempDir, textOf } from '../helpers/fixtures.js';
import { startPgServer } from '../helpers/pg-server.js';

const pg = await startPgServer();

const OFFICIAL = join(REPO_ROOT, 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js');

type Step = { tool: string; args: Record<string, unknown>; unordered?: boolean };

const SCRIPT: Step[] = [
  {
    tool: 'create_entities',
    args: {
      entities: [
        { name: 'Alice', entityType: 'person', observations: ['Speaks Spanish', 'Works at Acme'] },
        { name: 'Bob', entityType: 'person', observations: [] },
        { name: 'Acme', entityType: 'company', observations: ['Makes anvils'] },
      ],
    },
  },
  // A name that exists is skipped, observations are not merged.
  {
    tool: 'create_entities',
    args: {
      entities: [
        { name: 'Alice', entityType: 'robot', observations: ['x'] },
        { name: 'Carol', entityType: 'person', observations: ['New'] },
      ],
    },
  },
  {
    tool: 'create_relations',
    args: {
      relations: [
        { from: 'Alice', to: 'Acme', relationType: 'works_at' },
        { from: 'Bob', to: 'Alice', relationType: 'knows' },
        { from: 'Alice', to: 'Ghost', relationType: 'haunted_by' },
      ],
    },
  },
  { tool: 'create_relations', args: { relations: [{ from: 'Alice', to: 'Acme', relationType: 'works_at' }] } },
  { tool: 'add_observations', args: { observations: [{ entityName: 'Alice', contents: ['Speaks Spanish', 'Likes tea'] }] } },
  {
    tool: 'add_observations',
    args: {
      observations: [
        { entityName: 'Carol', contents: ['Saved?'] },
        { entityName: 'Ghost', contents: ['Boo'] },
      ],
    },
  },
  { tool: 'read_graph', args: {} },
  { tool: 'search_nodes', args: { query: 'spanish' } },
  { tool: 'search_nodes', args: { query: 'PERSON' }, unordered: true },
  { tool: 'search_nodes', args: { query: 'a' }, unordered: true },
  { tool: 'search_nodes', args: { query: '' }, unordered: true },
  { tool: 'search_nodes', args: { query: 'no such thing' } },
  { tool: 'open_nodes', args: { names: ['Alice', 'Missing'] } },
  { tool: 'open_nodes', args: { names: ['Bob', 'Acme'] } },
  {
    tool: 'delete_observations',
    args: {
      deletions: [
        { entityName: 'Alice', observations: ['Likes tea'] },
        { entityName: 'Nope', observations: ['x'] },
      ],
    },
  },
  {
    tool: 'delete_relations',
    args: {
      relations: [
        { from: 'Bob', to: 'Alice', relationType: 'knows' },
        { from: 'X', to: 'Y', relationType: 'z' },
      ],
    },
  },
  { tool: 'delete_entities', args: { entityNames: ['Acme', 'Unknown'] } },
  { tool: 'read_graph', args: {} },
  { tool: 'open_nodes', args: { names: ['Alice'] } },
];

interface Outcome {
  isError: boolean;
  text: string;
  structured: unknown;
}

async function runScript(client: Client): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (const step of SCRIPT) {
    const result = (await client.callTool({ name: step.tool, arguments: step.args })) as CallToolResult;
    outcomes.push({ isError: result.isError === true, text: textOf(result), structured: result.structuredContent });
  }
  return outcomes;
}

const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
const byTriple = (a: { from: string; to: string; relationType: string }, b: { from: string; to: string; relationType: string }) =>
  `${a.from}\u0000${a.to}\u0000${a.relationType}`.localeCompare(`${b.from}\u0000${b.to}\u0000${b.relationType}`);

function normalise(value: unknown, unordered: boolean): unknown {
  if (!unordered || typeof value !== 'object' || value === null) return value;
  const graph = value as { entities: { name: string }[]; relations: { from: string; to: string; relationType: string }[] };
  return { entities: [...graph.entities].sort(byName), relations: [...graph.relations].sort(byTriple) };
}

describe('differential: Limbic vs the official memory server', () => {
  let official: Outcome[];
  let limbic: Outcome[];
  /** The same script on PostgreSQL; undefined when no server could be started. */
  let limbicPg: Outcome[] | undefined;
  const tmp = tempDir();

  beforeAll(async () => {
    const officialClient = new Client({ name: 'diff', version: '1' });
    await officialClient.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [OFFICIAL],
        env: { ...process.env, MEMORY_FILE_PATH: join(tmp.dir, 'official.jsonl') } as Record<string, string>,
        stderr: 'ignore',
      }),
    );
    const limbicClient = new Client({ name: 'diff', version: '1' });
    await limbicClient.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, '--db', join(tmp.dir, 'limbic.db'), '--no-model'],
        env: { ...process.env } as Record<string, string>,
        stderr: 'ignore',
      }),
    );
    official = await runScript(officialClient);
    limbic = await runScript(limbicClient);
    await officialClient.close();
    await limbicClient.close();
    if ('url' in pg) {
      const pgClient = new Client({ name: 'diff', version: '1' });
      await pgClient.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [CLI, '--db', await pg.createDatabase(), '--no-model'],
          env: { ...process.env } as Record<string, string>,
          stderr: 'ignore',
        }),
      );
      limbicPg = await runScript(pgClient);
      await pgClient.close();
    }
  });

  afterAll(async () => {
    tmp.cleanup();
    if ('url' in pg) await pg.stop();
  });

  SCRIPT.forEach((step, i) => {
    it(`step ${i + 1}: ${step.tool} ${JSON.stringify(step.args).slice(0, 80)}`, () => {
      for (const answers of limbicPg === undefined ? [limbic] : [limbic, limbicPg]) compareStep(step, official[i], answers[i]);
    });
  });

  function compareStep(step: Step, o: Outcome | undefined, l: Outcome | undefined): void {
    expect(o).toBeDefined();
    expect(l?.isError).toBe(o?.isError);
    if (o?.isError) {
      // Limbic keeps the official wording and adds what to do next.
      expect(l?.text.startsWith(o.text)).toBe(true);
      return;
    }
    expect(normalise(l?.structured, step.unordered === true)).toEqual(normalise(o?.structured, step.unordered === true));
    const parse = (t: string): unknown => {
      try {
        return JSON.parse(t);
      } catch {
        return t;
      }
    };
    expect(normalise(parse(l?.text ?? ''), step.unordered === true)).toEqual(normalise(parse(o?.text ?? ''), step.unordered === true));
  }

  it('ran every step on both servers', () => {
    expect(official).toHaveLength(SCRIPT.length);
    expect(limbic).toHaveLength(SCRIPT.length);
    expect(official.filter((o) => o.isError)).toHaveLength(1);
    expect((official[6]?.structured as { entities: unknown[] }).entities).toHaveLength(4);
    expect((limbic[6]?.structured as { relations: unknown[] }).relations).toHaveLength(3);
    if (limbicPg !== undefined) expect(limbicPg).toHaveLength(SCRIPT.length);
    else process.stderr.write(`differential: the PostgreSQL leg did not run: ${'unavailable' in pg ? pg.unavailable : ''}\n`);
  });
});
