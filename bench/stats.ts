/** What the latency benches (bench/latency/run.ts, bench/postgres.ts) report of a set of timings. */

export interface Stat {
  p50: number;
  p95: number;
}

/** Median and 95th percentile of the timings (NaN for none). */
export const stat = (xs: number[]): Stat => {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: s[Math.floor(s.length / 2)] ?? NaN, p95: s[Math.min(s.length - 1, Math.floor(s.length * 0.95))] ?? NaN };
};

/** Milliseconds with three significant digits at most (0.42, 4.21, 42.1, 421). */
export const fmt = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
