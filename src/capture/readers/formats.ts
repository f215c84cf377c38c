/**
 * Which reader a file or folder needs, told by its content (never by its name alone), and the
 * conversations of any of them as one stream: `limbic import PATH` (src/cli/import-conversations.ts).
 */
import { open, readdir, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { ERROR_CODES, MemoryError } from '../../core/errors.js';
import { parseMemoryLine } from '../../core/jsonl.js';
import { chatGptConversation } from './chatgpt.js';
import { claudeAiConversation } from './claude-ai.js';
import { readClaudeCodeTranscript } from './claude-code.js';
import { readCodexSession } from './codex.js';
import { exportBytes, isZip, jsonArrayElements, type ByteProgress } from './export-stream.js';
import { readGeminiChat } from './gemini.js';
import { readJsonlLines } from './jsonl-lines.js';
import { conversationItem, isObject, type Json, type ReadItem, skippedItem } from './read-item.js';

export const IMPORT_FORMATS = ['memory-jsonl', 'chatgpt', 'claude-ai', 'claude-code', 'codex', 'gemini'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];
/** Formats that hold conversations (everything but the official memory.jsonl). */
export type ConversationFormat = Exclude<ImportFormat, 'memory-jsonl'>;
/** Formats of one session per file, which a folder of them can hold. */
const SESSION_FORMATS: readonly ConversationFormat[] = ['claude-code', 'codex', 'gemini'];

/** What each format is and where it comes from, for help and for the refusal of a file that is none of them. */
export const FORMAT_DESCRIPTIONS: Readonly<Record<ImportFormat, string>> = {
  'memory-jsonl': 'a memory.jsonl of the official memory server (or a compatible one)',
  chatgpt: "a ChatGPT export: conversations.json, or the export's zip",
  'claude-ai': "a Claude.ai export: conversations.json, or the export's zip",
  'claude-code': 'a Claude Code transcript (~/.claude/projects/<folder>/<session>.jsonl), or a folder of them (~/.claude/projects)',
  codex: 'a Codex session (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl), or a folder of them (~/.codex/sessions)',
  gemini: 'a Gemini CLI chat (~/.gemini/tmp/<project>/chats/session-*.jsonl or .json), or a folder of them',
};

/** What a file of each format is, in a summary line ("imported 3 conversations from a ChatGPT export"). */
export const FORMAT_LABELS: Readonly<Record<ImportFormat, string>> = {
  'memory-jsonl': 'a memory.jsonl',
  chatgpt: 'a ChatGPT export',
  'claude-ai': 'a Claude.ai export',
  'claude-code': 'a Claude Code transcript',
  codex: 'a Codex session',
  gemini: 'a Gemini CLI chat',
};

export type Detected = { readonly kind: 'file'; readonly format: ImportFormat } | { readonly kind: 'directory' };

/** Bytes of a file looked at to tell how it begins. */
const HEAD_BYTES = 64 * 1024;
/** JSONL lines looked at to tell their format. */
const HEAD_LINES = 50;
/** A single JSON object (a pretty-printed chat) is parsed whole to be told; larger ones are not. */
const MAX_OBJECT_BYTES = 256 * 1024 * 1024;

async function head(path: string, bytes = HEAD_BYTES): Promise<string> {
  const file = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    const { bytesRead } = await file.read(buffer, 0, bytes, 0);
    return buffer
      .subarray(0, bytesRead)
      .toString('utf8')
      .replace(/^\uFEFF/, '');
  } finally {
    await file.close();
  }
}

/** The format one parsed JSONL line belongs to, if it says. */
function lineFormat(value: Json): ImportFormat | undefined {
  const type = value.type;
  if (type === 'session_meta' || ((type === 'response_item' || type === 'event_msg' || type === 'turn_context') && 'payload' in value))
    return 'codex';
  if (
    (type === 'user' || type === 'assistant' || type === 'system' || type === 'progress') &&
    ('parentUuid' in value || 'sessionId' in value)
  ) {
    return 'claude-code';
  }
  if (
    (type === 'summary' && 'leafUuid' in value) ||
    type === 'file-history-snapshot' ||
    type === 'queue-operation' ||
    type === 'custom-title'
  ) {
    return 'claude-code';
  }
  if (typeof value.sessionId === 'string' && typeof value.projectHash === 'string') return 'gemini';
  if (isObject(value.mapping)) return 'chatgpt';
  if (Array.isArray(value.chat_messages)) return 'claude-ai';
  const memory = parseMemoryLine(JSON.stringify(value));
  // A limbic export's own lines (ranking, co-occurrence) say so too: a memory of only those is one.
  if (memory.kind === 'entity' || memory.kind === 'relation' || memory.kind === 'ranking' || memory.kind === 'co-occurrence')
    return 'memory-jsonl';
  return undefined;
}

/** The format of a whole JSON object (a Gemini CLI `.json` chat, a single exported conversation). */
function objectFormat(value: unknown): ConversationFormat | undefined {
  if (!isObject(value)) return undefined;
  if (typeof value.sessionId === 'string' && typeof value.projectHash === 'string') return 'gemini';
  if (isObject(value.mapping)) return 'chatgpt';
  if (Array.isArray(value.chat_messages)) return 'claude-ai';
  return undefined;
}

async function firstArrayElement(path: string): Promise<{ found: boolean; value: unknown }> {
  for await (const value of jsonArrayElements(exportBytes(path), path)) return { found: true, value };
  return { found: false, value: undefined };
}

function refusal(path: string, found: string): MemoryError {
  const expected = IMPORT_FORMATS.map((f) => `  --format ${f}: ${FORMAT_DESCRIPTIONS[f]}`).join('\n');
  return new MemoryError(
    ERROR_CODES.IMPORT_FAILED,
    `${path} is not a file limbic import reads: ${found}. Nothing was imported. It reads, told by their content:\n${expected}\nIf the file is one of them, pass --format to read it as that.`,
  );
}

/** A short, printable beginning of a file for an error message. */
function preview(text: string): string {
  const first = text.trim().split('\n')[0] ?? '';
  const shown = first.length > 60 ? `${first.slice(0, 60)}…` : first;
  return JSON.stringify(shown);
}

/**
 * The format of a file (or that it is a folder), from its content; refuses (IMPORT_FAILED) a file
 * that is none of IMPORT_FORMATS, saying what it found and what was expected.
 */
export async function detectFormat(path: string): Promise<Detected> {
  if ((await stat(path)).isDirectory()) return { kind: 'directory' };
  if (await isZip(path)) {
    const first = await firstArrayElement(path);
    const format = first.found ? objectFormat(first.value) : 'chatgpt';
    if (format === 'chatgpt' || format === 'claude-ai') return { kind: 'file', format };
    throw refusal(
      path,
      'a zip whose conversations.json holds neither ChatGPT conversations (with a "mapping") nor Claude.ai ones (with "chat_messages")',
    );
  }
  const text = await head(path);
  const trimmed = text.trimStart();
  // An empty file has nothing to import, as the official memory.jsonl importer always said.
  if (trimmed === '') return { kind: 'file', format: 'memory-jsonl' };
  if (trimmed.startsWith('[')) {
    const first = await firstArrayElement(path).catch(() => undefined);
    if (first === undefined) throw refusal(path, 'it begins like a JSON array but is not valid JSON');
    if (!first.found) return { kind: 'file', format: 'chatgpt' };
    const format = objectFormat(first.value);
    if (format === 'chatgpt' || format === 'claude-ai') return { kind: 'file', format };
    throw refusal(
      path,
      'a JSON array whose first element is neither a ChatGPT conversation (with a "mapping") nor a Claude.ai one (with "chat_messages")',
    );
  }
  if (trimmed.startsWith('{')) {
    let parsedAny = false;
    let seen = 0;
    for await (const line of readJsonlLines(path)) {
      if (++seen > HEAD_LINES) break;
      if (!isObject(line.value)) continue;
      parsedAny = true;
      const format = lineFormat(line.value);
      if (format !== undefined) return { kind: 'file', format };
    }
    if (!parsedAny && (await stat(path)).size <= MAX_OBJECT_BYTES) {
      const whole = await head(path, MAX_OBJECT_BYTES);
      let value: unknown;
      try {
        value = JSON.parse(whole);
      } catch {
        value = undefined;
      }
      const format = objectFormat(value);
      if (format !== undefined) return { kind: 'file', format };
    }
    throw refusal(path, `JSON whose first lines are none of these formats (it begins ${preview(text)})`);
  }
  throw refusal(path, `not JSON (it begins ${preview(text)})`);
}

/** Files under a folder that may be sessions, in a stable order; Claude Code's subagent transcripts are not. */
async function sessionFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (at: string): Promise<void> => {
    const entries = await readdir(at, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) {
        // Claude Code keeps subagents' transcripts in <session>/subagents/; Gemini CLI nests them in chats/<session>/.
        if (entry.name !== 'subagents') await walk(path);
      } else if (entry.isFile() && (/\.jsonl$/i.test(entry.name) || /^session-.*\.json$/i.test(entry.name))) {
        // Older Claude Code wrote subagents beside the sessions as agent-<id>.jsonl.
        if (!/^agent-[^/]*\.jsonl$/i.test(entry.name)) out.push(path);
      }
    }
  };
  await walk(dir);
  return out;
}

export interface ReadProgress {
  /** The unit progress is counted in and how many there are: bytes of a file, files of a folder. */
  start(total: number, unit: 'bytes' | 'files'): void;
  update(done: number): void;
}

async function* readSessionFile(path: string, format: ConversationFormat, where: string): AsyncGenerator<ReadItem> {
  switch (format) {
    case 'claude-code': {
      const { conversations } = await readClaudeCodeTranscript(path);
      if (conversations.length === 0) yield skippedItem('no visible turns', where);
      for (const c of conversations) yield conversationItem(c);
      return;
    }
    case 'codex': {
      const { conversations } = await readCodexSession(path);
      if (conversations.length === 0) yield skippedItem('no visible turns', where);
      for (const c of conversations) yield conversationItem(c);
      return;
    }
    case 'gemini': {
      const item = await readGeminiChat(path);
      yield item.kind === 'skipped' ? { ...item, where } : item;
      return;
    }
    case 'chatgpt':
    case 'claude-ai':
      yield* readExport(path, format);
      return;
    default: {
      const _exhaustive: never = format;
      return _exhaustive;
    }
  }
}

async function* readExport(path: string, format: 'chatgpt' | 'claude-ai', onBytes?: ByteProgress): AsyncGenerator<ReadItem> {
  const toItem = format === 'chatgpt' ? chatGptConversation : claudeAiConversation;
  if (!(await isZip(path)) && (await head(path, 4096)).trimStart().startsWith('{')) {
    // One conversation on its own (a single exported or shared chat).
    if ((await stat(path)).size > MAX_OBJECT_BYTES) throw refusal(path, 'a single JSON object over 256 MB');
    yield toItem(JSON.parse(await head(path, MAX_OBJECT_BYTES)) as unknown);
    return;
  }
  for await (const raw of jsonArrayElements(exportBytes(path, onBytes), path)) yield toItem(raw);
}

/**
 * Every conversation in `path` read as `format` (a folder: each session file in it, by its own
 * content unless a format is forced), with the ones left out and why.
 */
export async function* readConversations(
  path: string,
  detected: Detected,
  options: { format?: ConversationFormat | undefined; progress?: ReadProgress | undefined } = {},
): AsyncGenerator<ReadItem> {
  const { progress } = options;
  if (detected.kind === 'file') {
    const format = options.format ?? detected.format;
    if (format === 'memory-jsonl') throw new Error('a memory.jsonl is imported by importFile, not read as conversations');
    progress?.start((await stat(path)).size, 'bytes');
    if (format === 'chatgpt' || format === 'claude-ai') yield* readExport(path, format, (n) => progress?.update(n));
    else yield* readSessionFile(path, format, path);
    progress?.update((await stat(path)).size);
    return;
  }
  const files = await sessionFiles(path);
  progress?.start(files.length, 'files');
  let done = 0;
  let recognised = 0;
  for (const file of files) {
    const where = relative(path, file);
    let format = options.format;
    if (format === undefined) {
      const found = await detectFormat(file).catch(() => undefined);
      format =
        found?.kind === 'file' && found.format !== 'memory-jsonl' && SESSION_FORMATS.includes(found.format) ? found.format : undefined;
    }
    if (format === undefined) yield skippedItem('not a session file', where);
    else {
      recognised++;
      yield* readSessionFile(file, format, where);
    }
    progress?.update(++done);
  }
  if (recognised === 0) {
    throw refusal(
      path,
      files.length === 0
        ? 'a folder with no session files (*.jsonl) in it'
        : `a folder whose ${files.length} .jsonl files are none of Claude Code's, Codex's or Gemini CLI's sessions`,
    );
  }
}
