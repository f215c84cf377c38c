/** The embedding engine's interface. Concrete engines live in sub-folders and load lazily. */
import { buildEntityText, fitsEntityBudget, type TokenCounter } from '../core/text/entity-text.js';
import type { Entity, Relation } from '../core/types.js';

/**
 * What a text is for. Models trained with instructions (multilingual-e5: "query: " and "passage: ")
 * encode a search differently from the text it should find; models without them ignore this.
 */
export type TextKind = 'query' | 'passage';

/** An entity as it is embedded: its text is built from these (src/core/text/entity-text.ts). */
export interface EntityInput {
  readonly entity: Entity;
  readonly relations: readonly Relation[];
}

export interface Embedder {
  /** Model id the vectors are made with; a change re-embeds everything. */
  readonly id: string;
  readonly dims: number;
  /**
   * The cosine similarity this model gives unrelated texts, counted as no similarity by ranking.
   * e5 puts unrelated texts near 0.74 and related ones near 0.88; unrescaled, every semantic hit
   * looked alike and usage boosts or a keyword weight decided the order. @default 0
   */
  readonly similarityFloor?: number;
  /** Unit-length vectors, one per text, in order. */
  embed(texts: readonly string[], kind: TextKind): Promise<Float32Array[]>;
  /**
   * One passage vector per entity, its text built within the model's token budget by the model's
   * own tokenizer. Engines that run in another thread build the text there too.
   */
  embedEntities(items: readonly EntityInput[]): Promise<Float32Array[]>;
  /**
   * Whether each entity's whole text fits the model's token budget, counted by the model's own
   * tokenizer: when it does not, embedEntities left observations out, and the indexer gives each
   * observation a vector of its own where the store keeps them. Engines without it never do.
   */
  fitsOneVector?(items: readonly EntityInput[]): Promise<boolean[]>;
  /** Frees the engine (a worker thread, a session); the embedder is unusable afterwards. */
  close?(): Promise<void>;
}

/** An embedder's fitsOneVector, for a wrapper around it to spread into itself (nothing when it has none). */
export function passFitsOneVector(inner: Embedder): Pick<Embedder, 'fitsOneVector'> {
  const fits = inner.fitsOneVector?.bind(inner);
  return fits === undefined ? {} : { fitsOneVector: fits };
}

/** fitsOneVector for an engine running on the caller's thread. */
export const fitsAsPassages = (countTokens: TokenCounter, items: readonly EntityInput[]): boolean[] =>
  items.map((item) => fitsEntityBudget(item.entity, item.relations, countTokens));

/**
 * embedEntities for an engine running on the caller's thread: builds each entity's text, counting
 * every distinct piece of text once (the budget fitting asks for the same observation repeatedly).
 */
export function embedEntitiesAsPassages(
  engine: Pick<Embedder, 'embed'>,
  countTokens: TokenCounter,
  items: readonly EntityInput[],
): Promise<Float32Array[]> {
  const counts = new Map<string, number>();
  const counted: TokenCounter = (text) => {
    let n = counts.get(text);
    if (n === undefined) counts.set(text, (n = countTokens(text)));
    return n;
  };
  return engine.embed(
    items.map((item) => buildEntityText(item.entity, item.relations, counted)),
    'passage',
  );
}

/** Where a model's files came from, for `limbic model` and get_statistics. */
export interface ModelDescription {
  readonly id: string;
  readonly dims: number | undefined;
  readonly source: 'model-dir' | 'cache' | 'hub';
  readonly location: string;
  readonly note?: string | undefined;
}

export type EmbedderState =
  | { readonly state: 'idle' }
  /** `installing`: the model is being fetched, which takes long; searches do not wait for it. */
  | { readonly state: 'loading'; readonly detail?: string; readonly installing?: boolean }
  | { readonly state: 'ready'; readonly embedder: Embedder }
  | { readonly state: 'unavailable'; readonly reason: string };

/** What a loader says while it works (shown by get_statistics and in the log). */
export interface LoadProgress {
  (detail: string, installing?: boolean): void;
}

/**
 * Loads an engine once per process, on first need or when warmed in the background. Callers never
 * wait for a model unless they need meaning, and never for an install; a failed load is retried on
 * demand after a pause.
 */
export class LazyEmbedder {
  private current: EmbedderState = { state: 'idle' };
  private loading: Promise<Embedder | undefined> | undefined;
  private failedAt = 0;

  constructor(
    private readonly load: (progress: LoadProgress) => Promise<Embedder>,
    private readonly retryAfterMs = 30_000,
    private readonly clock: () => number = Date.now,
  ) {}

  state(): EmbedderState {
    return this.current;
  }

  /** Frees a loaded engine (a load under way is waited for); the next get() loads again. */
  async close(): Promise<void> {
    // An install under way is not waited for: it is abandoned with the process (its staging
    // folder never becomes a model), and the next start installs again.
    const installing = this.current.state === 'loading' && this.current.installing === true;
    const engine = this.current.state === 'ready' ? this.current.embedder : installing ? undefined : await this.loading;
    this.current = { state: 'idle' };
    await engine?.close?.();
  }

  /** Starts loading without waiting for it. */
  warm(): void {
    void this.get();
  }

  /** The engine, or undefined when no model can be loaded or one is being installed (state() says). */
  async get(): Promise<Embedder | undefined> {
    if (this.current.state === 'ready') return this.current.embedder;
    if (this.current.state === 'loading' && this.current.installing === true) return undefined;
    if (this.loading !== undefined) return this.loading;
    if (this.current.state === 'unavailable' && this.clock() - this.failedAt < this.retryAfterMs) return undefined;
    this.current = { state: 'loading' };
    // The caller that started the load stops waiting too once it turns out to be an install.
    let installStarted: (value: undefined) => void = () => undefined;
    const installing = new Promise<undefined>((resolve) => (installStarted = resolve));
    const progress: LoadProgress = (detail, isInstall) => {
      if (this.current.state !== 'loading') return;
      this.current = { state: 'loading', detail, ...(isInstall === true ? { installing: true } : {}) };
      if (isInstall === true) installStarted(undefined);
    };
    this.loading = this.load(progress).then(
      (embedder) => {
        this.current = { state: 'ready', embedder };
        return embedder;
      },
      (error: unknown) => {
        this.failedAt = this.clock();
        this.current = { state: 'unavailable', reason: error instanceof Error ? error.message : String(error) };
        return undefined;
      },
    );
    const loaded = this.loading;
    void loaded.finally(() => {
      if (this.loading === loaded) this.loading = undefined;
    });
    return Promise.race([loaded, installing]);
  }
}
