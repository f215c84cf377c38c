/**
 * `npm run bench:stream`: retrieval quality on a memory that has been used (issues 24 and 37). Each
 * suite's questions are asked one after another, in the data set's order, through the MemoryService
 * the MCP server runs (so every signal is recorded exactly as the server records it, after each
 * answer), with a clock that moves a week over the stream. Every stream is one fresh SQLite store.
 *
 * Agents (what happens after each answer; `--policies` picks them, the baselines they need are added):
 *   fresh     the reference: every usage signal is wiped after each answer, so each question is
 *             answered as on a store nobody has used (windows differ in difficulty; this is each
 *             window's own fresh score, and what the agents are compared with);
 *   fresh-de  `fresh` asked the German-framed questions of `notes-de` (its baseline; never chosen alone);
 *   none      nothing: searches only (equal to `fresh` while a search records no use; not in the default);
 *   top1      opens the first result, right or wrong: an agent that trusts the first answer, the
 *             self-reinforcing case (what it opens is lifted, so it is opened again);
 *   wrong     opens the highest-ranked result that is not a right one, every time: the adversary.
 *             It is the candidate with the smallest margin to the right answer (the one a bounded
 *             lift can most easily carry past it), and it is opened right after this very query,
 *             so a lift keyed on the query (re-finding) gives it the most on the re-ask. A fixed
 *             wrong entity would be lifted everywhere but is rarely close enough to pass the
 *             right one;
 *   gold      opens the right entity the first time it is asked about (the feedback study of issue
 *             24), whether or not it was listed;
 *   shown     opens every right entity among the results listed (the tool's limit: 5 on XQuAD, 10
 *             otherwise) whenever it is listed, every time: an agent that recognises the answer;
 *   notes     opens the first result (as top1) and after every fifth question (the 5th, 10th, …
 *             of the stream) adds to what it opened one observation holding the question it was
 *             asked, verbatim, in the question's language (on XQuAD's es→en and en→es streams a
 *             language other than the memory's); the note is embedded before the next question;
 *   notes-de  SYNTHETIC stand-in for the held-back German case: as `notes`, but every question is
 *             asked inside a German frame ("Sag mir bitte, was du über die Frage weißt: …") and
 *             the note is the question inside a German frame rich in function words ("Der Nutzer
 *             hat mich gefragt: «…». Die Antwort steht in diesem Absatz, …"). Compared with
 *             `fresh-de`, the same framed questions on a store nobody used.
 * Default: top1,wrong,shown,notes,notes-de on search_semantic and hybrid_search, to stay near 12
 * minutes with cached vectors. Opt-in: `gold` (its study is superseded by `shown`'s siblings),
 * `none` (equal to `fresh` while a search records no use) and `--tools …,hybrid-off` (equal to
 * hybrid_search's `fresh`, whose usage is wiped). Notes are embedded like any write: a run whose
 * rankings changed embeds its new notes once (XQuAD's notes-de about 7 min per tool uncached).
 *
 * Reports per suite, tool and agent (every Δ is agent − its baseline on the same questions, the
 * baseline's usage wiped after each answer):
 *   windows     the headline metric (hit@1 small memories, hit@5 XQuAD, recall@5 LoCoMo) in the
 *               stream's windows, then window 1 asked again at the end over the used memory (the
 *               re-ask; nothing is opened), against the baseline's same window / same re-ask;
 *               worst window Δ is the lowest Δ over the windows (re-ask apart);
 *   siblings    a question is a sibling when an entity of its answer (gold) had been opened by
 *               the agent before it was asked (top1/notes: opened as some question's first result;
 *               wrong: opened as a wrong answer to another question, the answer to this one);
 *               sibling Δ = hit@1 of the agent on its siblings − hit@1 of the baseline on the same
 *               questions; the other questions beside;
 *   paraphrase  XQuAD only: at the end of each stream, window 1's questions asked again in the
 *               OTHER language (en and es share question ids) over the same memory, against the
 *               same paraphrases on the baseline: a new wording of a need the agent met before.
 * Scores count half B (held out) unless --half A|all says otherwise; the sibling table also gives
 * the Δ over both halves (the issue-24 study's figure).
 * `hybrid-off` is `hybrid_search` with `limbic: false`, the null design (usage read nowhere; baseline only).
 * Options: --only small,xquad,locomo  --policies top1,wrong,gold,shown,notes,notes-de,none
 *          --tools semantic,hybrid,hybrid-off  --locomo-samples N  --half A|B|all  --tag NAME
 *          --dump FILE (every answer as a JSON line: query, gold, the top 5 with score, usage lift,
 *          its re-finding part and distance; the evidence behind a Δ)
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { noopLogger } from '../../src/core/logger.js';
import { LazyEmbedder, type Embedder } from '../../src/embed/embedder.js';
import { toHybridOptions } from '../../src/mcp/hybrid-options.js';
import { MemoryService } from '../../src/service/memory-service.js';
import { runTune } from '../../src/service/tuning.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { cachedEmbedder } from './embed-cache.js';
import { BENCH_MODEL, loadModel, writeInOrder } from './harness.js';
import { locomoSuite, smallSuite, xquadSuite, type Question, type Stream, type Suite } from './stream-suites.js';

const AGENTS = ['none', 'top1', 'wrong', 'gold', 'shown', 'notes', 'notes-de'] as const;
type Agent = (typeof AGENTS)[number];
type Policy = 'fresh' | 'fresh-de' | Agent;
type Tool = 'semantic' | 'hybrid' | 'hybrid-off';

const DEFAULT_AGENTS = 'top1,wrong,shown,notes,notes-de';
/** Every NOTE_EVERY-th question of a stream, a `notes` agent writes a note. */
const NOTE_EVERY = 5;
/** The synthetic German frames of `notes-de` (see the header). */
const askedInGerman = (q: string): string => `Sag mir bitte, was du über die Frage weißt: ${q}`;
const noteInGerman = (q: string): string =>
  `Der Nutzer hat mich gefragt: «${q}». Die Antwort steht in diesem Absatz, der für das Thema wichtig ist und den ich mir merken will.`;

const isBaseline = (p: Policy): p is 'fresh' | 'fresh-de' => p === 'fresh' || p === 'fresh-de';
const framed = (p: Policy): boolean => p === 'fresh-de' || p === 'notes-de';
const baselineOf = (p: Policy): 'fresh' | 'fresh-de' => (framed(p) ? 'fresh-de' : 'fresh');

const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const only = (option('--only') ?? 'small,xquad,locomo').split(',');
const chosen = (option('--policies') ?? DEFAULT_AGENTS).split(',').filter((p) => p !== '' && !isBaseline(p as Policy));
for (const p of chosen)
  if (!(AGENTS as readonly string[]).includes(p)) {
    console.error(`Unknown agent "${p}"; the agents are ${AGENTS.join(', ')}.`);
    process.exit(2);
  }
const policies: Policy[] = ['fresh', ...(chosen.includes('notes-de') ? (['fresh-de'] as const) : []), ...(chosen as Agent[])];
const tools = (option('--tools') ?? 'semantic,hybrid').split(',') as Tool[];
const halfOption = option('--half') ?? 'B';
const counts = (q: Question): boolean => halfOption === 'all' || q.half === halfOption;
const WEEK_MS = 7 * 86_400_000;

interface Cell {
  n: number;
  hit1: number;
  hit5: number;
  recall5: number;
}
type Metric = keyof Omit<Cell, 'n'>;
const METRIC_LABEL: Record<Metric, string> = { hit1: 'hit@1', hit5: 'hit@5', recall5: 'recall@5' };
const cell = (): Cell => ({ n: 0, hit1: 0, hit5: 0, recall5: 0 });
function add(into: Cell, names: readonly string[], gold: ReadonlySet<string>): void {
  into.n++;
  into.hit1 += names[0] !== undefined && gold.has(names[0]) ? 1 : 0;
  const top5 = names.slice(0, 5);
  into.hit5 += top5.some((x) => gold.has(x)) ? 1 : 0;
  into.recall5 += top5.filter((x) => gold.has(x)).length / gold.size;
}
const value = (c: Cell | undefined, m: Metric): number => (c === undefined || c.n === 0 ? NaN : c[m] / c.n);
const f3 = (x: number): string => (Number.isNaN(x) ? '–' : x.toFixed(3));
/** A difference with its sign, so a gain and a loss read apart. */
const d3 = (x: number): string => (Number.isNaN(x) ? '–' : `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(3)}`);
const toolName = (tool: string): string =>
  tool === 'semantic' ? 'search_semantic' : tool === 'hybrid' ? 'hybrid_search' : 'hybrid_search, limbic off';

/** What one tool under one policy gave over a suite. */
interface Run {
  readonly windows: Cell[];
  readonly reasked: Cell;
  /** Window 1's questions in the other language, at the end (XQuAD). */
  readonly paraphrased: Cell;
  /** Per question in stream order (all halves, every stream): hit@1, sibling, counted in the scored half. */
  readonly hit1: boolean[];
  readonly sibling: boolean[];
  readonly counted: boolean[];
  /** The largest share of a stream's top-5 lists one entity was in (the most concentrated stream). */
  maxShare: number;
  maxShareEntity: string;
  opens: number;
  notes: number;
  /** `limbic tune` (without --apply) on each stream's shadow log at its end. */
  readonly tunes: { status: string; optimal: string; gain: number; events: number }[];
}
const newRun = (): Run => ({
  windows: [],
  reasked: cell(),
  paraphrased: cell(),
  hit1: [],
  sibling: [],
  counted: [],
  maxShare: 0,
  maxShareEntity: '',
  opens: 0,
  notes: 0,
  tunes: [],
});

/** Waits for the answers' post-response recording (MemoryService.settled; polled in older builds). */
async function settle(service: MemoryService): Promise<void> {
  const s = service as unknown as { settled?: () => Promise<void>; pending?: Set<Promise<void>> };
  if (s.settled !== undefined) return s.settled();
  while ((s.pending?.size ?? 0) > 0) await Promise.all([...(s.pending ?? [])]);
}

/** `--dump FILE`: every answer as a JSON line (the per-question evidence behind the tables). */
const dumpPath = option('--dump');
const dumped: string[] = [];
interface Asked {
  readonly tool: Tool;
  readonly policy: Policy;
  readonly stream: string;
  readonly phase: 'stream' | 'reask' | 'paraphrase';
  readonly i: number;
  readonly q: Question;
}

async function ask(service: MemoryService, tool: Tool, query: string, limit: number, at?: Asked): Promise<string[]> {
  let rows: { name: string; score: number; lift: number; refind: number; distance?: number }[];
  if (tool === 'semantic') {
    rows = (await service.searchSemantic(query, limit)).results.map((r) => ({
      name: r.name,
      score: r.limbic_score,
      lift: r.scoring.usage_lift,
      refind: r.scoring.usage_lift_refinding,
      ...(r.distance === undefined ? {} : { distance: r.distance }),
    }));
  } else {
    const options = toHybridOptions({ query, limit, ...(tool === 'hybrid-off' ? { limbic: false } : {}) });
    rows = (await service.hybridSearch(options)).results.map((r) => ({
      name: r.name,
      score: r.scores.final,
      lift: r.scores.limbic?.usage_lift ?? 0,
      refind: r.scores.limbic?.usage_lift_refinding ?? 0,
      ...(r.scores.semantic_distance === null ? {} : { distance: r.scores.semantic_distance }),
    }));
  }
  if (dumpPath !== undefined && at !== undefined)
    dumped.push(
      JSON.stringify({
        tool: at.tool,
        policy: at.policy,
        stream: at.stream,
        phase: at.phase,
        i: at.i,
        half: at.q.half,
        window: at.q.window,
        query,
        gold: [...at.q.gold],
        top: rows.slice(0, 5),
      }),
    );
  return rows.map((r) => r.name);
}

/** What the agent opens after an answer listing `names` (see the header). */
function toOpen(policy: Policy, names: readonly string[], gold: ReadonlySet<string>, opened: ReadonlySet<string>): string[] {
  switch (policy) {
    case 'top1':
    case 'notes':
    case 'notes-de':
      return names.slice(0, 1);
    case 'wrong':
      return names.filter((n) => !gold.has(n)).slice(0, 1);
    case 'gold':
      return [...gold].filter((g) => !opened.has(g));
    case 'shown':
      return names.filter((n) => gold.has(n));
    case 'fresh':
    case 'fresh-de':
    case 'none':
      return [];
    default: {
      const _exhaustive: never = policy;
      return _exhaustive;
    }
  }
}

async function runStream(embedder: Embedder, suite: Suite, stream: Stream, tool: Tool, policy: Policy, into: Run): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'limbic-stream-'));
  const store = openSqliteStore({ path: join(dir, 'memory.db') });
  let now = Date.UTC(2026, 0, 5, 9);
  const step = WEEK_MS / (stream.questions.length + suite.windows);
  const service = new MemoryService({ store, embedder: new LazyEmbedder(async () => embedder), clock: () => now, logger: noopLogger });
  const closers: (() => void)[] = [];
  const asked = framed(policy) ? askedInGerman : (q: string) => q;
  const note = policy === 'notes-de' ? noteInGerman : policy === 'notes' ? (q: string) => q : undefined;
  try {
    // Loading is not use: straight into the store, as an import would.
    await writeInOrder(store, stream.entities, stream.writtenAt ?? [], now);
    if (stream.additions.length > 0) await store.graph.addObservations(stream.additions, now);
    await service.drainEmbeddings();
    const raw = new Database(join(dir, 'memory.db'));
    closers.push(() => raw.close());
    const wipe = () => {
      if (isBaseline(policy)) raw.exec('DELETE FROM co_occurrences; DELETE FROM entity_access_days; DELETE FROM entity_access;');
    };
    const opened = new Set<string>();
    const listed = new Map<string, number>();
    let i = 0;
    for (const q of stream.questions) {
      i++;
      now += step;
      const sibling = [...q.gold].some((g) => opened.has(g));
      const names = await ask(service, tool, asked(q.text), suite.limit, { tool, policy, stream: stream.label, phase: 'stream', i, q });
      await settle(service);
      wipe();
      for (const name of names.slice(0, 5)) listed.set(name, (listed.get(name) ?? 0) + 1);
      if (counts(q)) add((into.windows[q.window] ??= cell()), names, q.gold);
      into.hit1.push(names[0] !== undefined && q.gold.has(names[0]));
      into.sibling.push(sibling);
      into.counted.push(counts(q));
      const open = toOpen(policy, names, q.gold, opened);
      if (open.length > 0) {
        now += step / 4;
        await service.openNodes(open);
        await settle(service);
        into.opens += open.length;
      }
      for (const name of open) opened.add(name);
      const target = open[0];
      if (note !== undefined && target !== undefined && i % NOTE_EVERY === 0) {
        now += step / 8;
        const [added] = await service.addObservations([{ entityName: target, contents: [note(q.text)] }]);
        await settle(service);
        await service.drainEmbeddings();
        into.notes += added?.addedObservations.length ?? 0;
      }
    }
    if (!isBaseline(policy) && policy !== 'none') {
      const report = await runTune(store, {}, now);
      const o = report.optimal;
      into.tunes.push({
        status: report.status,
        optimal: o === undefined ? '–' : `γ ${o.gamma}, β_sal ${o.betaSal}, k ${o.rrfK}`,
        gain: report.gain ?? 0,
        events: report.events.withFeedback,
      });
    }
    const first = stream.questions.filter((x) => x.window === 0);
    for (const [j, q] of first.entries()) {
      now += step;
      const names = await ask(service, tool, asked(q.text), suite.limit, {
        tool,
        policy,
        stream: stream.label,
        phase: 'reask',
        i: j + 1,
        q,
      });
      await settle(service);
      wipe();
      if (counts(q)) add(into.reasked, names, q.gold);
    }
    for (const [j, q] of first.entries()) {
      if (q.paraphrase === undefined) continue;
      now += step;
      const names = await ask(service, tool, asked(q.paraphrase), suite.limit, {
        tool,
        policy,
        stream: stream.label,
        phase: 'paraphrase',
        i: j + 1,
        q,
      });
      await settle(service);
      wipe();
      if (counts(q)) add(into.paraphrased, names, q.gold);
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

/** hit@1 of the agent and of its baseline over the questions `pick` selects. */
function hit1Over(run: Run, base: Run, pick: (i: number) => boolean): { n: number; base: number; agent: number; delta: number } {
  const idx = run.hit1.map((_, i) => i).filter(pick);
  const rate = (r: Run) => (idx.length === 0 ? NaN : idx.filter((i) => r.hit1[i]).length / idx.length);
  return { n: idx.length, base: rate(base), agent: rate(run), delta: rate(run) - rate(base) };
}

async function runSuite(embedder: Embedder, suite: Suite): Promise<string> {
  const runs = new Map<string, Run>();
  const started = performance.now();
  const combos: [Tool, Policy][] = [];
  for (const tool of tools) for (const policy of tool === 'hybrid-off' ? (['fresh'] as Policy[]) : policies) combos.push([tool, policy]);
  for (const [tool, policy] of combos) {
    const run = newRun();
    for (const stream of suite.streams) await runStream(embedder, suite, stream, tool, policy, run);
    runs.set(`${tool}/${policy}`, run);
    process.stderr.write(`${suite.name}: ${tool} / ${policy} done (${((performance.now() - started) / 1000).toFixed(0)} s)\n`);
  }
  const m = suite.metric;
  const paraphrases = suite.streams.some((s) => s.questions.some((q) => q.paraphrase !== undefined));
  const agents = [...runs].filter(([key]) => !key.startsWith('hybrid-off/') && !isBaseline(key.split('/')[1] as Policy));
  const baseOf = (key: string): Run | undefined => {
    const [tool, policy] = key.split('/') as [Tool, Policy];
    return runs.get(`${tool}/${baselineOf(policy)}`);
  };
  const windowDeltas = (run: Run, base: Run | undefined): number[] => run.windows.map((c, w) => value(c, m) - value(base?.windows[w], m));
  const scored = halfOption === 'all' ? 'both halves' : `half ${halfOption}`;

  // The headline: one row per tool and agent.
  const lines = [
    `${suite.streams.length} stream(s), ${suite.streams.reduce((s, x) => s + x.questions.length, 0)} questions, limit ${suite.limit}; ` +
      `scored on ${scored}; ${((performance.now() - started) / 1000).toFixed(0)} s. Every Δ: the agent − its baseline (\`fresh\`; \`fresh-de\` for \`notes-de\`) on the same questions.`,
    '',
    `| tool | agent | sibling hit@1 Δ (n) | worst window Δ ${METRIC_LABEL[m]} | re-ask Δ hit@1 / hit@5 |${paraphrases ? ' paraphrase Δ hit@1 / hit@5 |' : ''}`,
    `|---|---|---|---|---|${paraphrases ? '---|' : ''}`,
  ];
  for (const [key, run] of agents) {
    const [tool, policy] = key.split('/') as [Tool, Policy];
    const base = baseOf(key);
    if (base === undefined) continue;
    const sib = hit1Over(run, base, (i) => run.sibling[i] === true && run.counted[i] === true);
    const worst = Math.min(...windowDeltas(run, base).filter((d) => !Number.isNaN(d)));
    const re = (c: Cell, b: Cell) => `${d3(value(c, 'hit1') - value(b, 'hit1'))} / ${d3(value(c, 'hit5') - value(b, 'hit5'))}`;
    lines.push(
      `| ${toolName(tool)} | ${policy}${policy === 'notes-de' ? ' (synthetic)' : ''} | ${sib.n === 0 ? '–' : `${d3(sib.delta)} (${sib.n})`} | ${d3(worst)} | ` +
        `${re(run.reasked, base.reasked)} |${paraphrases ? ` ${re(run.paraphrased, base.paraphrased)} |` : ''}`,
    );
  }

  // Every window, and the first window asked again, against the baseline.
  const head = [...Array(suite.windows).keys()].map((w) => `w${w + 1}`);
  lines.push(
    '',
    `${METRIC_LABEL[m]} per window, then w1 asked again at the end; worst Δ over the windows and the re-ask; hit@1 beside:`,
    '',
    `| tool | agent | ${head.join(' | ')} | w1 again | worst Δ vs baseline | hit@1 w1 → again | opened / notes | top entity's share of top-5 lists |`,
    `|---|---|${head.map(() => '---|').join('')}---|---|---|---|---|`,
  );
  for (const [key, run] of runs) {
    const [tool, policy] = key.split('/') as [Tool, Policy];
    const base = baseOf(key);
    const deltas = windowDeltas(run, base);
    deltas.push(value(run.reasked, m) - value(base?.reasked, m));
    const worst = Math.min(...deltas.filter((d) => !Number.isNaN(d)));
    lines.push(
      `| ${toolName(tool)} | ${policy} | ${run.windows.map((c) => f3(value(c, m))).join(' | ')} | ${f3(value(run.reasked, m))} | ` +
        `${isBaseline(policy) ? '–' : d3(worst)} | ${f3(value(run.windows[0], 'hit1'))} → ${f3(value(run.reasked, 'hit1'))} | ` +
        `${run.opens} / ${run.notes} | ${run.maxShareEntity === '' ? '–' : `${(run.maxShare * 100).toFixed(0)}% ${run.maxShareEntity}`} |`,
    );
  }

  // Siblings: questions whose answer the agent had opened before they were asked.
  const study: string[] = [];
  for (const [key, run] of agents) {
    const [tool, policy] = key.split('/') as [Tool, Policy];
    const base = baseOf(key);
    if (base === undefined || !run.sibling.some(Boolean)) continue;
    const s = hit1Over(run, base, (i) => run.sibling[i] === true && run.counted[i] === true);
    const o = hit1Over(run, base, (i) => run.sibling[i] !== true && run.counted[i] === true);
    const all = hit1Over(run, base, (i) => run.sibling[i] === true);
    study.push(
      `| ${toolName(tool)} | ${policy} | ${s.n} | ${f3(s.base)} | ${f3(s.agent)} | ${d3(s.delta)} | ${o.n} | ${f3(o.base)} | ${f3(o.agent)} | ${d3(o.delta)} | ${all.n} | ${d3(all.delta)} |`,
    );
  }
  if (study.length > 0)
    lines.push(
      '',
      `Siblings (a question whose answer the agent had opened before it was asked), hit@1 against the same questions on the baseline; ${scored}, and the sibling Δ over both halves:`,
      '',
      '| tool | agent | siblings: n | baseline | agent | Δ | others: n | baseline | agent | Δ | both halves: n | Δ |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|',
      ...study,
    );

  if (paraphrases) {
    lines.push(
      '',
      "Paraphrases: window 1's questions asked at the end in the other language (the same question id) over the same memory, against the same paraphrases on the baseline:",
      '',
      '| tool | agent | n | hit@1 baseline → agent | hit@5 baseline → agent |',
      '|---|---|---|---|---|',
    );
    for (const [key, run] of agents) {
      const [tool, policy] = key.split('/') as [Tool, Policy];
      const base = baseOf(key);
      const p = run.paraphrased;
      const b = base?.paraphrased;
      lines.push(
        `| ${toolName(tool)} | ${policy} | ${p.n} | ${f3(value(b, 'hit1'))} → ${f3(value(p, 'hit1'))} | ${f3(value(b, 'hit5'))} → ${f3(value(p, 'hit5'))} |`,
      );
    }
  }

  // What `limbic tune` would learn from each stream's own log (searches whose listed entity was opened).
  const tuned: string[] = [];
  for (const [key, run] of runs) {
    if (run.tunes.length === 0) continue;
    const outcomes = new Map<string, number>();
    for (const t of run.tunes) outcomes.set(`${t.status}: ${t.optimal}`, (outcomes.get(`${t.status}: ${t.optimal}`) ?? 0) + 1);
    const gains = run.tunes.map((t) => t.gain);
    tuned.push(
      `| ${key} | ${run.tunes.reduce((a, t) => a + t.events, 0)} | ${[...outcomes].map(([k, n]) => `${k} (×${n})`).join('; ')} | ${(gains.reduce((a, b) => a + b, 0) / gains.length).toFixed(4)} |`,
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
  return lines.join('\n');
}

const started = performance.now();
const embedder = cachedEmbedder(await loadModel());
const parts = [
  `# Retrieval quality on a used memory — ${new Date().toISOString().slice(0, 10)}`,
  '',
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}. Model: ${BENCH_MODEL}. Command: \`npm run bench:stream -- ${args.join(' ')}\`.`,
  'Each stream is one memory asked its questions in order through the MemoryService the server runs, usage recorded after every answer, the clock moving a week over the stream.',
  `Agents: ${policies.join(', ')} (definitions in bench/quality/stream.ts's header). ` +
    '`top1` opens the first result; `wrong` the highest-ranked result that is not right; `gold` the right entity the first time it is asked about; ' +
    '`shown` every right entity whenever it is listed; `notes` opens the first result and every fifth question adds the question, verbatim, as a note to it; ' +
    '`notes-de` is SYNTHETIC: `notes` with every question asked inside a German frame and the note a German sentence around the question, against `fresh-de` (the same framed questions, fresh).',
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
parts.push(
  `Total ${((performance.now() - started) / 1000).toFixed(0)} s; ${embedder.counts.misses} texts embedded by the model, ${embedder.counts.hits} from the cache.`,
);
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
if (dumpPath !== undefined) {
  writeFileSync(dumpPath, `${dumped.join('\n')}\n`);
  console.error(`answers written to ${dumpPath}`);
}
