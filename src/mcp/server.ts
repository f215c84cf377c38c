/**
 * The MCP adapter: the nine tools of the official memory server with their names, schemas, output
 * shapes and annotations, plus Limbic's search_semantic, get_statistics and set_entity_status, and
 * the memory://knowledge-graph resource with update notifications. Thin: it validates, calls the
 * service and shapes results; a MemoryError becomes an isError result the model can act on.
 */
import {
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type CallToolResult,
  type StandardSchemaWithJSON,
  type ToolAnnotations,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { ToolProfile } from '../core/config.js';
import { isMemoryError } from '../core/errors.js';
import { LIMITS } from '../core/limits.js';
import type { Logger } from '../core/logger.js';
import { parseStatus, type EntityStatus } from '../core/types.js';
import type { MemoryService, ObservationWindow, Page } from '../service/memory-service.js';
import { INSTRUCTIONS, registerPrompts } from './guide.js';
import { observationBound, toHybridOptions } from './hybrid-options.js';
import { registerMaintenanceTools } from './maintenance-tools.js';
import { compact, overAnswerBound, overBoundMessage, structured, structuredGraph, withRedactions } from './answers.js';
import { RedactionTally } from '../core/text/redaction.js';
import { EXPLAIN_APP_META, registerExplainApp } from './app/explain-app.js';
import { hybridText, semanticText } from './search-text.js';
import * as o from './output-schemas.js';
import * as s from './schemas.js';

export const RESOURCE_URI = 'memory://knowledge-graph';

/** The official memory server's nine tools, with its names. */
export const OFFICIAL_TOOLS: readonly string[] = [
  'create_entities',
  'create_relations',
  'add_observations',
  'delete_entities',
  'delete_observations',
  'delete_relations',
  'read_graph',
  'search_nodes',
  'open_nodes',
];

/**
 * The tools of the `core` profile (Config.tools): the official nine and search_semantic, the recall
 * tool the server's instructions name (guide.ts), without the maintenance, reflection and tuning
 * tools, and without hybrid_search, whose every option of fusion and filtering costs 4 KB of
 * definitions (docs/tools.md).
 */
export const CORE_TOOLS: ReadonlySet<string> = new Set([...OFFICIAL_TOOLS, 'search_semantic']);

export interface ServerInfo {
  readonly name: string;
  readonly version: string;
}

const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false } as const;
const DESTRUCTIVE = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false } as const;
const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

/** A page when the caller asked for one (limit or offset); undefined keeps the official whole answer. */
function pageOf(limit: number | undefined, offset: number | undefined): Page | undefined {
  if (limit === undefined && offset === undefined) return undefined;
  return { limit: limit ?? LIMITS.maxGraphPage, offset: offset ?? 0 };
}

/** A page of each entity's observations when the caller asked for one; undefined keeps them all. */
function windowOf(offset: number | undefined, limit: number | undefined): ObservationWindow | undefined {
  if (limit === undefined && offset === undefined) return undefined;
  return { offset: offset ?? 0, limit: limit ?? LIMITS.maxObservationsPerEntity };
}

/**
 * The output schemas written here, made once for every instance: the SDK converts each tool's to
 * JSON Schema on its first call, which an instance built per request paid on every call
 * (outputSchemasOnce below keeps the conversion too).
 */
const CreateEntitiesOutput = z.object({ entities: z.array(s.EntityOutputSchema) });
const CreateRelationsOutput = z.object({ relations: z.array(s.RelationOutputSchema) });
const AddObservationsOutput = z.object({
  results: z.array(z.object({ entityName: z.string(), addedObservations: z.array(z.string()), superseded: z.string().optional() })),
});
const SuccessOutput = z.object(s.SuccessOutput);
const ReadGraphOutput = z.object(s.GraphOutput);
const SearchNodesOutput = z.object(s.SearchNodesOutput);
const OpenNodesOutput = z.object(s.OpenNodesOutput);

function success(message: string): CallToolResult {
  return structured({ success: true, message }, message);
}

/**
 * Where the change notifications of memory://knowledge-graph go: the instance's own connection
 * (stdio, in-process: subscribed 2025-era connections, and the 2026-07-28 subscriptions/listen
 * streams serveStdio routes them to), or a publisher outside the instance (HTTP, where an instance
 * lives for one request and the handler holds the listen streams).
 */
export type GraphChanges = 'connection' | { readonly publish: (uri: string) => void };

/** Whether a tool may run on this instance: undefined runs it, an answer refuses it (read-only tokens, src/http/read-only.ts). */
export type ToolGate = (name: string, annotations: ToolAnnotations | undefined) => CallToolResult | undefined;

export interface McpServerOptions {
  /** The protocol era the instance serves (the serving entries say which); a hand-connected instance is 2025-era. @default 'legacy' */
  readonly era?: 'legacy' | 'modern';
  /** @default 'connection' */
  readonly changes?: GraphChanges;
  /** @default every tool runs */
  readonly toolGate?: ToolGate;
  /** Which tools are served: `core` lists and answers only CORE_TOOLS. @default 'all' */
  readonly tools?: ToolProfile;
}

/**
 * Builds a server over a service. Side-effect free, and cheap after the first (its schemas are made
 * and converted once per process): the HTTP entry builds one per 2026-07-28 request and keeps a few
 * per namespace for 2025-era requests (legacy-json.ts), stdio one per connection. Connecting it is
 * the caller's job.
 */
export function createMcpServer(service: MemoryService, info: ServerInfo, logger: Logger, options: McpServerOptions = {}): McpServer {
  const era = options.era ?? 'legacy';
  const changes = options.changes ?? 'connection';
  // Subscribing is offered where an update can arrive: on a connection, or to a 2026-07-28 client
  // (a listen stream). A 2025-era request over stateless HTTP has no connection left to notify.
  const subscribable = changes === 'connection' || era === 'modern';
  const server = new McpServer(
    { name: info.name, version: info.version },
    { instructions: INSTRUCTIONS, capabilities: subscribable ? { resources: { subscribe: true } } : {} },
  );
  outputSchemasOnce(server);
  inputSchemasWithoutDialect(server);
  if (options.toolGate !== undefined) gateTools(server, options.toolGate);
  if (options.tools === 'core') onlyTools(server, CORE_TOOLS);
  registerPrompts(server);
  const subscribers = new Set<string>();

  /**
   * Wraps a handler: MemoryErrors become readable isError results, anything else is logged too.
   * What the call's writes redacted (the handler passes `tally` to the service) is said in the
   * answer (answers.ts withRedactions).
   */
  const guard =
    <A>(handler: (args: A, tally: RedactionTally) => Promise<CallToolResult>) =>
    async (args: A): Promise<CallToolResult> => {
      try {
        const tally = new RedactionTally();
        return withRedactions(await handler(args, tally), tally.counts());
      } catch (error) {
        if (!isMemoryError(error)) logger.warn('tool call failed', error);
        const message = isMemoryError(error)
          ? error.message
          : `Internal error: ${error instanceof Error ? error.message : String(error)}. Nothing was changed by this call; please report it if it repeats.`;
        return { content: [{ type: 'text', text: message }], isError: true };
      }
    };

  const mutated = (): void => {
    if (changes !== 'connection') changes.publish(RESOURCE_URI);
    // A 2025-era connection hears only of what it subscribed to; on a 2026-07-28 one serveStdio
    // sends the update down the subscriptions/listen streams whose filter names the resource.
    else if (era === 'modern' || subscribers.has(RESOURCE_URI))
      void server.server.sendResourceUpdated({ uri: RESOURCE_URI }).catch(() => undefined);
  };

  server.registerTool(
    'create_entities',
    {
      title: 'Create Entities',
      description: 'Create multiple new entities in the knowledge graph',
      inputSchema: s.createEntitiesInput,
      outputSchema: CreateEntitiesOutput,
      annotations: WRITE,
    },
    guard(async ({ entities }, tally) => {
      const added = await service.createEntities(
        entities.map((e) => ({ ...e, status: e.status === undefined ? undefined : parseStatus(e.status) })),
        tally,
      );
      mutated();
      return structured({ entities: added }, added);
    }),
  );

  server.registerTool(
    'create_relations',
    {
      title: 'Create Relations',
      description: 'Create multiple new relations between entities in the knowledge graph. Relations should be in active voice',
      inputSchema: s.createRelationsInput,
      outputSchema: CreateRelationsOutput,
      annotations: WRITE,
    },
    guard(async ({ relations }, tally) => {
      const added = await service.createRelations(relations, tally);
      mutated();
      return structured({ relations: added }, added);
    }),
  );

  server.registerTool(
    'add_observations',
    {
      title: 'Add Observations',
      description: 'Add new observations to existing entities in the knowledge graph',
      inputSchema: s.addObservationsInput,
      outputSchema: AddObservationsOutput,
      annotations: WRITE,
    },
    guard(async ({ observations }, tally) => {
      // Limbic's supersedes: the whole call goes to the maintenance store, in one transaction.
      const supersedes = observations.some((o) => o.supersedes !== undefined);
      const results = supersedes ? await service.supersede(observations, tally) : await service.addObservations(observations, tally);
      mutated();
      return structured({ results }, results);
    }),
  );

  server.registerTool(
    'delete_entities',
    {
      title: 'Delete Entities',
      description: 'Delete multiple entities and their associated relations from the knowledge graph',
      inputSchema: s.deleteEntitiesInput,
      outputSchema: SuccessOutput,
      annotations: DESTRUCTIVE,
    },
    guard(async ({ entityNames }) => {
      await service.deleteEntities(entityNames);
      mutated();
      return success('Entities deleted successfully');
    }),
  );

  server.registerTool(
    'delete_observations',
    {
      title: 'Delete Observations',
      description: 'Delete specific observations from entities in the knowledge graph',
      inputSchema: s.deleteObservationsInput,
      outputSchema: SuccessOutput,
      annotations: DESTRUCTIVE,
    },
    guard(async ({ deletions }) => {
      await service.deleteObservations(deletions);
      mutated();
      return success('Observations deleted successfully');
    }),
  );

  server.registerTool(
    'delete_relations',
    {
      title: 'Delete Relations',
      description: 'Delete multiple relations from the knowledge graph',
      inputSchema: s.deleteRelationsInput,
      outputSchema: SuccessOutput,
      annotations: DESTRUCTIVE,
    },
    guard(async ({ relations }) => {
      await service.deleteRelations(relations);
      mutated();
      return success('Relations deleted successfully');
    }),
  );

  server.registerTool(
    'read_graph',
    {
      title: 'Read Graph',
      description:
        'Read the entire knowledge graph. Limbic: page it (limit, offset), outline it (compact), page observations and relations (relationCount and next_relations_offset when there are more)',
      inputSchema: s.readGraphInput,
      outputSchema: ReadGraphOutput,
      annotations: READ,
    },
    guard(
      async ({
        limit,
        offset,
        compact: outline,
        observations_offset,
        observations_limit,
        relations_offset,
        relations_limit,
        include_ended,
      }) => {
        const observations = windowOf(observations_offset, observations_limit);
        if (outline === true && observations !== undefined) {
          return {
            content: [
              {
                type: 'text',
                text: 'compact: true carries no observations, so observations_offset and observations_limit have nothing to page: drop one or the other.',
              },
            ],
            isError: true,
          };
        }
        return structuredGraph('read_graph', {
          ...(await service.graphView({
            page: pageOf(limit, offset),
            compact: outline,
            observations,
            includeEnded: include_ended,
            relations: { offset: relations_offset, limit: relations_limit },
          })),
        });
      },
    ),
  );

  server.registerTool(
    'search_nodes',
    {
      title: 'Search Nodes',
      description:
        'Search for nodes in the knowledge graph based on a query: every entity whose name, type or an observation contains it (ignoring case and accents), best first',
      inputSchema: s.searchNodesInput,
      outputSchema: SearchNodesOutput,
      annotations: READ,
    },
    guard(async ({ query, limit, offset, observations_offset, observations_limit, relations_offset, relations_limit, include_ended }) =>
      structuredGraph('search_nodes', {
        ...(await service.graphView({
          query,
          page: pageOf(limit, offset),
          observations: windowOf(observations_offset, observations_limit),
          includeEnded: include_ended,
          relations: { offset: relations_offset, limit: relations_limit },
        })),
      }),
    ),
  );

  server.registerTool(
    'open_nodes',
    {
      title: 'Open Nodes',
      _meta: EXPLAIN_APP_META,
      description:
        "Open specific nodes in the knowledge graph by their names, with all their observations and relations. Limbic: a hub's relations come a page at a time (relationCount, next_relations_offset; relations_offset, relations_limit)",
      inputSchema: s.openNodesInput,
      outputSchema: OpenNodesOutput,
      annotations: READ,
    },
    guard(
      async ({
        names,
        include_superseded,
        include_ended,
        kinds,
        include_kinds,
        observations_offset,
        observations_limit,
        relations_offset,
        relations_limit,
      }) => {
        const window = windowOf(observations_offset, observations_limit);
        // History includes what ended: include_superseded lists ended relations as it always did.
        const includeEnded = include_ended === true || include_superseded === true;
        const relations = { offset: relations_offset, limit: relations_limit };
        const graph = await service.openNodes(names, { kinds, includeKinds: include_kinds, window, includeEnded, relations });
        return structuredGraph(
          'open_nodes',
          include_superseded === true ? { ...graph, ...(await service.maintenance.withHistory(graph, window)) } : { ...graph },
        );
      },
    ),
  );

  server.registerTool(
    'search_semantic',
    {
      title: 'Search Semantic',
      _meta: EXPLAIN_APP_META,
      description:
        'Recall entities by meaning and exact words at once (fused by z-scores), re-ranked by importance, recency and co-occurrence, best first. ' +
        'Each result shows the observations matching the query first; open_nodes reads the rest.',
      inputSchema: s.searchSemanticInput,
      outputSchema: o.SearchSemanticOutput,
      annotations: { ...READ, idempotentHint: false },
    },
    guard(async ({ query, limit, observations_limit, project }) => {
      const answer = await service.searchSemantic(query, limit ?? 10, observationBound(observations_limit), project);
      return compact({ ...answer }, semanticText(answer));
    }),
  );

  server.registerTool(
    'hybrid_search',
    {
      title: 'Hybrid Search',
      _meta: EXPLAIN_APP_META,
      description:
        'Search with every option: keyword syntax, legs, fusion (RRF, weighted, z-score), re-ranking, filters, paging, and a score breakdown per result',
      inputSchema: s.hybridSearchInput,
      outputSchema: o.HybridSearchOutput,
      annotations: { ...READ, idempotentHint: false },
    },
    guard(async (input) => {
      const answer = await service.hybridSearch(toHybridOptions(input));
      return compact({ ...answer }, hybridText(answer));
    }),
  );

  server.registerTool(
    'get_statistics',
    {
      title: 'Get Statistics',
      description:
        'Counts, database size, the state of the keyword and semantic indexes and of the model, and the ranking parameters in force',
      inputSchema: s.statisticsInput,
      outputSchema: o.StatisticsOutput,
      annotations: READ,
    },
    guard(async () => compact({ ...(await service.statistics()) })),
  );

  server.registerTool(
    'set_entity_status',
    {
      title: 'Set Entity Status',
      description: "Set an entity's lifecycle status: paused, completed and archived ones rank lower (0.85x, 0.70x, 0.50x), never hidden",
      inputSchema: s.setStatusInput,
      outputSchema: SuccessOutput,
      annotations: { ...WRITE, idempotentHint: true },
    },
    guard(async ({ entity_name, name: legacyName, status }) => {
      const name = entity_name ?? legacyName ?? '';
      const chosen = parseStatus(status) as EntityStatus;
      if (!(await service.setStatus(name, chosen))) {
        return {
          content: [{ type: 'text', text: `Entity with name ${name} not found. Create it first with create_entities.` }],
          isError: true,
        };
      }
      mutated();
      return success(`Status of ${name} set to ${chosen}`);
    }),
  );

  registerMaintenanceTools(server, service, guard, mutated);

  server.registerResource(
    'knowledge-graph',
    RESOURCE_URI,
    { title: 'Knowledge Graph', description: 'The full knowledge graph with all entities and relations', mimeType: 'application/json' },
    async (uri) => {
      const result = {
        contents: [
          { uri: uri.href, mimeType: 'application/json', text: JSON.stringify(await service.readGraph({ includeEnded: false }), null, 2) },
        ],
      };
      // As a tool's answer (answers.ts): over the bound, the client would drop the message and the session.
      const bytes = overAnswerBound(result, result.contents[0]?.text.length ?? 0);
      if (bytes !== undefined)
        throw new ProtocolError(
          ProtocolErrorCode.InvalidRequest,
          overBoundMessage(
            `The resource ${RESOURCE_URI}`,
            bytes,
            'A resource comes whole; read the graph with the read_graph tool instead, a page at a time',
          ),
        );
      return result;
    },
  );
  registerExplainApp(server);
  // resources/subscribe is 2025-era only (2026-07-28 names the resource in subscriptions/listen).
  if (changes === 'connection' && era === 'legacy') {
    server.server.setRequestHandler('resources/subscribe', (request) => {
      subscribers.add(request.params.uri);
      return {};
    });
    server.server.setRequestHandler('resources/unsubscribe', (request) => {
      subscribers.delete(request.params.uri);
      return {};
    });
  }

  return server;
}

/**
 * Puts `gate` in front of every tool registered on `server` from now on: a refused tool is still
 * listed with its schema, and a call to it gets the gate's answer without running, whatever its
 * arguments (the refusal is the answer a caller needs, not a validation error). Decided per tool at
 * registration, from the annotations the tool declares, so a tool added later is gated by what it
 * says of itself.
 */
function gateTools(server: McpServer, gate: ToolGate): void {
  type Config = { annotations?: ToolAnnotations; inputSchema?: StandardSchemaWithJSON };
  type Register = (name: string, config: Config, callback: unknown) => ReturnType<McpServer['registerTool']>;
  const register = server.registerTool.bind(server) as Register;
  const gated: Register = (name, config, callback) => {
    const refusal = gate(name, config.annotations);
    if (refusal === undefined) return register(name, config, callback);
    const inputSchema = config.inputSchema === undefined ? undefined : advertisedOnly(config.inputSchema);
    return register(name, { ...config, inputSchema }, () => refusal);
  };
  Object.assign(server, { registerTool: gated });
}

/** Each output schema's JSON Schema, as the SDK converted it for the first instance that registered it. */
const outputSchemaJsons = new WeakMap<StandardSchemaWithJSON, Record<string, unknown> | undefined>();

/**
 * Converts each output schema to JSON Schema once per process instead of once per instance: the
 * SDK converts a tool's on its first call (to shape the answer as tools/list advertised it), and the
 * HTTP entry builds instances per request. The conversion is the SDK's own (the tool's memoised
 * outputSchemaJson), only shared by the instances that register the same schema object.
 */
function outputSchemasOnce(server: McpServer): void {
  type Config = { outputSchema?: StandardSchemaWithJSON };
  type Register = (name: string, config: Config, callback: unknown) => ReturnType<McpServer['registerTool']>;
  const register = server.registerTool.bind(server) as Register;
  const once: Register = (name, config, callback) => {
    const tool = register(name, config, callback);
    const schema = config.outputSchema;
    if (schema === undefined) return tool;
    if (outputSchemaJsons.has(schema)) tool.outputSchemaJson = outputSchemaJsons.get(schema);
    else outputSchemaJsons.set(schema, tool.outputSchemaJson);
    return tool;
  };
  Object.assign(server, { registerTool: once });
}

/**
 * Every tool's input schema as tools/list shows it, without `$schema`: 2020-12 is what MCP assumes
 * of a schema that names no dialect, and the 55 bytes repeated on every tool are read by the model
 * in every conversation. Output schemas keep it: the client, not the model, compiles them.
 */
function inputSchemasWithoutDialect(server: McpServer): void {
  type Config = { inputSchema?: StandardSchemaWithJSON };
  type Register = (name: string, config: Config, callback: unknown) => ReturnType<McpServer['registerTool']>;
  const register = server.registerTool.bind(server) as Register;
  const plain: Register = (name, config, callback) =>
    register(name, config.inputSchema === undefined ? config : { ...config, inputSchema: withoutDialect(config.inputSchema) }, callback);
  Object.assign(server, { registerTool: plain });
}

/** Each input schema without its dialect, made once (instances are built per request over HTTP). */
const dialectless = new WeakMap<StandardSchemaWithJSON, StandardSchemaWithJSON>();

function withoutDialect(schema: StandardSchemaWithJSON): StandardSchemaWithJSON {
  const made = dialectless.get(schema);
  if (made !== undefined) return made;
  const plain = dialectFree(schema);
  dialectless.set(schema, plain);
  return plain;
}

function dialectFree(schema: StandardSchemaWithJSON): StandardSchemaWithJSON {
  const standard = schema['~standard'];
  const drop = (json: Record<string, unknown>): Record<string, unknown> => {
    const { $schema: _dialect, ...rest } = json;
    return rest;
  };
  return {
    '~standard': {
      ...standard,
      validate: standard.validate.bind(standard),
      jsonSchema: {
        input: (options) => drop(standard.jsonSchema.input(options)),
        output: (options) => standard.jsonSchema.output(options),
      },
    },
  };
}

/**
 * Registers from now on only the tools named in `served`: the others are neither listed nor
 * answered (a call gets the SDK's unknown-tool error), so their definitions cost a host nothing.
 */
function onlyTools(server: McpServer, served: ReadonlySet<string>): void {
  type Register = (name: string, ...rest: unknown[]) => ReturnType<McpServer['registerTool']> | undefined;
  const register = server.registerTool.bind(server) as Register;
  const only: Register = (name, ...rest) => (served.has(name) ? register(name, ...rest) : undefined);
  Object.assign(server, { registerTool: only });
}

/** `schema` as tools/list shows it, taking any arguments: for a tool that will refuse every call anyway. */
function advertisedOnly(schema: StandardSchemaWithJSON): StandardSchemaWithJSON {
  return { '~standard': { ...schema['~standard'], validate: (value: unknown) => ({ value }) } };
}
