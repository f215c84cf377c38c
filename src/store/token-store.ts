/**
 * Where `limbic serve --http` keeps its access tokens: only a SHA-256 hash of each, never the token,
 * so a copied file or backup lets nobody in. One record per token; each is bound to one namespace.
 * Asynchronous because one implementation is a PostgreSQL table (src/store/postgres/pg-tokens.ts).
 */
export interface TokenRecord {
  /** A short public id (not derived from the token) that `token list` shows and `revoke` takes. */
  readonly id: string;
  readonly namespace: string;
  readonly readOnly: boolean;
  readonly label: string | undefined;
  /** Epoch ms. */
  readonly createdAt: number;
}

export interface TokenStore {
  add(record: TokenRecord, hash: string): Promise<void>;
  /** The record whose hash matches, if any. */
  byHash(hash: string): Promise<TokenRecord | undefined>;
  list(): Promise<TokenRecord[]>;
  /** Removes the token with this id; false when there is none. */
  revoke(id: string): Promise<boolean>;
  count(): Promise<number>;
  close(): Promise<void>;
}
