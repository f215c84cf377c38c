/**
 * The context study (issue 18, part 3): search_semantic on LoCoMo under variants of its candidate
 * depth and its context stage (src/service/search/context.ts): stored dates against the query's
 * time expressions, and related candidates. One store per conversation, embedded once (cached on
 * disk: embed-cache.ts); every variant asks every question of it. Turns hold their session date as
 * a `metadata` observation (locomo.ts), and each is related to the next turn of its session
 * (`followed_by`), stored after the vectors were made so every variant ranks the same vectors as the
 * plain store. The variant is chosen on half A (LoCoMo recall@5 over categories 1-4) and reported on
 * half B; depth and weights are all the study chooses.
 *
 *   npx tsx bench/quality/context.ts [--locomo-samples N] [--variants 'NAME;NAME'] [--out FILE]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { EXPANSION_FACTOR } from '../../src/core/rank/constants.js';
import { DEFAULT_CONTEXT_WEIGHTS, type ContextWeights } from '../../src/core/rank/context-boost.js';
import type { SearchRequest } from '../../src/service/search/request.js';
import { cachedEmbedder } from './embed-cache.js';
import { Corpus, f3, loadModel, requireData } from './harness.js';
import { CATEGORY_NAMES, goldIds, locomoGroups, locomoHalves, turnsOf, type Sample } from './locomo.js';
import { Tally, type Half } from './tally.js';

const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const LIMIT = 10;
/** How much half-A hit@1 a variant may lose against D=150 without context and still be chosen. */
const HIT1_SLACK = 0.01;

/** The variants: a name and search_semantic's request overrides. */
function variants(): [string, Partial<SearchRequest>][] {
  const out: [string, Partial<SearchRequest>][] = [
    [`D=x${EXPANSION_FACTOR} no context (before)`, { depth: LIMIT * EXPANSION_FACTOR, context: undefined }],
    ['D=150 no context', { depth: 150, context: undefined }],
  ];
  for (const timeWeight of [0, 1])
    for (const graphWeight of [0, 0.25, 0.5, 0.75, 1])
      for (const graphBelowSource of graphWeight === 0 ? [false] : [false, true]) {
        if (timeWeight === 0 && graphWeight === 0) continue;
        const context: ContextWeights = { timeWeight, lateShare: 0.5, graphWeight, graphBelowSource };
        out.push([`D=150 time=${timeWeight} graph=${graphWeight}${graphBelowSource ? ' below' : ''}`, { depth: 150, context }]);
      }
  // Write-order neighbours (context-boost.ts), with the shipped time weight and without the graph.
  for (const neighbourWeight of [0.25, 0.5, 0.75, 1])
    for (const neighbourSpan of [1, 2])
      for (const mode of ['share', 'below', 'gap'] as const) {
        const context: ContextWeights = {
          timeWeight: 1,
          lateShare: 0.5,
          graphWeight: 0,
          neighbourWeight,
          neighbourSpan,
          neighbourMode: mode,
        };
        out.push([
          `D=150 time=1 near=${neighbourWeight} span=${neighbourSpan}${mode === 'share' ? '' : ` ${mode}`}`,
          { depth: 150, context },
        ]);
      }
  // Both links at once, as search_semantic ships them (context-boost.ts DEFAULT_CONTEXT_WEIGHTS).
  out.push(['shipped: D=150 ' + JSON.stringify(DEFAULT_CONTEXT_WEIGHTS), { depth: 150, context: DEFAULT_CONTEXT_WEIGHTS }]);
  return out;
}

const data = JSON.parse(readFileSync(requireData('locomo/locomo10.json'), 'utf8')) as Sample[];
const halves = locomoHalves(data.map((s) => s.sample_id));
const embedder = cachedEmbedder(await loadModel());
const tally = new Tally();
const now = Date.UTC(2026, 0, 1);
// `--variants 'A;B'`: only these (exact names), e.g. to read recall@10 of a few without the whole grid.
const only = option('--variants')?.split(';');
const list = variants().filter(([n]) => only === undefined || only.includes(n));
const started = performance.now();
let questions = 0;
for (const sample of data.slice(0, Number(option('--locomo-samples') ?? Infinity))) {
  const half = halves.get(sample.sample_id) ?? 'A';
  const { entities, additions, next, writtenAt } = turnsOf(sample, 'metadata');
  const corpus = new Corpus(embedder);
  await corpus.load(entities, now, [], additions, writtenAt);
  if (!args.includes('--no-relations')) await corpus.relateKeepingVectors(next, now);
  const ids = await corpus.ids(entities.map((e) => e.name));
  for (const qa of sample.qa) {
    const gold = goldIds(qa.evidence, ids);
    if (gold.size === 0) continue;
    questions++;
    const groups = locomoGroups(`cat${qa.category}`);
    for (const [name, overrides] of list)
      tally.add(name, half, groups, await corpus.searchSemantic(qa.question, LIMIT, now, overrides), gold);
  }
  await corpus.close();
  process.stderr.write(`context: ${sample.sample_id} (half ${half}) done, ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
}

const headline = (name: string, half: Half): number => tally.mean(name, half, 'all 1-4', 'recall5');
const hit1 = (name: string, half: Half): number => tally.mean(name, half, 'all 1-4', 'hit1');
// The guard is fixed before any half-B number is read: recall@5 may not be bought with the first place.
const floor = hit1('D=150 no context', 'A') - HIT1_SLACK;
const chosen =
  list
    .map(([n]) => n)
    .filter((n) => hit1(n, 'A') >= floor)
    .sort((a, b) => headline(b, 'A') - headline(a, 'A'))[0] ?? '';
const groups = ['cat1', 'cat2', 'cat3', 'cat4', 'cat5', 'all 1-4'];
const row = (name: string): string =>
  `| ${name === chosen ? `**${name}**` : name} | ${(['A', 'B'] as const)
    .map((h) =>
      [...groups.map((g) => f3(tally.mean(name, h, g, 'recall5'))), f3(hit1(name, h)), f3(tally.mean(name, h, 'all 1-4', 'mrr'))].join(
        ' | ',
      ),
    )
    .join(' | ')} |`;
const report = [
  `Context study: search_semantic on LoCoMo${args.includes('--no-relations') ? ' (turns unrelated)' : ' (turns related by followed_by)'}, ${questions} questions, limit ${LIMIT}, ${list.length} variants; chosen on half A by recall@5 over categories 1-4`,
  `among the variants whose half-A hit@1 (1-4) is at least D=150's minus ${HIT1_SLACK}.`,
  `Machine ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${loadavg()
    .map((x) => x.toFixed(2))
    .join(
      ' ',
    )} at the end; ${((performance.now() - started) / 1000).toFixed(0)} s; embeddings cached ${embedder.counts.hits}, made ${embedder.counts.misses}.`,
  '',
  `**Chosen on half A: \`${chosen}\`.**`,
  '',
  'recall@5 per category, then hit@1 and MRR over categories 1-4 (half A | half B):',
  '',
  `| variant | ${(['A', 'B'] as const).map((h) => [...groups.map((g) => `${h} ${CATEGORY_NAMES[g] ?? g}`), `${h} hit@1`, `${h} MRR`].join(' | ')).join(' | ')} |`,
  `|---|${groups.map(() => '---|---|').join('')}---|---|---|---|`,
  ...list.map(([n]) => row(n)),
  '',
  tally.table(
    'B',
    ['cat1', 'cat2', 'cat3', 'cat4', 'cat5', 'all 1-4', 'all 1-5'],
    ['recall5', 'recall10', 'hit1', 'mrr'],
    CATEGORY_NAMES,
    only === undefined ? [list[0]![0], list[1]![0], chosen] : list.map(([n]) => n),
  ),
  '',
].join('\n');
console.log(report);
const out = option('--out');
if (out !== undefined) writeFileSync(out, `${report}\n`);
