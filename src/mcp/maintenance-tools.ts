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
        'Mark a relation as ended: it was true and no longer is. Answers list it only when asked (include_ended), with ended_at; create_relations makes it current again',
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
        'Clusters of near-duplicate observations of one entity, by meaning or by containment, with every matching pair. Read-only; heavy',
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
        'What to tidy: entities to split, duplicate observations, stale entities, entities near the split threshold. Read-only; heavy',
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
      description: 'Whether an entity is large enough to split, and its topics. Read-only; heavy',
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
      description: 'Propose a split of an oversized entity, one new entity per topic, for execute_entity_split; changes nothing. Heavy',
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
        'Move observations of an entity into new entities, linked parent contains child and child part_of parent. All or nothing. Heavy',
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
        'Record a reflection (a pattern, insight or lesson), an entity of type Reflection linked reflects_on to what it is about',
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
      description: 'Search reflections only, by words and meaning; each with what it is about',
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
        'Cluster related entities by meaning and co-occurrence, and write a reflection per new cluster, linked to its entities. Heavy',
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
