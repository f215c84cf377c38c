/**
 * hybrid_search: every option of the two peer designs (spec/context-server-hybrid-guide.md,
 * spec/engrava-hybrid-search.md) over Limbic's graph, on the same legs and ranking code as
 * search_semantic. Legs run at a fixed depth, so one query has one ordering and pages never
 * repeat or skip a row; every result explains its score.
 */
import { ERROR_CODES, MemoryError } from '../core/errors.js';
import { STATUS_DEBOOST, TEMPORAL_FLOOR } from '../core/rank/constants.js';
import {
  DEFAULT_SIGNAL_WEIGHTS,
  fuseWeighted,
  normalizeBm25,
  redistributeWeights,
  type Signal,
  type SignalWeights,
  type WeightedInput,
} from '../core/rank/fuse-weighted.js';
import { reciprocalRankFusion, type FusedCandidate } from '../core/rank/fuse-rrf.js';
import { graphBoost, type GraphEdge } from '../core/rank/graph-boost.js';
import { decay, cosineSimilarity } from '../core/rank/limbic.js';
import { rankByBase, rrfShareOfMaximum, type RankedCandidate } from '../core/rank/rank-candidates.js';
import { detectQueryType, type RoutingStrategy } from '../core/rank/routing.js';
import { buildKeywordQuery } from '../core/text/keyword-query.js';
import type { EntityId, EntityStatus } from '../core/types.js';
import type { Reranker } from '../embed/reranker.js';
import type { EntityFacts, Store } from '../store/store.js';
import type { EmbeddingIndexer } from './embedding-indexer.js';
import { plainKeywordMatch } from './keyword-leg.js';

export type SearchMode = 'fts' | 'semantic';
export type FusionMethod = 'rrf' | 'weighted';

/** Candidates each leg fetches for hybrid_search; fixed so every page of a query ranks the same set. */
export const HYBRID_DEPTH = 150;
/** With filters, legs fetch this many more so a selective filter still leaves candidates. */
const FILTER_OVERFETCH = 4;

export interface HybridFilters {
  readonly entityTypes?: readonly string[] | undefined;
  readonly status?: readonly EntityStatus[] | undefined;
  /** Entities with at least one observation of one of these kinds. */
  readonly observationKinds?: readonly string[] | undefined;
  readonly createdAfter?: number | undefined;
  readonly createdBefore?: number | undefined;
  readonly updatedAfter?: number | undefined;
  readonly updatedBefore?: number | undefined;
  readonly names?: readonly string[] | undefined;
}

export interface HybridSearchOptions {
  readonly query: string;
  readonly limit: number;
  readonly offset: number;
  /** Undefined means "both, whichever are available"; a list is a request, and a missing mode is an error. */
  readonly searchModes: readonly SearchMode[] | undefined;
  readonly fusionMethod: FusionMethod;
  readonly rrfK: number;
  /** Weighted fusion weights (and the graph weight for either method); missing keys take the defaults. */
  readonly weights: Partial<SignalWeights>;
  readonly limbic: boolean;
  readonly rerank: boolean;
  readonly filters: HybridFilters;
  readonly explainQuery: boolean;
}

export interface HybridScores {
  readonly rrf: number | null;
  readonly fts_rank: number | null;
  readonly semantic_rank: number | null;
  /** BM25 as a positive number, higher is better (FTS5 reports it negated). */
  readonly fts_score: number | null;
  readonly semantic_distance: number | null;
  /** weight × value per signal, with fusion_method "weighted". */
  readonly weighted: Readonly<Record<Signal, number>> | null;
  readonly graph_boost: number | null;
  readonly limbic: {
    readonly importance: number;
    readonly temporal_factor: number;
    readonly cooc_boost: number;
    readonly multiplier: number;
    readonly routing_strategy: RoutingStrategy;
  } | null;
  readonly rerank_score: number | null;
  /** The score results are ordered by. */
  readonly final: number;
}

export interface HybridResult {
  readonly name: string;
  readonly entityType: string;
  readonly observations: readonly string[];
  readonly status: EntityStatus;
  readonly scores: HybridScores;
}

export interface HybridResponse {
  readonly query: string;
  readonly results: HybridResult[];
  /** Ranked candidates after filters: the most any page can reach. */
  readonly count: number;
  readonly offset: number;
  readonly limit: number;
  readonly fusion_method: FusionMethod;
  readonly search_modes_used: SearchMode[];
  readonly fts_count: number;
  readonly semantic_count: number;
  readonly weights?: SignalWeights;
  readonly warnings?: string[];
  readonly hint?: string;
  readonly stats?: unknown;
  /** Ids of the returned results, for signal recording. */
  readonly ids: readonly EntityId[];
}

export interface HybridDeps {
  readonly store: Store;
  readonly indexer: EmbeddingIndexer;
  readonly reranker: Reranker | undefined;
}

const round = (x: number): number => Math.round(x * 1e6) / 1e6;
const ms = (t0: number): number => round(performance.now() - t0);

/** `kinds` (the entity's observation kinds) is read only when the filter asks for kinds. */
function matchesFilters(e: EntityFacts, kinds: readonly string[] | undefined, f: HybridFilters): boolean {
  if (f.entityTypes !== undefined && !f.entityTypes.some((t) => t.toLowerCase() === e.entityType.toLowerCase())) return false;
  if (f.status !== undefined && !f.status.includes(e.status)) return false;
  if (f.observationKinds !== undefined && !(kinds ?? []).some((k) => f.observationKinds?.includes(k))) return false;
  if (f.createdAfter !== undefined && e.createdAt < f.createdAfter) return false;
  if (f.createdBefore !== undefined && e.createdAt > f.createdBefore) return false;
  if (f.updatedAfter !== undefined && e.updatedAt < f.updatedAfter) return false;
  if (f.updatedBefore !== undefined && e.updatedAt > f.updatedBefore) return false;
  if (f.names !== undefined && !f.names.includes(e.name)) return false;
  return true;
}

const countFilters = (f: HybridFilters): number => Object.values(f).filter((v) => v !== undefined).length;

/** Which legs run: a requested mode that is unavailable is an error naming it and how to enable it. */
async function chooseModes(deps: HybridDeps, requested: readonly SearchMode[] | undefined) {
  const wantFts = requested === undefined || requested.includes('fts');
  const wantSemantic = requested === undefined || requested.includes('semantic');
  const embedder = wantSemantic ? await deps.indexer.ready() : undefined;
  const fts = wantFts && deps.store.capabilities.fts;
  if (requested?.includes('fts') && !deps.store.capabilities.fts) {
    throw new MemoryError(ERROR_CODES.INVALID_INPUT, 'Search mode "fts" is unavailable: this store has no keyword index. Use search_modes ["semantic"].');
  }
  if (requested?.includes('semantic') && embedder === undefined) {
    throw new MemoryError(
      ERROR_CODES.MODEL_UNAVAILABLE,
      'Search mode "semantic" is unavailable: no embedding model could be loaded. Run "limbic model install" (or start Limbic with --model-dir), or use search_modes ["fts"].',
    );
  }
  if (!fts && embedder === undefined) {
    throw new MemoryError(ERROR_CODES.MODEL_UNAVAILABLE, 'No search modes available: the keyword index and the embedding model are both unavailable. Run "limbic model install".');
  }
  return { fts, embedder };
}

export async function hybridSearch(deps: HybridDeps, o: HybridSearchOptions, now: number): Promise<HybridResponse> {
  const started = performance.now();
  const { store } = deps;
  const { fts, embedder } = await chooseModes(deps, o.searchModes);
  if (o.rerank && deps.reranker === undefined) {
    throw new MemoryError(
      ERROR_CODES.MODEL_UNAVAILABLE,
      'Reranking was requested but no cross-encoder model is installed. Call again without rerank; get_statistics shows reranking.available.',
    );
  }
  const filtered = countFilters(o.filters) > 0;
  const depth = filtered ? HYBRID_DEPTH * FILTER_OVERFETCH : HYBRID_DEPTH;
  const warnings: string[] = [];

  // ② the legs
  let ftsHits: { id: EntityId; bm25: number }[] = [];
  let ftsMs = 0;
  let keywordMode: string | undefined;
  let keywordMatch: string | undefined;
  if (fts) {
    const t0 = performance.now();
    const keyword = buildKeywordQuery(o.query);
    keywordMode = keyword.mode;
    // Plain text drops the words in most entities (no BM25 weight, most of the cost); expert syntax is kept as written.
    keywordMatch = keyword.mode === 'bare' ? await plainKeywordMatch(store, o.query) : keyword.match;
    warnings.push(...keyword.warnings);
    if (keywordMatch !== undefined) {
      try {
        ftsHits = await store.searchKeywords(keywordMatch, depth);
      } catch (error) {
        if (!(error instanceof MemoryError) || error.code !== ERROR_CODES.INVALID_QUERY) throw error;
        // engrava: a malformed expression degrades to zero keyword hits; the semantic leg still answers.
        warnings.push(`${error.message} The keyword leg found nothing; the semantic leg still answered.`);
      }
    }
    ftsMs = ms(t0);
  }
  let semHits: { id: EntityId; distance: number }[] = [];
  let semMs = 0;
  let encodeMs = 0;
  if (embedder !== undefined) {
    const t0 = performance.now();
    const fresh = await deps.indexer.catchUp();
    if (fresh.note !== undefined) warnings.push(fresh.note);
    const [vector] = await embedder.embed([o.query], 'query');
    encodeMs = ms(t0);
    if (vector !== undefined) semHits = await store.searchVectors(vector, depth);
    semMs = ms(t0);
  }

  // Filters, on the facts of both legs' candidates; observations are read for the page only
  // (for every candidate when a filter asks for observation kinds).
  const allIds = [...new Set([...semHits.map((h) => h.id), ...ftsHits.map((h) => h.id)])];
  const candidateSignals = await store.rankSignals(allIds);
  const entities = candidateSignals.facts;
  const withKinds = o.filters.observationKinds === undefined ? undefined : await store.entitiesById(allIds);
  const keep = (id: EntityId): boolean => {
    const e = entities.get(id);
    return e !== undefined && matchesFilters(e, withKinds?.get(id)?.kinds, o.filters);
  };
  ftsHits = ftsHits.filter((h) => keep(h.id)).slice(0, HYBRID_DEPTH);
  semHits = semHits.filter((h) => keep(h.id)).slice(0, HYBRID_DEPTH);

  // ③ fusion
  const fused = reciprocalRankFusion(semHits, ftsHits, o.rrfK);
  const ids = fused.map((c) => c.id);
  const kept = new Set(ids);
  const signals = { ...candidateSignals, coOccurrences: candidateSignals.coOccurrences.filter((p) => kept.has(p.a) && kept.has(p.b)) };
  const bm25 = new Map(ftsHits.map((h) => [h.id, h.bm25]));
  const normalized = normalizeBm25(ftsHits.map((h) => h.bm25));
  const ftsNorm = new Map(ftsHits.map((h, i) => [h.id, normalized[i] ?? 0]));
  const vecSim = new Map(semHits.map((h) => [h.id, cosineSimilarity(h.distance, embedder?.similarityFloor ?? 0)]));

  const requestedWeights: SignalWeights = { ...DEFAULT_SIGNAL_WEIGHTS, ...o.weights };
  const graphWeight = requestedWeights.graph;
  let boost = new Map<EntityId, number>();
  if (graphWeight > 0 && fused.length > 0) {
    const edges: GraphEdge[] = await store.edgesTouching(ids);
    const base = new Map(ids.map((id) => [id, { fts: ftsNorm.get(id), vector: vecSim.get(id) }]));
    boost = graphBoost(ids, edges, base);
  }

  let weights: SignalWeights | undefined;
  const baseOf = new Map<EntityId, number>();
  const weightedParts = new Map<EntityId, Readonly<Record<Signal, number>>>();
  if (o.fusionMethod === 'weighted') {
    weights = redistributeWeights(requestedWeights, {
      fts: ftsHits.length > 0,
      vector: semHits.length > 0,
      recency: true,
      priority: true,
      graph: boost.size > 0,
    });
    const inputs: WeightedInput[] = fused.map((c) => {
      const e = entities.get(c.id);
      const access = signals.access.get(c.id);
      const lastUse = Math.max(e?.updatedAt ?? 0, access?.lastAccess ?? 0);
      return {
        id: c.id,
        fts: ftsNorm.get(c.id),
        vector: vecSim.get(c.id),
        recency: decay(lastUse, now, TEMPORAL_FLOOR),
        priority: e === undefined ? 0 : STATUS_DEBOOST[e.status],
        graph: boost.get(c.id),
      };
    });
    for (const r of fuseWeighted(inputs, weights)) {
      baseOf.set(r.id, r.score);
      weightedParts.set(r.id, r.components);
    }
  } else {
    const share = rrfShareOfMaximum(fused, o.rrfK);
    fused.forEach((c, i) => baseOf.set(c.id, (share[i] ?? 0) + graphWeight * (boost.get(c.id) ?? 0)));
  }

  // ④ limbic re-rank over the whole candidate set, or the fusion order as it is.
  const strategy = detectQueryType(o.query, o.limit);
  const byId = new Map<EntityId, FusedCandidate>(fused.map((c) => [c.id, c]));
  let ranked: RankedCandidate[];
  if (o.limbic) {
    ranked = rankByBase(
      fused.map((c) => ({ id: c.id, base: baseOf.get(c.id) ?? 0, distance: c.distance, rrfScore: c.rrfScore, semanticRank: c.semanticRank, ftsRank: c.ftsRank })),
      signals,
      { limit: fused.length, strategy, now },
    );
  } else {
    ranked = fused
      .map((c) => ({
        id: c.id,
        score: baseOf.get(c.id) ?? 0,
        base: baseOf.get(c.id) ?? 0,
        limbic: 0,
        importance: 0,
        temporalFactor: 1,
        coocBoost: 0,
        multiplier: 1,
        distance: c.distance,
        rrfScore: c.rrfScore,
        semanticRank: c.semanticRank,
        ftsRank: c.ftsRank,
      }))
      .sort((a, b) => b.score - a.score || a.id - b.id);
  }

  // Optional cross-encoder stage, over the ranked set, ordering by its score.
  const rerankScores = new Map<EntityId, number>();
  if (o.rerank && deps.reranker !== undefined && ranked.length > 0) {
    const full = await store.entitiesById(ranked.map((r) => r.id));
    const texts = ranked.map((r) => {
      const e = full.get(r.id);
      return e === undefined ? '' : `${e.name} (${e.entityType}) | ${e.observations.join(' | ')}`;
    });
    const scores = await deps.reranker.score(o.query, texts);
    ranked.forEach((r, i) => rerankScores.set(r.id, scores[i] ?? 0));
    ranked = [...ranked].sort((a, b) => (rerankScores.get(b.id) ?? 0) - (rerankScores.get(a.id) ?? 0) || b.score - a.score || a.id - b.id);
  }

  // ⑤ the page
  const page = ranked.slice(o.offset, o.offset + o.limit);
  const hydrated = await store.entitiesById(page.map((r) => r.id));
  const results: HybridResult[] = [];
  for (const r of page) {
    const e = hydrated.get(r.id);
    if (e === undefined) continue;
    const c = byId.get(r.id);
    const b = bm25.get(r.id);
    results.push({
      name: e.name,
      entityType: e.entityType,
      observations: e.observations,
      status: e.status,
      scores: {
        rrf: c === undefined ? null : round(c.rrfScore),
        fts_rank: c?.ftsRank ?? null,
        semantic_rank: c?.semanticRank ?? null,
        fts_score: b === undefined ? null : round(-b),
        semantic_distance: c?.distance === undefined ? null : round(c.distance),
        weighted: weightedParts.get(r.id) ?? null,
        graph_boost: graphWeight > 0 ? round(boost.get(r.id) ?? 0) : null,
        limbic: o.limbic
          ? {
              importance: round(r.importance),
              temporal_factor: round(r.temporalFactor),
              cooc_boost: round(r.coocBoost),
              multiplier: round(r.multiplier),
              routing_strategy: strategy,
            }
          : null,
        rerank_score: rerankScores.has(r.id) ? round(rerankScores.get(r.id) ?? 0) : null,
        final: round(r.score),
      },
    });
  }

  const modesUsed: SearchMode[] = [...(fts ? (['fts'] as const) : []), ...(embedder !== undefined ? (['semantic'] as const) : [])];
  const inBoth = fused.filter((c) => c.ftsRank !== undefined && c.semanticRank !== undefined).length;
  const hint =
    o.offset + o.limit > ranked.length && ranked.length >= HYBRID_DEPTH
      ? `This page reaches past the ${ranked.length} ranked candidates (each leg fetches ${HYBRID_DEPTH}); refine the query or add filters to see other entities.`
      : undefined;
  return {
    query: o.query,
    results,
    count: ranked.length,
    offset: o.offset,
    limit: o.limit,
    fusion_method: o.fusionMethod,
    search_modes_used: modesUsed,
    fts_count: ftsHits.length,
    semantic_count: semHits.length,
    ...(weights === undefined ? {} : { weights }),
    ...(warnings.length === 0 ? {} : { warnings }),
    ...(hint === undefined ? {} : { hint }),
    ...(o.explainQuery
      ? {
          stats: {
            execution_time_ms: ms(started),
            fts_stats: fts
              ? { execution_time_ms: ftsMs, rows_returned: ftsHits.length, filters_applied: countFilters(o.filters), query_mode: keywordMode, match: keywordMatch ?? null }
              : null,
            semantic_stats:
              embedder !== undefined
                ? { execution_time_ms: semMs, embedding_generation_ms: encodeMs, rows_returned: semHits.length, filters_applied: countFilters(o.filters), model: embedder.id }
                : null,
            fusion_stats: {
              method: o.fusionMethod,
              rrf_k: o.rrfK,
              total_unique_documents: fused.length,
              documents_in_both: inBoth,
              documents_fts_only: fused.filter((c) => c.ftsRank !== undefined && c.semanticRank === undefined).length,
              documents_semantic_only: fused.filter((c) => c.semanticRank !== undefined && c.ftsRank === undefined).length,
            },
          },
        }
      : {}),
    ids: page.filter((r) => hydrated.has(r.id)).map((r) => r.id),
  };
}
