/** `limbic stats`: counts, database size and index state; readable at a terminal, JSON otherwise. */
import type { Command } from 'commander';
import type { App } from '../app.js';
import { print } from '../output.js';
import { statsText, wantsJson } from '../readable.js';

export function registerStatsCommand(program: Command, app: App): void {
  program
    .command('stats')
    .description('counts, database size and index state (JSON with --json, or when not printing to a terminal)')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      const service = app.service(app.existingConfig('stats'));
      const stats = await service.statistics();
      if (wantsJson(o.json, process.stdout.isTTY)) print(stats);
      else process.stdout.write(statsText(stats));
      await service.close();
    });
}
