/**
 * The ONNX engine in a worker thread (embed-thread.ts), so that embedding never runs on the thread
 * that answers MCP: tools that do not need meaning never wait for it. The model loads in the
 * worker; a worker that dies fails what it was doing and is started again on the next request.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ERROR_CODES, MemoryError } from '../../core/errors.js';
import { packageFolderOf } from '../../core/package-folder.js';
import type { Embedder, EntityInput, ModelDescription, TextKind } from '../embedder.js';
import { QueryVectorCache, type QueryCacheOptions } from '../query-cache.js';
import type { OnnxModelOptions } from './onnx-embedder.js';
import type { EmbedThreadData, HostMessage, ThreadMessage } from './thread-protocol.js';

export interface ThreadedEmbedderOptions {
  readonly model: OnnxModelOptions;
  /**
   * Passages per unit of work in the worker: a search's query waits for at most one unit. On one
   * thread a forward pass of 8 texts costs what 8 passes of one do, so small units cost nothing.
   * @default 2
   */
  readonly unitSize?: number;
  /**
   * Search texts embedded in one forward pass at most: the worker embeds together the queries that
   * arrived while it was busy (or within `batchWaitMs`), each caller getting its own vector, the
   * same bits as alone. On a 2-core CPU batches of 16 measured slower than one text a pass (a padded
   * batch costs what its single passes do, and the longest text sets its length), so the default
   * embeds each search alone; a query still jumps the passages queued before it. @default 1
   */
  readonly queryBatch?: number;
  /**
   * How long the first query of a batch waits for others when the worker is idle. Queries that
   * arrive while a pass runs are batched whatever this is. @default 0
   */
  readonly batchWaitMs?: number;
  /** The vectors of recent search texts (query-cache.ts). @default 256 entries */
  readonly queryCache?: QueryCacheOptions;
}

/** What became of the search texts asked of this embedder (for tests and the search-load bench). */
export interface QueryStats {
  /** Texts answered from the cache of recent search texts. */
  readonly cached: number;
  /** Texts that waited for the same text another caller had asked (one forward pass for both). */
  readonly shared: number;
  /** Texts asked of the worker. */
  readonly embedded: number;
  /** The most searches the worker embedded in one call. */
  readonly largestBatch: number;
}

interface Pending {
  /** Vectors for embed and embedEntities, one flag per entity for fitsOneVector. */
  resolve(answer: Float32Array[] | boolean[]): void;
  reject(error: Error): void;
}

/**
 * The worker's entry: dist/embed/onnx/embed-thread.js, found from the package folder so a bundle of
 * this module (the hooks' runtime) names the same file. Run from the sources (tests, tsx) it is
 * embed-thread.ts beside this module, which a worker can only load after registering tsx's loader
 * itself (a loader given with --import is not carried into worker threads on Node 20).
 */
function workerEntry(): { script: string | URL; eval: boolean } {
  if (!import.meta.url.endsWith('.ts')) {
    const root = packageFolderOf(fileURLToPath(import.meta.url), (folder) => existsSync(join(folder, 'package.json')));
    return { script: join(root, 'dist', 'embed', 'onnx', 'embed-thread.js'), eval: false };
  }
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = new URL('./embed-thread.ts', import.meta.url).href;
  const script = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry)}); });`;
  return { script, eval: true };
}

export class ThreadedEmbedder implements Embedder {
  private worker: Worker | undefined;
  private starting: Promise<Worker> | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;
  private readonly cache: QueryVectorCache;
  /** Search texts being embedded: a second caller of the same text waits for the same vector. */
  private readonly inFlight = new Map<string, Promise<Float32Array>>();
  /** Bumped when a worker is adopted: what an earlier worker was asked is neither cached nor shared. */
  private generation = 0;
  private stats = { cached: 0, shared: 0, embedded: 0, largestBatch: 0 };

  private constructor(
    private readonly options: ThreadedEmbedderOptions,
    readonly id: string,
    readonly dims: number,
    readonly similarityFloor: number,
    readonly description: ModelDescription,
  ) {
    this.cache = new QueryVectorCache(options.queryCache);
  }

  /** Starts the worker and resolves once its model is loaded (or rejects with why it cannot). */
  static async start(options: ThreadedEmbedderOptions): Promise<ThreadedEmbedder> {
    const { worker, ready } = await spawn(options);
    const embedder = new ThreadedEmbedder(options, ready.id, ready.dims, ready.similarityFloor, ready.description);
    embedder.adopt(worker);
    return embedder;
  }

  embed(texts: readonly string[], kind: TextKind): Promise<Float32Array[]> {
    // Passages are embedded once and stored; only search texts recur.
    if (kind === 'passage') return this.request((id) => ({ type: 'embed', id, texts: [...texts], kind }));
    return Promise.all(texts.map((text) => this.embedQuery(text)));
  }

  /** One search text's vector: kept, being made for another caller, or asked of the worker. */
  private embedQuery(text: string): Promise<Float32Array> {
    if (this.closed) return Promise.reject(closedError());
    const kept = this.cache.get(this.id, 'query', text);
    if (kept !== undefined) {
      this.stats.cached++;
      return Promise.resolve(kept);
    }
    const shared = this.inFlight.get(text);
    if (shared !== undefined) {
      this.stats.shared++;
      // Each caller its own copy, as from the cache: one that scales its vector never changes another's.
      return shared.then((vector) => vector.slice());
    }
    this.stats.embedded++;
    const generation = this.generation;
    const asked = this.request<Float32Array[]>((id) => ({ type: 'embed', id, texts: [text], kind: 'query' })).then(([vector]) => {
      if (vector === undefined) throw new MemoryError(ERROR_CODES.MODEL_UNAVAILABLE, 'Embedding failed: the worker answered no vector.');
      if (generation === this.generation) this.cache.set(this.id, 'query', text, vector);
      return vector;
    });
    this.inFlight.set(text, asked);
    const forget = (): void => {
      if (this.inFlight.get(text) === asked) this.inFlight.delete(text);
    };
    asked.then(forget, forget);
    return asked;
  }

  embedEntities(items: readonly EntityInput[]): Promise<Float32Array[]> {
    return this.request((id) => ({ type: 'entities', id, items: [...items] }));
  }

  fitsOneVector(items: readonly EntityInput[]): Promise<boolean[]> {
    return this.request((id) => ({ type: 'fits', id, items: [...items] }));
  }

  queryStats(): QueryStats {
    return { ...this.stats };
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker ?? (await this.starting?.catch(() => undefined));
    this.worker = undefined;
    if (worker === undefined) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ type: 'close' } satisfies HostMessage);
    // A worker in the middle of a forward pass finishes it first; do not wait for ever.
    const timer = setTimeout(() => void worker.terminate(), 5_000);
    await exited;
    clearTimeout(timer);
  }

  private async request<T extends Float32Array[] | boolean[]>(make: (id: number) => HostMessage): Promise<T> {
    if (this.closed) throw closedError();
    const worker = await this.running();
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: (answer) => resolve(answer as T), reject });
      worker.postMessage(make(id));
    });
  }

  /** The live worker, started again after one died. */
  private running(): Promise<Worker> {
    if (this.worker !== undefined) return Promise.resolve(this.worker);
    this.starting ??= (async () => {
      const { worker } = await spawn(this.options);
      this.adopt(worker);
      return worker;
    })().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private adopt(worker: Worker): void {
    this.worker = worker;
    // A worker started again may have loaded other model files: nothing the last one made is reused.
    this.generation++;
    this.cache.clear();
    this.inFlight.clear();
    worker.on('message', (message: ThreadMessage) => {
      if (message.type !== 'vectors' && message.type !== 'fits' && message.type !== 'error') return;
      const waiting = this.pending.get(message.id);
      if (waiting === undefined) return;
      this.pending.delete(message.id);
      if (message.type === 'error') {
        waiting.reject(new MemoryError(ERROR_CODES.MODEL_UNAVAILABLE, `Embedding failed: ${message.message}`));
        return;
      }
      if (message.type === 'fits') {
        waiting.resolve([...message.fits]);
        return;
      }
      if (message.batch !== undefined) this.stats.largestBatch = Math.max(this.stats.largestBatch, message.batch);
      const vectors: Float32Array[] = [];
      for (let i = 0; i < message.count; i++) vectors.push(message.data.subarray(i * this.dims, (i + 1) * this.dims));
      waiting.resolve(vectors);
    });
    // Everything in flight is lost with the thread; say so to each caller, start anew next time.
    const lost = (why: string): void => {
      if (this.worker === worker) this.worker = undefined;
      for (const [id, waiting] of this.pending) {
        this.pending.delete(id);
        waiting.reject(
          new MemoryError(ERROR_CODES.MODEL_UNAVAILABLE, `The embedding worker stopped (${why}); the next request starts it again.`),
        );
      }
    };
    worker.on('error', (error) => lost(error.message));
    worker.on('exit', (code) => lost(`exit code ${code}`));
  }
}

const closedError = (): MemoryError => new MemoryError(ERROR_CODES.MODEL_UNAVAILABLE, 'The embedding model was closed.');

interface Ready {
  readonly id: string;
  readonly dims: number;
  readonly similarityFloor: number;
  readonly description: ModelDescription;
}

/** A worker whose model has loaded; rejects with the worker's own reason when it cannot load. */
function spawn(options: ThreadedEmbedderOptions): Promise<{ worker: Worker; ready: Ready }> {
  const entry = workerEntry();
  const workerData: EmbedThreadData = {
    model: options.model,
    unitSize: options.unitSize ?? 2,
    queryBatch: options.queryBatch ?? 1,
    batchWaitMs: options.batchWaitMs ?? 0,
  };
  const worker = new Worker(entry.script, { workerData, eval: entry.eval });
  return new Promise((resolve, reject) => {
    const fail = (error: Error): void => {
      void worker.terminate();
      reject(error);
    };
    const onMessage = (message: ThreadMessage): void => {
      if (message.type === 'ready') {
        cleanup();
        resolve({ worker, ready: message });
      } else if (message.type === 'failed') {
        cleanup();
        fail(new MemoryError(ERROR_CODES.MODEL_UNAVAILABLE, message.message));
      }
    };
    const onError = (error: Error): void => {
      cleanup();
      fail(new MemoryError(ERROR_CODES.MODEL_UNAVAILABLE, `The embedding worker could not start: ${error.message}`, { cause: error }));
    };
    const onExit = (code: number): void => {
      cleanup();
      reject(new MemoryError(ERROR_CODES.MODEL_UNAVAILABLE, `The embedding worker exited (code ${code}) before its model loaded.`));
    };
    const cleanup = (): void => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  });
}
