/** `limbic export [FILE]`: the graph as memory.jsonl, exactly as the official server writes it. */
import type { Command } from 'commander';
import { formatMemoryFile } from '../../core/jsonl.js';
import type { App } from '../app.js';
import { exportTarget, refuseOwnDatabase, writeExport } from '../export-file.js';

export function registerExportCommand(program: Command, app: App): void {
  program
    .command('export')
    .description('write the graph as memory.jsonl, exactly as the official server writes it (stdout when no file)')
    .argument(
      '[file]',
      'where to write: a file is replaced atomically, a symlink is written through (it stays a link), a device or FIFO is written to',
    )
    .action(async (file: string | undefined) => {
      // Both checked before anything is opened: a bad path or a missing memory leaves nothing behind.
      const target = file === undefined ? undefined : exportTarget(file);
      const config = app.existingConfig('export');
      if (target !== undefined) refuseOwnDatabase(target, config.dbPath);
      const service = app.service(config);
      try {
        const text = formatMemoryFile(await service.readGraph());
        if (target === undefined) process.stdout.write(text);
        else process.stderr.write(`limbic: wrote ${writeExport(target, text)}\n`);
      } finally {
        await service.close();
      }
    });
}
