/**
 * What the primary and the workers of `serve --http --workers N` say to each other over the IPC
 * channel node:cluster gives each worker (cluster-primary.ts, cluster-worker.ts). Plain JSON.
 */

/** Which of the server's two gates (http-server.ts): every request's, and the heavy calls'. */
export type GateKind = 'requests' | 'heavy';

export type WorkerMessage =
  /** A place for request `id` of this worker. */
  | { readonly t: 'acquire'; readonly gate: GateKind; readonly id: number; readonly tokenId: string; readonly namespace: string }
  /** Request `id`'s client went away while it waited. */
  | { readonly t: 'abandon'; readonly gate: GateKind; readonly id: number }
  /** Request `id` is done with its place. */
  | { readonly t: 'release'; readonly gate: GateKind; readonly id: number }
  /** `uri` of `namespace` changed on this worker: for the listen streams of the others. */
  | { readonly t: 'change'; readonly namespace: string; readonly uri: string }
  /** A search this worker's ring of a namespace keeps, or a pairing it made: for the other workers' rings. */
  | RingMessage
  /** May `address` type an approval code now (oauth/rate-limit.ts)? Answered by `wait`. */
  | { readonly t: 'codes'; readonly id: number; readonly address: string; readonly now: number }
  /** `address` typed a wrong approval code. */
  | { readonly t: 'wrong-code'; readonly address: string; readonly now: number }
  /** This worker accepts requests at `url`. */
  | { readonly t: 'listening'; readonly url: string }
  /** This worker could not start; `message` says why, `code` is a MemoryError's (it exits next). */
  | { readonly t: 'failed'; readonly message: string; readonly code?: string };

export type PrimaryMessage =
  /** The answer to `acquire` `id`: a place, or a refusal as the gate gave it. */
  | {
      readonly t: 'admission';
      readonly gate: GateKind;
      readonly id: number;
      readonly ok: boolean;
      readonly status?: 429 | 503;
      readonly message?: string;
      readonly retryAfterSeconds?: number;
    }
  /** The answer to `codes` `id`: seconds to wait, or undefined when the address may try. */
  | { readonly t: 'wait'; readonly id: number; readonly seconds?: number }
  /** Another worker's write. */
  | { readonly t: 'change'; readonly namespace: string; readonly uri: string }
  /** Another worker's search or pairing, for re-finding. */
  | RingMessage;

/**
 * A worker's ring of recent searches of `namespace` (service/refinding.ts) telling the others, the
 * primary relaying it as is: a search it keeps (its query's vector as float32 bytes in base64, the
 * ids its page listed), or the entities a use paired with search `key`.
 */
export type RingMessage =
  | {
      readonly t: 'search';
      readonly namespace: string;
      readonly key: string;
      readonly at: number;
      readonly model: string;
      readonly vector: string;
      readonly listed: readonly number[];
    }
  | { readonly t: 'paired'; readonly namespace: string; readonly key: string; readonly ids: readonly number[] };

const TYPES = new Set([
  'acquire',
  'abandon',
  'release',
  'change',
  'search',
  'paired',
  'codes',
  'wrong-code',
  'wait',
  'listening',
  'failed',
  'admission',
]);

/** Whether `m` is one of these messages (node:cluster sends its own internal ones on the same channel). */
export function isClusterMessage(m: unknown): m is WorkerMessage | PrimaryMessage {
  return typeof m === 'object' && m !== null && TYPES.has(String((m as { t?: unknown }).t));
}
