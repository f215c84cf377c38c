/** Messages between threaded-embedder.ts (the host) and embed-thread.ts (the worker). */
import type { EntityInput, ModelDescription, TextKind } from '../embedder.js';
import type { OnnxModelOptions } from './onnx-embedder.js';

/** What the worker is started with (ThreadedEmbedderOptions, defaults filled in). */
export interface EmbedThreadData {
  readonly model: OnnxModelOptions;
  /** Passages per unit of work. */
  readonly unitSize: number;
  /** Search texts per forward pass at most. */
  readonly queryBatch: number;
  /** How long an idle worker's first query waits for others, in ms. */
  readonly batchWaitMs: number;
}

export type HostMessage =
  | { readonly type: 'embed'; readonly id: number; readonly texts: readonly string[]; readonly kind: TextKind }
  | { readonly type: 'entities'; readonly id: number; readonly items: readonly EntityInput[] }
  /** Whether each entity's whole text fits the model's budget (tokenizing only, no forward pass). */
  | { readonly type: 'fits'; readonly id: number; readonly items: readonly EntityInput[] }
  | { readonly type: 'close' };

export type ThreadMessage =
  | {
      readonly type: 'ready';
      readonly id: string;
      readonly dims: number;
      readonly similarityFloor: number;
      readonly description: ModelDescription;
    }
  | { readonly type: 'failed'; readonly message: string }
  /**
   * `count` vectors of the model's size, one after another. `batch`, for a search's texts: how many
   * searches were embedded in the same call (query-batches.ts).
   */
  | { readonly type: 'vectors'; readonly id: number; readonly count: number; readonly data: Float32Array; readonly batch?: number }
  | { readonly type: 'fits'; readonly id: number; readonly fits: readonly boolean[] }
  | { readonly type: 'error'; readonly id: number; readonly message: string };
