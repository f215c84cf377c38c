/**
 * The tuner as a use case: read the shadow log, run the grid (src/core/tune), and store, report or
 * forget the chosen values. The stored values are what every process's next search ranks with
 * (pipeline.ts reads them per search). The server may also tune periodically (startAutoTune).
 */
import { ERROR_CODES, MemoryError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { DEFAULT_PARAMETERS, type ParametersInForce, type RankParameters } from '../core/tune/shadow.js';
import { blendParameters, tune, type Grid, type TuneReport } from '../core/tune/tuner.js';
import type { Store } from '../store/store.js';

export interface TuneOptions {
  /** Store the chosen values (status "tuned" only). */
  readonly apply?: boolean;
  /** Share of the way from the values in force to the optimal ones that --apply moves. @default 1 */
  readonly blend?: number;
  readonly grid?: Grid;
  readonly minEvents?: number;
}

export interface TuneOutcome extends TuneReport {
  readonly in_force: { readonly source: 'default' | 'tuned'; readonly tuned_at: string | null };
  /** What --apply stored; absent when nothing was stored. */
  readonly applied?: RankParameters & { readonly blend: number };
}

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

/** The values every search ranks with now, and their source. */
export async function parametersInForce(store: Store): Promise<ParametersInForce> {
  return (await store.tuning?.parameters()) ?? { ...DEFAULT_PARAMETERS, source: 'default', tunedAt: undefined };
}

function requireTuning(store: Store): NonNullable<Store['tuning']> {
  if (store.tuning !== undefined) return store.tuning;
  throw new MemoryError(
    ERROR_CODES.INVALID_INPUT,
    'This storage backend keeps no shadow log, so there is nothing to tune from; searches rank with the default parameters. Use the SQLite backend to tune.',
  );
}

/** `limbic tune` and `limbic tune --apply`. */
export async function runTune(store: Store, options: TuneOptions, now: number): Promise<TuneOutcome> {
  const tuning = requireTuning(store);
  const inForce = await parametersInForce(store);
  const current: RankParameters = { gamma: inForce.gamma, betaSal: inForce.betaSal, rrfK: inForce.rrfK };
  const report = tune(await tuning.shadowEvents(), current, {
    ...(options.grid === undefined ? {} : { grid: options.grid }),
    ...(options.minEvents === undefined ? {} : { minEvents: options.minEvents }),
  });
  const base = { ...report, in_force: { source: inForce.source, tuned_at: iso(inForce.tunedAt) } };
  // A positive gain is implied by "tuned" (ties keep the values in force); checked so it stays so.
  if (options.apply !== true || report.status !== 'tuned' || report.optimal === undefined || !((report.gain ?? 0) > 0)) return base;
  const blend = options.blend ?? 1;
  const applied = blendParameters(current, report.optimal, blend);
  await tuning.setParameters(applied, now);
  return { ...base, in_force: { source: 'tuned', tuned_at: iso(now) }, applied: { ...applied, blend } };
}

/** `limbic tune --reset`: back to the spec's defaults; resolves to them. */
export async function resetTune(store: Store): Promise<ParametersInForce> {
  await requireTuning(store).resetParameters();
  return parametersInForce(store);
}

/** The server's periodic tune (off unless LIMBIC_AUTO_TUNE_MINUTES is set); see startAutoTune. */
export interface AutoTune {
  /** One tune now; what it decided. The timer calls it; tests call it directly. */
  tick(): Promise<TuneOutcome | undefined>;
  stop(): void;
}

/** Minutes between periodic tunes from `env` (the composition root passes the process's), or undefined (off, the default). */
export function autoTuneMinutes(env: Readonly<Record<string, string | undefined>>): number | undefined {
  const raw = env.LIMBIC_AUTO_TUNE_MINUTES;
  if (raw === undefined || raw.trim() === '' || raw.trim() === '0') return undefined;
  const n = Number(raw);
  if (!(Number.isFinite(n) && n >= 1))
    throw new MemoryError(
      ERROR_CODES.INVALID_INPUT,
      `LIMBIC_AUTO_TUNE_MINUTES=${raw} is not a number of minutes of at least 1; unset it (or set 0) to leave periodic tuning off.`,
    );
  return n;
}

/**
 * Tunes every `minutes` and applies only what `limbic tune --apply` would: the spec's minimum of
 * searches with feedback met, and a cell strictly better than the values in force. A failed tune
 * is logged and tried again at the next tick; it never stops the server. The timer is unref'd, so
 * it never keeps a process alive.
 */
export function startAutoTune(store: Store, minutes: number, log: Logger, clock: () => number = Date.now): AutoTune {
  let running = false;
  const tick = async (): Promise<TuneOutcome | undefined> => {
    if (running || store.tuning === undefined) return undefined;
    running = true;
    try {
      const outcome = await runTune(store, { apply: true }, clock());
      if (outcome.applied !== undefined)
        log.info(
          `periodic tune applied GAMMA ${outcome.applied.gamma}, BETA_SAL ${outcome.applied.betaSal}, RRF k ${outcome.applied.rrfK} (NDCG@5 gain ${outcome.gain ?? 0} over ${outcome.events.withFeedback} searches)`,
        );
      return outcome;
    } catch (error) {
      log.warn('periodic tune failed; the values in force are unchanged and it will run again', error);
      return undefined;
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void tick(), minutes * 60_000);
  timer.unref();
  return { tick, stop: () => clearInterval(timer) };
}
