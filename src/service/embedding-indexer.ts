/**
 * Keeps entity vectors in step with entity text. Writes only queue (in the store, in the same
 * transaction), so they never wait for the model; this drains the queue in batches in the
 * background, and any process sharing the database can drain what another one queued.
 */
import type { Logger } from '../core/logger.js';
import { buildEntityText } from '../core/text/entity-text.js';
import type { Embedder, LazyEmbedder } from '../embed/embedder.js';
import type { Store } from '../store/store.js';

export interface DrainProgress {
  (done: number): void;
}

export class EmbeddingIndexer {
  private running: Promise<number> | undefined;
  private configured: string | undefined;

  constructor(
    private readonly store: Store,
    private readonly embedder: LazyEmbedder,
    private readonly logger: Logger,
    private readonly batchSize = 32,
  ) {}

  /** Starts a background drain unless one is running; never throws. */
  kick(): void {
    if (!this.store.capabilities.vector || this.running !== undefined) return;
    void this.drain().catch((error: unknown) => this.logger.warn('embedding the queued entities failed; will retry on the next change', error));
  }

  /** Resolves when no drain is running (errors already reported by kick). */
  async idle(): Promise<void> {
    await this.running?.catch(() => undefined);
  }

  /** The engine, with the vector table bound to it (a model change re-queues everything once). */
  async ready(): Promise<Embedder | undefined> {
    if (!this.store.capabilities.vector) return undefined;
    const embedder = await this.embedder.get();
    if (embedder === undefined) return undefined;
    const key = `${embedder.id}/${embedder.dims}`;
    if (this.configured !== key) {
      const { reset } = await this.store.configureVectors(embedder.id, embedder.dims);
      if (reset) this.logger.info(`embedding model changed to ${embedder.id}: re-embedding every entity`);
      this.configured = key;
      // Load any in-memory vector index now, so the first search does not pay for it.
      await this.store.warmVectors();
    }
    return embedder;
  }

  /** Embeds everything queued; resolves to how many vectors were written. One drain at a time. */
  drain(progress?: DrainProgress): Promise<number> {
    this.running ??= this.run(progress).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async run(progress?: DrainProgress): Promise<number> {
    const embedder = await this.ready();
    if (embedder === undefined) return 0;
    let done = 0;
    for (;;) {
      const jobs = await this.store.takeEmbeddingJobs(this.batchSize);
      if (jobs.length === 0) return done;
      const texts = jobs.map((j) => buildEntityText(j.entity, j.relations, (t) => embedder.countTokens(t)));
      const vectors = await embedder.embed(texts);
      await this.store.putEmbeddings(jobs.map((j, i) => ({ id: j.id, version: j.version, vector: vectors[i] ?? new Float32Array(embedder.dims) })));
      done += jobs.length;
      progress?.(done);
    }
  }
}
