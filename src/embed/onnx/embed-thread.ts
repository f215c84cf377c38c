/**
 * The worker thread that runs the embedding model (started by threaded-embedder.ts). onnxruntime-node
 * runs a forward pass synchronously on the thread that asks for it (its `run` is a native call
 * inside setImmediate), and tokenizing and fitting entity text is plain JavaScript: on the thread
 * that answers MCP, every tool waited behind whole batches. Here they block only this thread.
 *
 * Work is cut into units of a few texts; a search's query unit goes before any queued passage
 * unit, so a search waits for at most the unit under way, never for a whole drain.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { EntityInput, TextKind } from '../embedder.js';
import { loadOnnxEmbedder, type OnnxEngine, type OnnxModelOptions } from './onnx-embedder.js';
import type { HostMessage, ThreadMessage } from './thread-protocol.js';

const port = parentPort;
if (port === null) throw new Error('embed-thread.ts runs only as a worker thread (see threaded-embedder.ts).');
const { model, unitSize } = workerData as { readonly model: OnnxModelOptions; readonly unitSize: number };

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

const urgent: Unit[] = [];
const background: Unit[] = [];
let engine: OnnxEngine | undefined;
let pumping = false;

function post(message: ThreadMessage, transfer: ArrayBuffer[] = []): void {
  port?.postMessage(message, transfer);
}

function enqueue(id: number, count: number, isUrgent: boolean, slice: (from: number, to: number) => Unit['run']): void {
  const request: Request = { id, vectors: new Array<Float32Array>(count), remaining: 0, failed: false };
  if (count === 0) {
    post({ type: 'vectors', id, count: 0, data: new Float32Array(0) });
    return;
  }
  // A query is one short text: one unit. Passages go in units so a query can cut in between them.
  const size = isUrgent ? count : unitSize;
  for (let from = 0; from < count; from += size) {
    request.remaining++;
    (isUrgent ? urgent : background).push({ run: slice(from, Math.min(from + size, count)), offset: from, request });
  }
  void pump();
}

function answer(request: Request, dims: number): void {
  const flat = new Float32Array(request.vectors.length * dims);
  request.vectors.forEach((v, i) => flat.set(v, i * dims));
  post({ type: 'vectors', id: request.id, count: request.vectors.length, data: flat }, [flat.buffer as ArrayBuffer]);
}

async function pump(): Promise<void> {
  if (pumping || engine === undefined) return;
  pumping = true;
  try {
    for (;;) {
      const unit = urgent.shift() ?? background.shift();
      if (unit === undefined) return;
      const { request } = unit;
      if (!request.failed) {
        try {
          const vectors = await unit.run(engine);
          vectors.forEach((v, i) => (request.vectors[unit.offset + i] = v));
          if (--request.remaining === 0) answer(request, engine.dims);
        } catch (error) {
          request.failed = true;
          post({ type: 'error', id: request.id, message: error instanceof Error ? error.message : String(error) });
        }
      }
      // Let messages that arrived during the forward pass in (a query jumps the queue).
      await new Promise((resolve) => setImmediate(resolve));
    }
  } finally {
    pumping = false;
  }
}

port.on('message', (message: HostMessage) => {
  switch (message.type) {
    case 'embed': {
      const { texts, kind } = message;
      enqueue(message.id, texts.length, kind === 'query', (from, to) => (e) => e.embed(texts.slice(from, to), kind satisfies TextKind));
      return;
    }
    case 'entities': {
      const items: readonly EntityInput[] = message.items;
      enqueue(message.id, items.length, false, (from, to) => (e) => e.embedEntities(items.slice(from, to)));
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
      urgent.length = 0;
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
