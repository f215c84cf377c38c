/**
 * A Store is a backend's set of capabilities, one small interface each: the graph and the usage
 * signals every backend has, a keyword index and a vector index that a backend may lack. Search
 * degrades by what is present. Every backend lives in its own folder under src/store/ and passes
 * the conformance suite of each capability it has (test/store/conformance/).
 */
import type { CaptureStore } from './capture-store.js';
import type { GraphStore } from './graph-store.js';
import type { KeywordIndex } from './keyword-index.js';
import type { MaintenanceStore } from './maintenance-store.js';
import type { TransferStore } from './transfer-store.js';
import type { TuningStore } from './tuning-store.js';
import type { UsageStore } from './usage-store.js';
import type { VectorIndex } from './vector-index.js';

export type * from './capture-store.js';
export type * from './graph-store.js';
export type * from './keyword-index.js';
export type * from './maintenance-store.js';
export type * from './transfer-store.js';
export type * from './tuning-store.js';
export type * from './usage-store.js';
export type * from './vector-index.js';
export type { KeywordHit, VectorHit, EntityFacts, CandidateSignals } from '../core/signals.js';

export interface StoreStats {
  readonly entities: number;
  readonly observations: number;
  readonly relations: number;
  /** Bytes on disk, or undefined where a backend cannot tell. */
  readonly databaseBytes: number | undefined;
  readonly location: string;
}

export interface Store {
  readonly graph: GraphStore;
  readonly usage: UsageStore;
  /** Undefined when the backend has no keyword index: search runs on meaning alone. */
  readonly keywords: KeywordIndex | undefined;
  /** Undefined when the backend has no vector index: search runs on words alone. */
  readonly vectors: VectorIndex | undefined;
  /** Undefined when the backend keeps no shadow log: search ranks with the spec's constants. */
  readonly tuning?: TuningStore | undefined;
  /** Undefined when the backend cannot read out and merge in a whole memory (limbic migrate). */
  readonly transfer?: TransferStore | undefined;
  /** Undefined when the backend has no maintenance tools (supersedes, end_relation, splits, duplicates). */
  readonly maintenance?: MaintenanceStore | undefined;
  /** Undefined when the backend cannot store captured conversations (docs/capture.md): capture and the brief say so. */
  readonly capture?: CaptureStore | undefined;
  stats(): Promise<StoreStats>;
  close(): Promise<void>;
}
