/** `limbic export [FILE]`: the graph as memory.jsonl, exactly as the official server writes it. */
import { renameSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { formatMemoryFile } from '../../core/jsonl.js';
import type { App } from '../app.js';

export function registerExportCommand(program: Command, app: App): void {
  program
    .command('export')
    .description('write the graph as memory.jsonl, exactly as the official server writes it (stdout when no file)')
    .argument('[file]', 'where to write; written atomically')
    .action(async (file: string | undefined) => {
      const service = app.service(app.config());
      const text = formatMemoryFile(await service.readGraph());
      if (file === undefined) process.stdout.write(text);
      else {
        const target = resolve(file);
        const temp = `${target}.${process.pid}.tmp`;
        writeFileSync(temp, text);
        renameSync(temp, target);
        process.stderr.write(`limbic: wrote ${target}\n`);
      }
      await service.close();
    });
}
