/**
 * The text rewrite capability (optional): stored text replaced in place wherever it is kept, and
 * what the backend still holds of the old text dropped, for `limbic redact --apply`
 * (docs/redaction.md). A backend without it can still be scanned (`limbic redact` reads through
 * the transfer capability); it cannot be rewritten.
 */

export interface TextRewriteOutcome {
  /** Entities whose name, type or observations changed. */
  readonly entities: number;
  readonly names: number;
  readonly types: number;
  readonly observations: number;
  /** Observations dropped because, rewritten, they equal another of their entity. */
  readonly observationsMerged: number;
  readonly superseded: number;
  readonly relations: number;
  /** Relations dropped because, rewritten, they equal another relation. */
  readonly relationsMerged: number;
  /** Names that another entity held already once rewritten, kept apart as "Name (2)", … (as rewritten). */
  readonly renamedApart: readonly string[];
}

export interface TextRewriteStore {
  /**
   * Replaces every stored text that is a key of `changes` (names, types, observations, superseded
   * observations and what superseded them, relation ends, types and contexts) by its value, in one
   * transaction, and brings the keyword rows of the entities touched up to date and their vectors
   * into the embedding queue. Relation ends follow their entity's new name.
   */
  rewriteTexts(changes: ReadonlyMap<string, string>, now: number): Promise<TextRewriteOutcome>;
  /**
   * Drops what the backend still holds of text no longer stored (index segments, dead rows, free
   * pages, logs, side files); resolves to one line per step taken, for the report.
   */
  purge(): Promise<string[]>;
}
