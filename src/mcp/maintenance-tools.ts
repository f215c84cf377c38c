/**
 * The maintenance tools over MCP (docs/tools.md, "Maintenance"), with Limbic's schemas
 * and error style. The heavy ones answer a retryable "busy" result when every slot is taken
 * (heavy-slots.ts); it carries structuredContent so a client can tell it from a real failure.
 */
import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import type { MemoryService } from '../service/memory-service.js';
import { HeavyBusyError } from '../service/heavy-slots.js';
import type { RedactionTally } from '../core/text/redaction.js';
import { compact } from './answers.js';
import * as o from './output-schemas.js';
import * as s from './schemas.js';

/** server.ts's guard: errors as isError results, and `tally` (what the call's writes redacted) said in the answer. */
type Guard = <A>(handler: (args: A, tally: RedactionTally) => Promise<CallToolResult>) => (args: A) => Promise<CallToolResult>;

const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

/** The busy answer, before the general guard turns it into plain text. */
const heavy =
  <A>(handler: (args: A, tally: RedactionTally) => Promise<CallToolResult>) =>
  async (args: A, tally: RedactionTally): Promise<CallToolResult> => {
    try {
      return await handler(args, tally);
    } catch (error) {
      if (!(error instanceof HeavyBusyError)) throw error;
      return {
        content: [{ type: 'text', text: error.message }],
        structuredContent: { error: 'server_busy', code: 'heavy_tool_backpressure', message: error.message, retryable: true },
        isError: true,
      };
    }
  };

export function registerMaintenanceTools(server: McpServer, service: MemoryService, guard: Guard, mutated: () => void): void {
  const m = service.maintenance;

  server.registerTool(
    'end_relation',
    {
      title: 'End Relation',
      description:
        'Mark a relation as ended (it was true, and is no longer). It stays in read_graph and open_nodes (include_superseded shows ended_at) but stops boosting search ranking. create_relations with the same triple makes it current again',
      inputSchema: s.endRelationInput,
      outputSchema: o.EndRelationOutput,
      annotations: WRITE,
    },
    guard(async ({ from, to, relationType }) => {
      const answer = await m.endRelation({ from, to, relationType });
      mutated();
      return compact(answer);
    }),
  );

  server.registerTool(
    'find_duplicate_observations',
    {
      title: 'Find Duplicate Observations',
      description:
        'Clusters of near-duplicate observations of one entity: same meaning (cosine >= threshold) or one contained in another twice as long (word containment >= containment_threshold), with every matching pair and its score. Read-only; heavy',
      inputSchema: s.findDuplicateObservationsInput,
      outputSchema: o.FindDuplicatesOutput,
      annotations: READ,
    },
    guard(
      heavy(async ({ entity_name, threshold, containment_threshold }) =>
        compact(
          await m.findDuplicateObservations(entity_name, {
            ...(threshold === undefined ? {} : { similarity: threshold }),
            ...(containment_threshold === undefined ? {} : { containment: containment_threshold }),
          }),
        ),
      ),
    ),
  );

  server.registerTool(
    'consolidation_report',
    {
      title: 'Consolidation Report',
      description:
        "What to tidy: entities to split (over their type's size threshold, with distinct topics), clusters of duplicate observations, stale entities (rarely and not recently accessed), and entities near the split threshold. Read-only; heavy",
      inputSchema: s.consolidationReportInput,
      outputSchema: o.ConsolidationReportOutput,
      annotations: READ,
    },
    guard(
      heavy(async ({ stale_days, max_duplicate_entities }) =>
        compact(await m.consolidationReport(stale_days ?? 90, max_duplicate_entities ?? 100)),
      ),
    ),
  );

  server.registerTool(
    'analyze_entity_split',
    {
      title: 'Analyze Entity Split',
      description:
        'Whether an entity is large enough to split (Sesion 15, Proyecto 25, others 20 observations) and its topics, by meaning or keywords. Read-only; heavy',
      inputSchema: s.entityNameInput,
      outputSchema: o.AnalyzeSplitOutput,
      annotations: READ,
    },
    guard(heavy(async ({ entity_name }) => compact(await m.analyzeEntitySplit(entity_name)))),
  );

  server.registerTool(
    'propose_entity_split',
    {
      title: 'Propose Entity Split',
      description:
        'A split of an oversized entity into one new entity per topic, with the relations to create; nothing is changed. Pass the approved splits to execute_entity_split. Heavy',
      inputSchema: s.entityNameInput,
      outputSchema: o.ProposeSplitOutput,
      annotations: READ,
    },
    guard(heavy(async ({ entity_name }) => compact(await m.proposeEntitySplit(entity_name)))),
  );

  server.registerTool(
    'execute_entity_split',
    {
      title: 'Execute Entity Split',
      description:
        "Moves observations of an entity into new entities linked to it (or to parent_entity_name): parent contains child, child part_of parent. All or nothing; new names must be free and observations must be the original's current ones. Heavy",
      inputSchema: s.executeEntitySplitInput,
      outputSchema: o.ExecuteSplitOutput,
      annotations: { ...WRITE, idempotentHint: false },
    },
    guard(
      heavy(async ({ entity_name, approved_splits, parent_entity_name }, tally) => {
        const answer = await m.executeEntitySplit(entity_name, approved_splits, parent_entity_name, tally);
        mutated();
        return compact(answer);
      }),
    ),
  );

  const r = service.reflections;

  server.registerTool(
    'add_reflection',
    {
      title: 'Add Reflection',
      description:
        'Record a reflection (a pattern, insight or lesson) as an entity of type "Reflection" linked reflects_on to the entities it is about. Found by every search; hybrid_search can leave reflections out, boost them or search only them',
      inputSchema: s.addReflectionInput,
      outputSchema: o.AddReflectionOutput,
      annotations: { ...WRITE, idempotentHint: false },
    },
    guard(async (input, tally) => {
      const answer = await r.add(input, tally);
      mutated();
      return compact(answer);
    }),
  );

  server.registerTool(
    'search_reflections',
    {
      title: 'Search Reflections',
      description: 'Search reflections only, by words and meaning, ranked as hybrid_search ranks; each with what it is about',
      inputSchema: s.searchReflectionsInput,
      outputSchema: o.SearchReflectionsOutput,
      annotations: { ...READ, idempotentHint: false },
    },
    guard(async ({ query, limit }) => compact(await r.search(query, limit ?? 10))),
  );

  server.registerTool(
    'run_consolidation',
    {
      title: 'Run Consolidation',
      description:
        'Cluster related entities by meaning (or shared words without a model) and co-occurrence, and write one reflection per cluster, linked to its entities. No LLM; a theme already reflected is kept, so runs can repeat. Heavy',
      inputSchema: s.runConsolidationInput,
      outputSchema: o.RunConsolidationOutput,
      annotations: { ...WRITE, idempotentHint: true },
    },
    guard(
      heavy(async ({ max_entities, min_size, dry_run }) => {
        const answer = await r.consolidate({
          ...(max_entities === undefined ? {} : { maxEntities: max_entities }),
          ...(min_size === undefined ? {} : { minSize: min_size }),
          ...(dry_run === undefined ? {} : { dryRun: dry_run }),
        });
        if (dry_run !== true) mutated();
        return compact(answer);
      }),
    ),
  );

  server.registerTool(
    'find_split_candidates',
    {
      title: 'Find Split Candidates',
      description: 'Every entity that analyze_entity_split says should be split, with its analysis. Read-only; heavy',
      inputSchema: s.findSplitCandidatesInput,
      outputSchema: o.FindSplitCandidatesOutput,
      annotations: READ,
    },
    guard(heavy(async () => compact({ ...(await m.findSplitCandidates()) }))),
  );
}
