/**
 * `limbic import PATH` for conversations (docs/import.md): a chat export or a folder of coding
 * sessions, read one conversation at a time (src/capture/readers/), each stored through
 * service.capture in the project its folder resolves to (src/capture/project.ts) — redacted, dated
 * when each turn happened, each turn once, so importing the same export again adds nothing.
 */
import type { Project } from '../capture/project.js';
import { resolveProject } from '../capture/project.js';
import { FORMAT_LABELS, readConversations, type ConversationFormat, type Detected } from '../capture/readers/formats.js';
import type { MemoryService } from '../service/memory-service.js';
import { compactIndexes } from './import-file.js';
import { progressBar, type Progress } from './progress.js';

export interface ConversationImportReport {
  /** What was read: a format, or "folder" for a folder of sessions. */
  readonly format: ConversationFormat | 'folder';
  /** Conversations read and handed to capture (some may have added nothing: imported before). */
  readonly conversations: number;
  /** Their turns as the readers gave them, each tool call counted as one (capture stores each as one observation). */
  readonly turns: number;
  /** Observations stored: a user turn, a reply, a tool summary each. */
  readonly turnsAdded: number;
  /** Turns not stored: stored already (an earlier import or capture), or bare acknowledgements. */
  readonly turnsSkipped: number;
  /** Secrets replaced by `[REDACTED:type]`, by type (never the values). */
  readonly redactions: Readonly<Record<string, number>>;
  /** Conversations (or files) left out, by reason. */
  readonly skipped: Readonly<Record<string, number>>;
  /** Projects the conversations went to (conversations without a folder stay outside any). */
  readonly projects: number;
  /** False when another process kept the keyword indexes from being compacted (the data is saved). */
  readonly compacted: boolean;
}

export interface ImportConversationOptions {
  /** Forces the format (`--format`); otherwise each file's own. */
  readonly format?: ConversationFormat | undefined;
  /** The user's home folder: a conversation run there belongs to no project. */
  readonly home: string;
  /** Called with each left-out item, to say which on stderr. */
  readonly onSkipped?: ((reason: string, where: string | undefined) => void) | undefined;
}

const sum = (values: Iterable<number>): number => [...values].reduce((a, b) => a + b, 0);

/** The line that ends an import, in words: what was read, stored, redacted and left out, and why. */
export function summaryLine(report: ConversationImportReport): string {
  const what = report.format === 'folder' ? 'a folder of sessions' : FORMAT_LABELS[report.format];
  const plural = (n: number, one: string, many = `${one}s`): string => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
  const list = (counts: Readonly<Record<string, number>>): string =>
    Object.entries(counts)
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .map(([k, n]) => `${n} ${k}`)
      .join(', ');
  const redacted = sum(Object.values(report.redactions));
  const skipped = sum(Object.values(report.skipped));
  return [
    `imported ${plural(report.conversations, 'conversation')} from ${what}`,
    `${plural(report.turns, 'turn')} read: ${report.turnsAdded.toLocaleString('en-US')} stored, ${report.turnsSkipped.toLocaleString('en-US')} not (already stored, or only an acknowledgement)`,
    redacted === 0 ? 'no secret redacted' : `${plural(redacted, 'secret')} redacted (${list(report.redactions)})`,
    skipped === 0 ? 'nothing skipped' : `${plural(skipped, 'item')} skipped (${list(report.skipped)})`,
  ].join('; ');
}

/**
 * Reads `path` (a file of `detected` format, or a folder of sessions) and captures every
 * conversation in it; the keyword indexes are compacted at the end, as the memory.jsonl import does.
 */
export async function importConversations(
  service: MemoryService,
  path: string,
  detected: Detected,
  options: ImportConversationOptions,
): Promise<ConversationImportReport> {
  const projects = new Map<string, Promise<Project | undefined>>();
  const projectOf = (cwd: string | undefined): Promise<Project | undefined> => {
    if (cwd === undefined) return Promise.resolve(undefined);
    let found = projects.get(cwd);
    if (found === undefined) {
      found = resolveProject(cwd, { home: options.home });
      projects.set(cwd, found);
    }
    return found;
  };
  const used = new Set<string>();
  const redactions = new Map<string, number>();
  const skipped = new Map<string, number>();
  let conversations = 0;
  let turns = 0;
  let turnsAdded = 0;
  let turnsSkipped = 0;
  let bar: Progress | undefined;
  const progress = {
    start: (total: number, unit: 'bytes' | 'files') => {
      bar = progressBar('import', total, unit);
    },
    update: (done: number) => bar?.update(done),
  };
  try {
    for await (const item of readConversations(path, detected, { format: options.format, progress })) {
      if (item.kind === 'skipped') {
        skipped.set(item.reason, (skipped.get(item.reason) ?? 0) + 1);
        options.onSkipped?.(item.reason, item.where);
        continue;
      }
      const { conversation } = item;
      const project = await projectOf(conversation.cwd);
      const result = await service.capture(conversation, project);
      conversations++;
      turns += sum(conversation.turns.map((t) => (t.text.trim() === '' ? 0 : 1) + (t.tools?.length ?? 0)));
      turnsAdded += result.turnsAdded;
      turnsSkipped += result.turnsSkipped;
      for (const r of result.redactions) redactions.set(r.type, (redactions.get(r.type) ?? 0) + r.count);
      if (project !== undefined) used.add(project.key);
    }
  } finally {
    bar?.stop();
  }
  const compacted = await compactIndexes(service);
  return {
    format: detected.kind === 'directory' ? 'folder' : (options.format ?? (detected.format as ConversationFormat)),
    conversations,
    turns,
    turnsAdded,
    turnsSkipped,
    redactions: Object.fromEntries(redactions),
    skipped: Object.fromEntries(skipped),
    projects: used.size,
    compacted,
  };
}
