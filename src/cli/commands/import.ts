/**
 * `limbic import PATH`: the official memory.jsonl (or a compatible one), or chat history — a
 * ChatGPT or Claude.ai export, Claude Code, Codex or Gemini CLI sessions, a folder of them — told
 * by its content or by `--format`. Safe to run twice; a file that is none of them is refused.
 */
import { closeSync, existsSync, openSync, statSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { detectFormat, FORMAT_DESCRIPTIONS, IMPORT_FORMATS, type Detected, type ImportFormat } from '../../capture/readers/formats.js';
import { plural } from '../../core/text/plural.js';
import { modelStateSentence } from '../../embed/model-state.js';
import type { App } from '../app.js';
import { importConversations, summaryLine } from '../import-conversations.js';
import { importFile, type ImportReport } from '../import-file.js';
import { fail, print } from '../output.js';

/** Left-out items named one by one on stderr, then only counted. */
const NAMED_SKIPS = 50;

export function registerImportCommand(program: Command, app: App): void {
  program
    .command('import')
    .description(
      'import a memory.jsonl of the official memory server, or chat history: a ChatGPT or Claude.ai export (conversations.json or its zip), Claude Code, Codex or Gemini CLI sessions (a file or their folder); safe to run twice',
    )
    .argument('<path>', 'the file or folder to import (its format is told by its content)')
    .addOption(
      new Option(
        '--format <format>',
        `read it as this format: ${IMPORT_FORMATS.map((f) => `${f} (${FORMAT_DESCRIPTIONS[f]})`).join('; ')}`,
      ).choices(IMPORT_FORMATS),
    )
    .option(
      '--report <file>',
      `memory.jsonl: write every line not stored as written (merged, type not kept, repeated observation dropped, type missing) to this file, one JSON object a line; stderr names the first ${NAMED_SKIPS}`,
    )
    .action(async (file: string, options: { format?: ImportFormat; report?: string }) => {
      const path = resolve(file);
      if (!existsSync(path)) {
        fail(
          new Error(
            `No file at ${path}. Pass the path of your memory.jsonl (the official server keeps it at MEMORY_FILE_PATH, or beside its dist/index.js in the npx cache), of a ChatGPT or Claude.ai export, or of a folder of sessions (~/.claude/projects, ~/.codex/sessions, ~/.gemini/tmp).`,
          ),
        );
      }
      let detected: Detected;
      try {
        const isFolder = statSync(path).isDirectory();
        if (options.format === 'memory-jsonl' && isFolder)
          throw new Error(`${path} is a folder; --format memory-jsonl reads one memory.jsonl file.`);
        detected = isFolder
          ? { kind: 'directory' }
          : options.format !== undefined
            ? { kind: 'file', format: options.format }
            : await detectFormat(path);
      } catch (error) {
        fail(error);
      }
      const service = app.service(app.config());
      try {
        if (detected.kind === 'file' && detected.format === 'memory-jsonl') await importMemoryJsonl(service, path, options.report);
        else {
          let named = 0;
          const report = await importConversations(service, path, detected, {
            format: options.format === 'memory-jsonl' ? undefined : options.format,
            home: app.where().home,
            onSkipped: (reason, where) => {
              if (++named <= NAMED_SKIPS)
                process.stderr.write(`limbic: skipped ${where === undefined ? 'an item' : JSON.stringify(where)}: ${reason}\n`);
            },
          });
          print(report);
          process.stderr.write(`limbic: ${summaryLine(report)}.\n`);
          await sayPendingEmbeddings(service);
        }
      } catch (error) {
        await service.close();
        fail(error);
      }
      await service.close();
    });
}

async function importMemoryJsonl(service: ReturnType<App['service']>, path: string, reportPath: string | undefined): Promise<void> {
  // Every note goes to the report file as it comes (thousands stay out of memory); stderr names the first ones.
  const reportFile = reportPath === undefined ? undefined : openReport(reportPath);
  let told = 0;
  let report: ImportReport;
  try {
    report = await importFile(service, path, {
      onNote: (note) => {
        if (reportFile !== undefined) writeSync(reportFile, `${JSON.stringify(note)}\n`);
        if (++told <= NAMED_SKIPS)
          process.stderr.write(`limbic: line ${note.line} ${JSON.stringify(note.name)} not stored as written: ${note.notes.join('; ')}\n`);
      },
    });
  } finally {
    if (reportFile !== undefined) closeSync(reportFile);
  }
  if (told > NAMED_SKIPS)
    process.stderr.write(
      `limbic: … and ${told - NAMED_SKIPS} more lines not stored as written${reportPath === undefined ? ' (--report FILE lists them all)' : ''}\n`,
    );
  if (reportPath !== undefined)
    process.stderr.write(`limbic: ${plural(told, 'line', 'lines')} not stored as written listed in ${resolve(reportPath)}\n`);
  for (const s of report.skipped.slice(0, NAMED_SKIPS)) process.stderr.write(`limbic: line ${s.line} skipped: ${s.reason}\n`);
  if (report.skipped.length > NAMED_SKIPS)
    process.stderr.write(`limbic: … and ${report.skipped.length - NAMED_SKIPS} more skipped lines\n`);
  const pending = (await service.statistics()).embeddings.pending;
  print({ ...report, skipped: report.skipped.length, pendingEmbeddings: pending });
  await sayPendingEmbeddings(service, pending);
}

/** The --report file, made private (it quotes the memory's text). */
function openReport(path: string): number {
  try {
    return openSync(path, 'w', 0o600);
  } catch (error) {
    throw new Error(`Cannot write the import report to ${resolve(path)}: ${(error as Error).message}. Choose another --report path.`, {
      cause: error,
    });
  }
}

async function sayPendingEmbeddings(service: ReturnType<App['service']>, known?: number): Promise<void> {
  const pending = known ?? (await service.statistics()).embeddings.pending;
  if (pending > 0) {
    // Without a model, reembed cannot help: the model's state says what will (model-state.ts).
    const model = await service.modelState();
    const next =
      model.state === 'ready'
        ? 'A running server embeds them in the background, or run "limbic reembed" now.'
        : `${modelStateSentence(model)} A running server embeds them as soon as the model is ready.`;
    process.stderr.write(`limbic: ${plural(pending, 'entity waits', 'entities wait')} for embedding. ${next}\n`);
  }
}
