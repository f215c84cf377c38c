/**
 * `npm run bench:quality`: retrieval quality on LoCoMo and XQuAD with the real model, every mode,
 * printed as markdown and written to bench/results/quality-<date>.md.
 * Options: --locomo-samples N (default all 10), --only locomo|xquad, --model ID (an installed model;
 * default Limbic's default). The report is named for the model.
 */
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { BENCH_MODEL } from './harness.js';
import { runLocomo } from './locomo.js';
import { runXquad } from './xquad.js';

const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const only = option('--only');
const samples = Number(option('--locomo-samples') ?? Infinity);

const started = performance.now();
const parts = [
  `# Retrieval quality — ${new Date().toISOString().slice(0, 10)}`,
  '',
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}. Model: ${BENCH_MODEL}.`,
  'Modes: fts = BM25 keyword leg alone; semantic = KNN alone; hybrid-rrf = both legs fused by RRF (k=60);',
  'hybrid-limbic-* = the search_semantic pipeline (RRF, limbic re-rank, routing) with three base relevances: -spec = the spec\'s',
  '(cosine for KNN hits), -fused = the RRF rank, and hybrid-limbic (as shipped) = engrava\'s keyword and vector weights on the leg scores;',
  'hybrid-weighted = hybrid_search with weighted fusion',
  '(engrava\'s default weights) and the limbic re-rank; hybrid-graph = hybrid_search with RRF and the 1-hop graph boost (weight 0.1),',
  'on a second store whose turns are linked to the next turn (+followed_by). Reranking: no cross-encoder model is installable here.',
  'No access history: every entity is new.',
  '',
];
if (only !== 'xquad') parts.push('## LoCoMo', '', await runLocomo(samples), '');
if (only !== 'locomo') parts.push('## XQuAD', '', await runXquad(), '');
parts.push(`Total time: ${((performance.now() - started) / 1000).toFixed(0)} s.`);
const report = parts.join('\n');
console.log(report);
const out = join(import.meta.dirname, '..', 'results', `quality-${new Date().toISOString().slice(0, 10)}-${BENCH_MODEL}.md`);
writeFileSync(out, `${report}\n`);
console.error(`written to ${out}`);
