/** Shared wiring for the retrieval-quality benchmarks: a store per corpus, the real model, the legs. */
import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { noopLogger } from '../../src/core/logger.js';
import { EXPANSION_FACTOR } from '../../src/core/rank/constants.js';
import { reciprocalRankFusion } from '../../src/core/rank/fuse-rrf.js';
import { plainKeywordMatch } from '../../src/service/search/legs.js';
import { distinctWords } from '../../src/core/text/fts-query.js';
import { informativeWords, type TermStat } from '../../src/core/text/prune-terms.js';
import { isStopword } from '../../src/core/text/stopwords.js';
import type { EntityId, NewEntity, ObservationAddition, Relation } from '../../src/core/types.js';
import { LazyEmbedder, passFitsOneVector, type Embedder } from '../../src/embed/embedder.js';
import { loadOnnxEmbedder, type OnnxEngine } from '../../src/embed/onnx/onnx-embedder.js';
import { DEFAULT_MODEL_ID } from '../../src/core/config.js';
import { EmbeddingIndexer } from '../../src/service/embedding-indexer.js';
import { toHybridOptions } from '../../src/mcp/hybrid-options.js';
import { hybridSearch } from '../../src/service/search/hybrid-search.js';
import { searchSemantic } from '../../src/service/search/search-semantic.js';
import type { SearchRequest } from '../../src/service/search/request.js';
import { rankHybridCandidates } from '../../src/core/rank/rank-candidates.js';
import { detectQueryType } from '../../src/core/rank/routing.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/sqlite-store.js';

export const DATA_DIR = join(import.meta.dirname, '..', '..', '..', 'shared', 'data');

export function requireData(relative: string): string {
  const path = join(DATA_DIR, relative);
  if (!existsSync(path)) {
    console.error(`Benchmark data not found at ${path}. It is read from ../shared/data (never copied into this repo).`);
    process.exit(2);
  }
  return path;
}

/** The model the benchmarks run: `--model ID` on their command line, else Limbic's default. */
export const BENCH_MODEL = ((): string => {
  const i = process.argv.indexOf('--model');
  return (i >= 0 ? process.argv[i + 1] : undefined) ?? DEFAULT_MODEL_ID;
})();

export async function loadModel(threads?: number): Promise<OnnxEngine> {
  const env = process.env;
  const cacheDir = env.LIMBIC_MODEL_CACHE || join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'limbic', 'models');
  const engine = await loadOnnxEmbedder({
    modelDir: env.LIMBIC_MODEL_DIR || undefined,
    cacheDir,
    modelId: BENCH_MODEL,
    allowRemote: false,
    threads,
  });
  if (engine.id !== BENCH_MODEL)
    throw new Error(`Model ${BENCH_MODEL} is not installed (found ${engine.id}). Run "limbic model install" for it first.`);
  return engine;
}

export const MODES = [
  'fts',
  'semantic',
  'hybrid-rrf',
  'hybrid-limbic-spec',
  'hybrid-limbic-fused',
  'hybrid-limbic',
  'hybrid-weighted',
  'hybrid-defaults',
] as const;
/** Run only on a corpus with relations: hybrid_search with RRF and the 1-hop graph boost (weight 0.1). */
export const GRAPH_MODES = ['hybrid-rrf', 'hybrid-graph'] as const;
export type Mode = (typeof MODES)[number] | (typeof GRAPH_MODES)[number];

/**
 * The real model with a memo of single-text calls: every mode asks the same question, and a query
 * is encoded once, not once per mode. Corpus texts (batches) are never memoised.
 */
export function memoizeQueries(embedder: Embedder): Embedder {
  const memo = new Map<string, Float32Array>();
  return {
    id: embedder.id,
    dims: embedder.dims,
    similarityFloor: embedder.similarityFloor,
    embedEntities: (items) => embedder.embedEntities(items),
    ...passFitsOneVector(embedder),
    async embed(texts, kind) {
      const [only] = texts;
      if (texts.length !== 1 || only === undefined || kind !== 'query') return embedder.embed(texts, kind);
      let v = memo.get(only);
      if (v === undefined) {
        [v] = await embedder.embed(texts, kind);
        if (v !== undefined) memo.set(only, v);
      }
      return v === undefined ? [] : [v];
    },
  };
}

/**
 * One question's two legs as the search pipeline sees them, for the fusion study (fusion.ts): the
 * hits with their raw scores, and the idf inputs of the words the keyword leg searched for.
 */
export interface Legs {
  readonly semantic: readonly { readonly id: EntityId; readonly distance: number }[];
  readonly keyword: readonly { readonly id: EntityId; readonly bm25: number }[];
  readonly terms: readonly TermStat[];
  readonly total: number;
  /** The model's similarity of unrelated texts (Embedder.similarityFloor). */
  readonly floor: number;
}

/** A question of any suite, with what the fusion study needs to rank and score it offline. */
export interface Probe {
  readonly half: 'A' | 'B';
  /** A LoCoMo category or a language direction. */
  readonly group: string;
  readonly gold: readonly EntityId[];
  readonly limit: number;
  readonly legs: Legs;
}

/** One corpus in its own temporary SQLite file, embedded with the real model. */
export class Corpus {
  readonly store: SqliteStore;
  readonly indexer: EmbeddingIndexer;
  /** The corpus's folder: its database and side files. */
  readonly dir: string;

  private readonly embedder: Embedder;

  constructor(model: Embedder) {
    this.embedder = memoizeQueries(model);
    const embedder = this.embedder;
    this.dir = mkdtempSync(join(tmpdir(), 'limbic-bench-'));
    this.store = openSqliteStore({ path: join(this.dir, 'memory.db') });
    this.indexer = new EmbeddingIndexer(this.store, new LazyEmbedder(async () => embedder), noopLogger, 64);
  }

  /**
   * `additions`: observations of another kind than `generic` (LoCoMo's dates as `metadata`).
   * `writtenAt`: when each entity was written (LoCoMo's session times); `now` where undefined.
   */
  async load(
    entities: readonly NewEntity[],
    now: number,
    relations: readonly Relation[] = [],
    additions: readonly ObservationAddition[] = [],
    writtenAt: readonly (number | undefined)[] = [],
  ): Promise<void> {
    await writeInOrder(this.store, entities, writtenAt, now);
    if (relations.length > 0) await this.store.graph.createRelations(relations, now);
    if (additions.length > 0) await this.store.graph.addObservations(additions, now);
    await this.indexer.drain();
  }

  /**
   * Relations stored after the vectors were made, which stay as they are: a stage that reads the
   * graph is measured on the same vectors as the store without relations (no second embedding).
   */
  async relateKeepingVectors(relations: readonly Relation[], now: number): Promise<void> {
    await this.store.graph.createRelations(relations, now);
    const db = new Database(join(this.dir, 'memory.db'));
    try {
      db.exec('DELETE FROM embedding_queue');
    } finally {
      db.close();
    }
  }

  /** search_semantic with request overrides (the context study: bench/quality/context.ts). */
  async searchSemantic(query: string, limit: number, now: number, overrides: Partial<SearchRequest>): Promise<EntityId[]> {
    const deps = { store: this.store, indexer: this.indexer, reranker: undefined };
    return [...(await searchSemantic(deps, query, limit, now, overrides)).ids];
  }

  async ids(names: readonly string[]): Promise<Map<string, EntityId>> {
    const ids = await this.store.graph.idsByName(names);
    return new Map(names.map((n, i) => [n, ids[i] as EntityId]));
  }

  /** Both legs, `depth` deep, with the query words' document frequencies. */
  async legs(query: string, depth: number): Promise<Legs> {
    const [v] = await this.embedder.embed([query], 'query');
    const semantic = v === undefined ? [] : await this.store.requireVectors().search(v, depth);
    const match = await plainKeywordMatch(this.store.keywords, query);
    const keyword = match === undefined ? [] : await this.store.keywords.search(match, depth);
    // The words plainKeywordMatch kept: not stopwords, and not pruned as weightless.
    const stats = await this.store.keywords.termStats(distinctWords(query).filter((w) => !isStopword(w)));
    const kept = new Set(informativeWords(stats.terms, stats.total));
    const terms = stats.terms.filter((t) => kept.has(t.word));
    return { semantic, keyword, terms, total: stats.total, floor: this.embedder.similarityFloor ?? 0 };
  }

  /** Ranked entity ids for a query under one mode, `limit` deep. */
  async search(mode: Mode, query: string, limit: number, now: number): Promise<EntityId[]> {
    const depth = limit * EXPANSION_FACTOR;
    const keyword = async () => {
      const match = await plainKeywordMatch(this.store.keywords, query);
      return match === undefined ? [] : this.store.keywords.search(match, depth);
    };
    const semantic = async () => {
      const [v] = await this.embedder.embed([query], 'query');
      return v === undefined ? [] : this.store.requireVectors().search(v, depth);
    };
    switch (mode) {
      case 'fts':
        return (await keyword()).slice(0, limit).map((h) => h.id);
      case 'semantic':
        return (await semantic()).slice(0, limit).map((h) => h.id);
      case 'hybrid-rrf':
        return reciprocalRankFusion(await semantic(), await keyword())
          .slice(0, limit)
          .map((c) => c.id);
      case 'hybrid-limbic-spec':
      case 'hybrid-limbic-fused': {
        // The spec's own bases, ranked by core/rank directly: the pipeline's search_semantic preset is 'hybrid-limbic'.
        const fused = reciprocalRankFusion(await semantic(), await keyword());
        const signals = await this.store.usage.signals(fused.map((c) => c.id));
        const hybridBase = mode === 'hybrid-limbic-fused' ? 'fused' : 'spec';
        const options = {
          limit,
          strategy: detectQueryType(query, limit),
          now,
          hybridBase,
          similarityFloor: this.embedder.similarityFloor,
        } as const;
        return rankHybridCandidates(fused, signals, options).map((r) => r.id);
      }
      case 'hybrid-limbic': {
        const response = await searchSemantic({ store: this.store, indexer: this.indexer, reranker: undefined }, query, limit, now);
        return [...response.ids];
      }
      case 'hybrid-weighted':
      case 'hybrid-defaults':
      case 'hybrid-graph': {
        const options = toHybridOptions(
          mode === 'hybrid-weighted'
            ? { query, limit, fusion_method: 'weighted' }
            : mode === 'hybrid-defaults'
              ? { query, limit }
              : { query, limit, fusion_method: 'rrf', limbic: false, weights: { graph: 0.1 } },
        );
        const response = await hybridSearch({ store: this.store, indexer: this.indexer, reranker: undefined }, options, now);
        return [...response.ids];
      }
      default: {
        const _exhaustive: never = mode;
        return _exhaustive;
      }
    }
  }

  async close(): Promise<void> {
    await this.store.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * Creates the entities in their order, each run of entities written at one time in one call at
 * that time (ids follow the order, as they would had they been written then).
 */
export async function writeInOrder(
  store: SqliteStore,
  entities: readonly NewEntity[],
  writtenAt: readonly (number | undefined)[],
  now: number,
): Promise<void> {
  for (let i = 0; i < entities.length;) {
    const at = writtenAt[i] ?? now;
    let j = i + 1;
    while (j < entities.length && (writtenAt[j] ?? now) === at) j++;
    await store.graph.createEntities(entities.slice(i, j), at);
    i = j;
  }
}

export interface Scores {
  n: number;
  recall5: number;
  recall10: number;
  hit1: number;
  hit5: number;
  hit10: number;
  mrr: number;
}

export const emptyScores = (): Scores => ({ n: 0, recall5: 0, recall10: 0, hit1: 0, hit5: 0, hit10: 0, mrr: 0 });

/** Adds one question's ranking against its gold set. */
export function score(into: Scores, ranked: readonly EntityId[], gold: ReadonlySet<EntityId>): void {
  const found = (k: number) => ranked.slice(0, k).filter((id) => gold.has(id)).length;
  const first = ranked.findIndex((id) => gold.has(id));
  into.n++;
  into.recall5 += found(5) / gold.size;
  into.recall10 += found(10) / gold.size;
  into.hit1 += found(1) > 0 ? 1 : 0;
  into.hit5 += found(5) > 0 ? 1 : 0;
  into.hit10 += found(10) > 0 ? 1 : 0;
  into.mrr += first < 0 ? 0 : 1 / (first + 1);
}

export function mean(s: Scores): Record<Exclude<keyof Scores, 'n'>, number> {
  const d = Math.max(s.n, 1);
  return { recall5: s.recall5 / d, recall10: s.recall10 / d, hit1: s.hit1 / d, hit5: s.hit5 / d, hit10: s.hit10 / d, mrr: s.mrr / d };
}

export const f3 = (x: number): string => x.toFixed(3);
