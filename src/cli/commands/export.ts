/**
 * `limbic export [FILE]`: the memory as a memory.jsonl the official server reads, with every field
 * Limbic keeps (export-memory.ts); `--official` writes the official shape alone.
 */
import type { Command } from 'commander';
import type { App } from '../app.js';
import { exportMemory } from '../export-memory.js';
import { exportTarget, refuseOwnDatabase, writeExport } from '../export-file.js';

export function registerExportCommand(program: Command, app: App): void {
  program
    .command('export')
    .description(
      'write the memory as a memory.jsonl the official server reads, with every field Limbic keeps (kinds, history, statuses, times, context, ranking) as extra keys it ignores; stdout when no file',
    )
    .argument(
      '[file]',
      'where to write: a file is replaced atomically, a symlink is written through (it stays a link), a device or FIFO is written to',
    )
    .option('--official', 'write only the official fields, byte for byte as the official server would (Limbic-only fields are left out)')
    .action(async (file: string | undefined, options: { official?: boolean }) => {
      // Both checked before anything is opened: a bad path or a missing memory leaves nothing behind.
      const target = file === undefined ? undefined : exportTarget(file);
      const config = app.existingConfig('export');
      if (target !== undefined) refuseOwnDatabase(target, config.dbPath);
      const service = app.service(config);
      try {
        const text = await exportMemory(service, { official: options.official === true });
        if (target === undefined) process.stdout.write(text);
        else process.stderr.write(`limbic: wrote ${writeExport(target, text)}\n`);
      } finally {
        await service.close();
      }
    });
}
