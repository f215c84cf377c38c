/** `limbic consolidate`: reflections written from clusters of related entities (no LLM). */
import type { Command } from 'commander';
import type { App } from '../app.js';
import { print } from '../output.js';

export function registerConsolidateCommand(program: Command, app: App): void {
  program
    .command('consolidate')
    .description('write reflections: clusters of related entities (by meaning and co-occurrence, no LLM), one reflection entity each')
    .option('--max-entities <n>', 'entities read, newest first (default 500)')
    .option('--min-size <n>', 'entities a cluster needs to become a reflection (default 3)')
    .option('--dry-run', 'say what would be written, writing nothing')
    .action(async (o: { maxEntities?: string; minSize?: string; dryRun?: boolean }) => {
      for (const [flag, value] of [
        ['--max-entities', o.maxEntities],
        ['--min-size', o.minSize],
      ] as const) {
        if (value !== undefined && !(Number.isInteger(Number(value)) && Number(value) >= 2)) {
          process.stderr.write(`limbic: ${flag} must be a whole number of at least 2, not ${JSON.stringify(value)}\n`);
          process.exitCode = 2;
          return;
        }
      }
      const service = app.service(app.existingConfig('consolidate'));
      try {
        print(
          await service.reflections.consolidate({
            ...(o.maxEntities === undefined ? {} : { maxEntities: Number(o.maxEntities) }),
            ...(o.minSize === undefined ? {} : { minSize: Number(o.minSize) }),
            ...(o.dryRun === true ? { dryRun: true } : {}),
          }),
        );
      } finally {
        await service.close();
      }
    });
}
