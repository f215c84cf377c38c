/** `limbic search QUERY`: the graph searched as the hybrid_search tool does, with the same options. */
import type { Command } from 'commander';
import { HybridSearchInputSchema, toHybridOptions } from '../../mcp/hybrid-options.js';
import type { App } from '../app.js';
import { fail, print } from '../output.js';
import { searchText, wantsJson } from '../readable.js';

const collect = (value: string, previous: string[] = []): string[] => [
  ...previous,
  ...value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean),
];

export function registerSearchCommand(program: Command, app: App): void {
  program
    .command('search')
    .description('search the graph as the hybrid_search tool does (same options); JSON with --json, or when not printing to a terminal')
    .argument('<query...>', 'what to look for (keyword syntax: "phrases", AND/OR/NOT, prefix*, name:/type:/obs:)')
    .option('-l, --limit <n>', 'results per page (1-100)', '10')
    .option('--offset <n>', 'results to skip, for paging', '0')
    .option('--modes <modes>', 'legs to run: fts, semantic or fts,semantic', collect)
    .option('--fusion <method>', "zscore (default: search_semantic's ranking), rrf or weighted")
    .option('--rrf-k <k>', 'RRF smoothing constant (1-1000; default the value in force, see limbic tune)')
    .option('--weight <signal=w>', 'weighted-fusion weight, repeatable: fts, vector, recency, priority, graph', collect)
    .option('--no-limbic', 'rank by fusion alone, without the limbic re-rank')
    .option('--rerank', 'cross-encoder re-rank (when installed)')
    .option('--type <types>', 'only these entity types (repeatable or comma-separated)', collect)
    .option('--status <statuses>', 'only these statuses', collect)
    .option('--kind <kinds>', 'only entities with observations of these kinds', collect)
    .option('--created-after <date>', 'ISO date')
    .option('--created-before <date>', 'ISO date')
    .option('--updated-after <date>', 'ISO date')
    .option('--updated-before <date>', 'ISO date')
    .option('--name <names>', 'only these entity names', collect)
    .option(
      '--project <key>',
      "search from inside this project (other projects' captured sessions hidden, its own first); default: every project",
    )
    .option('--explain', 'add per-leg timings and fusion overlap')
    .option('--json', 'print the whole answer as JSON')
    .action(async (words: string[], o: Record<string, unknown>) => {
      const weights = Object.fromEntries(
        ((o.weight as string[] | undefined) ?? []).map((pair) => {
          const [signal, value] = pair.split('=');
          return [signal ?? '', Number(value)];
        }),
      );
      const parsed = HybridSearchInputSchema.safeParse({
        query: words.join(' '),
        limit: Number(o.limit),
        offset: Number(o.offset),
        search_modes: o.modes,
        fusion_method: o.fusion,
        rrf_k: o.rrfK === undefined ? undefined : Number(o.rrfK),
        weights: Object.keys(weights).length === 0 ? undefined : weights,
        limbic: o.limbic !== false,
        rerank: o.rerank === true,
        filters: {
          entity_types: o.type,
          status: o.status,
          observation_kinds: o.kind,
          created_after: o.createdAfter,
          created_before: o.createdBefore,
          updated_after: o.updatedAfter,
          updated_before: o.updatedBefore,
          names: o.name,
        },
        explain_query: o.explain === true,
        project: o.project,
      });
      if (!parsed.success) {
        fail(new Error(parsed.error.issues.map((i) => `${i.path.join('.') || 'option'}: ${i.message}`).join('; ')));
      }
      const service = app.service(app.existingConfig('search'));
      const answer = await service.hybridSearch(toHybridOptions(parsed.data));
      if (wantsJson(o.json === true, process.stdout.isTTY) || o.explain === true) print(answer);
      else process.stdout.write(searchText(answer));
      await service.close();
    });
}
