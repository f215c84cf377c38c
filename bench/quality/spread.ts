/**
 * Spreading the top results across sessions, query decomposition and the speaker lift (issue 37):
 * search_semantic on LoCoMo (one entity per turn, turns at their session's time, dates as metadata,
 * no relations: the store bench:quality and context.ts measure), every question's ranked list
 * (first KEEP) kept with each candidate's score and write time (its session): `before` is the
 * search without the speaker lift (speakerWeight 0), then one list per speaker weight (or, with
 * `--grid`, per speaker weight beside other context weights and depths), and the ranked lists of
 * the question's parts. Diversity and parts re-order a list offline, as a stage after the ranking
 * would: a cap on turns of one session above a place, a penalty for a session already shown,
 * round-robin fusion of the parts. Chosen on half A (recall@5 over categories 1-4, hit@1 within
 * 0.01 of before), reported on half B.
 *
 *   flock /tmp/limbic-bench.lock npx tsx bench/quality/spread.ts --dump /tmp/spread.json [--grid]  (searches; the model)
 *   npx tsx bench/quality/spread.ts --from /tmp/spread.json [--out FILE]                       (the sweep, offline)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { DEFAULT_CONTEXT_WEIGHTS } from '../../src/core/rank/context-boost.js';
import type { EntityId } from '../../src/core/types.js';
import type { SearchRequest } from '../../src/service/search/request.js';
import { runSearch } from '../../src/service/search/pipeline.js';
import { semanticRequest } from '../../src/service/search/search-semantic.js';
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
/** How many of each ranked list the dump keeps. */
const KEEP = 40;
const HIT1_SLACK = 0.01;

interface Hit {
  readonly id: number;
  readonly score: number;
  /** Its write time (ms): turns of one session share it. */
  readonly at: number;
}
interface Question {
  readonly half: Half;
  readonly category: number;
  readonly question: string;
  readonly gold: number[];
  readonly ranked: Hit[];
  /** The ranked lists of the question's parts (decompose below), when it has more than one. */
  readonly parts: { readonly text: string; readonly ranked: Hit[] }[];
  /** The ranked list under each speaker weight (context-boost.ts speakerWeight), by weight. */
  readonly speaker: Record<string, Hit[]>;
}

/** Speaker weights measured (z-score units, like the context stage's time weight of 1). */
const SPEAKER_WEIGHTS = (option('--speaker') ?? '0,0.25,0.5,1,1.5,2,3').split(',').map(Number);
/** The search before the speaker lift: `before`, and the parts' lists. */
const BEFORE: Partial<SearchRequest> = { context: { ...DEFAULT_CONTEXT_WEIGHTS, speakerWeight: 0 } };
/** `--grid`: the speaker weight beside the other context weights and the depth, searched variants. */
const GRID: [string, Partial<SearchRequest>][] = [];
if (args.includes('--grid'))
  for (const speakerWeight of [1.5, 2])
    for (const [label, more] of [
      ['', {}],
      [' depth=300', { depth: 300 }],
      [' near=0.5', { near: 0.5 }],
      [' near=1', { near: 1 }],
      [' time=2', { time: 2 }],
      [' time=0.5', { time: 0.5 }],
    ] as const) {
      const m = more as { depth?: number; near?: number; time?: number };
      GRID.push([
        `${speakerWeight}${label}`,
        {
          ...(m.depth === undefined ? {} : { depth: m.depth }),
          context: {
            ...DEFAULT_CONTEXT_WEIGHTS,
            speakerWeight,
            ...(m.near === undefined ? {} : { neighbourWeight: m.near }),
            ...(m.time === undefined ? {} : { timeWeight: m.time }),
          },
        },
      ]);
    }

/**
 * A question's parts, without a model: split at "and"/"or"/commas between two named people
 * ("What did Caroline and Melanie both paint?" → one question per name), else none.
 */
export function decompose(question: string): string[] {
  const names = /\b([A-Z][a-z]+)(?:'s)?\s*(?:,|and|or|&)\s*(?:also\s+)?([A-Z][a-z]+)(?:'s)?\b/.exec(question);
  if (names === null || names[1] === names[2]) return [];
  const [whole, a, b] = names as unknown as [string, string, string];
  const swap = (name: string) =>
    question
      .replace(whole, name)
      .replace(/\bboth\s+/i, '')
      .replace(/\bhave\b/, 'has');
  return [swap(a), swap(b)];
}

async function dump(path: string): Promise<void> {
  const data = JSON.parse(readFileSync(requireData('locomo/locomo10.json'), 'utf8')) as Sample[];
  const halves = locomoHalves(data.map((s) => s.sample_id));
  const embedder = cachedEmbedder(await loadModel());
  const now = Date.UTC(2026, 0, 1);
  const out: Question[] = [];
  const started = performance.now();
  for (const sample of data.slice(0, Number(option('--locomo-samples') ?? Infinity))) {
    const half = halves.get(sample.sample_id) ?? 'A';
    const { entities, additions, writtenAt } = turnsOf(sample, 'metadata');
    const corpus = new Corpus(embedder);
    await corpus.load(entities, now, [], additions, writtenAt);
    const ids = await corpus.ids(entities.map((e) => e.name));
    const deps = { store: corpus.store, indexer: corpus.indexer, reranker: undefined };
    const rank = async (q: string, overrides: Partial<SearchRequest> = {}): Promise<Hit[]> => {
      const outcome = await runSearch(deps, semanticRequest(q, LIMIT, overrides), now);
      const top = outcome.ranked.slice(0, KEEP);
      const facts = (await corpus.store.usage.signals(top.map((r) => r.id))).facts;
      return top.map((r) => ({ id: r.id, score: r.score, at: facts.get(r.id)?.createdAt ?? 0 }));
    };
    for (const qa of sample.qa) {
      const gold = goldIds(qa.evidence, ids);
      if (gold.size === 0) continue;
      const parts = [];
      for (const text of decompose(qa.question)) parts.push({ text, ranked: await rank(text, BEFORE) });
      const speaker: Record<string, Hit[]> = {};
      if (GRID.length > 0) for (const [name, overrides] of GRID) speaker[name] = await rank(qa.question, overrides);
      else
        for (const w of SPEAKER_WEIGHTS)
          speaker[String(w)] = await rank(qa.question, { context: { ...DEFAULT_CONTEXT_WEIGHTS, speakerWeight: w } });
      out.push({
        half,
        category: qa.category,
        question: qa.question,
        gold: [...gold],
        ranked: await rank(qa.question, BEFORE),
        parts,
        speaker,
      });
    }
    await corpus.close();
    process.stderr.write(`spread: ${sample.sample_id} (half ${half}) done, ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
  }
  writeFileSync(path, JSON.stringify(out));
}

type Variant = (q: Question) => number[];

const ids = (hits: readonly Hit[]): number[] => hits.map((h) => h.id);

/** At most `k` of one session among the first `n`; the rest keep their order behind them. */
const cap =
  (k: number, n: number, window = 10): Variant =>
  (q) => {
    const pool = q.ranked.slice(0, window);
    const top: Hit[] = [];
    const seen = new Map<number, number>();
    for (const h of pool) {
      if (top.length >= n) break;
      if ((seen.get(h.at) ?? 0) >= k) continue;
      top.push(h);
      seen.set(h.at, (seen.get(h.at) ?? 0) + 1);
    }
    const chosen = new Set(top.map((h) => h.id));
    return [...ids(top), ...q.ranked.filter((h) => !chosen.has(h.id)).map((h) => h.id)];
  };

/**
 * Greedy: each place takes the candidate with the best score minus `lambda` × (turns of its session
 * already placed, at most `maxCount` counted), over the first `window`.
 */
const penalty =
  (lambda: number, window: number, maxCount = Infinity, relative = false): Variant =>
  (q) => {
    const pool = q.ranked.slice(0, window);
    const rest = q.ranked.slice(window);
    const top = pool[0]?.score ?? 1;
    const out: Hit[] = [];
    const seen = new Map<number, number>();
    const left = [...pool];
    while (left.length > 0) {
      let best = 0;
      let bestValue = -Infinity;
      left.forEach((h, i) => {
        const value = h.score - (relative ? lambda * top : lambda) * Math.min(maxCount, seen.get(h.at) ?? 0);
        if (value > bestValue) [best, bestValue] = [i, value];
      });
      const [h] = left.splice(best, 1) as [Hit];
      out.push(h);
      seen.set(h.at, (seen.get(h.at) ?? 0) + 1);
    }
    return [...ids(out), ...ids(rest)];
  };

/** The question's list and its parts' lists, interleaved (round robin), duplicates dropped. */
const parts =
  (then: Variant): Variant =>
  (q) => {
    const base = then(q);
    if (q.parts.length === 0) return base;
    const lists = [base, ...q.parts.map((p) => then({ ...q, ranked: p.ranked, parts: [] }))];
    const out: number[] = [];
    const seen = new Set<number>();
    for (let i = 0; out.length < KEEP && lists.some((l) => i < l.length); i++)
      for (const l of lists) {
        const id = l[i];
        if (id !== undefined && !seen.has(id)) {
          seen.add(id);
          out.push(id);
        }
      }
    return out;
  };

function sweep(path: string): void {
  const questions = JSON.parse(readFileSync(path, 'utf8')) as Question[];
  const list: [string, Variant][] = [['before', (q) => ids(q.ranked)]];
  for (const n of [3, 5]) for (const k of [1, 2]) for (const w of [10, 20]) list.push([`cap k=${k} n=${n} window=${w}`, cap(k, n, w)]);
  for (const lambda of [0.01, 0.02, 0.03, 0.05, 0.1])
    for (const w of [10, 20])
      for (const m of [1, Infinity]) list.push([`penalty λ=${lambda} window=${w}${m === 1 ? ' once' : ''}`, penalty(lambda, w, m)]);
  list.push(['parts (round robin)', parts((q) => ids(q.ranked))]);
  for (const w of Object.keys(questions[0]?.speaker ?? {})) {
    const of = (q: Question): Question => ({ ...q, ranked: q.speaker[w] ?? q.ranked });
    list.push([`speaker ${w}`, (q) => ids(of(q).ranked)]);
    list.push([`speaker ${w} + penalty λ=0.02 window=10`, (q) => penalty(0.02, 10)(of(q))]);
    list.push([`speaker ${w} + cap k=2 n=3`, (q) => cap(2, 3)(of(q))]);
  }
  const tally = new Tally();
  for (const q of questions)
    for (const [name, v] of list)
      tally.add(name, q.half, locomoGroups(`cat${q.category}`), v(q) as EntityId[], new Set(q.gold as EntityId[]));
  const hit1 = (n: string, h: Half) => tally.mean(n, h, 'all 1-4', 'hit1');
  const floor = hit1('before', 'A') - HIT1_SLACK;
  const chosen =
    list
      .map(([n]) => n)
      .filter((n) => hit1(n, 'A') >= floor)
      .sort((a, b) => tally.mean(b, 'A', 'all 1-4', 'recall5') - tally.mean(a, 'A', 'all 1-4', 'recall5'))[0] ?? '';
  const groups = ['cat1', 'cat2', 'cat3', 'cat4', 'all 1-4'];
  const lines = [
    `Spread study: search_semantic on LoCoMo, ${questions.length} questions, re-ordered offline; ${questions.filter((q) => q.parts.length > 0).length} questions have parts.`,
    `Chosen on half A by recall@5 (1-4) among variants whose hit@1 is within ${HIT1_SLACK} of before: **${chosen}**.`,
    '',
    `| variant | ${(['A', 'B'] as const).map((h) => [...groups.map((g) => `${h} ${CATEGORY_NAMES[g] ?? g}`), `${h} hit@1`].join(' | ')).join(' | ')} |`,
    `|---|${(['A', 'B'] as const).map(() => groups.map(() => '---|').join('') + '---|').join('')}`,
    ...list.map(
      ([n]) =>
        `| ${n === chosen ? `**${n}**` : n} | ${(['A', 'B'] as const)
          .map((h) => [...groups.map((g) => f3(tally.mean(n, h, g, 'recall5'))), f3(hit1(n, h))].join(' | '))
          .join(' | ')} |`,
    ),
  ];
  const shown = [
    'before',
    ...(list.some(([n]) => n === 'speaker 1.5') ? ['speaker 1.5'] : []),
    ...(chosen === 'speaker 1.5' ? [] : [chosen]),
  ];
  for (const h of ['A', 'B'] as const)
    lines.push('', tally.table(h, [...groups, 'cat5'], ['recall5', 'recall10', 'hit1', 'mrr'], CATEGORY_NAMES, shown));
  const report = lines.join('\n');
  console.log(report);
  const out = option('--out');
  if (out !== undefined) writeFileSync(out, `${report}\n`);
}

const dumpTo = option('--dump');
if (dumpTo !== undefined) await dump(dumpTo);
sweep(option('--from') ?? dumpTo ?? '');
