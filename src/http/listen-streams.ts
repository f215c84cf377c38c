/**
 * The subscriptions/listen streams open on a `serve --http` process, by token (issue 35, item 7).
 * The SDK bounds a namespace's streams (maxSubscriptions) but knows no tokens, so one read-only
 * token could take every place of its namespace and its owner could listen no more; and a stream
 * outlived its token's revocation, hearing every later write. Here each token has a share well
 * below the namespace's bound, and the streams of a token that is no longer in the store are
 * closed: before any change is announced (so a revoked token hears no write made after its
 * revocation was seen), and every `recheckMs` while streams are open (so an idle stream closes
 * too). Tokens are revoked by `limbic token revoke`, another process, so the store is asked. An
 * OAuth client's streams are counted by its grant's id, and close when the grant is revoked.
 */
import type { ServerResponse } from 'node:http';
import type { Logger } from '../core/logger.js';
import { plural } from '../core/text/plural.js';
import type { TokenStore } from '../store/token-store.js';

/**
 * The writes of the other processes of one server (`serve --http --workers N`): a worker tells the
 * primary of each write, the primary tells every other worker (cluster-worker.ts), and each worker
 * announces it to the listen streams it holds for that namespace. One process alone has none.
 */
export interface ChangeRelay {
  /** Tells the other processes that `uri` of `namespace` changed here. */
  publish(namespace: string, uri: string): void;
  /** Hears what the other processes publish. */
  subscribe(listener: (namespace: string, uri: string) => void): void;
}

export interface ListenStreamOptions {
  /** Streams one token may hold open at once. */
  readonly maxPerToken: number;
  /** How often the tokens of open streams are checked against the store, in ms. */
  readonly recheckMs: number;
  readonly tokens: TokenStore;
  readonly logger: Logger;
}

export class ListenStreams {
  private readonly byToken = new Map<string, Set<ServerResponse>>();
  private chain: Promise<void> = Promise.resolve();
  private queued: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly o: ListenStreamOptions) {
    this.timer = setInterval(() => void this.recheck(), o.recheckMs);
    this.timer.unref();
  }

  /** Streams open now: of one token, or in all. */
  count(tokenId?: string): number {
    if (tokenId !== undefined) return this.byToken.get(tokenId)?.size ?? 0;
    let all = 0;
    for (const open of this.byToken.values()) all += open.size;
    return all;
  }

  /**
   * Counts the stream answered on `res` for `tokenId` until it closes; undefined when the token has
   * its share open already, else why not (to answer instead of opening it).
   */
  open(tokenId: string, res: ServerResponse): string | undefined {
    const open = this.byToken.get(tokenId) ?? new Set<ServerResponse>();
    if (open.size >= this.o.maxPerToken) {
      return `This token has ${plural(open.size, 'subscriptions/listen stream')} open, its limit (LIMBIC_HTTP_MAX_STREAMS_PER_TOKEN=${this.o.maxPerToken}); this one was not opened. Close one you no longer read (a client needs one), or give each client its own token ("limbic token create").`;
    }
    open.add(res);
    this.byToken.set(tokenId, open);
    res.once('close', () => {
      open.delete(res);
      if (open.size === 0 && this.byToken.get(tokenId) === open) this.byToken.delete(tokenId);
    });
    return undefined;
  }

  /**
   * Closes the streams of every token no longer in the store. Calls made while one check runs share
   * the next one, which starts after it (a revocation seen by neither is seen by that one).
   */
  recheck(): Promise<void> {
    if (this.queued !== undefined) return this.queued;
    const next = this.chain.then(async () => {
      this.queued = undefined;
      await this.sweep();
    });
    this.queued = next;
    this.chain = next.catch((error: unknown) => this.o.logger.warn('checking the tokens of listen streams failed', error));
    return this.chain;
  }

  /** Stops the periodic check (shutdown; the streams themselves close with their handler). */
  stop(): void {
    clearInterval(this.timer);
  }

  private async sweep(): Promise<void> {
    if (this.byToken.size === 0) return;
    // A stream is held by a bearer token's id or by an OAuth grant's id (`g_…`, never a token's).
    const [records, grants] = await Promise.all([this.o.tokens.list(), this.o.tokens.oauth.listGrants()]);
    const live = new Set([...records.map((r) => r.id), ...grants.map((g) => g.id)]);
    for (const [tokenId, open] of this.byToken) {
      if (live.has(tokenId)) continue;
      this.byToken.delete(tokenId);
      this.o.logger.info(`token ${tokenId} was revoked: closing its ${plural(open.size, 'listen stream')}`);
      for (const res of open) res.destroy();
    }
  }
}
