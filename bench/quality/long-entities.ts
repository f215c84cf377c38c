/**
 * Long entities: LoCoMo with ONE ENTITY PER SESSION (its observations are the session's turns,
 * plus the session date as a `metadata` observation), the shape of a memory that keeps many
 * observations on few entities, as agents using the official server's habits do ("default_user"
 * collecting every fact). An entity's own vector is made from the text that fits the model's
 * budget (480 tokens: head, tail and the most novel of the middle, core/text/entity-text.ts), so
 * most turns of a long session are not in it; the store also keeps a vector per observation of
 * such an entity, and answers the entity at the nearest of them (the product: `semantic`,
 * `search_semantic`). Computed here, not in the product, for comparison:
 * - `entity vector only`: what the store answered before observation vectors;
 * - `chunks`: the observations packed in order into budget-sized pieces, one vector each (the
 *   first piece is the entity's own text), the entity at its nearest piece;
 * - `observations`: only the observations' vectors; `entity + left out`: the entity's vector and
 *   those of the observations its text left out.
 * `search_semantic, …` runs the shipped pipeline with its semantic leg answered from one of these
 * (nearest per entity, as the store answers). Questions of categories 1-4; gold: the sessions
 * holding the evidence turns; halves as in locomo.ts.
 *
 * `npx tsx bench/quality/long-entities.ts` (about 3 min uncached on 2 cores; vectors are cached
 * on disk like every quality bench's) writes bench/results/quality-<date>-long-entities.md.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { dot } from '../../src/core/maintenance/duplicates.js';
import { buildEntityText, fitsEntityBudget, MAX_ENTITY_TOKENS, observationText } from '../../src/core/text/entity-text.js';
import type { VectorHit } from '../../src/core/signals.js';
import type { Entity, EntityId } from '../../src/core/types.js';
import { cachedEmbedder } from './embed-cache.js';
import { Corpus, loadModel, requireData } from './harness.js';
import { goldIds, LOCOMO_GROUPS, CATEGORY_NAMES, locomoGroups, locomoHalves, sessionsOf, type Sample } from './locomo.js';
import { Tally } from './tally.js';

const LIMIT = 5;
/** KNN depth of the product's semantic leg here: every session of a conversation. */
const DEPTH = 100;

/** The observations packed in order into pieces whose text fits the budget; the first is the product's text. */
function pieces(entity: Entity, countTokens: (text: string) => number): Entity[] {
  const whole = buildEntityText(entity, [], countTokens);
  const inFirst = new Set(entity.observations.filter((o) => whole.includes(o)));
  const out: Entity[] = [entity];
  let current: string[] = [];
  for (const obs of entity.observations.filter((o) => !inFirst.has(o))) {
    const next = [...current, obs];
    if (current.length > 0 && !fitsEntityBudget({ ...entity, observations: next }, [], countTokens)) {
      out.push({ ...entity, observations: current });
      current = [obs];
    } else current = next;
  }
  if (current.length > 0) out.push({ ...entity, observations: current });
  return out;
}

/** Entities at their nearest vector, nearest first, as a vector index answers (cosine distance). */
function nearestHits(query: Float32Array, vectors: readonly { id: EntityId; vector: Float32Array }[], limit: number): VectorHit[] {
  const best = new Map<EntityId, number>();
  for (const { id, vector } of vectors) best.set(id, Math.max(best.get(id) ?? -Infinity, dot(query, vector)));
  return [...best]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([id, similarity]) => ({ id, distance: 1 - similarity }));
}

const rankByNearest = (query: Float32Array, vectors: readonly { id: EntityId; vector: Float32Array }[], limit: number): EntityId[] =>
  nearestHits(query, vectors, limit).map((h) => h.id);

const engine = await loadModel();
const embedder = cachedEmbedder(engine);
const countTokens = (text: string): number => engine.countTokens(text);
const data = JSON.parse(readFileSync(requireData('locomo/locomo10.json'), 'utf8')) as Sample[];
const halves = locomoHalves(data.map((s) => s.sample_id));
const tally = new Tally();
const now = Date.UTC(2026, 0, 1);
const started = performance.now();
let sessions = 0;
let overBudget = 0;
let turnsTotal = 0;
let turnsInVector = 0;
let chunkCount = 0;
let leftOutVectors = 0;
let storedObservationVectors = 0;
let questions = 0;
for (const sample of data) {
  const half = halves.get(sample.sample_id) ?? 'A';
  const { entities, dates, sessionOfTurn } = sessionsOf(sample);
  const corpus = new Corpus(embedder);
  await corpus.load(entities, now, [], dates);
  const ids = await corpus.ids(entities.map((e) => e.name));
  // The entities as stored (with their date observation), for the study's own vectors.
  const stored = (await corpus.store.graph.openNodes(entities.map((e) => e.name))).entities;
  const chunkInputs: { id: EntityId; entity: Entity; first: boolean }[] = [];
  const observationTexts: { id: EntityId; text: string; inEntityVector: boolean }[] = [];
  for (const entity of stored) {
    const id = ids.get(entity.name) as EntityId;
    const kept = buildEntityText(entity, [], countTokens);
    sessions++;
    if (!fitsEntityBudget(entity, [], countTokens)) {
      overBudget++;
      if (entity.observations.length > 1) storedObservationVectors += entity.observations.length;
    }
    turnsTotal += entity.observations.length;
    turnsInVector += entity.observations.filter((o) => kept.includes(o)).length;
    pieces(entity, countTokens).forEach((piece, i) => chunkInputs.push({ id, entity: piece, first: i === 0 }));
    for (const obs of entity.observations)
      observationTexts.push({ id, text: observationText(entity, obs), inEntityVector: kept.includes(obs) });
  }
  chunkCount += chunkInputs.length;
  const chunkVectors = await embedder.embedEntities(chunkInputs.map((c) => ({ entity: c.entity, relations: [] })));
  const observationVectors = await embedder.embed(
    observationTexts.map((o) => o.text),
    'passage',
  );
  const chunks = chunkInputs.map((c, i) => ({ id: c.id, vector: chunkVectors[i] as Float32Array }));
  const perObservation = observationTexts.map((o, i) => ({ id: o.id, vector: observationVectors[i] as Float32Array }));
  // The entity's own vector (the first piece is its text) and one per observation left out of it.
  const entityVectors = chunks.filter((_, i) => chunkInputs[i]?.first === true);
  const entityAndLeftOut = [...entityVectors, ...perObservation.filter((_, i) => observationTexts[i]?.inEntityVector === false)];
  leftOutVectors += entityAndLeftOut.length;
  // search_semantic as shipped, its semantic leg answered from these vectors instead of the store's.
  const vectorIndex = corpus.store.requireVectors();
  const storeSearch = vectorIndex.search.bind(vectorIndex);
  const searchSemanticOver = async (vectors: readonly { id: EntityId; vector: Float32Array }[], question: string): Promise<EntityId[]> => {
    vectorIndex.search = async (q, limit) => nearestHits(q, vectors, limit);
    try {
      return await corpus.search('hybrid-limbic', question, LIMIT, now);
    } finally {
      vectorIndex.search = storeSearch;
    }
  };
  const turnIds = new Map([...sessionOfTurn].map(([turn, session]) => [turn, ids.get(session) as EntityId]));
  for (const qa of sample.qa) {
    if (qa.category === 5) continue;
    const gold = goldIds(qa.evidence, turnIds);
    if (gold.size === 0) continue;
    questions++;
    const groups = locomoGroups(`cat${qa.category}`);
    const [query] = await embedder.embed([qa.question], 'query');
    if (query === undefined) continue;
    const semantic = (await corpus.store.requireVectors().search(query, DEPTH)).map((h) => h.id);
    tally.add('fts', half, groups, await corpus.search('fts', qa.question, LIMIT, now), gold);
    tally.add('semantic', half, groups, semantic.slice(0, LIMIT), gold);
    tally.add('entity vector only', half, groups, rankByNearest(query, entityVectors, LIMIT), gold);
    tally.add('chunks', half, groups, rankByNearest(query, chunks, LIMIT), gold);
    tally.add('observations', half, groups, rankByNearest(query, perObservation, LIMIT), gold);
    tally.add('entity + left out', half, groups, rankByNearest(query, entityAndLeftOut, LIMIT), gold);
    tally.add('search_semantic', half, groups, await corpus.search('hybrid-limbic', qa.question, LIMIT, now), gold);
    tally.add('search_semantic, entity vector only', half, groups, await searchSemanticOver(entityVectors, qa.question), gold);
    tally.add('search_semantic, observations', half, groups, await searchSemanticOver(perObservation, qa.question), gold);
    tally.add('search_semantic, entity + left out', half, groups, await searchSemanticOver(entityAndLeftOut, qa.question), gold);
  }
  await corpus.close();
  process.stderr.write(`long entities: ${sample.sample_id} (half ${half}), ${entities.length} sessions\n`);
}
const seconds = (performance.now() - started) / 1000;
const metrics = ['hit1', 'recall5', 'mrr'] as const;
const groups = LOCOMO_GROUPS.filter((g) => g !== 'cat5' && g !== 'all 1-5');
const md = [
  `# Long entities: LoCoMo with one entity per session — ${new Date().toISOString().slice(0, 10)}`,
  '',
  `Model ${engine.id}, ${cpus().length} × ${cpus()[0]?.model.trim() ?? 'CPU'}, Node ${process.version}. Command: \`npx tsx bench/quality/long-entities.ts\` (${seconds.toFixed(0)} s).`,
  '',
  `${sessions} sessions as entities (a session's turns are its observations, "Speaker: text", plus its date as a \`metadata\``,
  `observation), ${questions} questions of categories 1-4; gold: the sessions holding the evidence turns; limit ${LIMIT}.`,
  `${overBudget} of ${sessions} sessions (${((100 * overBudget) / sessions).toFixed(0)}%) do not fit the ${MAX_ENTITY_TOKENS}-token budget; the entity`,
  `vectors hold ${turnsInVector} of ${turnsTotal} observations (${((100 * turnsInVector) / turnsTotal).toFixed(0)}%); the store keeps ${storedObservationVectors} observation vectors besides. \`chunks\` needs ${chunkCount} vectors`,
  `(${(chunkCount / sessions).toFixed(1)} per entity), \`observations\` ${turnsTotal} (${(turnsTotal / sessions).toFixed(1)}), \`entity + left out\` ${leftOutVectors} (${(leftOutVectors / sessions).toFixed(1)}).`,
  '',
  "Modes: `fts` the keyword leg alone; `semantic` the store's KNN (an entity at the nearest of its own vector and, when its",
  "text does not fit one, its observations' vectors); `search_semantic` as shipped. Computed here, each entity at its",
  'nearest vector: `entity vector only` (the store before observation vectors), `chunks`, `observations` (only',
  'observation vectors), `entity + left out`; `search_semantic, …` is the shipped pipeline with its semantic leg answered',
  'from those vectors instead of the store.',
  '',
  tally.table('A', groups, metrics, CATEGORY_NAMES),
  '',
  tally.table('B', groups, metrics, CATEGORY_NAMES),
  '',
].join('\n');
console.log(md);
const dir = join(import.meta.dirname, '..', 'results');
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, `quality-${new Date().toISOString().slice(0, 10)}-long-entities.md`), md);
await engine.close?.();
