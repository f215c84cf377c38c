/** A cross-encoder's interface: scores (query, text) pairs after fusion. Optional everywhere. */
export interface Reranker {
  readonly id: string;
  /** Relevance of each text to the query, in [0, 1], higher is better, in input order. */
  score(query: string, texts: readonly string[]): Promise<number[]>;
}
