/**
 * Which observations a search result should show (issue 33): LoCoMo with ONE ENTITY PER SESSION (a
 * session's turns are its observations, the shape of a captured conversation: sessionsOf in
 * locomo.ts). Each question (categories 1-4) is asked with search_semantic as shipped, limit 5; for
 * every gold session among the results, is its evidence turn among the observations the result
 * shows? Orders compared (core/rank/shown-observations.ts), each cut at K observations:
 * - `stored`: the first K in stored order (what a plain cut would show);
 * - `keyword`: observations holding the query's keyword terms first, then stored order;
 * - `semantic`: nearest to the query first, by a vector per observation (the store keeps one for
 *   an entity too long for one vector: 269 of these 272 sessions);
 * - `keyword + semantic`: the two orders fused (reciprocal rank fusion), as shipped.
 * `… , 2,000 chars` also stops at 2,000 characters of text per result (the shipped default bound);
 * `none` is what every search showed before: every observation.
 *
 * `npx tsx bench/quality/shown-observations.ts` (vectors cached on disk as every quality bench's)
 * writes bench/results/quality-<date>-shown-observations.md.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { dot } from '../../src/core/maintenance/duplicates.js';
import { observationTerms, shownObservations, type ObservationBound } from '../../src/core/rank/shown-observations.js';
import { observationText } from '../../src/core/text/entity-text.js';
import type { EntityId } from '../../src/core/types.js';
import { cachedEmbedder } from './embed-cache.js';
import { Corpus, f3, loadModel, requireData } from './harness.js';
import { cleanEvidence, locomoHalves, sessionsOf, type Sample } from './locomo.js';

const LIMIT = 5;
const BOUNDS: readonly (ObservationBound & { readonly label: string })[] = [
  { label: 'none (every observation)', limit: Infinity },
  { label: '5', limit: 5 },
  { label: '10', limit: 10 },
  { label: '10, 2,000 chars', limit: 10, maxChars: 2000 },
];
const ORDERS = ['stored', 'keyword', 'semantic', 'keyword + semantic'] as const;
/** Without a bound every order shows everything: one row says what that costs. */
const orders = (bound: ObservationBound): readonly Order[] => (bound.limit === Infinity ? ['stored'] : ORDERS);
type Order = (typeof ORDERS)[number];

interface Cell {
  /** Gold sessions found in the top LIMIT. */
  pairs: number;
  /** …whose shown observations hold at least one of the question's evidence turns. */
  shown: number;
  /** Evidence turns in found gold sessions, and those shown. */
  turns: number;
  turnsShown: number;
  /** Results, observations and characters shown over all of them. */
  results: number;
  observations: number;
  chars: number;
}
const cells = new Map<string, Cell>();
const cell = (order: Order, bound: string): Cell => {
  const key = `${order}\u0000${bound}`;
  let c = cells.get(key);
  if (c === undefined) cells.set(key, (c = { pairs: 0, shown: 0, turns: 0, turnsShown: 0, results: 0, observations: 0, chars: 0 }));
  return c;
};

const engine = await loadModel();
const embedder = cachedEmbedder(engine);
const data = JSON.parse(readFileSync(requireData('locomo/locomo10.json'), 'utf8')) as Sample[];
const halves = locomoHalves(data.map((s) => s.sample_id));
const now = Date.UTC(2026, 0, 1);
const started = performance.now();
let questions = 0;
let longest = 0;
let observationsTotal = 0;
let sessionsTotal = 0;
for (const sample of data) {
  const { entities, dates, sessionOfTurn, turnText } = sessionsOf(sample);
  const corpus = new Corpus(embedder);
  await corpus.load(entities, now, [], dates);
  const ids = await corpus.ids(entities.map((e) => e.name));
  const stored = await corpus.store.graph.entitiesById([...ids.values()]);
  sessionsTotal += stored.size;
  for (const e of stored.values()) {
    observationsTotal += e.observations.length;
    longest = Math.max(longest, e.observations.length);
  }
  for (const qa of sample.qa) {
    if (qa.category === 5) continue;
    const evidence = cleanEvidence(qa.evidence).filter((t) => turnText.has(t));
    if (evidence.length === 0) continue;
    questions++;
    const found = await corpus.searchSemantic(qa.question, LIMIT, now, {});
    const [query] = await embedder.embed([qa.question], 'query');
    const terms = observationTerms(qa.question, 'plain');
    for (const id of found) {
      const entity = stored.get(id as EntityId);
      if (entity === undefined) continue;
      const vectors = await embedder.embed(
        entity.observations.map((o) => observationText(entity, o)),
        'passage',
      );
      const distances = vectors.map((v) => (query === undefined ? 0 : 1 - dot(query, v)));
      const gold = evidence.filter((t) => sessionOfTurn.get(t) === entity.name).map((t) => turnText.get(t) ?? '');
      for (const bound of BOUNDS) {
        for (const order of orders(bound)) {
          const shown =
            order === 'stored'
              ? storedCut(entity.observations, bound)
              : shownObservations(
                  entity.observations,
                  order === 'semantic' ? [] : terms,
                  bound,
                  order === 'keyword' ? undefined : distances,
                ).observations;
          const c = cell(order, bound.label);
          c.results++;
          c.observations += shown.length;
          c.chars += shown.reduce((n, o) => n + o.length, 0);
          if (gold.length === 0) continue;
          c.pairs++;
          const held = gold.filter((g) => shown.includes(g)).length;
          if (held > 0) c.shown++;
          c.turns += gold.length;
          c.turnsShown += held;
        }
      }
    }
  }
  await corpus.close();
  process.stderr.write(`shown observations: ${sample.sample_id} (half ${halves.get(sample.sample_id) ?? '?'})\n`);
}

/** The first observations in stored order, within the bound (the same stop as shownObservations). */
function storedCut(observations: readonly string[], bound: ObservationBound): string[] {
  const shown: string[] = [];
  let chars = 0;
  for (const text of observations) {
    if (shown.length >= bound.limit) break;
    if (shown.length > 0 && bound.maxChars !== undefined && chars + text.length > bound.maxChars) break;
    shown.push(text);
    chars += text.length;
  }
  return shown;
}

const seconds = (performance.now() - started) / 1000;
const rows = BOUNDS.flatMap((bound) =>
  orders(bound).map((order) => {
    const c = cell(order, bound.label);
    return `| ${bound.label} | ${order} | ${c.pairs} | ${f3(c.shown / c.pairs)} | ${f3(c.turnsShown / c.turns)} | ${(c.observations / c.results).toFixed(1)} | ${(c.chars / c.results).toFixed(0)} |`;
  }),
);
const md = [
  `# Which observations a search result shows — ${new Date().toISOString().slice(0, 10)}`,
  '',
  `Model ${engine.id}, ${cpus().length} × ${cpus()[0]?.model.trim() ?? 'CPU'}, Node ${process.version}. Command: \`npx tsx bench/quality/shown-observations.ts\` (${seconds.toFixed(0)} s).`,
  '',
  `LoCoMo, one entity per session (${sessionsTotal} sessions, ${(observationsTotal / sessionsTotal).toFixed(1)} observations each on average, the longest ${longest}),`,
  `${questions} questions of categories 1-4 asked with search_semantic, limit ${LIMIT}. For each gold session among the results (a session`,
  'holding an evidence turn): `evidence shown` is the share whose shown observations hold at least one evidence turn;',
  '`turns shown` the share of their evidence turns shown. Observations and characters shown are means over every result.',
  '',
  '| bound | order | gold sessions found | evidence shown | turns shown | observations shown | characters shown |',
  '|---|---|---|---|---|---|---|',
  ...rows,
  '',
].join('\n');
const dir = join(import.meta.dirname, '..', 'results');
mkdirSync(dir, { recursive: true });
const file = join(dir, `quality-${new Date().toISOString().slice(0, 10)}-shown-observations.md`);
writeFileSync(file, md);
process.stdout.write(`${md}\nwrote ${file}\n`);
