/**
 * One search pipeline, in typed stages: legs → filter → fuse → limbic → rerank → page. Each stage
 * is a function that returns its output; its time is recorded under its name, so explain_query is
 * read from the stages. hybrid_search runs it with its caller's options; search_semantic is a
 * preset of it (search-semantic.ts).
 */
import { ERROR_CODES, MemoryError } from '../../core/errors.js';
import { holdBehindSources, namedSpeakerTypes, withoutNames, type ContextBoost } from '../../core/rank/context-boost.js';
import { refindScore } from '../../core/rank/limbic.js';
import { isNameMatch, nameKey, pinNameMatches } from '../../core/rank/name-match.js';
import { rankByBase, rankWithoutLimbic, type RankedCandidate } from '../../core/rank/rank-candidates.js';
import { detectQueryType, type RoutingStrategy } from '../../core/rank/routing.js';
import type { CandidateSignals, EntityFacts, KeywordHit, VectorHit } from '../../core/signals.js';
import { DEFAULT_PARAMETERS, type ParametersInForce } from '../../core/tune/shadow.js';
import type { EntityId } from '../../core/types.js';
import { modelStateSentence } from '../../embed/model-state.js';
import type { Reranker } from '../../embed/reranker.js';
import type { StoredEntity } from '../../store/graph-store.js';
import type { Store } from '../../store/store.js';
import type { EmbeddingIndexer } from '../embedding-indexer.js';
import type { ShownObservations } from '../../core/rank/shown-observations.js';
import { contextStage } from './context.js';
import { fuse, type Fused } from './fuse.js';
import { chooseLegs, keywordLeg, semanticLeg, type KeywordLeg } from './legs.js';
import { showObservations } from './shown.js';
import {
  countFilters,
  timed,
  type RefindParameters,
  type SearchFilters,
  type SearchMode,
  type SearchRequest,
  type StageTimings,
} from './request.js';

export interface SearchDeps {
  readonly store: Store;
  readonly indexer: EmbeddingIndexer;
  readonly reranker: Reranker | undefined;
}

/** With filters, legs fetch this many times the depth so a selective filter still leaves candidates. */
const FILTER_OVERFETCH = 4;

export interface SearchOutcome {
  /** The page, best first, hydrated; an entity deleted meanwhile is left out. */
  readonly page: readonly { readonly ranked: RankedCandidate; readonly entity: StoredEntity }[];
  /** Ranked candidates after filters: the most any page can reach. */
  readonly count: number;
  readonly modesUsed: SearchMode[];
  readonly keyword: KeywordLeg | undefined;
  /** Hits each leg kept after filters. */
  readonly keywordHits: readonly KeywordHit[];
  readonly semanticHits: readonly VectorHit[];
  readonly fused: Fused;
  readonly strategy: RoutingStrategy;
  readonly rerankScores: ReadonlyMap<EntityId, number>;
  readonly warnings: string[];
  readonly model: string | undefined;
  readonly timings: StageTimings;
  /** γ, β_sal and k this search ranked with, and where they came from; k is the caller's when given. */
  readonly parameters: ParametersInForce;
  /** Every ranked candidate after filters, best first (the page is a slice of it), for the shadow log. */
  readonly ranked: readonly RankedCandidate[];
  /** Candidates whose final score request.typeBoost multiplied, for the shadow log's replay. */
  readonly boosted: ReadonlySet<EntityId>;
  /** Candidates named what the query says, put first whatever their scores (core/rank/name-match.ts). */
  readonly named: ReadonlySet<EntityId>;
  /** What the context stage added to each candidate's strength (context-boost.ts); empty without it. */
  readonly contextBoosts: ReadonlyMap<EntityId, ContextBoost>;
  /** With request.observations: what each page entity shows of its observations; undefined, all of them. */
  readonly shown: ReadonlyMap<EntityId, ShownObservations> | undefined;
  /**
   * The text the meaning leg searched when it was not the query: the query without the speakers it
   * names (ContextWeights.withoutSpeakers); undefined when it searched the query.
   */
  readonly searched: string | undefined;
  /**
   * The query's vector and the model that made it, when the semantic leg ran: what a use after this
   * search pairs with the entity used (re-finding, memory-service.ts). Never part of an answer.
   */
  readonly query: { readonly vector: Float32Array; readonly model: string } | undefined;
}

/**
 * Each candidate's re-finding score (limbic.ts refindScore) from the pairs the store holds for it:
 * how much this query is one after which the agent used it. Only candidates with a score are kept.
 */
async function refindingStage(
  store: Store,
  ids: readonly EntityId[],
  query: { readonly vector: Float32Array; readonly model: string },
  similarityFloor: number,
  now: number,
  parameters: RefindParameters | undefined,
): Promise<Map<EntityId, number>> {
  const scores = new Map<EntityId, number>();
  // No pair anywhere (no use has followed a search yet): nothing to read for these candidates.
  if (ids.length === 0 || !(await store.usage.holdsRefinding())) return scores;
  const pairs = await store.usage.refinding(ids, query.model);
  for (const [id, list] of pairs) {
    const score = refindScore(query.vector, list, now, {
      similarityFloor,
      threshold: parameters?.threshold,
      halfLifeDays: parameters?.halfLifeDays,
    });
    if (score > 0) scores.set(id, score);
  }
  return scores;
}

const DEFAULTS_IN_FORCE: ParametersInForce = { ...DEFAULT_PARAMETERS, source: 'default', tunedAt: undefined };

/** `kinds` (the entity's observation kinds) is read only when the filter asks for kinds. */
function matchesFilters(e: EntityFacts, kinds: readonly string[] | undefined, f: SearchFilters, project: string | undefined): boolean {
  // From inside a project, another project's entities (its captured sessions) are never shown.
  if (project !== undefined && e.project !== undefined && e.project !== project) return false;
  if (f.entityTypes !== undefined && !f.entityTypes.some((t) => t.toLowerCase() === e.entityType.toLowerCase())) return false;
  if (f.status !== undefined && !f.status.includes(e.status)) return false;
  if (f.observationKinds !== undefined && !(kinds ?? []).some((k) => f.observationKinds?.includes(k))) return false;
  if (f.createdAfter !== undefined && e.createdAt < f.createdAfter) return false;
  if (f.createdBefore !== undefined && e.createdAt > f.createdBefore) return false;
  if (f.updatedAfter !== undefined && e.updatedAt < f.updatedAfter) return false;
  if (f.updatedBefore !== undefined && e.updatedAt > f.updatedBefore) return false;
  if (f.names !== undefined && !f.names.includes(e.name)) return false;
  if (f.excludeEntityTypes?.some((t) => t.toLowerCase() === e.entityType.toLowerCase()) === true) return false;
  return true;
}

/** Filters both legs' hits on the candidates' facts, keeping each leg's order and at most `depth`. */
async function filterStage(
  store: Store,
  request: SearchRequest,
  keyword: readonly KeywordHit[],
  semantic: readonly VectorHit[],
): Promise<{ keyword: KeywordHit[]; semantic: VectorHit[]; signals: CandidateSignals }> {
  const ids = [...new Set([...semantic.map((h) => h.id), ...keyword.map((h) => h.id)])];
  const signals = await store.usage.signals(ids);
  // Observations are read for every candidate only when a filter asks for their kinds.
  const withKinds = request.filters.observationKinds === undefined ? undefined : await store.graph.entitiesById(ids);
  const keep = (id: EntityId): boolean => {
    const facts = signals.facts.get(id);
    return facts !== undefined && matchesFilters(facts, withKinds?.get(id)?.kinds, request.filters, request.project);
  };
  const kept = {
    keyword: keyword.filter((h) => keep(h.id)).slice(0, request.depth),
    semantic: semantic.filter((h) => keep(h.id)).slice(0, request.depth),
  };
  const survivors = new Set([...kept.keyword.map((h) => h.id), ...kept.semantic.map((h) => h.id)]);
  const coOccurrences = signals.coOccurrences.filter((p) => survivors.has(p.a) && survivors.has(p.b));
  return { ...kept, signals: { ...signals, coOccurrences } };
}

/** The optional cross-encoder stage: orders the ranked set by its score, the limbic score breaking ties. */
async function rerankStage(
  store: Store,
  reranker: Reranker,
  query: string,
  ranked: RankedCandidate[],
): Promise<{ ranked: RankedCandidate[]; scores: Map<EntityId, number> }> {
  const scores = new Map<EntityId, number>();
  if (ranked.length === 0) return { ranked, scores };
  const full = await store.graph.entitiesById(ranked.map((r) => r.id));
  const texts = ranked.map((r) => {
    const e = full.get(r.id);
    return e === undefined ? '' : `${e.name} (${e.entityType}) | ${e.observations.join(' | ')}`;
  });
  const values = await reranker.score(query, texts);
  ranked.forEach((r, i) => scores.set(r.id, values[i] ?? 0));
  const sorted = [...ranked].sort((a, b) => (scores.get(b.id) ?? 0) - (scores.get(a.id) ?? 0) || b.score - a.score || a.id - b.id);
  return { ranked: sorted, scores };
}

export async function runSearch(deps: SearchDeps, asked: SearchRequest, now: number): Promise<SearchOutcome> {
  const { store, indexer } = deps;
  // Read per search (cheaply: tuning-store.ts), so another process's `limbic tune --apply` counts at once.
  const inForce = (await store.tuning?.parameters()) ?? DEFAULTS_IN_FORCE;
  const request = { ...asked, rrfK: asked.rrfK ?? inForce.rrfK };
  const parameters: ParametersInForce = { ...inForce, rrfK: request.rrfK };
  const legs = await chooseLegs(store, indexer, request.modes);
  if (legs.keywords === undefined && legs.vectors === undefined) {
    throw new MemoryError(
      ERROR_CODES.MODEL_UNAVAILABLE,
      `No search modes available: this store has no keyword index. ${modelStateSentence(indexer.modelState())}`,
    );
  }
  if (request.rerank && deps.reranker === undefined) {
    throw new MemoryError(
      ERROR_CODES.MODEL_UNAVAILABLE,
      'Reranking was requested but no cross-encoder model is installed. Call again without rerank; get_statistics shows reranking.available.',
    );
  }
  const timings: StageTimings = {};
  const warnings: string[] = [];
  // Another project's entities are left out like a filter's misses, so the legs fetch more then too.
  const hiding = request.project !== undefined && (await store.capture?.holdsOtherProjects(request.project)) === true;
  const fetch = countFilters(request.filters) > 0 || hiding ? request.depth * FILTER_OVERFETCH : request.depth;

  const { keywords, vectors } = legs;
  const keyword = keywords === undefined ? undefined : await timed(timings, 'keyword', () => keywordLeg(keywords, request, fetch));
  if (keyword !== undefined) warnings.push(...keyword.warnings);
  const semantic = vectors === undefined ? undefined : await semanticLeg(vectors, indexer, request.query, fetch, timings);
  if (semantic?.note !== undefined) warnings.push(semantic.note);
  // Meaning was wanted (no modes chosen) but there is no model: the answer says why, in model-state.ts's words.
  if (request.modes === undefined && vectors === undefined) warnings.push(indexer.unavailableNote());

  let filtered = await timed(timings, 'filter', () => filterStage(store, request, keyword?.hits ?? [], semantic?.hits ?? []));
  // A query naming a speaker of a conversation searches again without the name (issue 37): the
  // speaker lift reads the name; the turns' words seldom hold it (context-boost.ts withoutSpeakers).
  const searched = semantic === undefined ? undefined : textWithoutSpeakers(request, filtered);
  if (searched !== undefined && vectors !== undefined) {
    // The second search's times are added to the first's, so explain_query shows what both cost.
    const first = { ...timings };
    const again = (await semanticLeg(vectors, indexer, searched, fetch, timings)).hits;
    filtered = await timed(timings, 'filter', () => filterStage(store, request, keyword?.hits ?? [], again));
    for (const stage of ['catchUp', 'encode', 'vector', 'filter'] as const)
      if (first[stage] !== undefined && timings[stage] !== first[stage]) timings[stage] = (timings[stage] ?? 0) + first[stage];
  }
  const similarityFloor = legs.vectors?.embedder.similarityFloor ?? 0;
  const plainFused = await timed(timings, 'fuse', () =>
    fuse(store.graph, request, { ...filtered, coverage: keyword?.coverage }, filtered.signals, similarityFloor, now),
  );
  // Stored dates and related candidates re-score z-score fusion's strength (context.ts).
  const { fused, boosts, withoutNeighbours } =
    request.context === undefined || request.fusion !== 'zscore'
      ? { fused: plainFused, boosts: undefined, withoutNeighbours: undefined }
      : await timed(timings, 'context', () =>
          contextStage(store.graph, request.query, plainFused, request.context, filtered.signals.facts),
        );

  const strategy = detectQueryType(request.query, request.routingLimit);
  const model = legs.vectors?.embedder.id;
  const query =
    model === undefined || semantic?.vector === undefined || !semantic.vector.some((x) => x !== 0)
      ? undefined
      : { vector: semantic.vector, model };
  const refinding =
    request.limbic && query !== undefined
      ? await timed(timings, 'limbic', () =>
          refindingStage(
            store,
            fused.candidates.map((c) => c.candidate.id),
            query,
            similarityFloor,
            now,
            request.refind,
          ),
        )
      : undefined;
  const rank = (candidates: Fused['candidates']): RankedCandidate[] =>
    request.limbic
      ? rankByBase(candidates, filtered.signals, {
          limit: candidates.length,
          strategy,
          now,
          gamma: parameters.gamma,
          betaSal: parameters.betaSal,
          project: request.project,
          refinding,
          refindBand: request.refind?.band,
        })
      : rankWithoutLimbic(candidates);
  const refindMs = timings.limbic ?? 0;
  let ranked = await timed(timings, 'limbic', () => {
    const all = rank(fused.candidates);
    // Write-order neighbours stay behind the match that lifted them, whatever usage adds (context-boost.ts).
    return withoutNeighbours === undefined || boosts === undefined
      ? all
      : holdBehindSources(all, rank(withoutNeighbours.candidates), boosts);
  });
  timings.limbic = (timings.limbic ?? 0) + refindMs;
  const boost = request.typeBoost;
  const boosted = new Set<EntityId>();
  if (boost !== undefined && boost.factor !== 1) {
    // engrava's reflection_boost: the final score of one type's entities times the factor, then the order again.
    const type = boost.entityType.toLowerCase();
    for (const r of ranked) if (filtered.signals.facts.get(r.id)?.entityType.toLowerCase() === type) boosted.add(r.id);
    ranked = ranked
      .map((r) => (boosted.has(r.id) ? { ...r, score: r.score * boost.factor } : r))
      .sort((a, b) => b.score - a.score || a.id - b.id);
  }
  let rerankScores = new Map<EntityId, number>();
  if (request.rerank && deps.reranker !== undefined) {
    const reranker = deps.reranker;
    ({ ranked, scores: rerankScores } = await timed(timings, 'rerank', () => rerankStage(store, reranker, request.query, ranked)));
  }

  // An entity named what the query says comes first, after every score (name-match.ts).
  const asName = nameKey(request.query);
  const named = new Set(ranked.filter((r) => isNameMatch(asName, filtered.signals.facts.get(r.id)?.name ?? '')).map((r) => r.id));
  ranked = pinNameMatches(ranked, named);

  const page = await timed(timings, 'page', async () => {
    const slice = ranked.slice(request.offset, request.offset + request.limit);
    const entities = await store.graph.entitiesById(slice.map((r) => r.id));
    return slice.flatMap((r) => {
      const entity = entities.get(r.id);
      return entity === undefined ? [] : [{ ranked: r, entity }];
    });
  });

  const bound = request.observations;
  const shown =
    bound === undefined
      ? undefined
      : await timed(timings, 'observations', () =>
          showObservations(
            page.map((p) => p.entity),
            { text: request.query, syntax: request.keywordSyntax, vector: semantic?.vector },
            bound,
            legs.vectors?.index,
          ),
        );

  return {
    page,
    shown,
    count: ranked.length,
    modesUsed: [...(legs.keywords !== undefined ? (['fts'] as const) : []), ...(legs.vectors !== undefined ? (['semantic'] as const) : [])],
    keyword,
    keywordHits: filtered.keyword,
    semanticHits: filtered.semantic,
    fused,
    strategy,
    rerankScores,
    warnings,
    model: legs.vectors?.embedder.id,
    timings,
    parameters,
    ranked,
    boosted,
    named,
    query,
    searched,
    contextBoosts: boosts ?? new Map(),
  };
}

/**
 * The query without the speakers it names, when the context stage lifts their turns and asks for
 * it (ContextWeights.withoutSpeakers): named as namedSpeakers reads them, among the first legs'
 * candidates the filters kept, every speaker too (namedSpeakerTypes' everySpeaker). Undefined when the query names none, or is nothing but the names.
 */
function textWithoutSpeakers(
  request: SearchRequest,
  kept: { readonly keyword: readonly KeywordHit[]; readonly semantic: readonly VectorHit[]; readonly signals: CandidateSignals },
): string | undefined {
  const context = request.context;
  if (context === undefined || request.fusion !== 'zscore' || (context.speakerWeight ?? 0) <= 0) return undefined;
  if (context.withoutSpeakers !== true) return undefined;
  const types = new Map<EntityId, string>();
  const createdAt = new Map<EntityId, number>();
  // The candidates the filters kept, as the context stage reads them.
  for (const { id } of [...kept.keyword, ...kept.semantic]) {
    const f = kept.signals.facts.get(id);
    if (f === undefined) continue;
    types.set(id, f.entityType);
    createdAt.set(id, f.createdAt);
  }
  const named = namedSpeakerTypes(request.query, types, createdAt, true);
  return named.size === 0 ? undefined : withoutNames(request.query, named);
}
