/**
 * Backpressure for the heavy maintenance tools (docs/tools.md, "Maintenance"): a bounded number run at once,
 * a call waits a short while for a slot, and otherwise is answered "busy, retry" at once instead of
 * queueing behind minutes of embedding work.
 */
import { ERROR_CODES, MemoryError } from '../core/errors.js';

export interface HeavySlotOptions {
  /** Heavy calls running at once. @default 1 */
  readonly slots: number;
  /** How long a call waits for a slot before it is answered busy. @default 2000 */
  readonly waitMs: number;
}

/** The busy answer: a MemoryError the MCP layer turns into a retryable isError result. */
export class HeavyBusyError extends MemoryError {
  readonly retryable = true;
  constructor(readonly slots: number) {
    super(
      ERROR_CODES.STORE_BUSY,
      `Server busy: too many heavy maintenance operations are running (limit=${slots}). Nothing was done; retry in a few seconds.`,
    );
  }
}

/** Reads LIMBIC_HEAVY_TOOL_SLOTS and LIMBIC_HEAVY_TOOL_WAIT_MS from `env` (the composition root passes the process's); bad or missing values give the defaults. */
export function heavySlotOptionsFromEnv(env: Readonly<Record<string, string | undefined>>): HeavySlotOptions {
  const slots = Number(env.LIMBIC_HEAVY_TOOL_SLOTS);
  const waitMs = Number(env.LIMBIC_HEAVY_TOOL_WAIT_MS);
  return {
    slots: Number.isInteger(slots) && slots >= 1 ? slots : 1,
    waitMs:
      env.LIMBIC_HEAVY_TOOL_WAIT_MS !== undefined && env.LIMBIC_HEAVY_TOOL_WAIT_MS !== '' && Number.isFinite(waitMs) && waitMs >= 0
        ? waitMs
        : 2000,
  };
}

interface Waiter {
  readonly grant: () => void;
  readonly refuse: () => void;
  /** performance.now() after which the wait has run out, whether or not its timer could fire. */
  readonly deadline: number;
}

export class HeavySlots {
  private running = 0;
  private readonly waiting: Waiter[] = [];

  constructor(readonly options: HeavySlotOptions) {}

  /** Runs fn in a slot, or throws HeavyBusyError when none frees up within the wait. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await fn();
    } finally {
      this.release();
    }
  }

  private acquire(): Promise<void> {
    if (this.running < this.options.slots) {
      this.running++;
      return Promise.resolve();
    }
    if (this.options.waitMs <= 0) return Promise.reject(new HeavyBusyError(this.options.slots));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          clearTimeout(timer);
          this.running++;
          resolve();
        },
        refuse: () => {
          clearTimeout(timer);
          reject(new HeavyBusyError(this.options.slots));
        },
        deadline: performance.now() + this.options.waitMs,
      };
      const timer = setTimeout(() => {
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
        waiter.refuse();
      }, this.options.waitMs);
      this.waiting.push(waiter);
    });
  }

  /**
   * Frees a slot for the first waiter whose wait has not run out. A heavy call that holds the
   * thread (no model: all of it is synchronous work) keeps the waiters' timers from firing, so a
   * waiter whose time ran out meanwhile is answered busy here, as its timer would have (issue 25).
   */
  private release(): void {
    this.running--;
    for (let next = this.waiting.shift(); next !== undefined; next = this.waiting.shift()) {
      if (performance.now() <= next.deadline) {
        next.grant();
        return;
      }
      next.refuse();
    }
  }
}
