/**
 * Dynamic batching of search texts in the model's worker (embed-thread.ts), as inference servers
 * do: the queries waiting when the model is free go in one call, up to `maxTexts` texts; the first
 * of a batch waits at most `waitMs` for others to join (0: only those already there, so a lone
 * search pays nothing). One query's failure fails only that query.
 */

/** One search's texts and where its answer goes. */
export interface BatchedQuery {
  readonly texts: readonly string[];
  /** One vector per text, in order. */
  answer(vectors: Float32Array[], batchSize: number): void;
  fail(error: unknown): void;
}

export interface QueryBatchOptions {
  /** Texts in one call at most (a query with more texts still goes, alone). */
  readonly maxTexts: number;
  /** How long the first query of a batch waits for others, in ms. */
  readonly waitMs: number;
}

interface Waiting extends BatchedQuery {
  /** When it arrived, by `now`. */
  readonly arrived: number;
}

export class QueryBatches {
  private readonly queue: Waiting[] = [];
  /** Wakes a batch waiting for more queries (set while one waits). */
  private arrived: (() => void) | undefined;

  constructor(
    private readonly options: QueryBatchOptions,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get waiting(): boolean {
    return this.queue.length > 0;
  }

  add(query: BatchedQuery): void {
    this.queue.push({ ...query, arrived: this.now() });
    this.arrived?.();
  }

  /** Drops what waits (the worker is closing) and ends a wait under way. */
  clear(): void {
    this.queue.length = 0;
    this.arrived?.();
  }

  /**
   * Embeds the next batch with `embed` (one call for all its texts). When that call fails, each
   * query is embedded again alone: a text that breaks the call fails its own search, never the
   * others it happened to be batched with.
   */
  async runNext(embed: (texts: readonly string[]) => Promise<Float32Array[]>): Promise<void> {
    await this.gather();
    const batch = this.take();
    if (batch.length > 0) await this.run(batch, embed);
  }

  private async run(batch: readonly Waiting[], embed: (texts: readonly string[]) => Promise<Float32Array[]>): Promise<void> {
    let vectors: Float32Array[];
    try {
      vectors = await embed(batch.flatMap((q) => q.texts));
    } catch (error) {
      if (batch.length === 1) batch[0]?.fail(error);
      else for (const query of batch) await this.run([query], embed);
      return;
    }
    let at = 0;
    for (const query of batch) {
      query.answer(vectors.slice(at, at + query.texts.length), batch.length);
      at += query.texts.length;
    }
  }

  private texts(): number {
    return this.queue.reduce((n, q) => n + q.texts.length, 0);
  }

  /** Until the batch is full or its first query has waited waitMs. */
  private async gather(): Promise<void> {
    const first = this.queue[0];
    if (this.options.waitMs <= 0 || first === undefined) return;
    for (;;) {
      const left = first.arrived + this.options.waitMs - this.now();
      if (left <= 0 || this.texts() >= this.options.maxTexts || this.queue[0] !== first) return;
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          this.arrived = undefined;
          resolve();
        };
        const timer = setTimeout(done, left);
        this.arrived = done;
      });
    }
  }

  /** The queries of the next batch, oldest first: up to maxTexts texts, at least one query. */
  private take(): Waiting[] {
    let count = 0;
    let texts = 0;
    for (const next of this.queue) {
      if (count > 0 && texts + next.texts.length > this.options.maxTexts) break;
      count++;
      texts += next.texts.length;
    }
    return this.queue.splice(0, count);
  }
}
