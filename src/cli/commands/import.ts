/** `limbic import FILE`: a memory.jsonl of the official server (or a compatible one) into the memory; safe to run twice. */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { modelStateSentence } from '../../embed/model-state.js';
import type { App } from '../app.js';
import { plural } from '../../core/text/plural.js';
import { importFile } from '../import-file.js';
import { fail, print } from '../output.js';

export function registerImportCommand(program: Command, app: App): void {
  program
    .command('import')
    .description('import a memory.jsonl of the official memory server (or a compatible one); safe to run twice')
    .argument('<file>', 'the memory.jsonl to import')
    .action(async (file: string) => {
      const path = resolve(file);
      if (!existsSync(path)) {
        fail(
          new Error(
            `No file at ${path}. Pass the path of your memory.jsonl: the official server keeps it at MEMORY_FILE_PATH, or beside its dist/index.js in the npx cache.`,
          ),
        );
      }
      const service = app.service(app.config());
      const report = await importFile(service, path);
      for (const s of report.skipped.slice(0, 50)) process.stderr.write(`limbic: line ${s.line} skipped: ${s.reason}\n`);
      if (report.skipped.length > 50) process.stderr.write(`limbic: … and ${report.skipped.length - 50} more skipped lines\n`);
      const pending = (await service.statistics()).embeddings.pending;
      print({ ...report, skipped: report.skipped.length, pendingEmbeddings: pending });
      if (pending > 0) {
        // Without a model, reembed cannot help: the model's state says what will (model-state.ts).
        const model = await service.modelState();
        const next =
          model.state === 'ready'
            ? 'A running server embeds them in the background, or run "limbic reembed" now.'
            : `${modelStateSentence(model)} A running server embeds them as soon as the model is ready.`;
        process.stderr.write(`limbic: ${plural(pending, 'entity waits', 'entities wait')} for embedding. ${next}\n`);
      }
      await service.close();
    });
}
