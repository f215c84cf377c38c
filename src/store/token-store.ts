/**
 * Where `limbic serve --http` keeps its access tokens: only a SHA-256 hash of each, never the token,
 * so a copied file or backup lets nobody in. One record per token; each is bound to one namespace.
 * Asynchronous because one implementation is a PostgreSQL table (src/store/postgres/pg-tokens.ts).
 */
import type { OAuthStore } from './oauth-store.js';

export interface TokenRecord {
  /** A short public id (not derived from the token) that `token list` shows and `revoke` takes. */
  readonly id: string;
  readonly namespace: string;
  readonly readOnly: boolean;
  readonly label: string | undefined;
  /** Epoch ms. */
  readonly createdAt: number;
}

/** A token as stored: its record and the SHA-256 hash of the token itself. */
export interface TokenEntry {
  readonly record: TokenRecord;
  readonly hash: string;
}

export interface TokenStore {
  /**
   * The OAuth server's clients, codes, grants and tokens, kept beside the bearer tokens (the same
   * file or database). `revoke` below ends bearer tokens only; a grant (`g_…`) ends by `oauth.revokeGrant`.
   */
  readonly oauth: OAuthStore;
  add(record: TokenRecord, hash: string): Promise<void>;
  /** The record whose hash matches, if any. */
  byHash(hash: string): Promise<TokenRecord | undefined>;
  list(): Promise<TokenRecord[]>;
  /** Removes the token with this id; false when there is none. */
  revoke(id: string): Promise<boolean>;
  count(): Promise<number>;
  /** Every token with its hash, for `limbic migrate` to carry them to another memory's tokens. */
  entries(): Promise<TokenEntry[]>;
  /** Adds the tokens this store lacks (neither their id nor their hash is here); returns how many. */
  merge(entries: readonly TokenEntry[]): Promise<number>;
  close(): Promise<void>;
}
