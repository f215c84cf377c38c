/**
 * The open MCP sessions of `serve --http`, bounded per token, per namespace and in all (issue 26:
 * 1,000 bare initialize POSTs of one read-only token filled the server's single limit, and every
 * other token got 503 for 30 minutes). The rules, in order, when a token asks for a session:
 *
 * 1. A token at its own bound may replace its least recently used session when that one has been
 *    unused for `sessionReplaceAfterMs` and has nothing under way (a client that restarts without
 *    closing its old sessions keeps working); otherwise that token, and only it, gets 429.
 * 2. When the namespace, then the server, is full, the token holding the most sessions there gives
 *    up its least recently used idle one (so the one who exceeded a fair share pays, not the
 *    newcomer). Only when every session there has a request under way is the newcomer refused (503);
 *    the request bounds (request-gate.ts) keep that from happening while the defaults hold.
 *
 * A place is reserved while initialize runs, so a burst of concurrent initializes cannot all pass
 * the check before the first registers.
 */

export interface SessionBounds {
  /** Open MCP sessions, all tokens together. */
  readonly maxSessions: number;
  /** Open MCP sessions of the tokens of one namespace. */
  readonly maxSessionsPerNamespace: number;
  /** Open MCP sessions of one token. */
  readonly maxSessionsPerToken: number;
  /** A token at its own bound may replace its own session unused this long; a younger one means 429. */
  readonly sessionReplaceAfterMs: number;
}

/** What the table needs of a session. */
export interface SessionEntry {
  /** Its Mcp-Session-Id. */
  readonly id: string;
  readonly tokenId: string;
  /** SHA-256 of the bearer that opened it: a revoked token is recognised when it is presented again. */
  readonly tokenHash: string;
  readonly namespace: string;
  /** Epoch ms of the start or end of its last request. */
  lastUsed: number;
  /** Requests under way on it now. */
  busy: number;
  close(): Promise<void>;
}

export interface Refusal {
  readonly status: 429 | 503;
  readonly message: string;
  readonly retryAfterSeconds: number;
}

export interface Reservation<S extends SessionEntry> {
  /** Registers the session opened on this place. */
  commit(session: S): void;
  /** Gives the place back (initialize failed); a no-op after commit. */
  cancel(): void;
}

const bump = (counts: Map<string, number>, key: string, by: number): void => {
  const next = (counts.get(key) ?? 0) + by;
  if (next === 0) counts.delete(key);
  else counts.set(key, next);
};

export class SessionTable<S extends SessionEntry> {
  private readonly sessions = new Map<string, S>();
  /** Sessions plus reserved places, per token and per namespace. */
  private readonly byToken = new Map<string, number>();
  private readonly byNamespace = new Map<string, number>();
  private total = 0;

  constructor(
    private readonly bounds: SessionBounds,
    private readonly clock: () => number = Date.now,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  get(id: string): S | undefined {
    return this.sessions.get(id);
  }

  values(): IterableIterator<S> {
    return this.sessions.values();
  }

  /** Sessions (and places being opened) held by this token. */
  heldBy(tokenId: string): number {
    return this.byToken.get(tokenId) ?? 0;
  }

  /** True when the namespace or the server has no free place: room would come from another holder. */
  full(namespace: string): boolean {
    return this.total >= this.bounds.maxSessions || (this.byNamespace.get(namespace) ?? 0) >= this.bounds.maxSessionsPerNamespace;
  }

  /**
   * A place for a new session of this token, made by the rules above, or why there is none.
   * @example const place = table.reserve(token.id, token.namespace); if ('status' in place) refuse(place); else …
   */
  reserve(tokenId: string, namespace: string): Reservation<S> | Refusal {
    const now = this.clock();
    if (this.heldBy(tokenId) >= this.bounds.maxSessionsPerToken) {
      const own = this.leastRecentlyUsedIdle((s) => s.tokenId === tokenId);
      if (own === undefined || now - own.lastUsed < this.bounds.sessionReplaceAfterMs) {
        const wait = own === undefined ? 1 : Math.ceil((own.lastUsed + this.bounds.sessionReplaceAfterMs - now) / 1000);
        return {
          status: 429,
          message: `This token holds its limit of ${this.bounds.maxSessionsPerToken} MCP sessions, all used in the last ${Math.round(this.bounds.sessionReplaceAfterMs / 1000)} s; no session was opened. Reuse a session (its Mcp-Session-Id), close the ones you are done with (DELETE /mcp), or retry after ${Math.max(1, wait)} s.`,
          retryAfterSeconds: Math.max(1, wait),
        };
      }
      this.evict(own);
    }
    const scopes: [(s: S) => boolean, () => boolean][] = [
      [(s) => s.namespace === namespace, () => (this.byNamespace.get(namespace) ?? 0) >= this.bounds.maxSessionsPerNamespace],
      [() => true, () => this.total >= this.bounds.maxSessions],
    ];
    for (const [inScope, isFull] of scopes) {
      while (isFull()) {
        const victim = this.fromHeaviestHolder(inScope);
        if (victim === undefined) {
          return {
            status: 503,
            message: `This server holds its limit of MCP sessions (${this.bounds.maxSessions} in all, ${this.bounds.maxSessionsPerNamespace} per namespace), each with a request under way; no session was opened. Retry shortly.`,
            retryAfterSeconds: 2,
          };
        }
        this.evict(victim);
      }
    }
    this.count(tokenId, namespace, 1);
    let settled = false;
    return {
      commit: (session) => {
        if (settled) return;
        settled = true;
        this.sessions.set(session.id, session);
      },
      cancel: () => {
        if (settled) return;
        settled = true;
        this.count(tokenId, namespace, -1);
      },
    };
  }

  /** Forgets a session that closed by itself (its transport's onclose); false when it was not here. */
  forget(id: string): boolean {
    const session = this.sessions.get(id);
    if (session === undefined) return false;
    this.sessions.delete(id);
    this.count(session.tokenId, session.namespace, -1);
    return true;
  }

  /** Closes every session of these tokens (revoked ones); how many were closed. */
  closeTokens(isGone: (tokenId: string) => boolean): number {
    let closed = 0;
    for (const session of [...this.sessions.values()]) {
      if (isGone(session.tokenId)) {
        this.evict(session);
        closed++;
      }
    }
    return closed;
  }

  /** The token that opened sessions with the bearer of this hash, if any still open. */
  tokenOfHash(hash: string): string | undefined {
    for (const session of this.sessions.values()) if (session.tokenHash === hash) return session.tokenId;
    return undefined;
  }

  /** The token ids holding sessions now. */
  holders(): Set<string> {
    return new Set([...this.sessions.values()].map((s) => s.tokenId));
  }

  /** Closes the sessions unused since `cutoff` with nothing under way. */
  closeIdle(cutoff: number): void {
    for (const session of [...this.sessions.values()]) if (session.busy === 0 && session.lastUsed < cutoff) this.evict(session);
  }

  /** Closes every session (shutdown). */
  async closeAll(): Promise<void> {
    const open = [...this.sessions.values()];
    for (const session of open) this.drop(session);
    await Promise.all(open.map((s) => s.close().catch(() => undefined)));
  }

  private count(tokenId: string, namespace: string, by: number): void {
    bump(this.byToken, tokenId, by);
    bump(this.byNamespace, namespace, by);
    this.total += by;
  }

  private drop(session: S): void {
    if (this.sessions.get(session.id) === session) this.forget(session.id);
  }

  private evict(session: S): void {
    this.drop(session);
    void session.close().catch(() => undefined);
  }

  private leastRecentlyUsedIdle(inScope: (s: S) => boolean): S | undefined {
    let oldest: S | undefined;
    for (const s of this.sessions.values())
      if (s.busy === 0 && inScope(s) && (oldest === undefined || s.lastUsed < oldest.lastUsed)) oldest = s;
    return oldest;
  }

  /** The least recently used idle session of the token holding the most sessions in scope (the next holder when its are all busy). */
  private fromHeaviestHolder(inScope: (s: S) => boolean): S | undefined {
    const held = new Map<string, number>();
    for (const s of this.sessions.values()) if (inScope(s)) bump(held, s.tokenId, 1);
    const holders = [...held.entries()].sort((a, b) => b[1] - a[1]);
    for (const [tokenId] of holders) {
      const victim = this.leastRecentlyUsedIdle((s) => inScope(s) && s.tokenId === tokenId);
      if (victim !== undefined) return victim;
    }
    return undefined;
  }
}
