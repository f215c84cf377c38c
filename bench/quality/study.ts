/**
 * The fusion study (issue 18, "fusion that respects strength"): every variant of fusion.ts ranks
 * every question of the suites offline from its recorded legs; the variant with the best mean of
 * the suites' headline metrics on half A is chosen, and reported on half B beside the shipped
 * modes. Headlines: LoCoMo recall@5 over categories 1-4, XQuAD hit@1 over the four directions,
 * small-memory hit@1.
 * Run alone on saved legs: tsx bench/quality/study.ts --probes FILE (written by run.ts --save-probes).
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { EntityId } from '../../src/core/types.js';
import { f3, type Probe } from './harness.js';
import { REPRODUCTIONS, studyGrid, type Variant } from './fusion.js';
import { CATEGORY_NAMES, LOCOMO_GROUPS, locomoGroups } from './locomo.js';
import { SMALL_GROUPS } from './small-memory.js';
import { Tally, type Half, type Metric } from './tally.js';
import { XQUAD_GROUPS } from './xquad.js';

export type SuiteName = 'locomo' | 'xquad' | 'small';
export type SuiteProbes = Partial<Record<SuiteName, Probe[]>>;

interface SuiteSpec {
  readonly title: string;
  readonly headline: { readonly group: string; readonly metric: Metric; readonly label: string };
  readonly groups: readonly string[];
  readonly labels: Readonly<Record<string, string>>;
  readonly metrics: readonly Metric[];
  readonly groupsOf: (group: string) => string[];
}

export const SUITES: Readonly<Record<SuiteName, SuiteSpec>> = {
  locomo: {
    title: 'LoCoMo',
    headline: { group: 'all 1-4', metric: 'recall5', label: 'LoCoMo R@5' },
    groups: LOCOMO_GROUPS,
    labels: CATEGORY_NAMES,
    metrics: ['recall5', 'recall10', 'hit1', 'mrr'],
    groupsOf: locomoGroups,
  },
  xquad: {
    title: 'XQuAD',
    headline: { group: 'all', metric: 'hit1', label: 'XQuAD hit@1' },
    groups: XQUAD_GROUPS,
    labels: {},
    metrics: ['hit1', 'hit5', 'mrr'],
    groupsOf: (g) => [g, 'all'],
  },
  small: {
    title: 'Small memory',
    headline: { group: 'all', metric: 'hit1', label: 'small hit@1' },
    groups: SMALL_GROUPS,
    labels: {},
    metrics: ['hit1', 'mrr', 'recall5'],
    groupsOf: (g) => [g, 'all'],
  },
};

function evaluate(variants: readonly Variant[], suites: SuiteProbes): Map<SuiteName, Tally> {
  const tallies = new Map<SuiteName, Tally>();
  for (const [name, probes] of Object.entries(suites) as [SuiteName, Probe[]][]) {
    const spec = SUITES[name];
    const tally = new Tally();
    const golds = probes.map((p) => new Set<EntityId>(p.gold));
    for (const v of variants) {
      probes.forEach((p, i) => tally.add(v.name, p.half, spec.groupsOf(p.group), v.rank(p.legs, p.limit), golds[i] as Set<EntityId>));
    }
    tallies.set(name, tally);
  }
  return tallies;
}

/**
 * The study's report. `shipped`: the suites' tallies of the real pipeline, to check that the
 * reproductions score exactly as it does.
 */
export function runStudy(suites: SuiteProbes, shipped: Partial<Record<SuiteName, Tally>> = {}): string {
  const started = performance.now();
  const names = (Object.keys(suites) as SuiteName[]).filter((n) => (suites[n]?.length ?? 0) > 0);
  const repro = REPRODUCTIONS.map((r) => ({ ...r.variant, name: `${r.mode} (shipped)` }));
  const grid = studyGrid();
  const tallies = evaluate([...repro, ...grid], suites);
  const headline = (variant: string, suite: SuiteName, half: Half): number => {
    const h = SUITES[suite].headline;
    return tallies.get(suite)?.mean(variant, half, h.group, h.metric) ?? NaN;
  };
  const objective = (variant: string, half: Half): number => names.reduce((sum, n) => sum + headline(variant, n, half), 0) / names.length;
  const all = [...repro, ...grid];
  const byA = [...grid].sort((a, b) => objective(b.name, 'A') - objective(a.name, 'A'));
  const winner = byA[0] as Variant;

  const header = `| variant | mean A | mean B | ${names.map((n) => `${SUITES[n].headline.label} A | B`).join(' | ')} |`;
  const rule = `|---|---|---|${names.map(() => '---|---|').join('')}`;
  const row = (v: Variant): string =>
    `| ${v.name} | ${f3(objective(v.name, 'A'))} | ${f3(objective(v.name, 'B'))} | ${names.map((n) => `${f3(headline(v.name, n, 'A'))} | ${f3(headline(v.name, n, 'B'))}`).join(' | ')} |`;

  const lines = [
    `${grid.length} variants over ${names.map((n) => `${suites[n]?.length} ${SUITES[n].title} questions`).join(', ')}; chosen by the mean of the headlines on half A (${names.map((n) => SUITES[n].headline.label).join(', ')}).`,
    '',
    `**Chosen on half A: \`${winner.name}\`.**`,
    '',
    '### The shipped modes and the chosen variant',
    '',
    header,
    rule,
    ...[...repro, winner].map(row),
    '',
  ];

  // The reproductions must match the real pipeline wherever both ran.
  const checks: string[] = [];
  for (const n of names) {
    const real = shipped[n];
    if (real === undefined) continue;
    for (const r of REPRODUCTIONS) {
      for (const half of ['A', 'B'] as const) {
        const h = SUITES[n].headline;
        const a = real.mean(r.mode, half, h.group, h.metric);
        const b = headline(`${r.mode} (shipped)`, n, half);
        if (!Number.isNaN(a))
          checks.push(`${n} ${r.mode} ${half}: pipeline ${f3(a)}, rebuilt ${f3(b)}${Math.abs(a - b) > 5e-4 ? ' **differs**' : ''}`);
      }
    }
  }
  if (checks.length > 0) lines.push(`Reproductions against the real pipeline (headline metric): ${checks.join('; ')}.`, '');

  lines.push('### Top 15 on half A', '', header, rule, ...byA.slice(0, 15).map(row), '');
  // What the depth costs: legs fetched deeper are slower on large graphs.
  const sameButDepth = (v: Variant) => v.name.replace(/ D=\S+/, '') === winner.name.replace(/ D=\S+/, '');
  lines.push('### The chosen variant at every candidate depth', '', header, rule, ...grid.filter(sameButDepth).map(row), '');
  const families = new Map<string, Variant>();
  for (const v of byA) if (!families.has(v.family)) families.set(v.family, v);
  lines.push('### Best of each family on half A', '', header, rule, ...[...families.values()].map(row), '');
  lines.push('### Best for each suite alone on half A', '', header, rule);
  for (const n of names) {
    const best = [...grid].sort((a, b) => headline(b.name, n, 'A') - headline(a.name, n, 'A'))[0];
    if (best !== undefined) lines.push(row(best));
  }
  lines.push('');

  const compared = [...repro.map((r) => r.name), winner.name];
  for (const n of names) {
    const spec = SUITES[n];
    const tally = tallies.get(n) as Tally;
    lines.push(`### ${spec.title}: per group, shipped modes and \`${winner.name}\``, '');
    for (const half of ['A', 'B'] as const) lines.push(tally.table(half, spec.groups, spec.metrics, spec.labels, compared), '');
  }
  lines.push(`Study time: ${((performance.now() - started) / 1000).toFixed(1)} s for ${all.length} variants.`);
  return lines.join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const i = process.argv.indexOf('--probes');
  const file = i >= 0 ? process.argv[i + 1] : undefined;
  if (file === undefined) {
    console.error('Usage: tsx bench/quality/study.ts --probes FILE (write one with: npm run bench:quality -- --save-probes FILE)');
    process.exit(2);
  }
  console.log(runStudy(JSON.parse(readFileSync(file, 'utf8')) as SuiteProbes));
}
