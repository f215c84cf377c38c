/**
 * Issue 33 item 6: end_relation worked, but open_nodes, search_nodes, read_graph, the page and the
 * export listed the relation with no marker, as if it still held. The official tools now leave an
 * ended relation out (their clients read every listed relation as current) and list it with
 * ended_at when asked (include_ended; open_nodes' include_superseded too); the page marks it; the
 * export writes ended_at on its line, and the import reads it back. Real MCP clients of both eras,
 * the built CLI for export and import, the page's JSON API over HTTP.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, harness, tempDir, textOf, type EraHarness } from '../helpers/fixtures.js';
import { ERAS } from '../helpers/mcp-eras.js';
import { connect, startTestServer } from '../http/http-helpers.js';

interface Relation {
  readonly from: string;
  readonly to: string;
  readonly relationType: string;
  readonly ended_at?: string;
}
interface Graph {
  readonly relations: Relation[];
}

const WORKS_AT = { from: 'Ana', to: 'Acme', relationType: 'works_at' };
const KNOWS = { from: 'Bo', to: 'Ana', relationType: 'knows' };

describe.each(ERAS)('an ended relation is never listed as current ($name)', ({ era }) => {
  let h: EraHarness;
  let endedAt: string;
  beforeAll(async () => {
    h = await harness({ era });
    await h.ok('create_entities', {
      entities: [
        { name: 'Ana', entityType: 'person', observations: ['engineer'] },
        { name: 'Acme', entityType: 'company', observations: ['makes anvils'] },
        { name: 'Bo', entityType: 'person', observations: [] },
      ],
    });
    await h.ok('create_relations', { relations: [WORKS_AT, KNOWS] });
    endedAt = (await h.ok<{ relation: { ended_at: string } }>('end_relation', WORKS_AT)).relation.ended_at;
  });
  afterAll(() => h.close());

  it('open_nodes, search_nodes and read_graph leave it out, in structuredContent and in the text', async () => {
    for (const [tool, args, relations] of [
      ['open_nodes', { names: ['Ana'] }, [KNOWS]],
      ['search_nodes', { query: 'Ana' }, [KNOWS]],
      ['search_nodes', { query: 'Ana', limit: 5 }, [KNOWS]],
      ['read_graph', {}, [KNOWS]],
      // The first page holds Ana, whose one relation out ended.
      ['read_graph', { limit: 1 }, []],
      ['read_graph', { compact: true }, [KNOWS]],
    ] as const) {
      const result = await h.call(tool, args);
      expect((result.structuredContent as unknown as Graph).relations, `${tool} ${JSON.stringify(args)}`).toEqual(relations);
      expect(textOf(result)).not.toContain('works_at');
    }
  });

  it('asked, each lists it with ended_at, the time end_relation answered', async () => {
    const marked = { ...WORKS_AT, ended_at: endedAt };
    for (const [tool, args] of [
      ['open_nodes', { names: ['Ana'], include_ended: true }],
      ['open_nodes', { names: ['Acme'], include_superseded: true }],
      ['search_nodes', { query: 'Ana', include_ended: true }],
      ['read_graph', { include_ended: true }],
      ['read_graph', { compact: true, include_ended: true }],
    ] as const) {
      const result = await h.call(tool, args);
      expect((result.structuredContent as unknown as Graph).relations, `${tool} ${JSON.stringify(args)}`).toContainEqual(marked);
      expect(textOf(result)).toContain(`"ended_at": "${endedAt}"`);
    }
  });

  it('the resource memory://knowledge-graph leaves it out too', async () => {
    const read = await h.client.readResource({ uri: 'memory://knowledge-graph' });
    const graph = JSON.parse((read.contents[0] as { text: string }).text) as Graph;
    expect(graph.relations).toEqual([KNOWS]);
  });
});

describe('an ended relation made current again', () => {
  it('is listed again, without ended_at', async () => {
    const h = await harness();
    try {
      await h.ok('create_relations', { relations: [WORKS_AT] });
      await h.ok('end_relation', WORKS_AT);
      expect((await h.ok<Graph>('read_graph')).relations).toEqual([]);
      await h.ok('create_relations', { relations: [WORKS_AT] });
      expect((await h.ok<Graph>('read_graph')).relations).toEqual([WORKS_AT]);
      expect((await h.ok<Graph>('read_graph', { include_ended: true })).relations).toEqual([WORKS_AT]);
    } finally {
      await h.close();
    }
  });
});

describe('limbic export and import carry the end of a relation', () => {
  it('export writes ended_at on its line; import of that file brings the relation back ended', async () => {
    const tmp = tempDir('limbic-ended-');
    try {
      const db = join(tmp.dir, 'memory.db');
      const h = await harness({ path: db });
      await h.ok('create_entities', { entities: [{ name: 'Ana', entityType: 'person', observations: ['engineer'] }] });
      await h.ok('create_relations', { relations: [WORKS_AT, KNOWS] });
      const endedAt = (await h.ok<{ relation: { ended_at: string } }>('end_relation', WORKS_AT)).relation.ended_at;
      await h.close();

      const env = { ...process.env, LIMBIC_NO_MODEL: '1', LIMBIC_DB: '', LIMBIC_NAMESPACE: '' };
      const exported = spawnSync(process.execPath, [CLI, '--db', db, 'export'], { encoding: 'utf8', env });
      expect(exported.status, exported.stderr).toBe(0);
      // The full export (docs/export.md) adds Limbic's keys after the official ones: the ended
      // relation carries ended_at, the current one none.
      const relations = exported.stdout
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((line) => line['type'] === 'relation');
      expect(relations.find((r) => r['relationType'] === 'works_at')).toMatchObject({ ...WORKS_AT, ended_at: endedAt });
      const current = relations.find((r) => r['relationType'] === 'knows');
      expect(current).toMatchObject(KNOWS);
      expect(current).not.toHaveProperty('ended_at');

      const file = join(tmp.dir, 'memory.jsonl');
      writeFileSync(file, exported.stdout);
      const copy = join(tmp.dir, 'copy.db');
      const imported = spawnSync(process.execPath, [CLI, '--db', copy, 'import', file], { encoding: 'utf8', env });
      expect(imported.status, imported.stderr).toBe(0);
      const again = await harness({ path: copy });
      try {
        expect((await again.ok<Graph>('open_nodes', { names: ['Ana'] })).relations).toEqual([KNOWS]);
        expect((await again.ok<Graph>('open_nodes', { names: ['Ana'], include_ended: true })).relations).toEqual([
          { ...WORKS_AT, ended_at: endedAt },
          KNOWS,
        ]);
      } finally {
        await again.close();
      }
    } finally {
      tmp.cleanup();
    }
  });
});

describe("the page's entity view", () => {
  it('lists an ended relation with ended_at, for the page to mark it', async () => {
    const s = await startTestServer();
    try {
      const { token } = await s.token('default');
      const c = await connect(s.url, token);
      await c.ok('create_entities', { entities: [{ name: 'Ana', entityType: 'person', observations: ['engineer'] }] });
      await c.ok('create_relations', { relations: [WORKS_AT, KNOWS] });
      const endedAt = (await c.ok<{ relation: { ended_at: string } }>('end_relation', WORKS_AT)).relation.ended_at;
      await c.close();
      const response = await fetch(`${s.url}/api/entity?name=Ana`, { headers: { authorization: `Bearer ${token}` } });
      const view = (await response.json()) as Graph;
      expect(view.relations).toEqual([{ ...WORKS_AT, ended_at: endedAt }, KNOWS]);
    } finally {
      await s.close();
    }
  });
});
