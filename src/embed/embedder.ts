/** The embedding engine's interface. Concrete engines live in sub-folders and load lazily. */
import { buildEntityText, fitsEntityBudget, type TokenCounter } from '../core/text/entity-text.js';
import type { Entity, Relation } from '../core/types.js';
import { ModelAbsentError, type ModelAbsence } from './model-state.js';

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
  /** `installing`: the model is being fetched (here or by another process), which takes long; searches do not wait for it. */
  | { readonly state: 'loading'; readonly detail?: string; readonly installing?: boolean }
  | { readonly state: 'ready'; readonly embedder: Embedder }
  /** `why`: switched off or nothing installed (a ModelAbsentError from the loader), else a failure. */
  | { readonly state: 'unavailable'; readonly reason: string; readonly why?: ModelAbsence | 'failed' };

/** What a loader says while it works (shown by get_statistics and in the log). */
export interface LoadProgress {
  (detail: string, installing?: boolean): void;
}

/**
 * Loads an engine. `signal` aborts when the LazyEmbedder closes: a loader that waits (for another
 * process's install, for a shared engine) stops waiting then, so a command's process can exit.
 */
export type EngineLoader = (progress: LoadProgress, signal: AbortSignal) => Promise<Embedder>;

/**
 * What tells an embedder that found no model that one may have arrived (installed by another
 * process, a --model-dir that appeared): a fingerprint of the model files a load would use, read
 * every `everyMs` while no model can be loaded; a new one retries the load at once.
 */
export interface ModelWatch {
  readonly fingerprint: () => string | undefined;
  /** @default 1000 */
  readonly everyMs?: number;
}

/**
 * Loads an engine once per process, on first need or when warmed in the background. Callers never
 * wait for a model unless they need meaning, and never for an install; a failed load is retried on
 * demand after a pause, or at once when the watch sees a model arrive. Whoever waits for the
 * model to arrive (the embedding queue) subscribes with onReady.
 */
export class LazyEmbedder {
  private current: EmbedderState = { state: 'idle' };
  private loading: Promise<Embedder | undefined> | undefined;
  private failedAt = 0;
  /** Set by the watch: the next get() loads without waiting out the pause. */
  private retryNow = false;
  private abort: AbortController | undefined;
  /** Bumped by close(): a load of an older generation that ends afterwards closes its engine. */
  private generation = 0;
  private watching: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<(embedder: Embedder) => void>();

  constructor(
    private readonly load: EngineLoader,
    private readonly retryAfterMs = 30_000,
    private readonly clock: () => number = Date.now,
    private readonly watch?: ModelWatch,
  ) {}

  state(): EmbedderState {
    return this.current;
  }

  /**
   * Calls `listener` each time an engine becomes ready (after an install, here or elsewhere, or a
   * retry). Returns the unsubscribe function.
   */
  onReady(listener: (embedder: Embedder) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Frees a loaded engine, stops a load under way from waiting; the next get() loads again. */
  async close(): Promise<void> {
    this.stopWatching();
    // An install under way is not waited for: it is abandoned with the process (its staging
    // folder never becomes a model), and the next start installs again.
    const installing = this.current.state === 'loading' && this.current.installing === true;
    const engine = this.current.state === 'ready' ? this.current.embedder : undefined;
    const loading = this.loading;
    this.generation++;
    this.abort?.abort();
    this.abort = undefined;
    this.loading = undefined;
    this.current = { state: 'idle' };
    // A load that ends after this closes its own engine (see get), so no worker outlives close.
    if (!installing) await loading;
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
    if (this.current.state === 'unavailable' && !this.retryNow && this.clock() - this.failedAt < this.retryAfterMs) return undefined;
    this.retryNow = false;
    this.stopWatching();
    this.current = { state: 'loading' };
    const generation = this.generation;
    const abort = new AbortController();
    this.abort = abort;
    // The caller that started the load stops waiting too once it turns out to be an install.
    let installStarted: (value: undefined) => void = () => undefined;
    const installing = new Promise<undefined>((resolve) => (installStarted = resolve));
    const progress: LoadProgress = (detail, isInstall) => {
      if (generation !== this.generation || this.current.state !== 'loading') return;
      this.current = { state: 'loading', detail, ...(isInstall === true ? { installing: true } : {}) };
      if (isInstall === true) installStarted(undefined);
    };
    const loaded = this.load(progress, abort.signal).then(
      (embedder) => {
        if (generation !== this.generation) {
          // Closed meanwhile: nobody will use this engine, and its worker must not keep the process alive.
          void embedder.close?.().catch(() => undefined);
          return undefined;
        }
        this.current = { state: 'ready', embedder };
        for (const listener of [...this.listeners]) queueMicrotask(() => listener(embedder));
        return embedder;
      },
      (error: unknown) => {
        if (generation !== this.generation) return undefined;
        this.failedAt = this.clock();
        this.current = {
          state: 'unavailable',
          reason: error instanceof Error ? error.message : String(error),
          why: error instanceof ModelAbsentError ? error.why : 'failed',
        };
        if (this.current.why !== 'off') this.startWatching();
        return undefined;
      },
    );
    this.loading = loaded;
    void loaded.finally(() => {
      if (this.loading === loaded) this.loading = undefined;
      if (this.abort === abort) this.abort = undefined;
    });
    return Promise.race([loaded, installing]);
  }

  /** Like get(), but waits for an install under way (here or by another process) rather than answering undefined. */
  async loaded(): Promise<Embedder | undefined> {
    const engine = await this.get();
    if (engine !== undefined || this.current.state !== 'loading') return engine;
    return this.loading;
  }

  private startWatching(): void {
    const watch = this.watch;
    if (watch === undefined || this.watching !== undefined) return;
    const seen = fingerprintOf(watch);
    this.watching = setInterval(() => {
      const now = fingerprintOf(watch);
      if (now === undefined || now === seen) return;
      this.stopWatching();
      this.retryNow = true;
      this.warm();
    }, watch.everyMs ?? 1_000);
    // A server is kept alive by its transport; the watch alone never keeps a process running.
    this.watching.unref();
  }

  private stopWatching(): void {
    clearInterval(this.watching);
    this.watching = undefined;
  }
}

function fingerprintOf(watch: ModelWatch): string | undefined {
  try {
    return watch.fingerprint();
  } catch {
    return undefined;
  }
}
