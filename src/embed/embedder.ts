/** The embedding engine's interface. Concrete engines live in sub-folders and load lazily. */

export interface Embedder {
  /** Model id the vectors are made with; a change re-embeds everything. */
  readonly id: string;
  readonly dims: number;
  /** Unit-length vectors, one per text, in order. */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  /** Tokens the model's own tokenizer makes of a text (special tokens included). */
  countTokens(text: string): number;
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
  | { readonly state: 'loading' }
  | { readonly state: 'ready'; readonly embedder: Embedder }
  | { readonly state: 'unavailable'; readonly reason: string };

/**
 * Loads an engine once per process, on first need or when warmed in the background. Callers never
 * wait for a model unless they need meaning; a failed load is retried on demand after a pause.
 */
export class LazyEmbedder {
  private current: EmbedderState = { state: 'idle' };
  private loading: Promise<Embedder | undefined> | undefined;
  private failedAt = 0;

  constructor(
    private readonly load: () => Promise<Embedder>,
    private readonly retryAfterMs = 30_000,
    private readonly clock: () => number = Date.now,
  ) {}

  state(): EmbedderState {
    return this.current;
  }

  /** Starts loading without waiting for it. */
  warm(): void {
    void this.get();
  }

  /** The engine, or undefined when no model can be loaded (state() says why). */
  async get(): Promise<Embedder | undefined> {
    if (this.current.state === 'ready') return this.current.embedder;
    if (this.loading !== undefined) return this.loading;
    if (this.current.state === 'unavailable' && this.clock() - this.failedAt < this.retryAfterMs) return undefined;
    this.current = { state: 'loading' };
    this.loading = this.load().then(
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
    try {
      return await this.loading;
    } finally {
      this.loading = undefined;
    }
  }
}
