/**
 * Conversation cohesion, the other design (issue 37, item 2): a turn stored with its neighbours as
 * context, so both legs read the turn before and after it ("context: …" observations of the same
 * session), against the turn alone. search_semantic (shipped context stage) on LoCoMo, categories
 * 1-4, recall@5; the turn-alone store is the one bench:quality and context.ts measure.
 *
 *   npx tsx bench/quality/cohesion-text.ts [--half A|B] [--around N] [--locomo-samples N]
 */
import { readFileSync } from 'node:fs';
import type { NewEntity } from '../../src/core/types.js';
import { cachedEmbedder } from './embed-cache.js';
import { Corpus, f3, loadModel, requireData } from './harness.js';
import { CATEGORY_NAMES, goldIds, locomoGroups, locomoHalves, turnsOf, type Sample } from './locomo.js';
import { Tally } from './tally.js';

const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const LIMIT = 10;
const around = Number(option('--around') ?? 1);

/** Each turn with up to `n` turns of its session before and after it as `context:` observations. */
function withNeighbours(entities: readonly NewEntity[], writtenAt: readonly (number | undefined)[], n: number): NewEntity[] {
  return entities.map((e, i) => {
    const context: string[] = [];
    for (let j = Math.max(0, i - n); j <= Math.min(entities.length - 1, i + n); j++)
      if (j !== i && writtenAt[j] === writtenAt[i]) context.push(`context: ${entities[j]?.observations[0] ?? ''}`);
    return { ...e, observations: [...e.observations, ...context] };
  });
}

const data = JSON.parse(readFileSync(requireData('locomo/locomo10.json'), 'utf8')) as Sample[];
const halves = locomoHalves(data.map((s) => s.sample_id));
const embedder = cachedEmbedder(await loadModel());
const tally = new Tally();
const now = Date.UTC(2026, 0, 1);
const started = performance.now();
for (const sample of data.slice(0, Number(option('--locomo-samples') ?? Infinity))) {
  const half = halves.get(sample.sample_id) ?? 'A';
  if (option('--half') !== undefined && option('--half') !== half) continue;
  const { entities, additions, writtenAt } = turnsOf(sample, 'metadata');
  for (const [name, stored] of [
    ['turn alone', entities],
    [`turn with ${around} around`, withNeighbours(entities, writtenAt, around)],
  ] as const) {
    const corpus = new Corpus(embedder);
    await corpus.load(stored, now, [], additions, writtenAt);
    const ids = await corpus.ids(stored.map((e) => e.name));
    for (const qa of sample.qa) {
      const gold = goldIds(qa.evidence, ids);
      if (gold.size === 0) continue;
      tally.add(name, half, locomoGroups(`cat${qa.category}`), await corpus.searchSemantic(qa.question, LIMIT, now, {}), gold);
    }
    await corpus.close();
  }
  process.stderr.write(`cohesion-text: ${sample.sample_id} (half ${half}) done, ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
}
for (const half of ['A', 'B'] as const)
  if (option('--half') === undefined || option('--half') === half)
    console.log(
      tally.table(half, ['cat1', 'cat2', 'cat3', 'cat4', 'all 1-4'], ['recall5', 'hit1', 'mrr'], CATEGORY_NAMES),
      `\n(embeddings cached ${embedder.counts.hits}, made ${embedder.counts.misses}; ${f3((performance.now() - started) / 1000)} s)\n`,
    );
