/** `limbic reembed`: every entity embedded again with the current model, with a progress bar. */
import { availableParallelism } from 'node:os';
import type { Command } from 'commander';
import type { App } from '../app.js';
import { plural } from '../../core/text/plural.js';
import { progressBar } from '../progress.js';

export function registerReembedCommand(program: Command, app: App): void {
  program
    .command('reembed')
    .description('re-embed every entity with the current model, with a progress bar')
    .action(async () => {
      // Nothing else runs in this process: the model takes every core.
      const service = app.service(app.existingConfig('reembed'), availableParallelism());
      let bar: ReturnType<typeof progressBar> | undefined;
      const started = Date.now();
      const done = await service.reembed((n, total) => {
        bar ??= progressBar('embed', total, 'entities');
        bar.update(n, total);
      });
      bar?.stop();
      const seconds = (Date.now() - started) / 1000;
      process.stderr.write(
        `limbic: embedded ${plural(done, 'entity', 'entities')} in ${seconds.toFixed(1)} s (${(done / Math.max(seconds, 0.001)).toFixed(0)}/s)\n`,
      );
      await service.close();
    });
}
