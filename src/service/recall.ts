/**
 * The six-step hybrid pipeline (spec/hybrid-search.md): ① encode, ② KNN and FTS at limit × 3,
 * ③ RRF, ④ limbic re-rank, ⑤ hydrate, ⑥ record signals (after the response, by the caller).
 * Hybrid mode when the keyword leg finds anything, pure semantic otherwise. Without a model the
 * keyword hits still come back, ranked on the RRF base: a query whose words match is never
 * answered with nothing.
 */
import { ERROR_CODES, MemoryError } from '../core/errors.js';
import { EXPANSION_FACTOR } from '../core/rank/constants.js';
import { reciprocalRankFusion } from '../core/rank/fuse-rrf.js';
import {
  rankCandidates,
  rankHybridCandidates,
  type HybridBase,
  type RankedCandidate,
  type RankingSignals,
} from '../core/rank/rank-candidates.js';
import { detectQueryType, type RoutingStrategy } from '../core/rank/routing.js';
import type { EntityId } from '../core/types.js';
import type { Store, StoredEntity } from '../store/store.js';
import type { EmbeddingIndexer } from './embedding-indexer.js';
import { plainKeywordMatch } from './keyword-leg.js';

export interface RecallResult {
  readonly name: string;
  readonly entityType: string;
  readonly observations: readonly string[];
  readonly limbic_score: number;
  readonly scoring: { readonly importance: number; readonly temporal_factor: number; readonly cooc_boost: number };
  readonly distance?: number;
  readonly rrf_score?: number;
  readonly routing_strategy: RoutingStrategy;
}

export type RecallMode = 'hybrid' | 'semantic' | 'keyword';

export interface RecallResponse {
  readonly results: RecallResult[];
  /** Which legs answered; absent results mean the candidates were empty. */
  readonly mode: RecallMode;
  readonly warning?: string;
  /** Ids of the returned entities, in order, for signal recording. */
  readonly ids: readonly EntityId[];
}

const round = (x: number): number => Math.round(x * 1e6) / 1e6;

export async function recall(
  deps: { readonly store: Store; readonly indexer: EmbeddingIndexer; readonly hybridBase?: HybridBase },
  query: string,
  limit: number,
  now: number,
): Promise<RecallResponse> {
  const { store, indexer } = deps;
  const depth = limit * EXPANSION_FACTOR;
  const embedder = await indexer.ready();
  let warning: string | undefined;
  let semantic: { id: EntityId; distance: number }[] = [];
  if (embedder !== undefined) {
    warning = (await indexer.catchUp()).note;
    const [vector] = await embedder.embed([query], 'query');
    if (vector !== undefined) semantic = await store.searchVectors(vector, depth);
  } else {
    warning = indexer.unavailableNote();
  }
  const match = store.capabilities.fts ? await plainKeywordMatch(store, query) : undefined;
  // Quoted OR terms always parse; should one not, the keyword leg is empty and meaning still answers.
  const keyword =
    match === undefined || !store.capabilities.fts
      ? []
      : await store.searchKeywords(match, depth).catch((error: unknown) => {
          if (error instanceof MemoryError && error.code === ERROR_CODES.INVALID_QUERY) return [];
          throw error;
        });

  if (embedder === undefined && keyword.length === 0) {
    throw new MemoryError(
      ERROR_CODES.MODEL_UNAVAILABLE,
      'Semantic search needs an embedding model and none is installed, and no entity contains the query\'s words. Run "limbic model install" (or start Limbic with --model-dir), then search again; search_nodes works meanwhile.',
    );
  }

  const strategy = detectQueryType(query, limit);
  const hybrid = keyword.length > 0;
  const candidateIds = hybrid
    ? [...new Set([...semantic.map((s) => s.id), ...keyword.map((k) => k.id)])]
    : semantic.map((s) => s.id);
  // ④ ranks on facts and signals alone; ⑤ reads observations for the `limit` results only.
  const signals: RankingSignals = await store.rankSignals(candidateIds);
  const options = {
    limit,
    strategy,
    now,
    hybridBase: deps.hybridBase ?? 'scores',
    keywordBm25: new Map(keyword.map((k) => [k.id, k.bm25])),
    similarityFloor: embedder?.similarityFloor ?? 0,
  } as const;
  const ranked = hybrid
    ? rankHybridCandidates(reciprocalRankFusion(semantic, keyword), signals, options)
    : rankCandidates(semantic, signals, options);
  const entities = await store.entitiesById(ranked.map((r) => r.id));

  const results: RecallResult[] = [];
  const ids: EntityId[] = [];
  for (const r of ranked) {
    const entity = entities.get(r.id);
    if (entity === undefined) continue; // deleted between the legs and hydration
    results.push(toResult(entity, r, hybrid, strategy));
    ids.push(r.id);
  }
  return { results, ids, mode: hybrid ? (embedder === undefined ? 'keyword' : 'hybrid') : 'semantic', ...(warning === undefined ? {} : { warning }) };
}

function toResult(entity: StoredEntity, r: RankedCandidate, hybrid: boolean, strategy: RoutingStrategy): RecallResult {
  return {
    name: entity.name,
    entityType: entity.entityType,
    observations: entity.observations,
    limbic_score: round(r.score),
    scoring: { importance: round(r.importance), temporal_factor: round(r.temporalFactor), cooc_boost: round(r.coocBoost) },
    ...(r.distance === undefined ? {} : { distance: round(r.distance) }),
    ...(hybrid && r.rrfScore !== undefined ? { rrf_score: round(r.rrfScore) } : {}),
    routing_strategy: strategy,
  };
}
