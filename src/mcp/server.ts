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
import { isMemoryError } from '../core/errors.js';
import { LIMITS } from '../core/limits.js';
import type { Logger } from '../core/logger.js';
import { parseStatus, type EntityStatus } from '../core/types.js';
import type { MemoryService, ObservationWindow, Page } from '../service/memory-service.js';
import { INSTRUCTIONS, registerPrompts } from './guide.js';
import { toHybridOptions } from './hybrid-options.js';
import { registerMaintenanceTools } from './maintenance-tools.js';
import { compact, overAnswerBound, overBoundMessage, structured } from './answers.js';
import { EXPLAIN_APP_META, registerExplainApp } from './app/explain-app.js';
import { hybridText, semanticText } from './search-text.js';
import * as o from './output-schemas.js';
import * as s from './schemas.js';

export const RESOURCE_URI = 'memory://knowledge-graph';

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
}

/**
 * Builds a server over a service. Cheap and side-effect free (the HTTP entry builds one per request,
 * stdio one per connection): connecting it is the caller's job.
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
  if (options.toolGate !== undefined) gateTools(server, options.toolGate);
  registerPrompts(server);
  const subscribers = new Set<string>();

  /** Wraps a handler: MemoryErrors become readable isError results, anything else is logged too. */
  const guard =
    <A>(handler: (args: A) => Promise<CallToolResult>) =>
    async (args: A): Promise<CallToolResult> => {
      try {
        return await handler(args);
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
      outputSchema: z.object({ entities: z.array(s.EntityOutputSchema) }),
      annotations: WRITE,
    },
    guard(async ({ entities }) => {
      const added = await service.createEntities(
        entities.map((e) => ({ ...e, status: e.status === undefined ? undefined : parseStatus(e.status) })),
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
      outputSchema: z.object({ relations: z.array(s.RelationOutputSchema) }),
      annotations: WRITE,
    },
    guard(async ({ relations }) => {
      const added = await service.createRelations(relations);
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
      outputSchema: z.object({
        results: z.array(z.object({ entityName: z.string(), addedObservations: z.array(z.string()), superseded: z.string().optional() })),
      }),
      annotations: WRITE,
    },
    guard(async ({ observations }) => {
      // Limbic's supersedes: the whole call goes to the maintenance store, in one transaction.
      const supersedes = observations.some((o) => o.supersedes !== undefined);
      const results = supersedes ? await service.supersede(observations) : await service.addObservations(observations);
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
      outputSchema: z.object(s.SuccessOutput),
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
      outputSchema: z.object(s.SuccessOutput),
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
      outputSchema: z.object(s.SuccessOutput),
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
        "Read the entire knowledge graph. Limbic: limit/offset read it a page at a time (with total and next_offset), compact gives names, types and observation counts only, and observations_offset/observations_limit page each entity's observations",
      inputSchema: s.readGraphInput,
      outputSchema: z.object(s.GraphOutput),
      annotations: READ,
    },
    guard(async ({ limit, offset, compact: outline, observations_offset, observations_limit }) => {
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
      return structured({ ...(await service.graphView({ page: pageOf(limit, offset), compact: outline, observations })) });
    }),
  );

  server.registerTool(
    'search_nodes',
    {
      title: 'Search Nodes',
      description:
        "Search for nodes in the knowledge graph based on a query. Returns every entity whose name, type or an observation contains the query (ignoring case and accents), best matches first. Limbic: limit/offset return one page, with total and next_offset; observations_offset/observations_limit page each entity's observations",
      inputSchema: s.searchNodesInput,
      outputSchema: z.object(s.SearchNodesOutput),
      annotations: READ,
    },
    guard(async ({ query, limit, offset, observations_offset, observations_limit }) =>
      structured({
        ...(await service.graphView({
          query,
          page: pageOf(limit, offset),
          observations: windowOf(observations_offset, observations_limit),
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
        "Open specific nodes in the knowledge graph by their names. Limbic: kinds keeps only observations of those kinds; include_kinds shows each observation's kind; observations_offset/observations_limit return a page of each entity's observations (with observationCount and next_observations_offset), for an entity too large for one answer",
      inputSchema: s.openNodesInput,
      outputSchema: z.object(s.OpenNodesOutput),
      annotations: READ,
    },
    guard(async ({ names, include_superseded, kinds, include_kinds, observations_offset, observations_limit }) => {
      const window = windowOf(observations_offset, observations_limit);
      const graph = await service.openNodes(names, { kinds, includeKinds: include_kinds, window });
      return structured(include_superseded === true ? await service.maintenance.withHistory(graph, window) : { ...graph });
    }),
  );

  server.registerTool(
    'search_semantic',
    {
      title: 'Search Semantic',
      _meta: EXPLAIN_APP_META,
      description:
        "Recall entities by meaning and by exact words at once (embeddings + BM25, fused by each leg's score strength as z-scores), re-ranked by importance, recency and co-occurrence, best first. " +
        'Results carry limbic_score (the order), its scoring breakdown and distance (semantic hits); the answer says its mode and routing_strategy once.',
      inputSchema: s.searchSemanticInput,
      outputSchema: o.SearchSemanticOutput,
      annotations: { ...READ, idempotentHint: false },
    },
    guard(async ({ query, limit, project }) => {
      const answer = await service.searchSemantic(query, limit ?? 10, project);
      return compact({ ...answer }, semanticText(answer));
    }),
  );

  server.registerTool(
    'hybrid_search',
    {
      title: 'Hybrid Search',
      _meta: EXPLAIN_APP_META,
      description:
        'Full control of search: keyword (BM25, with phrase/AND/OR/NOT/prefix/column syntax) and semantic legs, RRF (default), weighted or z-score fusion, ' +
        'limbic re-rank on or off, graph-aware boost, filters (types, status, kinds, dates, names), stable paging, and a score breakdown per result. ' +
        'explain_query adds per-leg timings and fusion overlap.',
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
        'Counts of entities, observations and relations, database size, the state of keyword and semantic indexes, and the ranking parameters in force (GAMMA, BETA_SAL, RRF k: defaults, or tuned by "limbic tune --apply")',
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
      description:
        "Set an entity's lifecycle status. Paused, completed and archived entities rank lower in search_semantic (0.85x, 0.70x, 0.50x) but are never hidden",
      inputSchema: s.setStatusInput,
      outputSchema: z.object(s.SuccessOutput),
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
        contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(await service.readGraph(), null, 2) }],
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

/** `schema` as tools/list shows it, taking any arguments: for a tool that will refuse every call anyway. */
function advertisedOnly(schema: StandardSchemaWithJSON): StandardSchemaWithJSON {
  return { '~standard': { ...schema['~standard'], validate: (value: unknown) => ({ value }) } };
}
