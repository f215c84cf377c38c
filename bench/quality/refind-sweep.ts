/**
 * `npx tsx bench/quality/refind-sweep.ts`: chooses the re-finding lift's threshold and bands
 * (docs/ranking.md, "Re-finding") from one pass over bench:stream's XQuAD and small-memory streams.
 * Each stream is asked in order through the search pipeline with the re-finding lift off (band 0)
 * but its scores computed (threshold 0: each candidate's best query similarity, forgotten), while
 * an agent uses results exactly as the MemoryService records a use: an access and a re-finding
 * pair of the query that listed it. The first window is asked again at the end. Every candidate's
 * base, base-level lift, multiplier and similarity are kept, so each setting of the threshold and
 * bands is replayed over the same streams afterwards, as core/rank combines the lifts (combinedLift).
 * Agents: `shown` opens the right result whenever it is listed; `top1` opens the first result;
 * `wrong` opens the best-placed wrong result listed (the adversary the bound is for).
 * Reported per tool and agent for half A (--half B|all for others): sibling questions (whose answer
 * the agent had opened before) hit@1 against fresh, the worst window and the re-asked first window
 * against fresh. The agents' opens follow the pass's own ranking (no re-finding), which a setting
 * changes little: the final numbers come from bench:stream.
 * Options: --only small,xquad  --half A|B|all  --tools semantic,hybrid
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LIFT_BAND, REFIND_BAND, REFIND_THRESHOLD } from '../../src/core/rank/constants.js';
import { DEFAULT_CONTEXT_WEIGHTS } from '../../src/core/rank/context-boost.js';
import { DEFAULT_SIGNAL_WEIGHTS } from '../../src/core/rank/fuse-weighted.js';
import { routedBand } from '../../src/core/rank/rank-candidates.js';
import type { RoutingStrategy } from '../../src/core/rank/routing.js';
import { noopLogger } from '../../src/core/logger.js';
import type { EntityId } from '../../src/core/types.js';
import { LazyEmbedder, type Embedder } from '../../src/embed/embedder.js';
import { toHybridOptions } from '../../src/mcp/hybrid-options.js';
import { EmbeddingIndexer } from '../../src/service/embedding-indexer.js';
import { HYBRID_DEPTH } from '../../src/service/search/hybrid-search.js';
import { runSearch, type SearchOutcome } from '../../src/service/search/pipeline.js';
import type { SearchRequest } from '../../src/service/search/request.js';
import { semanticRequest } from '../../src/service/search/search-semantic.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { cachedEmbedder } from './embed-cache.js';
import { loadModel, writeInOrder } from './harness.js';
import { smallSuite, xquadSuite, type Question, type Stream, type Suite } from './stream-suites.js';
import type { Half } from './tally.js';

type Agent = 'shown' | 'top1' | 'wrong';
type Tool = 'semantic' | 'hybrid';

const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const only = (option('--only') ?? 'small,xquad').split(',');
const half = option('--half') ?? 'A';
const tools = (option('--tools') ?? 'semantic,hybrid').split(',') as Tool[];
const agents: Agent[] = ['shown', 'top1', 'wrong'];
const WEEK_MS = 7 * 86_400_000;

/** One asked question as the pass ranked it, for replay. */
interface Trace {
  readonly q: Question;
  /** The agent had opened its answer before it was asked. */
  readonly sibling: boolean;
  readonly reasked: boolean;
  readonly strategy: RoutingStrategy;
  readonly gold: ReadonlySet<EntityId>;
  readonly named: ReadonlySet<EntityId>;
  readonly candidates: readonly { id: EntityId; base: number; baseLevel: number; multiplier: number; similarity: number }[];
}

function request(tool: Tool, query: string, limit: number): SearchRequest {
  // Band 0: the pass ranks without the lift; threshold 0 and no forgetting: scores are similarities.
  const sweep = { threshold: 0, band: 0, halfLifeDays: 0 };
  if (tool === 'semantic') return semanticRequest(query, limit, { refind: sweep });
  const o = toHybridOptions({ query, limit });
  return {
    query,
    limit,
    offset: 0,
    modes: o.searchModes,
    depth: HYBRID_DEPTH,
    keywordSyntax: 'expert',
    fusion: o.fusionMethod,
    rrfK: o.rrfK,
    weights: { ...DEFAULT_SIGNAL_WEIGHTS, ...o.weights },
    limbic: true,
    routingLimit: undefined,
    rerank: false,
    filters: o.filters,
    // As hybrid-search.ts: z-score fusion with the context stage.
    context: o.fusionMethod === 'zscore' ? DEFAULT_CONTEXT_WEIGHTS : undefined,
    refind: sweep,
  };
}

async function pass(embedder: Embedder, suite: Suite, stream: Stream, tool: Tool, agent: Agent): Promise<Trace[]> {
  const dir = mkdtempSync(join(tmpdir(), 'limbic-refind-'));
  const store = openSqliteStore({ path: join(dir, 'memory.db') });
  const lazy = new LazyEmbedder(async () => embedder);
  const indexer = new EmbeddingIndexer(store, lazy, noopLogger);
  const traces: Trace[] = [];
  try {
    let now = Date.UTC(2026, 0, 5, 9);
    await writeInOrder(store, stream.entities, [], now);
    await indexer.drain();
    const deps = { store, indexer, reranker: undefined };
    const step = WEEK_MS / (stream.questions.length + suite.windows);
    const ids = new Map<string, EntityId>();
    for (const e of stream.entities) ids.set(e.name, (await store.graph.idsByName([e.name]))[0] as EntityId);
    const opened = new Set<EntityId>();
    const ask = async (q: Question, reasked: boolean): Promise<SearchOutcome> => {
      now += step;
      const gold = new Set([...q.gold].map((g) => ids.get(g)).filter((id): id is EntityId => id !== undefined));
      const outcome = await runSearch(deps, request(tool, q.text, suite.limit), now);
      traces.push({
        q,
        reasked,
        sibling: [...gold].some((g) => opened.has(g)),
        strategy: outcome.strategy,
        gold,
        named: outcome.named,
        candidates: outcome.ranked.slice(0, 50).map((r) => ({
          id: r.id,
          base: r.base,
          baseLevel: r.baseLevelLift,
          multiplier: r.multiplier,
          similarity: r.refindScore,
        })),
      });
      return outcome;
    };
    for (const q of stream.questions) {
      const outcome = await ask(q, false);
      const page = outcome.page.map((p) => p.ranked.id);
      const gold = traces.at(-1)?.gold ?? new Set();
      const use =
        agent === 'shown'
          ? page.filter((id) => gold.has(id))
          : agent === 'top1'
            ? page.slice(0, 1)
            : page.filter((id) => !gold.has(id)).slice(0, 1);
      if (use.length === 0) continue;
      now += step / 4;
      // As MemoryService records a use after the search that listed it (refinding.ts).
      await store.usage.recordAccess(use, now);
      if (outcome.query !== undefined)
        await store.usage.recordRefinding(
          use.map((entityId) => ({ entityId, model: outcome.query!.model, vector: outcome.query!.vector, at: now })),
        );
      for (const id of use) opened.add(id);
    }
    for (const q of stream.questions.filter((x) => x.window === 0)) await ask(q, true);
  } finally {
    indexer.stop();
    await indexer.idle();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return traces;
}

interface Setting {
  readonly threshold: number;
  readonly refindBand: number;
  readonly liftBand: number;
  /** Each candidate's score less the best other candidate's: a query like past ones of several candidates lifts none much. */
  readonly contrast?: boolean;
}

/** hit@1 of a trace under a setting; `fresh`: base × multiplier alone (nothing used). */
function hit1(t: Trace, s: Setting | 'fresh'): boolean {
  let best: { id: EntityId; score: number } | undefined;
  const raw = (x: number): number => (s !== 'fresh' && x > s.threshold ? (x - s.threshold) / (1 - s.threshold) : 0);
  const scores = t.candidates.map((c) => raw(c.similarity));
  const sorted = [...scores].sort((a, b) => b - a);
  for (const [i, c] of t.candidates.entries()) {
    let score: number;
    if (s === 'fresh') score = c.base * c.multiplier;
    else {
      const own = scores[i] ?? 0;
      const other = own === sorted[0] ? (sorted[1] ?? 0) : (sorted[0] ?? 0);
      const r = s.contrast === true ? Math.max(0, own - other) : own;
      const lift = Math.min(routedBand(t.strategy, s.liftBand), c.baseLevel + r * routedBand(t.strategy, s.refindBand));
      score = (c.base + lift) * c.multiplier;
    }
    // Named candidates come first whatever their scores (name-match.ts).
    if (t.named.has(c.id)) score += 1e6;
    if (best === undefined || score > best.score || (score === best.score && c.id < best.id)) best = { id: c.id, score };
  }
  return best !== undefined && t.gold.has(best.id);
}

const rate = (ts: readonly Trace[], s: Setting | 'fresh'): number => ts.filter((t) => hit1(t, s)).length / Math.max(1, ts.length);

/**
 * The bound on what an adversary costs: the share of questions whose answer is first on a fresh
 * store by less than the route's lift band over the runner-up. Lifting any one other candidate by
 * at most that band can take first place only from those.
 */
function atRisk(ts: readonly Trace[], liftBand: number): number {
  const risky = ts.filter((t) => {
    const fresh = t.candidates.map((c) => ({ id: c.id, score: c.base * c.multiplier })).sort((a, b) => b.score - a.score || a.id - b.id);
    const [first, second] = fresh;
    if (first === undefined || !t.gold.has(first.id) || t.named.has(first.id)) return false;
    return (
      second !== undefined &&
      first.score - second.score < routedBand(t.strategy, liftBand) * Math.max(...t.candidates.map((c) => c.multiplier))
    );
  });
  return risky.length / Math.max(1, ts.length);
}

/** Traces as JSON (sets as arrays), so settings are replayed again without asking anything. */
interface Saved {
  readonly suite: string;
  readonly windows: number;
  readonly tool: Tool;
  readonly agent: Agent;
  readonly traces: (Omit<Trace, 'q' | 'gold' | 'named'> & { half: Half; window: number; gold: EntityId[]; named: EntityId[] })[];
}

const tracesFile = option('--traces') ?? join(tmpdir(), 'limbic-refind-traces.json');
let saved: Saved[];
if (args.includes('--replay') && existsSync(tracesFile)) saved = JSON.parse(readFileSync(tracesFile, 'utf8')) as Saved[];
else {
  const embedder = cachedEmbedder(await loadModel());
  saved = [];
  for (const [name, make] of [
    ['small', smallSuite],
    ['xquad', xquadSuite],
  ] as const) {
    if (!only.includes(name)) continue;
    const suite = make();
    for (const tool of tools)
      for (const agent of agents) {
        const all: Trace[] = [];
        // Questions about one paragraph (XQuAD) or memory (small) are all in one half: a half alone is a stream of its own.
        for (const stream of suite.streams)
          all.push(
            ...(await pass(
              embedder,
              suite,
              { ...stream, questions: stream.questions.filter((q) => half === 'all' || q.half === half) },
              tool,
              agent,
            )),
          );
        saved.push({
          suite: suite.name,
          windows: suite.windows,
          tool,
          agent,
          traces: all.map(({ q, gold, named, ...t }) => ({ ...t, half: q.half, window: q.window, gold: [...gold], named: [...named] })),
        });
      }
  }
  writeFileSync(tracesFile, JSON.stringify(saved));
  console.error(`traces written to ${tracesFile}`);
}

const settings: Setting[] = [{ threshold: 1, refindBand: 0, liftBand: 0.02 }];
for (const threshold of [0.3, 0.5, 0.6, 0.7, 0.8])
  for (const refindBand of [0.005, 0.01, 0.02, 0.04])
    for (const liftBand of [0.02, 0.02 + refindBand])
      settings.push({ threshold, refindBand, liftBand: Math.round(liftBand * 1000) / 1000 });
for (const threshold of [0.3, 0.5])
  for (const refindBand of [0.02, 0.04])
    for (const liftBand of [0.02, 0.02 + refindBand])
      settings.push({ threshold, refindBand, liftBand: Math.round(liftBand * 1000) / 1000, contrast: true });
console.log(
  `In force: threshold ${REFIND_THRESHOLD}, REFIND_BAND ${REFIND_BAND}, LIFT_BAND ${LIFT_BAND}. Asked: half ${half}. The first row is today's ranking (no re-finding).`,
);
const load = (x: Saved['traces'][number]): Trace => ({
  ...x,
  q: { text: '', gold: new Set(), half: x.half, window: x.window },
  gold: new Set(x.gold),
  named: new Set(x.named),
});
for (const scored of ['A', 'B'] as const) {
  for (const suiteName of [...new Set(saved.map((x) => x.suite))])
    for (const tool of tools) {
      const of = (agent: Agent): Trace[] =>
        (saved.find((x) => x.suite === suiteName && x.tool === tool && x.agent === agent)?.traces ?? [])
          .map(load)
          .filter((t) => t.q.half === scored);
      const windows = saved.find((x) => x.suite === suiteName)?.windows ?? 0;
      const [shown, top1, wrong] = [of('shown'), of('top1'), of('wrong')];
      if (shown.length === 0) continue;
      console.log(
        `\n## Half ${scored}: ${suiteName}, ${tool === 'semantic' ? 'search_semantic' : 'hybrid_search'} (hit@1; change against fresh)`,
      );
      const reaskedWrong = wrong.filter((t) => t.reasked);
      console.log(
        `Wrong agent's re-asked questions whose answer leads the runner-up by less than x on a fresh store: ${[
          0.002, 0.005, 0.01, 0.02, 0.03, 0.05,
        ]
          .map((x) => `${x}: ${atRisk(reaskedWrong, x).toFixed(3)}`)
          .join(', ')} (x at the balanced route; n ${reaskedWrong.length}).`,
      );
      console.log(
        '| θ | refind band | lift band | shown: siblings n | fresh | gain | top1: worst window | top1: re-asked | wrong: re-asked | bound | shown: worst window |',
      );
      console.log('|---|---|---|---|---|---|---|---|---|---|---|');
      for (const s of settings) {
        const siblings = shown.filter((t) => t.sibling && !t.reasked);
        const worst = (ts: readonly Trace[]): number => {
          let w = 0;
          for (let i = 0; i < windows; i++) {
            const win = ts.filter((t) => !t.reasked && t.q.window === i);
            if (win.length > 0) w = Math.min(w, rate(win, s) - rate(win, 'fresh'));
          }
          return w;
        };
        const reask = (ts: readonly Trace[]): number => {
          const r = ts.filter((t) => t.reasked);
          return rate(r, s) - rate(r, 'fresh');
        };
        console.log(
          `| ${s.threshold}${s.contrast === true ? ' contrast' : ''} | ${s.refindBand} | ${s.liftBand} | ${siblings.length} | ${rate(siblings, 'fresh').toFixed(3)} | ${(rate(siblings, s) - rate(siblings, 'fresh')).toFixed(3)} | ` +
            `${worst(top1).toFixed(3)} | ${reask(top1).toFixed(3)} | ${reask(wrong).toFixed(3)} | −${atRisk(reaskedWrong, s.liftBand).toFixed(3)} | ${worst(shown).toFixed(3)} |`,
        );
      }
    }
}
