/**
 * The worker thread that runs the embedding model (started by threaded-embedder.ts). onnxruntime-node
 * runs a forward pass synchronously on the thread that asks for it (its `run` is a native call
 * inside setImmediate), and tokenizing and fitting entity text is plain JavaScript: on the thread
 * that answers MCP, every tool waited behind whole batches. Here they block only this thread.
 *
 * Work is cut into units of a few texts; search texts go before any queued passage unit, so a
 * search waits for at most the unit under way, never for a whole drain. The search texts that
 * arrived while a pass ran are embedded together in the next one (dynamic batching, as inference
 * servers do): under load each search no longer waits for every search queued before it one pass
 * at a time. Each caller gets the vector it would get alone, to the bit: padding is masked out and
 * mean pooling sums the masked positions as zeros (test/embed/query-batching.test.ts holds it).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { EntityInput, TextKind } from '../embedder.js';
import { loadOnnxEmbedder, type OnnxEngine } from './onnx-embedder.js';
import { QueryBatches } from './query-batches.js';
import type { EmbedThreadData, HostMessage, ThreadMessage } from './thread-protocol.js';

const port = parentPort;
if (port === null) throw new Error('embed-thread.ts runs only as a worker thread (see threaded-embedder.ts).');
const { model, unitSize, queryBatch, batchWaitMs } = workerData as EmbedThreadData;

interface Unit {
  run(engine: OnnxEngine): Promise<Float32Array[]>;
  /** Where this unit's vectors go in its request's answer. */
  readonly offset: number;
  readonly request: Request;
}

interface Request {
  readonly id: number;
  readonly vectors: Float32Array[];
  remaining: number;
  failed: boolean;
}

const background: Unit[] = [];
let engine: OnnxEngine | undefined;
let pumping = false;
const queries = new QueryBatches({ maxTexts: queryBatch, waitMs: batchWaitMs });

function post(message: ThreadMessage, transfer: ArrayBuffer[] = []): void {
  port?.postMessage(message, transfer);
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** Passages and entities, in units of unitSize so that a search can cut in between them. */
function enqueue(id: number, count: number, slice: (from: number, to: number) => Unit['run']): void {
  const request: Request = { id, vectors: new Array<Float32Array>(count), remaining: 0, failed: false };
  if (count === 0) {
    post({ type: 'vectors', id, count: 0, data: new Float32Array(0) });
    return;
  }
  for (let from = 0; from < count; from += unitSize) {
    request.remaining++;
    background.push({ run: slice(from, Math.min(from + unitSize, count)), offset: from, request });
  }
  void pump();
}

function enqueueQuery(id: number, texts: readonly string[]): void {
  if (texts.length === 0) {
    post({ type: 'vectors', id, count: 0, data: new Float32Array(0) });
    return;
  }
  queries.add({
    texts,
    answer: (vectors, batchSize) => answer(id, vectors, batchSize),
    fail: (error) => post({ type: 'error', id, message: messageOf(error) }),
  });
  void pump();
}

/** `batch`: the searches embedded in the same call, for the host's statistics. */
function answer(id: number, vectors: readonly Float32Array[], batch?: number): void {
  const dims = engine?.dims ?? 0;
  const flat = new Float32Array(vectors.length * dims);
  vectors.forEach((v, i) => flat.set(v, i * dims));
  post({ type: 'vectors', id, count: vectors.length, data: flat, ...(batch === undefined ? {} : { batch }) }, [flat.buffer as ArrayBuffer]);
}

/** One turn of the event loop: the messages that arrived meanwhile are enqueued by then. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function runUnit(model: OnnxEngine, unit: Unit): Promise<void> {
  const { request } = unit;
  if (request.failed) return;
  try {
    const vectors = await unit.run(model);
    vectors.forEach((v, i) => (request.vectors[unit.offset + i] = v));
    if (--request.remaining === 0) answer(request.id, request.vectors);
  } catch (error) {
    request.failed = true;
    post({ type: 'error', id: request.id, message: messageOf(error) });
  }
}

async function pump(): Promise<void> {
  if (pumping || engine === undefined) return;
  const model = engine;
  pumping = true;
  try {
    // Searches sent at the same moment arrive as messages of one turn: let them all in first.
    await turn();
    for (;;) {
      if (queries.waiting) await queries.runNext((texts) => model.embed(texts, 'query' satisfies TextKind));
      else {
        const unit = background.shift();
        if (unit === undefined) return;
        await runUnit(model, unit);
      }
      // Let messages that arrived during the forward pass in (a query jumps the queue).
      await turn();
    }
  } finally {
    pumping = false;
  }
}

port.on('message', (message: HostMessage) => {
  switch (message.type) {
    case 'embed': {
      const { texts, kind } = message;
      if (kind === 'query') enqueueQuery(message.id, texts);
      else enqueue(message.id, texts.length, (from, to) => (e) => e.embed(texts.slice(from, to), kind));
      return;
    }
    case 'entities': {
      const items: readonly EntityInput[] = message.items;
      enqueue(message.id, items.length, (from, to) => (e) => e.embedEntities(items.slice(from, to)));
      return;
    }
    case 'fits': {
      // Tokenizing only: answered at once, between units, never queued behind a drain.
      if (engine === undefined) post({ type: 'error', id: message.id, message: 'the model has not loaded yet' });
      else {
        const items: readonly EntityInput[] = message.items;
        void engine.fitsOneVector?.(items).then(
          (fits) => post({ type: 'fits', id: message.id, fits }),
          (error: unknown) => post({ type: 'error', id: message.id, message: error instanceof Error ? error.message : String(error) }),
        );
      }
      return;
    }
    case 'close':
      // The host is closing: the unit under way ends the work, nothing queued starts (its requests
      // were abandoned), so the thread exits now instead of embedding a whole drain's batch first.
      queries.clear();
      background.length = 0;
      port.close();
      return;
    default: {
      const _exhaustive: never = message;
      return _exhaustive;
    }
  }
});

loadOnnxEmbedder(model).then(
  (loaded) => {
    engine = loaded;
    post({
      type: 'ready',
      id: loaded.id,
      dims: loaded.dims,
      similarityFloor: loaded.similarityFloor ?? 0,
      description: loaded.description,
    });
    void pump();
  },
  (error: unknown) => {
    post({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
  },
);
