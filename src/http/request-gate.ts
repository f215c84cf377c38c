/**
 * Bounds on requests in flight (issue 26: 200 concurrent read_graph calls took the server from
 * 458 to 1,682 MB and stalled everyone's calls for 24.6 s). A request runs when its token, its
 * namespace and the server are each under their bound; otherwise it waits in a short queue, and a
 * token whose queue is full is refused at once (429). Waiting requests start fairest first: the
 * one whose namespace, then token, has the fewest running, then the token served longest ago (round
 * robin), then the oldest, so a flooding token's backlog never stands in front of another token's
 * request. Requests start one per turn of the event loop (issue 35: a flood's requests were started
 * as soon as each was read, so the loop served all of them before it read another namespace's),
 * and the fairest of those read meanwhile goes first. A request that waited too long is refused
 * (429 when its own token is at its bound, 503 when others filled the server), with Retry-After.
 * Nothing is read from a waiting request's body, so waiting costs a socket, not memory.
 */
import { plural } from '../core/text/plural.js';

export interface RequestBounds {
  /** Requests running at once, all tokens together. */
  readonly maxInFlight: number;
  /** Requests running at once for the tokens of one namespace. */
  readonly maxInFlightPerNamespace: number;
  /** Requests running at once for one token. */
  readonly maxInFlightPerToken: number;
  /** Requests of one token waiting for a place; one more is refused at once (429). */
  readonly maxQueuedPerToken: number;
  /** How long a request may wait for a place before it is refused. */
  readonly queueWaitMs: number;
}

export type Admission =
  | { readonly ok: true; readonly release: () => void }
  | { readonly ok: false; readonly status: 429 | 503; readonly message: string; readonly retryAfterSeconds: number };

/**
 * Where http-server.ts takes a request's place: this process's RequestGate, or under
 * `serve --http --workers N` the primary's, asked over IPC (cluster-worker.ts), so the bounds hold
 * for the whole server whichever worker a request lands on.
 */
export interface Gate {
  acquire(tokenId: string, namespace: string, abandoned?: AbortSignal): Promise<Admission>;
  /** Requests waiting for a place now (for a worker: its own requests waiting for the primary's answer). */
  queued(): number;
}

/** The bounds of the heavy calls' gate (http-server.ts heavyCall), from the server's limits. */
export function heavyBounds(
  limits: RequestBounds & { readonly maxHeavyInFlight: number; readonly maxHeavyInFlightPerToken: number },
): RequestBounds {
  return {
    maxQueuedPerToken: limits.maxQueuedPerToken,
    queueWaitMs: limits.queueWaitMs,
    maxInFlight: limits.maxHeavyInFlight,
    maxInFlightPerNamespace: limits.maxHeavyInFlight,
    maxInFlightPerToken: limits.maxHeavyInFlightPerToken,
  };
}

interface Waiter {
  readonly tokenId: string;
  readonly namespace: string;
  readonly arrived: number;
  readonly settle: (admission: Admission) => void;
}

const bump = (counts: Map<string, number>, key: string, by: number): void => {
  const next = (counts.get(key) ?? 0) + by;
  if (next === 0) counts.delete(key);
  else counts.set(key, next);
};

export class RequestGate implements Gate {
  private running = 0;
  private readonly runningByToken = new Map<string, number>();
  private readonly runningByNamespace = new Map<string, number>();
  private readonly queuedByToken = new Map<string, number>();
  private readonly waiting: Waiter[] = [];
  private arrivals = 0;
  /** When each token with requests running or waiting last started one (a sequence number). */
  private readonly lastStarted = new Map<string, number>();
  private starts = 0;
  /** A dispatch is planned for the next turn of the event loop. */
  private planned = false;

  constructor(private readonly bounds: RequestBounds) {}

  /** Requests running now. */
  inFlight(): number {
    return this.running;
  }

  /** Requests waiting for a place now. */
  queued(): number {
    return this.waiting.length;
  }

  /**
   * A place for one request of `tokenId` in `namespace`: at once, after a wait, or a refusal.
   * `abandoned` (the client went away) gives up the place in the queue.
   * @example const a = await gate.acquire(token.id, token.namespace); if (a.ok) try { … } finally { a.release(); }
   */
  acquire(tokenId: string, namespace: string, abandoned?: AbortSignal): Promise<Admission> {
    const queued = this.queuedByToken.get(tokenId) ?? 0;
    const running = this.runningByToken.get(tokenId) ?? 0;
    // Its places not yet taken, plus its queue: a token's requests arriving together wait their turn without being refused.
    if (queued >= this.bounds.maxQueuedPerToken + Math.max(0, this.bounds.maxInFlightPerToken - running)) {
      return Promise.resolve({
        ok: false,
        status: 429,
        message: `This token has ${running} requests under way and ${queued} waiting, its limit (${this.bounds.maxInFlightPerToken} at once, ${this.bounds.maxQueuedPerToken} waiting); nothing was done. Retry after a second, or send fewer calls at once.`,
        retryAfterSeconds: 1,
      });
    }
    return new Promise<Admission>((resolve) => {
      const leave = (): boolean => {
        const at = this.waiting.indexOf(waiter);
        if (at < 0) return false;
        this.waiting.splice(at, 1);
        bump(this.queuedByToken, tokenId, -1);
        if (!this.runningByToken.has(tokenId) && !this.queuedByToken.has(tokenId)) this.lastStarted.delete(tokenId);
        clearTimeout(timer);
        abandoned?.removeEventListener('abort', onAbort);
        return true;
      };
      const waiter: Waiter = {
        tokenId,
        namespace,
        arrived: this.arrivals++,
        settle: (admission) => {
          leave();
          resolve(admission);
        },
      };
      const onAbort = (): void => {
        if (leave()) resolve({ ok: false, status: 503, message: 'The client went away while waiting.', retryAfterSeconds: 1 });
      };
      const timer = setTimeout(() => {
        if (!leave()) return;
        const own = (this.runningByToken.get(tokenId) ?? 0) >= this.bounds.maxInFlightPerToken;
        const seconds = Math.round(this.bounds.queueWaitMs / 1000);
        resolve(
          own
            ? {
                ok: false,
                status: 429,
                message: `This request waited ${seconds} s behind this token's own ${plural(this.bounds.maxInFlightPerToken, 'request')} under way and was not run; nothing was done. Retry later, or send fewer calls at once.`,
                retryAfterSeconds: 5,
              }
            : {
                ok: false,
                status: 503,
                message: `This request waited ${seconds} s for a place among this server's ${plural(this.bounds.maxInFlight, 'place')} (${this.bounds.maxInFlightPerNamespace} per namespace) and was not run; nothing was done. Retry shortly.`,
                retryAfterSeconds: 5,
              },
        );
      }, this.bounds.queueWaitMs);
      timer.unref();
      abandoned?.addEventListener('abort', onAbort);
      this.waiting.push(waiter);
      bump(this.queuedByToken, tokenId, 1);
      this.schedule();
    });
  }

  private fits(tokenId: string, namespace: string): boolean {
    return (
      this.running < this.bounds.maxInFlight &&
      (this.runningByNamespace.get(namespace) ?? 0) < this.bounds.maxInFlightPerNamespace &&
      (this.runningByToken.get(tokenId) ?? 0) < this.bounds.maxInFlightPerToken
    );
  }

  private start(tokenId: string, namespace: string): Admission {
    this.running++;
    this.lastStarted.set(tokenId, ++this.starts);
    bump(this.runningByToken, tokenId, 1);
    bump(this.runningByNamespace, namespace, 1);
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        this.running--;
        bump(this.runningByToken, tokenId, -1);
        bump(this.runningByNamespace, namespace, -1);
        if (!this.runningByToken.has(tokenId) && !this.queuedByToken.has(tokenId)) this.lastStarted.delete(tokenId);
        this.schedule();
      },
    };
  }

  /** Whether waiting request `a` should start before `b`. */
  private before(a: Waiter, b: Waiter): boolean {
    const busy = (this.runningByNamespace.get(a.namespace) ?? 0) - (this.runningByNamespace.get(b.namespace) ?? 0);
    if (busy !== 0) return busy < 0;
    const load = (this.runningByToken.get(a.tokenId) ?? 0) - (this.runningByToken.get(b.tokenId) ?? 0);
    if (load !== 0) return load < 0;
    const served = (this.lastStarted.get(a.tokenId) ?? 0) - (this.lastStarted.get(b.tokenId) ?? 0);
    if (served !== 0) return served < 0;
    return a.arrived < b.arrived;
  }

  /** Starts the next request on the event loop's next turn, unless that is already planned. */
  private schedule(): void {
    if (this.planned || this.waiting.length === 0) return;
    this.planned = true;
    setImmediate(() => {
      this.planned = false;
      this.dispatch();
    });
  }

  /**
   * Starts the fairest waiting request that fits (the least busy namespace, then token, then the
   * one served longest ago), one per turn of the event loop: the requests that arrive meanwhile are
   * read, authorized and ranked before the next one starts, so a flood's backlog of requests in
   * the sockets never stands in front of another token's request.
   */
  private dispatch(): void {
    let best: Waiter | undefined;
    for (const w of this.waiting) {
      if (!this.fits(w.tokenId, w.namespace)) continue;
      if (best === undefined || this.before(w, best)) best = w;
    }
    if (best === undefined) return;
    best.settle(this.start(best.tokenId, best.namespace));
    this.schedule();
  }
}
