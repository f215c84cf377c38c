/**
 * The floor of any search_nodes over MCP stdio, for the side-by-side benchmark: a server that does
 * no search. At start it computes the official answer (file order) of each query it is given, then
 * answers search_nodes from memory through the same SDK, output schema and text + structuredContent
 * shape as both real servers. What a call to it costs (JSON, validation, stdio, the client) every
 * server pays for an answer of that size, so official ÷ floor bounds any server's ratio.
 *
 *   node --import tsx bench/latency/floor-server.ts <memory.jsonl> <queries.json>
 */
import { readFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

interface Entity {
  name: string;
  entityType: string;
  observations: string[];
}
interface Relation {
  from: string;
  to: string;
  relationType: string;
}

const [file, queriesFile] = process.argv.slice(2);
if (file === undefined || queriesFile === undefined) throw new Error('usage: floor-server.ts <memory.jsonl> <queries.json>');
const entities: Entity[] = [];
const relations: Relation[] = [];
for (const line of readFileSync(file, 'utf8').split('\n')) {
  if (line.trim() === '') continue;
  const item = JSON.parse(line) as { type: string } & Entity & Relation;
  if (item.type === 'entity') entities.push({ name: item.name, entityType: item.entityType, observations: item.observations });
  else if (item.type === 'relation') relations.push({ from: item.from, to: item.to, relationType: item.relationType });
}

const answers = new Map<string, { entities: Entity[]; relations: Relation[] }>();
for (const query of JSON.parse(readFileSync(queriesFile, 'utf8')) as string[]) {
  const q = query.toLowerCase();
  const found = entities.filter(
    (e) =>
      e.name.toLowerCase().includes(q) || e.entityType.toLowerCase().includes(q) || e.observations.some((o) => o.toLowerCase().includes(q)),
  );
  const names = new Set(found.map((e) => e.name));
  answers.set(query, { entities: found, relations: relations.filter((r) => names.has(r.from) || names.has(r.to)) });
}

const EntitySchema = z.object({ name: z.string(), entityType: z.string(), observations: z.array(z.string()) });
const RelationSchema = z.object({ from: z.string(), to: z.string(), relationType: z.string() });
/** One instance per connection, from the same v2 SDK entry Limbic serves stdio with (serve.ts). */
serveStdio(() => {
  const server = new McpServer({ name: 'floor', version: '1' });
  server.registerTool(
    'search_nodes',
    {
      inputSchema: z.object({ query: z.string() }),
      outputSchema: z.object({ entities: z.array(EntitySchema), relations: z.array(RelationSchema) }),
      annotations: { readOnlyHint: true },
    },
    async ({ query }) => {
      const answer = answers.get(query) ?? { entities: [], relations: [] };
      return { content: [{ type: 'text', text: JSON.stringify(answer, null, 2) }], structuredContent: { ...answer } };
    },
  );
  return server;
});
