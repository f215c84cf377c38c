/**
 * Keeps entity vectors in step with entity text. Writes only queue (in the store, in the same
 * transaction), so they never wait for the model; this drains the queue in batches in the
 * background, and any process sharing the database can drain what another one queued.
 */
import { createHash } from 'node:crypto';
import { ERROR_CODES, MemoryError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { entityAsideText, observationText, ownObservations, splitAsides } from '../core/text/entity-text.js';
import { plural } from '../core/text/plural.js';
import type { Embedder, EmbedderState, LazyEmbedder } from '../embed/embedder.js';
import { keywordOnlyNote } from '../embed/model-state.js';
import type { Store } from '../store/store.js';
import type { EmbeddingJob, VectorIndex } from '../store/vector-index.js';

export interface DrainProgress {
  (done: number): void;
}

/** Queues at most this large are embedded before a search by meaning, so a fresh write is found. */
export const CATCH_UP_LIMIT = 64;
/**
 * How long a search waits for that; past it, it answers with what is indexed and says so. 64
 * short entities take about a second on one core of these machines.
 */
export const CATCH_UP_WAIT_MS = 2_000;
/** How often a search waiting for entities another process is embedding looks again. */
const CLAIMED_POLL_MS = 50;

/** What a search by meaning may be missing: entities written but not embedded yet. */
export interface Freshness {
  /** Entities still queued when the search ran (counted up to CATCH_UP_LIMIT + 1). */
  readonly pending: number;
  /** A sentence for the response when anything is pending. */
  readonly note?: string;
}

export class EmbeddingIndexer {
  private running: Promise<number> | undefined;
  /** A kick arrived while a drain ran: that drain may have found no engine yet, so another one follows. */
  private kickedWhileRunning = false;
  /**
   * Set by stop(): a drain ends, abandoning the batch under way (a closing server must not embed
   * on; a batch of long entities, a vector per observation, took minutes: issue 35).
   */
  private stopped = false;
  /** Aborted by stop(): what a drain waits for from the engine is given up. */
  private readonly stopping = new AbortController();
  private configured: string | undefined;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly store: Store,
    private readonly embedder: LazyEmbedder,
    private readonly logger: Logger,
    private readonly batchSize = 32,
    private readonly catchUpWaitMs = CATCH_UP_WAIT_MS,
  ) {
    // The queue starts working the moment a model becomes available, whoever installed it (issue 33):
    // what was written while it was being installed is embedded without waiting for another write.
    this.unsubscribe = embedder.onReady(() => this.kick());
  }

  /** Starts a background drain unless one is running (then another follows it); never throws. */
  kick(): void {
    if (this.store.vectors === undefined || this.stopped) return;
    if (this.running !== undefined) {
      this.kickedWhileRunning = true;
      return;
    }
    void this.drain().catch((error: unknown) =>
      this.logger.warn('embedding the queued entities failed; will retry on the next change', error),
    );
  }

  /**
   * No new batch starts after this, and the one under way is abandoned unwritten and given back:
   * what is queued stays queued, free for the next process to embed.
   */
  stop(): void {
    this.stopped = true;
    this.stopping.abort();
    this.unsubscribe();
  }

  /** Resolves when no drain is running (errors already reported by kick). */
  async idle(): Promise<void> {
    await this.running?.catch(() => undefined);
  }

  /**
   * The engine, with the vector table bound to it (a model change re-queues everything once).
   * `throughInstall`: wait for an install under way, here or by another process (`limbic reembed`).
   */
  async ready(throughInstall = false): Promise<Embedder | undefined> {
    const vectors = this.store.vectors;
    if (vectors === undefined) return undefined;
    const embedder = throughInstall ? await this.embedder.loaded() : await this.embedder.get();
    if (embedder === undefined) return undefined;
    const key = `${embedder.id}/${embedder.dims}`;
    if (this.configured !== key) {
      const { reset } = await vectors.configure(embedder.id, embedder.dims);
      if (reset) this.logger.info(`embedding model changed to ${embedder.id}: re-embedding every entity`);
      this.configured = key;
      // Load any in-memory vector index now, so the first search does not pay for it.
      await vectors.warm();
    }
    return embedder;
  }

  /**
   * Before a search by meaning: a small queue (a client that just wrote) is embedded first, for at
   * most `waitMs`, by this process or by another sharing the store that claimed those entities; a
   * large one (a bulk load) is left to the background drain. Never throws.
   */
  async catchUp(waitMs: number = this.catchUpWaitMs): Promise<Freshness> {
    const vectors = this.store.vectors;
    if (vectors === undefined) return { pending: 0 }; // nothing is embedded here, so nothing to wait for
    const limit = CATCH_UP_LIMIT + 1;
    let pending = await vectors.countPending(limit);
    if (pending === 0) return { pending };
    const drain = (): Promise<'drained' | 'failed'> =>
      this.drain().then(
        () => 'drained' as const,
        () => 'failed' as const,
      );
    let drained = drain();
    if (pending <= CATCH_UP_LIMIT) {
      const deadline = Date.now() + waitMs;
      for (;;) {
        const ended = await within(drained, deadline - Date.now());
        pending = await vectors.countPending(limit);
        if (pending === 0) return { pending };
        // Drained with jobs left: another process holds them (vector-index.ts takeJobs) and embeds
        // them now. Waited for while this one has an engine; then drained again, for a lease that ran out.
        if (ended !== 'drained' || this.configured === undefined || this.stopped || Date.now() >= deadline) break;
        await within(undefined, Math.min(CLAIMED_POLL_MS, deadline - Date.now()));
        drained = drain();
      }
    }
    const count =
      pending > CATCH_UP_LIMIT
        ? `More than ${CATCH_UP_LIMIT} recently written entities are`
        : `${plural(pending, 'recently written entity is', 'recently written entities are')}`;
    return {
      pending,
      note: `${count} still being embedded in the background; until ${pending === 1 ? 'it is' : 'they are'}, only the keyword leg can find ${pending === 1 ? 'it' : 'them'}.`,
    };
  }

  /** Why there is no engine right now, as a sentence for a search's warning (model-state.ts words it). */
  unavailableNote(): string {
    if (this.store.vectors === undefined) {
      return 'This store keeps no vectors (the sqlite-vec extension did not load; "limbic doctor" says why), so these are keyword matches only.';
    }
    return keywordOnlyNote(this.embedder.state());
  }

  /** The model's state, for errors of what cannot work without it (model-state.ts). */
  modelState(): EmbedderState {
    return this.embedder.state();
  }

  /** Embeds everything queued; resolves to how many vectors were written. One drain at a time. */
  drain(progress?: DrainProgress): Promise<number> {
    this.running ??= this.run(progress).finally(() => {
      this.running = undefined;
      if (this.kickedWhileRunning) {
        this.kickedWhileRunning = false;
        this.kick();
      }
    });
    return this.running;
  }

  private async run(progress?: DrainProgress): Promise<number> {
    const embedder = await this.ready();
    const index = this.store.vectors;
    if (embedder === undefined || index === undefined) return 0;
    let done = 0;
    for (;;) {
      if (this.stopped) return done;
      const jobs = await index.takeJobs(this.batchSize);
      if (jobs.length === 0) return done;
      // Text building, tokenizing and the model all run in the engine (a worker thread for ONNX).
      const vectors = await unlessAborted(embedder.embedEntities(jobs), this.stopping.signal);
      // A zero vector stored for a missing one would be an entity no query finds, silently: the batch fails instead.
      if (vectors !== undefined && vectors.length !== jobs.length)
        throw new MemoryError(
          ERROR_CODES.INTERNAL,
          `The embedding engine (${embedder.id}) gave ${vectors.length} vectors for ${jobs.length} entities: nothing of this batch was stored, and its entities stay queued to be embedded again. This is a fault of the engine, not of the memory: "limbic doctor" checks the model; report it with this message if it repeats.`,
        );
      const observations =
        vectors === undefined || index.keepsObservationVectors !== true
          ? []
          : await unlessAborted(observationVectors(embedder, jobs), this.stopping.signal);
      const asides =
        vectors === undefined || observations === undefined || index.keepsObservationVectors !== true
          ? []
          : await unlessAborted(asideVectors(embedder, index, jobs), this.stopping.signal);
      if (vectors === undefined || observations === undefined || asides === undefined) {
        // Abandoned by stop(): given back, so the next process (or another one running) takes them at once.
        await index.releaseJobs(jobs.map((j) => j.id));
        return done;
      }
      await index.put(
        jobs.map((j, i) => ({
          id: j.id,
          version: j.version,
          vector: vectors[i] as Float32Array,
          ...(observations[i] === undefined ? {} : { observations: observations[i] }),
          ...(asides[i] === undefined ? {} : { asides: asides[i].vectors, asideKeys: asides[i].keys }),
        })),
      );
      done += jobs.length;
      progress?.(done);
    }
  }
}

/**
 * A vector per observation for each entity whose whole text does not fit one (by the model's own
 * tokenizer): the entity's vector holds only the observations its text kept, and a fact left out
 * would not be found by meaning (bench/results/quality-2026-11-23-long-entities.md). Undefined for
 * an entity that fits, and for every entity when the engine cannot tell.
 */
async function observationVectors(embedder: Embedder, jobs: readonly EmbeddingJob[]): Promise<(Float32Array[] | undefined)[]> {
  const fits = (await embedder.fitsOneVector?.(jobs)) ?? jobs.map(() => true);
  // The entity's own observations: its asides have vectors of their own (asideVectors).
  const own = jobs.map((j) => ownObservations(j.entity.observations));
  const long = jobs.flatMap((j, i) => (fits[i] === false && (own[i]?.length ?? 0) > 1 ? [{ job: j, own: own[i] ?? [] }] : []));
  if (long.length === 0) return [];
  const vectors = await embedder.embed(
    long.flatMap(({ job, own }) => own.map((o) => observationText(job.entity, o))),
    'passage',
  );
  const byId = new Map<EmbeddingJob['id'], Float32Array[]>();
  let at = 0;
  for (const { job, own } of long) {
    byId.set(job.id, vectors.slice(at, at + own.length));
    at += own.length;
  }
  return jobs.map((j) => byId.get(j.id));
}

/**
 * An aside vector's key: a hash of the model and the text it is made from. Equal keys, equal
 * vectors, so a write to an entity embeds only the asides whose text changed (asideVectors).
 */
export function asideKey(model: string, text: string): string {
  return createHash('sha256').update(model).update('\0').update(text).digest('base64url');
}

/**
 * A vector per aside (entity-text.ts splitAsides: an observation in another language than the
 * entity's), made from entityAsideText, with its key (asideKey); undefined for an entity without
 * asides. An aside whose key the index already holds for its entity keeps that vector: a note added
 * to an entity with k asides embeds one text, not k + 1. A change to the entity's own observations
 * changes every aside's text (entityAsideText holds them), and so embeds them all again.
 */
async function asideVectors(
  embedder: Embedder,
  index: VectorIndex,
  jobs: readonly EmbeddingJob[],
): Promise<({ vectors: Float32Array[]; keys: string[] } | undefined)[]> {
  const texts = jobs.map((j) => {
    const { own, asides } = splitAsides(j.entity.observations);
    return asides.map((a) => entityAsideText(j.entity, own, a));
  });
  if (texts.every((t) => t.length === 0)) return [];
  const keys = texts.map((t) => t.map((text) => asideKey(embedder.id, text)));
  const kept = (await index.asideVectors?.(jobs.filter((_, i) => (texts[i]?.length ?? 0) > 0).map((j) => j.id))) ?? new Map();
  // The texts no kept vector answers, each once.
  const missing = new Map<string, string>();
  jobs.forEach((j, i) =>
    keys[i]?.forEach((key, n) => {
      if (kept.get(j.id)?.has(key) !== true) missing.set(key, texts[i]?.[n] ?? '');
    }),
  );
  const made = missing.size === 0 ? [] : await embedder.embed([...missing.values()], 'passage');
  const madeByKey = new Map([...missing.keys()].map((key, n) => [key, made[n]]));
  return jobs.map((j, i) => {
    const mine = keys[i] ?? [];
    if (mine.length === 0) return undefined;
    const vectors = mine.map((key) => {
      const vector = kept.get(j.id)?.get(key) ?? madeByKey.get(key);
      // A zero vector stored in its place would be an aside no query finds, silently: the batch fails instead.
      if (vector === undefined)
        throw new MemoryError(
          ERROR_CODES.INTERNAL,
          `The embedding engine (${embedder.id}) gave ${made.length} vectors for ${missing.size} aside texts, none for one of entity ${j.entity.name}'s: nothing of this batch was stored, and its entities stay queued to be embedded again. This is a fault of the engine, not of the memory: "limbic doctor" checks the model; report it with this message if it repeats.`,
        );
      return vector;
    });
    return { vectors, keys: mine };
  });
}

/**
 * `work`'s outcome, or undefined as soon as `signal` aborts; the work then goes on unheeded (its
 * failure too: closing the engine rejects it).
 */
async function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return undefined;
  }
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<undefined>((resolve) => {
    onAbort = () => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
    work.catch(() => undefined);
  }
}

/** `work`'s outcome, or 'timeout' after `ms` (at once for ms <= 0; a plain wait when work is undefined). */
async function within<T>(work: Promise<T> | undefined, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(resolve, Math.max(0, ms), 'timeout')));
  try {
    return await (work === undefined ? timedOut : Promise.race([work, timedOut]));
  } finally {
    clearTimeout(timer);
  }
}
