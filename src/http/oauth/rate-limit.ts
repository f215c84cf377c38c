/**
 * Sliding-window counters for what an attacker on the internet could repeat: wrong approval codes
 * on the consent page (per address and per process). In memory, per server: the primary of
 * `serve --http --workers N` holds the one its workers ask (cluster-worker.ts); each server of a
 * load-balanced set bounds its own share, and the codes' 60 random bits and short life do the rest.
 */

export class SlidingWindow {
  private readonly hits = new Map<string, number[]>();

  /** At most `limit` hits per key within `windowMs`. */
  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  /** Whether `key` has used up its hits at `now`. */
  full(key: string, now: number): boolean {
    return this.recent(key, now).length >= this.limit;
  }

  /** Records a hit of `key` at `now`. */
  hit(key: string, now: number): void {
    const recent = this.recent(key, now);
    recent.push(now);
    this.hits.set(key, recent.slice(-this.limit));
    if (this.hits.size > 10_000) this.forgetOld(now);
  }

  /** Milliseconds until `key` has a hit to spare again (0 when it has one now). */
  retryAfterMs(key: string, now: number): number {
    const recent = this.recent(key, now);
    if (recent.length < this.limit) return 0;
    return Math.max(0, (recent[recent.length - this.limit] ?? now) + this.windowMs - now);
  }

  private recent(key: string, now: number): number[] {
    return (this.hits.get(key) ?? []).filter((t) => t > now - this.windowMs);
  }

  private forgetOld(now: number): void {
    for (const [key, times] of this.hits) if (times.every((t) => t <= now - this.windowMs)) this.hits.delete(key);
  }
}

/**
 * What the consent page asks before it checks a typed code, and tells after a wrong one: this
 * process's WrongCodeLimiter, or under `serve --http --workers N` the primary's, asked over IPC
 * (cluster-worker.ts), so the bounds are the server's whichever worker a browser's form lands on.
 */
export interface WrongCodeBound {
  /** Seconds to wait when `address` may not try a code now; undefined when it may. */
  refusal(address: string, now: number): Promise<number | undefined> | number | undefined;
  wrong(address: string, now: number): void;
}

/** Wrong codes typed on the consent page: 5 per address per 10 minutes, 30 per process per minute (under `--workers N` the primary holds the one of the server). */
export class WrongCodeLimiter implements WrongCodeBound {
  private readonly perAddress = new SlidingWindow(5, 10 * 60_000);
  private readonly perProcess = new SlidingWindow(30, 60_000);

  /** Seconds to wait when `address` may not try a code now; undefined when it may. */
  refusal(address: string, now: number): number | undefined {
    const wait = Math.max(this.perAddress.retryAfterMs(address, now), this.perProcess.retryAfterMs('', now));
    return wait > 0 ? Math.ceil(wait / 1000) : undefined;
  }

  wrong(address: string, now: number): void {
    this.perAddress.hit(address, now);
    this.perProcess.hit('', now);
  }
}
