/** A progress bar on a terminal (stderr), silence elsewhere: logs and pipes stay clean. */
import cliProgress from 'cli-progress';

export interface Progress {
  update(value: number, total?: number): void;
  stop(): void;
}

export function progressBar(label: string, total: number, unit: string): Progress {
  if (!process.stderr.isTTY) return { update: () => undefined, stop: () => undefined };
  const bar = new cliProgress.SingleBar(
    {
      format: `${label} [{bar}] {percentage}% | {value}/{total} ${unit} | {rate} ${unit}/s | eta {eta_formatted}`,
      stream: process.stderr,
      hideCursor: true,
    },
    cliProgress.Presets.shades_classic,
  );
  const started = Date.now();
  bar.start(total, 0, { rate: '0' });
  return {
    update(value, newTotal) {
      if (newTotal !== undefined) bar.setTotal(newTotal);
      const seconds = (Date.now() - started) / 1000;
      bar.update(value, { rate: seconds > 0 ? Math.round(value / seconds).toString() : '0' });
    },
    stop: () => bar.stop(),
  };
}
