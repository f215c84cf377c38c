/**
 * `npm run bench:quality`: retrieval quality with the real model, every mode, on half A (where
 * parameters are chosen) and half B (held out) of each suite, printed as markdown and written to
 * bench/results/quality-<date>-<tag>.md (never over an existing report: a number is appended).
 * Options:
 *   --only small,locomo,xquad   the suites to run (default all three)
 *   --study                     also run the fusion study (study.ts) on the suites' recorded legs
 *   --save-probes FILE          write the recorded legs, for `tsx bench/quality/study.ts --probes FILE`
 *   --locomo-samples N          the first N conversations only (default all 10)
 *   --locomo-dates none|prefix|metadata   how turns hold their session date (default metadata)
 *   --locomo-half A|B           one half of LoCoMo only
 *   --no-graph                  skip LoCoMo's second store (turn-to-turn relations, hybrid-graph)
 *   --consolidate               LoCoMo before and after a consolidation run (reflections), instead of
 *                               the modes above (locomo-reflections.ts)
 *   --model ID                  an installed model (default Limbic's default)
 *   --tag NAME                  the report's name after the date (default: the model and suites)
 */
import { existsSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { BENCH_MODEL, type Probe } from './harness.js';
import { DATE_STYLES, runLocomo, type DateStyle } from './locomo.js';
import { runLocomoReflections } from './locomo-reflections.js';
import { runSmallMemory } from './small-memory.js';
import { runStudy, type SuiteName, type SuiteProbes } from './study.js';
import type { Half, Tally } from './tally.js';
import { runXquad } from './xquad.js';

const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const fail = (message: string): never => {
  console.error(message);
  process.exit(2);
};
const suites = (option('--only') ?? 'small,locomo,xquad').split(',') as SuiteName[];
for (const s of suites)
  if (!['small', 'locomo', 'xquad'].includes(s)) fail(`--only takes small, locomo and xquad, comma-separated; got "${s}".`);
const dates = (option('--locomo-dates') ?? 'metadata') as DateStyle;
if (!DATE_STYLES.includes(dates)) fail(`--locomo-dates takes ${DATE_STYLES.join(', ')}; got "${dates}".`);
const half = option('--locomo-half') as Half | undefined;
if (half !== undefined && half !== 'A' && half !== 'B') fail(`--locomo-half takes A or B; got "${half}".`);
const study = args.includes('--study');
const saveProbes = option('--save-probes');
const keepProbes = study || saveProbes !== undefined;

const started = performance.now();
const parts = [
  `# Retrieval quality — ${new Date().toISOString().slice(0, 10)}`,
  '',
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}. Model: ${BENCH_MODEL}. Command: \`npm run bench:quality -- ${args.join(' ')}\`.`,
  'Modes: fts = BM25 keyword leg alone; semantic = KNN alone; hybrid-rrf = both legs fused by RRF (k=60);',
  "hybrid-limbic = search_semantic as shipped (engrava's keyword and vector weights on the leg scores, limbic re-rank, routing);",
  "hybrid-limbic-spec / -fused = the limbic re-rank over the spec's bases (cosine for KNN hits / the RRF rank);",
  'hybrid-weighted = hybrid_search with weighted fusion',
  "(engrava's default weights) and the limbic re-rank; hybrid-defaults = hybrid_search with no options; hybrid-graph = hybrid_search with RRF and the 1-hop graph boost (weight 0.1),",
  'on a second store whose turns are linked to the next turn (+followed_by). Reranking: no cross-encoder model is installable here.',
  'No access history: every entity is new. Half A is where parameters are chosen; half B is held out.',
  '',
];
const probes: SuiteProbes = {};
const tallies: Partial<Record<SuiteName, Tally>> = {};
const timings: string[] = [];
const section = async (name: SuiteName, title: string, run: (into?: Probe[]) => Promise<{ report: string; tally: Tally }>) => {
  if (!suites.includes(name)) return;
  const t0 = performance.now();
  const into: Probe[] | undefined = keepProbes ? [] : undefined;
  const { report, tally } = await run(into);
  if (into !== undefined) probes[name] = into;
  tallies[name] = tally;
  timings.push(`${title} ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  parts.push(`## ${title}`, '', report, '');
};
await section('small', 'Small memory', (into) => runSmallMemory(into));
await section('locomo', args.includes('--consolidate') ? 'LoCoMo with reflections' : 'LoCoMo', (into) =>
  args.includes('--consolidate')
    ? runLocomoReflections({ samples: Number(option('--locomo-samples') ?? Infinity), dates, half })
    : runLocomo({ samples: Number(option('--locomo-samples') ?? Infinity), dates, half, graph: !args.includes('--no-graph') }, into),
);
await section('xquad', 'XQuAD', (into) => runXquad(into));
if (saveProbes !== undefined) writeFileSync(saveProbes, JSON.stringify(probes));
if (study) {
  const t0 = performance.now();
  parts.push('## Fusion study', '', runStudy(probes, tallies), '');
  timings.push(`fusion study ${((performance.now() - t0) / 1000).toFixed(0)} s`);
}
parts.push(`Time: ${timings.join(', ')}; total ${((performance.now() - started) / 1000).toFixed(0)} s.`);
const report = parts.join('\n');
console.log(report);
const tag = option('--tag') ?? `${BENCH_MODEL}-${suites.join('-')}`;
const base = join(import.meta.dirname, '..', 'results', `quality-${new Date().toISOString().slice(0, 10)}-${tag}`);
let out = `${base}.md`;
for (let n = 2; existsSync(out); n++) out = `${base}-${n}.md`;
writeFileSync(out, `${report}\n`);
console.error(`written to ${out}`);
