/**
 * `limbic tune`: reports how the ranking does on the shadow log and which GAMMA, BETA_SAL and RRF k
 * would do better; `--apply` stores them (every Limbic process's next search uses them), `--reset`
 * returns to the spec's defaults. commands/tune.ts opens the store and registers the command.
 */
import { MemoryError, ERROR_CODES } from '../core/errors.js';
import { plural } from '../core/text/plural.js';
import { runTune, resetTune, type TuneOutcome } from '../service/tuning.js';
import type { Store } from '../store/store.js';

export interface TuneFlags {
  readonly apply?: boolean;
  readonly reset?: boolean;
  readonly blend?: string;
  readonly minEvents?: string;
  readonly json?: boolean;
}

function share(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!(n > 0 && n <= 1))
    throw new MemoryError(
      ERROR_CODES.INVALID_INPUT,
      `--blend ${text} is not a share: give a number above 0 and at most 1 (1 stores the optimal values).`,
    );
  return n;
}

function whole(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1)
    throw new MemoryError(ERROR_CODES.INVALID_INPUT, `--min-events ${text} is not a whole number of at least 1.`);
  return n;
}

const params = (p: { gamma: number; betaSal: number; rrfK: number }): string => `GAMMA ${p.gamma}, BETA_SAL ${p.betaSal}, RRF k ${p.rrfK}`;

function formatOutcome(o: TuneOutcome): string {
  const lines = [
    `in force: ${params(o.current)} (${o.in_force.source === 'default' ? 'defaults' : `tuned at ${o.in_force.tuned_at ?? '?'}`})`,
    `shadow log: ${plural(o.events.logged, 'search', 'searches')}, ${o.events.withFeedback} with a result opened afterwards (${o.events.rrfTunable} fused by RRF, where k matters)`,
    `current: NDCG@1 ${o.current.metrics['ndcg@1']}, NDCG@5 ${o.current.metrics['ndcg@5']}, Lift@5 ${o.current.metrics['lift@5']}; base relevance alone: NDCG@5 ${o.current.baseline['ndcg@5']}`,
  ];
  if (o.optimal !== undefined) lines.push(`optimal: ${params(o.optimal)}: NDCG@5 ${o.optimal['ndcg@5']} (gain ${o.gain ?? 0})`);
  if (o.reason !== undefined) lines.push(`${o.status}: ${o.reason}`);
  else if (o.applied !== undefined) lines.push(`applied: ${params(o.applied)}; every Limbic process's next search uses them`);
  else if (o.status === 'tuned') lines.push('run "limbic tune --apply" to use these values');
  return `${lines.join('\n')}\n`;
}

/** Runs the command over an open store; resolves to what to print. */
export async function tuneCommand(store: Store, flags: TuneFlags, now: number): Promise<string> {
  if (flags.reset === true) {
    if (flags.apply === true) throw new MemoryError(ERROR_CODES.INVALID_INPUT, '--reset and --apply contradict each other: give one.');
    const p = await resetTune(store);
    return flags.json === true
      ? `${JSON.stringify({ status: 'reset', gamma: p.gamma, beta_sal: p.betaSal, rrf_k: p.rrfK, source: p.source }, null, 2)}\n`
      : `reset: ${params(p)} (defaults)\n`;
  }
  const blend = share(flags.blend);
  const minEvents = whole(flags.minEvents);
  const outcome = await runTune(
    store,
    { apply: flags.apply === true, ...(blend === undefined ? {} : { blend }), ...(minEvents === undefined ? {} : { minEvents }) },
    now,
  );
  return flags.json === true ? `${JSON.stringify(outcome, null, 2)}\n` : formatOutcome(outcome);
}
