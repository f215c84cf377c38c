/**
 * `npm run bench:stream`: retrieval quality on a memory that has been used (issue 24). Each suite's
 * questions are asked one after another, in the data set's order, through the MemoryService the
 * MCP server runs (so every signal is recorded exactly as the server records it, after each answer),
 * with a clock that moves a week over the stream. After each answer the agent does one of:
 *   fresh  the reference: every usage signal is wiped after each answer, so each question is
 *          answered as on a store nobody has used (windows differ in difficulty; this is each
 *          window's own fresh score, and what every other policy is compared with);
 *   none   nothing: searches only (what the issue's reproduction did);
 *   top1   opens the first result, right or wrong: an agent that trusts the first answer, the
 *          self-reinforcing case (what it opens is lifted, so it is opened again);
 *   gold   opens the right entity the first time it is asked about: the feedback study. A question
 *          whose entity was opened before it was asked is "used"; the rest are "unused".
 *   shown  opens the right entity (every gold entity) whenever it is among the results listed
 *          (the tool's limit), every time it is listed: an agent that recognises the answer when
 *          it sees it. "Used" as for gold.
 * Reported per tool and policy: hit@1 / hit@5 (XQuAD, small memories) or recall@5 (LoCoMo) in
 * windows of the stream, then the first window asked again at the end, and the worst of these
 * against the same questions fresh; the largest share of top-5 lists one entity was in; and for
 * `gold`, hit@1 of used and unused questions against fresh.
 * `hybrid_search` with `limbic: false` is the null design (usage read nowhere).
 * Options: --only small,xquad,locomo  --policies none,top1,gold,shown  --tools semantic,hybrid
 *          --locomo-samples N  --tag NAME
 * Scores count half B (held out) unless --half A|all says otherwise.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { noopLogger } from '../../src/core/logger.js';
import type { NewEntity, ObservationAddition } from '../../src/core/types.js';
import { LazyEmbedder, type Embedder } from '../../src/embed/embedder.js';
import { toHybridOptions } from '../../src/mcp/hybrid-options.js';
import { MemoryService } from '../../src/service/memory-service.js';
import { runTune } from '../../src/service/tuning.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { rng } from '../latency/generate.js';
import { cachedEmbedder } from './embed-cache.js';
import { BENCH_MODEL, loadModel, requireData, writeInOrder } from './harness.js';
import { cleanEvidence, locomoHalves, turnsOf, type Sample } from './locomo.js';
import { smallMemories } from './small-memory.js';
import type { Half } from './tally.js';
import { articleHalves, loadXquad } from './xquad.js';

type Policy = 'fresh' | 'none' | 'top1' | 'gold' | 'shown';
type Tool = 'semantic' | 'hybrid' | 'hybrid-off';

interface Question {
  readonly text: string;
  readonly gold: ReadonlySet<string>;
  readonly half: Half;
  /** 0-based window of the stream it is asked in. */
  readonly window: number;
}

/** One memory and the stream asked of it. */
interface Stream {
  readonly label: string;
  readonly entities: readonly NewEntity[];
  readonly additions: readonly ObservationAddition[];
  /** When each entity was written (LoCoMo's sessions); the stream's start where undefined. */
  readonly writtenAt?: readonly (number | undefined)[];
  readonly questions: readonly Question[];
}

interface Suite {
  readonly name: string;
  readonly limit: number;
  readonly windows: number;
  /** The headline metric. */
  readonly metric: 'hit1' | 'hit5' | 'recall5';
  readonly streams: readonly Stream[];
}

const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const only = (option('--only') ?? 'small,xquad,locomo').split(',');
const policies = ['fresh', ...(option('--policies') ?? 'none,top1,gold').split(',')] as Policy[];
const tools = [...(option('--tools') ?? 'semantic,hybrid').split(','), 'hybrid-off'] as Tool[];
const halfOption = option('--half') ?? 'B';
const counts = (q: Question): boolean => halfOption === 'all' || q.half === halfOption;
const WEEK_MS = 7 * 86_400_000;

/** Windows by position: question i of n is in window floor(i·w/n). */
const inWindows = <T extends object>(items: readonly T[], windows: number): (T & { window: number })[] =>
  items.map((q, i) => ({ ...q, window: Math.floor((i * windows) / items.length) }));

function xquadSuite(): Suite {
  const en = loadXquad('en');
  const es = loadXquad('es');
  const halves = articleHalves(en.articles);
  const streams: Stream[] = [];
  for (const [docs, docLang] of [
    [en, 'en'],
    [es, 'es'],
  ] as const)
    for (const [qs, qLang] of [
      [en, 'en'],
      [es, 'es'],
    ] as const) {
      const questions = [...qs.questions.values()].map((q) => ({
        text: q.question,
        gold: new Set([q.paragraph]),
        half: halves[q.article] ?? 'A',
      }));
      streams.push({ label: `${qLang}→${docLang}`, entities: docs.entities, additions: [], questions: inWindows(questions, 7) });
    }
  return { name: 'XQuAD', limit: 5, windows: 7, metric: 'hit5', streams };
}

function locomoSuite(samples: number): Suite {
  const data = JSON.parse(readFileSync(requireData('locomo/locomo10.json'), 'utf8')) as Sample[];
  const halves = locomoHalves(data.map((s) => s.sample_id));
  const streams = data.slice(0, samples).map((sample): Stream => {
    const { entities, additions, writtenAt } = turnsOf(sample, 'metadata');
    const names = new Set(entities.map((e) => e.name));
    const half = halves.get(sample.sample_id) ?? 'A';
    const questions = sample.qa
      .map((qa) => ({ text: qa.question, gold: new Set(cleanEvidence(qa.evidence).filter((d) => names.has(d))), half }))
      .filter((q) => q.gold.size > 0);
    return { label: sample.sample_id, entities, additions, writtenAt, questions: inWindows(questions, 5) };
  });
  return { name: 'LoCoMo', limit: 10, windows: 5, metric: 'recall5', streams };
}

/** Small memories: each memory's questions asked in four rounds, each round in a new seeded order. */
function smallSuite(): Suite {
  const ROUNDS = 4;
  const streams = smallMemories().map((m, n): Stream => {
    const random = rng(24_000 + n);
    const questions: Question[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order = m.questions.map((q) => ({ q, key: random() })).sort((a, b) => a.key - b.key);
      for (const { q } of order) questions.push({ text: q.text, gold: new Set([q.answer]), half: m.half, window: round });
    }
    return { label: m.label, entities: m.entities, additions: [], questions };
  });
  return { name: 'Small memories', limit: 10, windows: ROUNDS, metric: 'hit1', streams };
}

interface Cell {
  n: number;
  hit1: number;
  hit5: number;
  recall5: number;
}
const cell = (): Cell => ({ n: 0, hit1: 0, hit5: 0, recall5: 0 });
function add(into: Cell, names: readonly string[], gold: ReadonlySet<string>): void {
  into.n++;
  into.hit1 += names[0] !== undefined && gold.has(names[0]) ? 1 : 0;
  const top5 = names.slice(0, 5);
  into.hit5 += top5.some((x) => gold.has(x)) ? 1 : 0;
  into.recall5 += top5.filter((x) => gold.has(x)).length / gold.size;
}
const avg = (c: Cell, m: keyof Omit<Cell, 'n'>): string => (c.n === 0 ? '–' : (c[m] / c.n).toFixed(3));

/** What one tool under one policy gave over a suite. */
interface Run {
  readonly windows: Cell[];
  readonly reasked: Cell;
  /** Per question in stream order (all halves), hit@1, for the feedback study. */
  readonly hit1: boolean[];
  readonly used: boolean[];
  /** The largest share of a stream's top-5 lists one entity was in (the most concentrated stream). */
  maxShare: number;
  maxShareEntity: string;
  /** `limbic tune` (without --apply) on each stream's shadow log at its end. */
  readonly tunes: { status: string; optimal: string; gain: number; events: number }[];
}

/** Waits for the answers' post-response recording (MemoryService.settled; polled in older builds). */
async function settle(service: MemoryService): Promise<void> {
  const s = service as unknown as { settled?: () => Promise<void>; pending?: Set<Promise<void>> };
  if (s.settled !== undefined) return s.settled();
  while ((s.pending?.size ?? 0) > 0) await Promise.all([...(s.pending ?? [])]);
}

async function ask(service: MemoryService, tool: Tool, query: string, limit: number): Promise<string[]> {
  if (tool === 'semantic') return (await service.searchSemantic(query, limit)).results.map((r) => r.name);
  const options = toHybridOptions({ query, limit, ...(tool === 'hybrid-off' ? { limbic: false } : {}) });
  return (await service.hybridSearch(options)).results.map((r) => r.name);
}

async function runStream(embedder: Embedder, suite: Suite, stream: Stream, tool: Tool, policy: Policy, into: Run): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'limbic-stream-'));
  const store = openSqliteStore({ path: join(dir, 'memory.db') });
  let now = Date.UTC(2026, 0, 5, 9);
  const step = WEEK_MS / (stream.questions.length + suite.windows);
  const service = new MemoryService({ store, embedder: new LazyEmbedder(async () => embedder), clock: () => now, logger: noopLogger });
  const closers: (() => void)[] = [];
  try {
    // Loading is not use: straight into the store, as an import would.
    await writeInOrder(store, stream.entities, stream.writtenAt ?? [], now);
    if (stream.additions.length > 0) await store.graph.addObservations(stream.additions, now);
    await service.drainEmbeddings();
    const raw = new Database(join(dir, 'memory.db'));
    closers.push(() => raw.close());
    const wipe = { run: () => raw.exec('DELETE FROM co_occurrences; DELETE FROM entity_access_days; DELETE FROM entity_access;') };
    const opened = new Set<string>();
    const listed = new Map<string, number>();
    for (const q of stream.questions) {
      now += step;
      const used = [...q.gold].some((g) => opened.has(g));
      const names = await ask(service, tool, q.text, suite.limit);
      await settle(service);
      if (policy === 'fresh') wipe.run();
      for (const name of names.slice(0, 5)) listed.set(name, (listed.get(name) ?? 0) + 1);
      if (counts(q)) add((into.windows[q.window] ??= cell()), names, q.gold);
      into.hit1.push(names[0] !== undefined && q.gold.has(names[0]));
      into.used.push(used);
      const open =
        policy === 'top1'
          ? names.slice(0, 1)
          : policy === 'gold'
            ? [...q.gold].filter((g) => !opened.has(g))
            : policy === 'shown'
              ? names.filter((n) => q.gold.has(n))
              : [];
      if (open.length > 0) {
        now += step / 4;
        await service.openNodes(open);
        await settle(service);
      }
      for (const name of open) opened.add(name);
    }
    if (policy === 'top1' || policy === 'gold' || policy === 'shown') {
      const report = await runTune(store, {}, now);
      const o = report.optimal;
      into.tunes.push({
        status: report.status,
        optimal: o === undefined ? '–' : `γ ${o.gamma}, β_sal ${o.betaSal}, k ${o.rrfK}`,
        gain: report.gain ?? 0,
        events: report.events.withFeedback,
      });
    }
    for (const q of stream.questions.filter((x) => x.window === 0)) {
      now += step;
      const names = await ask(service, tool, q.text, suite.limit);
      await settle(service);
      if (policy === 'fresh') wipe.run();
      if (counts(q)) add(into.reasked, names, q.gold);
    }
    // In a memory of a few entities every one is in every top 5: concentration says nothing there.
    if (stream.entities.length > 5 * suite.limit)
      for (const [name, n] of listed) {
        const share = n / stream.questions.length;
        if (share > into.maxShare) {
          into.maxShare = share;
          into.maxShareEntity = `${name} (${stream.label})`;
        }
      }
  } finally {
    for (const close of closers) close();
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function runSuite(embedder: Embedder, suite: Suite): Promise<string> {
  const runs = new Map<string, Run>();
  const started = performance.now();
  const combos: [Tool, Policy][] = [];
  for (const tool of tools) for (const policy of tool === 'hybrid-off' ? (['fresh'] as Policy[]) : policies) combos.push([tool, policy]);
  for (const [tool, policy] of combos) {
    const run: Run = { windows: [], reasked: cell(), hit1: [], used: [], maxShare: 0, maxShareEntity: '', tunes: [] };
    for (const stream of suite.streams) await runStream(embedder, suite, stream, tool, policy, run);
    runs.set(`${tool}/${policy}`, run);
    process.stderr.write(`${suite.name}: ${tool} / ${policy} done (${((performance.now() - started) / 1000).toFixed(0)} s)\n`);
  }
  const m = suite.metric;
  const head = [...Array(suite.windows).keys()].map((w) => `w${w + 1}`);
  const lines = [
    `${suite.streams.length} stream(s), ${suite.streams.reduce((s, x) => s + x.questions.length, 0)} questions, limit ${suite.limit}; ` +
      `${{ hit1: 'hit@1', hit5: 'hit@5', recall5: 'recall@5' }[m]} per window (w1 = fresh), then w1 asked again; hit@1 beside; ` +
      `scored on ${halfOption === 'all' ? 'both halves' : `half ${halfOption}`}; ${((performance.now() - started) / 1000).toFixed(0)} s.`,
    '',
    `| tool | agent | ${head.join(' | ')} | w1 again | worst Δ vs fresh | hit@1 w1 → again | top entity's share of top-5 lists |`,
    `|---|---|${head.map(() => '---|').join('')}---|---|---|---|`,
  ];
  for (const [key, run] of runs) {
    const [tool, policy] = key.split('/');
    const fresh = runs.get(`${tool}/fresh`);
    const value = (c: Cell | undefined): number => (c === undefined || c.n === 0 ? NaN : c[m] / c.n);
    // Each window against the same questions on a store nobody used; the re-asked first window too.
    const deltas = run.windows.map((c, w) => value(c) - value(fresh?.windows[w]));
    deltas.push(value(run.reasked) - value(fresh?.windows[0]));
    const worst = Math.min(...deltas.filter((d) => !Number.isNaN(d)));
    lines.push(
      `| ${tool === 'semantic' ? 'search_semantic' : tool === 'hybrid' ? 'hybrid_search' : 'hybrid_search, limbic off'} | ${policy} | ` +
        `${run.windows.map((c) => avg(c, m)).join(' | ')} | ${avg(run.reasked, m)} | ${policy === 'fresh' ? '–' : worst.toFixed(3)} | ` +
        `${avg(run.windows[0] ?? cell(), 'hit1')} → ${avg(run.reasked, 'hit1')} | ${run.maxShareEntity === '' ? '–' : `${(run.maxShare * 100).toFixed(0)}% ${run.maxShareEntity}`} |`,
    );
  }
  // The feedback study: hit@1 of questions whose entity was opened before they were asked, against
  // the same questions in the stream where nothing is opened (all halves: it is a difference).
  const study: string[] = [];
  for (const tool of tools.filter((t) => t !== 'hybrid-off'))
    for (const agent of ['gold', 'shown'] as const) {
      const gold = runs.get(`${tool}/${agent}`);
      const none = runs.get(`${tool}/fresh`);
      if (gold === undefined || none === undefined) continue;
      const group = (used: boolean) => {
        const idx = gold.used.map((u, i) => (u === used ? i : -1)).filter((i) => i >= 0);
        const rate = (r: Run) => idx.filter((i) => r.hit1[i]).length / Math.max(1, idx.length);
        return { n: idx.length, none: rate(none), gold: rate(gold) };
      };
      const u = group(true);
      const f = group(false);
      study.push(
        `| ${tool === 'semantic' ? 'search_semantic' : 'hybrid_search'} | ${agent} | ${u.n} | ${u.none.toFixed(3)} | ${u.gold.toFixed(3)} | ${(u.gold - u.none).toFixed(3)} | ` +
          `${f.n} | ${f.none.toFixed(3)} | ${f.gold.toFixed(3)} | ${(f.gold - f.none).toFixed(3)} |`,
      );
    }
  // What `limbic tune` would learn from each stream's own log (searches whose listed entity was opened).
  const tuned: string[] = [];
  for (const [key, run] of runs) {
    if (run.tunes.length === 0) continue;
    const counts = new Map<string, number>();
    for (const t of run.tunes) counts.set(`${t.status}: ${t.optimal}`, (counts.get(`${t.status}: ${t.optimal}`) ?? 0) + 1);
    const gains = run.tunes.map((t) => t.gain);
    tuned.push(
      `| ${key} | ${run.tunes.reduce((a, t) => a + t.events, 0)} | ${[...counts].map(([k, n]) => `${k} (×${n})`).join('; ')} | ${(gains.reduce((a, b) => a + b, 0) / gains.length).toFixed(4)} |`,
    );
  }
  if (tuned.length > 0)
    lines.push(
      '',
      "`limbic tune` on each stream's shadow log at its end (NDCG@5 of the opened results; not applied):",
      '',
      '| tool / agent | searches with feedback | outcome per stream | mean NDCG@5 gain |',
      '|---|---|---|---|',
      ...tuned,
    );
  if (study.length > 0)
    lines.push(
      '',
      'Feedback study (`gold`: opens the right entity the first time it is asked about; `shown`: opens it whenever it is listed), hit@1 against the same questions on a store nobody used, both halves:',
      '',
      '| tool | agent | used: n | fresh | agent | gain | unused: n | fresh | agent | change |',
      '|---|---|---|---|---|---|---|---|---|---|',
      ...study,
    );
  return lines.join('\n');
}

const started = performance.now();
const embedder = cachedEmbedder(await loadModel());
const parts = [
  `# Retrieval quality on a used memory — ${new Date().toISOString().slice(0, 10)}`,
  '',
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}. Model: ${BENCH_MODEL}. Command: \`npm run bench:stream -- ${args.join(' ')}\`.`,
  'Each stream is one memory asked its questions in order through the MemoryService the server runs, usage recorded after every answer, the clock moving a week over the stream.',
  '',
];
const suites: [string, () => Suite][] = [
  ['small', smallSuite],
  ['xquad', xquadSuite],
  ['locomo', () => locomoSuite(Number(option('--locomo-samples') ?? Infinity))],
];
for (const [name, make] of suites) {
  if (!only.includes(name)) continue;
  const suite = make();
  parts.push(`## ${suite.name}`, '', await runSuite(embedder, suite), '');
}
parts.push(`Total ${((performance.now() - started) / 1000).toFixed(0)} s.`);
const report = parts.join('\n');
console.log(report);
const base = join(
  import.meta.dirname,
  '..',
  'results',
  `stream-${new Date().toISOString().slice(0, 10)}-${option('--tag') ?? only.join('-')}`,
);
let out = `${base}.md`;
for (let n = 2; existsSync(out); n++) out = `${base}-${n}.md`;
writeFileSync(out, `${report}\n`);
console.error(`written to ${out}`);
