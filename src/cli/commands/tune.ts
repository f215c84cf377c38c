/** `limbic tune`: how the ranking does on the logged searches, and the values that would do better (../tune.ts). */
import type { Command } from 'commander';
import type { App } from '../app.js';
import type { TuneFlags } from '../tune.js';

export function registerTuneCommand(program: Command, app: App): void {
  program
    .command('tune')
    .description('how the ranking does on the searches logged so far, and the GAMMA, BETA_SAL and RRF k that would do better')
    .option('--apply', "store the better values: every Limbic process's next search uses them")
    .option('--reset', 'forget tuned values: back to the defaults (0.01, 0.5, 60)')
    .option('--blend <share>', 'with --apply: move this share of the way to the better values (0-1)', undefined)
    .option('--min-events <n>', 'searches with feedback needed before tuning', undefined)
    .option('--json', 'print the report as JSON')
    .action(async (o: TuneFlags) => {
      const { tuneCommand } = await import('../tune.js');
      // The memory --db names, SQLite or PostgreSQL (its shadow log is in either).
      const config = app.existingConfig('tune');
      const store = app.openStore(config.dbPath, config.namespace, config);
      try {
        process.stdout.write(await tuneCommand(store, o, Date.now()));
      } finally {
        await store.close();
      }
    });
}
