/**
 * The vectors of recent search texts (issue 38): an agent, a team's clients or a page re-asks the
 * same question, and each asking paid a forward pass. Keyed by the model's id, the text's kind and
 * the exact text, so a vector is never given for another text or another model; bounded by entries,
 * the least recently used one leaving first. Passages are never kept here: each is embedded once
 * and stored by the indexer.
 */
import type { TextKind } from './embedder.js';

export interface QueryCacheOptions {
  /** Texts kept. 0 keeps none. @default 256 */
  readonly entries?: number;
  /**
   * Longer texts are not kept: a pasted page is seldom asked twice, and 256 of them would hold
   * megabytes of keys. @default 1000 (characters)
   */
  readonly longestText?: number;
}

export class QueryVectorCache {
  private readonly vectors = new Map<string, Float32Array>();
  private readonly capacity: number;
  private readonly longestText: number;

  constructor(options: QueryCacheOptions = {}) {
    this.capacity = Math.max(0, options.entries ?? 256);
    this.longestText = options.longestText ?? 1_000;
  }

  get size(): number {
    return this.vectors.size;
  }

  /**
   * A copy of the vector kept for exactly this model, kind and text, or undefined. A copy: a caller
   * that scales its vector in place never changes what the next caller gets.
   */
  get(model: string, kind: TextKind, text: string): Float32Array | undefined {
    const key = keyOf(model, kind, text);
    const vector = this.vectors.get(key);
    if (vector === undefined) return undefined;
    // Most recently used last: Map keeps insertion order, so the first key is the one to drop.
    this.vectors.delete(key);
    this.vectors.set(key, vector);
    return vector.slice();
  }

  set(model: string, kind: TextKind, text: string, vector: Float32Array): void {
    if (this.capacity === 0 || text.length > this.longestText) return;
    const key = keyOf(model, kind, text);
    this.vectors.delete(key);
    this.vectors.set(key, vector.slice());
    while (this.vectors.size > this.capacity) {
      const oldest = this.vectors.keys().next().value;
      if (oldest === undefined) break;
      this.vectors.delete(oldest);
    }
  }

  clear(): void {
    this.vectors.clear();
  }
}

/** One string per (model, kind, text), unambiguous whatever characters they hold. */
const keyOf = (model: string, kind: TextKind, text: string): string => JSON.stringify([model, kind, text]);
