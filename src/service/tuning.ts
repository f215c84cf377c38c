/**
 * The tuner as a use case: read the shadow log, run the grid (src/core/tune), and store, report or
 * forget the chosen values. The stored values are what every process's next search ranks with
 * (pipeline.ts reads them per search).
 */
import { ERROR_CODES, MemoryError } from '../core/errors.js';
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
  if (options.apply !== true || report.status !== 'tuned' || report.optimal === undefined) return base;
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
