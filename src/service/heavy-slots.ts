/**
 * Backpressure for the heavy maintenance tools (seed-system.md §1.0): a bounded number run at once,
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

/** Reads LIMBIC_HEAVY_TOOL_SLOTS and LIMBIC_HEAVY_TOOL_WAIT_MS; bad or missing values give the defaults. */
export function heavySlotOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): HeavySlotOptions {
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

export class HeavySlots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

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
      const grant = (): void => {
        clearTimeout(timer);
        this.running++;
        resolve();
      };
      const timer = setTimeout(() => {
        const at = this.waiting.indexOf(grant);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(new HeavyBusyError(this.options.slots));
      }, this.options.waitMs);
      this.waiting.push(grant);
    });
  }

  private release(): void {
    this.running--;
    this.waiting.shift()?.();
  }
}
