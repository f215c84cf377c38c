/**
 * Gemini CLI chats (`~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl`; before 2026 one
 * pretty-printed `.json`): a metadata record (`sessionId`, `projectHash`, `startTime`), then
 * message records (`id`, `timestamp`, `type` user | gemini | info | error | warning, `content` as
 * Gemini API parts, a gemini message's `toolCalls`). A record whose id was seen replaces it in
 * place (a message updated as it streamed); `{"$rewindTo": id}` drops that message and every later
 * one (the user rewound); `{"$set": {…}}` updates the metadata, and with `messages` restarts the
 * list. The user's words are `displayContent` when recorded (the prompt as typed, before @file
 * contents were expanded), else `content`; thoughts and info/error lines are not the conversation.
 * The folder a chat ran in is not in the file: Gemini CLI names the project folder in
 * `<project>/.project_root` (or `~/.gemini/projects.json`); older, hash-named folders say nothing,
 * and their chats are imported without a project.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ERROR_CODES, MemoryError } from '../../core/errors.js';
import { cleanTurnText } from '../clean-text.js';
import type { Conversation, ToolSummary, Turn } from '../conversation.js';
import { readJsonlLines } from './jsonl-lines.js';
import { conversationItem, isObject, isoTime, type Json, type ReadItem, skippedItem, str } from './read-item.js';
import { summariseTool } from './tool-summary.js';

/** A legacy `.json` chat is parsed whole; one larger than this is refused rather than read into memory. */
const MAX_LEGACY_JSON_BYTES = 256 * 1024 * 1024;

/** The words of a list of Gemini API parts; thoughts, calls and binary data carry none. */
function partsText(parts: unknown): string {
  if (typeof parts === 'string') return parts;
  const list = Array.isArray(parts) ? parts : [parts];
  return list
    .map((p: unknown) => (typeof p === 'string' ? p : isObject(p) && typeof p.text === 'string' && p.thought !== true ? p.text : ''))
    .filter((t) => t !== '')
    .join('');
}

/** What a tool call returned: the text it displayed, else its function response's output. */
function callResult(call: Json): string {
  if (typeof call.resultDisplay === 'string') return call.resultDisplay;
  const parts = Array.isArray(call.result) ? call.result : call.result === undefined || call.result === null ? [] : [call.result];
  for (const part of parts) {
    if (!isObject(part) || !isObject(part.functionResponse) || !isObject(part.functionResponse.response)) continue;
    const response = part.functionResponse.response;
    const output = response.output ?? response.error ?? response.content;
    if (typeof output === 'string') return output;
  }
  return partsText(call.result);
}

function messageTools(message: Json): ToolSummary[] {
  const calls = Array.isArray(message.toolCalls) ? message.toolCalls : [];
  const tools: ToolSummary[] = [];
  for (const call of calls) {
    if (!isObject(call)) continue;
    const summary = summariseTool(str(call.name) ?? str(call.displayName) ?? 'tool', call.args, callResult(call), call.status === 'error');
    if (summary !== undefined) tools.push(summary);
  }
  return tools;
}

interface Chat {
  meta: Json;
  messages: Map<string, Json>;
}

/** Replays the records of a `.jsonl` chat the way Gemini CLI loads it. */
function replay(chat: Chat, record: unknown): void {
  if (!isObject(record)) return;
  if (typeof record.$rewindTo === 'string') {
    const ids = [...chat.messages.keys()];
    const at = ids.indexOf(record.$rewindTo);
    if (at === -1) chat.messages.clear();
    else for (const id of ids.slice(at)) chat.messages.delete(id);
  } else if (typeof record.id === 'string') {
    chat.messages.set(record.id, record);
  } else if (isObject(record.$set)) {
    if (Array.isArray(record.$set.messages)) {
      chat.messages.clear();
      for (const m of record.$set.messages) if (isObject(m) && typeof m.id === 'string') chat.messages.set(m.id, m);
    }
    const { messages: _messages, ...rest } = record.$set;
    chat.meta = { ...chat.meta, ...rest };
  } else if (typeof record.sessionId === 'string') {
    const { messages, ...rest } = record;
    chat.meta = { ...chat.meta, ...rest };
    if (Array.isArray(messages)) for (const m of messages) if (isObject(m) && typeof m.id === 'string') chat.messages.set(m.id, m);
  }
}

/** The project folder Gemini CLI recorded for the chat's project folder, if it did. */
function projectRoot(path: string): string | undefined {
  const projectDir = dirname(dirname(path));
  const marker = join(projectDir, '.project_root');
  try {
    if (existsSync(marker)) return readFileSync(marker, 'utf8').trim() || undefined;
    const registry = join(dirname(dirname(projectDir)), 'projects.json');
    if (!existsSync(registry)) return undefined;
    const data = JSON.parse(readFileSync(registry, 'utf8')) as unknown;
    if (!isObject(data) || !isObject(data.projects)) return undefined;
    const slug = basename(projectDir);
    return Object.entries(data.projects).find(([, id]) => id === slug)?.[0];
  } catch {
    return undefined;
  }
}

/**
 * A Gemini CLI chat file (`.jsonl`, or a legacy `.json`) as a conversation, or why it was left out.
 * @example await readGeminiChat('~/.gemini/tmp/my-app/chats/session-2026-01-05T10-00-3f2a9c1e.jsonl')
 */
export async function readGeminiChat(path: string): Promise<ReadItem> {
  const chat: Chat = { meta: {}, messages: new Map() };
  if (/\.json$/i.test(path)) {
    if (statSync(path).size > MAX_LEGACY_JSON_BYTES) {
      throw new MemoryError(
        ERROR_CODES.IMPORT_FAILED,
        `${path} is a Gemini CLI chat over 256 MB in the old single-JSON form; open it once in a current Gemini CLI (which rewrites it as .jsonl) and import that.`,
      );
    }
    try {
      replay(chat, JSON.parse(readFileSync(path, 'utf8')) as unknown);
    } catch {
      return skippedItem('not valid JSON', path);
    }
  } else {
    for await (const line of readJsonlLines(path)) replay(chat, line.value);
  }
  const { meta } = chat;
  if (meta.kind === 'subagent') return skippedItem("a subagent's chat", path);
  const turns: Turn[] = [];
  for (const message of chat.messages.values()) {
    const at = isoTime(message.timestamp);
    if (message.type === 'user') {
      const text = cleanTurnText(partsText(message.displayContent ?? message.content));
      if (text !== '') turns.push({ role: 'user', text, at, sourceId: str(message.id) });
    } else if (message.type === 'gemini') {
      const text = cleanTurnText(partsText(message.content));
      const tools = messageTools(message);
      if (text !== '' || tools.length > 0)
        turns.push({ role: 'assistant', text, ...(tools.length > 0 ? { tools } : {}), at, sourceId: str(message.id) });
    }
  }
  if (turns.length === 0) return skippedItem('no visible turns', path);
  const conversation: Conversation = {
    source: 'gemini',
    id: str(meta.sessionId) ?? basename(path).replace(/\.jsonl?$/i, ''),
    cwd: projectRoot(path),
    startedAt: isoTime(meta.startTime) ?? turns.find((t) => t.at !== undefined)?.at,
    turns,
  };
  return conversationItem(conversation);
}
