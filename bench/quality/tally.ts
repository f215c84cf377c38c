/**
 * Scores kept by mode, half (A = where parameters are chosen, B = held out) and group (a LoCoMo
 * category, an XQuAD or small-memory language direction), printed as one markdown table per half.
 */
import type { EntityId } from '../../src/core/types.js';
import { emptyScores, f3, mean, score, type Scores } from './harness.js';

export type Half = 'A' | 'B';
export const HALVES: readonly Half[] = ['A', 'B'];

/** Metrics a table shows, in order; every table also shows n. */
export type Metric = Exclude<keyof Scores, 'n'>;
const HEADERS: Record<Metric, string> = {
  recall5: 'recall@5',
  recall10: 'recall@10',
  hit1: 'hit@1',
  hit5: 'hit@5',
  hit10: 'hit@10',
  mrr: 'MRR',
};

export class Tally {
  private readonly cells = new Map<string, Scores>();
  private readonly modes: string[] = [];

  /** Adds one question's ranking to its group and to the half's `all` (and to any extra totals). */
  add(mode: string, half: Half, groups: readonly string[], ranked: readonly EntityId[], gold: ReadonlySet<EntityId>): void {
    if (!this.modes.includes(mode)) this.modes.push(mode);
    for (const group of groups) {
      const key = `${mode}\u0000${half}\u0000${group}`;
      let s = this.cells.get(key);
      if (s === undefined) this.cells.set(key, (s = emptyScores()));
      score(s, ranked, gold);
    }
  }

  get(mode: string, half: Half, group: string): Scores | undefined {
    return this.cells.get(`${mode}\u0000${half}\u0000${group}`);
  }

  mean(mode: string, half: Half, group: string, metric: Metric): number {
    const s = this.get(mode, half, group);
    return s === undefined ? NaN : mean(s)[metric];
  }

  /** One table per half: a row per mode and group (groups in the order given, `labels` naming them; totals start with "all"). */
  table(
    half: Half,
    groups: readonly string[],
    metrics: readonly Metric[],
    labels: Readonly<Record<string, string>> = {},
    modes = this.modes,
  ): string {
    const lines = [
      `| mode | ${half === 'A' ? 'half A (tuning)' : 'half B (held out)'} | n | ${metrics.map((m) => HEADERS[m]).join(' | ')} |`,
      `|---|---|---|${metrics.map(() => '---|').join('')}`,
    ];
    for (const mode of modes) {
      for (const group of groups) {
        const s = this.get(mode, half, group);
        if (s === undefined) continue;
        const m = mean(s);
        const label = labels[group] ?? group;
        const strong = group.startsWith('all');
        lines.push(
          `| ${strong ? `**${mode}**` : mode} | ${strong ? `**${label}**` : label} | ${s.n} | ${metrics.map((k) => f3(m[k])).join(' | ')} |`,
        );
      }
    }
    return lines.join('\n');
  }
}
