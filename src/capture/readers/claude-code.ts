/**
 * Claude Code transcripts (`~/.claude/projects/<folder>/<session>.jsonl`): one JSON entry a line,
 * user and assistant messages in the Messages API shape threaded by `parentUuid`, beside summary,
 * system, progress, attachment and file-history-snapshot lines. Rewinding a conversation leaves
 * the abandoned branch in the file, so file order is not the conversation: the visible thread is
 * the latest leaf followed back through `parentUuid` (and, across a compaction boundary, whose
 * `parentUuid` is null, through `logicalParentUuid`). Sidechains (subagents), meta entries (command
 * caveats, skill bodies), compaction summaries and every non-message line are left out; a
 * tool_result is joined to its tool_use; Claude Code's synthetic replies (API errors) are not the
 * model's; the project comes from the entries' `cwd`, never from the
 * folder name (which maps `/ . \ :` alike to `-` and cannot be read back).
 *
 * Incremental reads (the hooks call this on every Stop, PreCompact and SessionEnd with the offset
 * the previous call returned): only complete lines from `fromOffset` on are read. The visible
 * thread is followed back from the newest leaf *within those lines* until it leaves them; what it
 * passes is new and on the visible thread, whatever its parent in the part already read (a rewind
 * to an older turn included). Entries of the new part the walk does not pass were rewound away
 * within it and are not returned. Turns are cut by what Claude Code writes (a prompt; an assistant
 * API message, all lines sharing its `message.id`), never by where a read stopped, so reading a
 * transcript in pieces yields the same turns as reading it whole, and the service's dedup stores
 * each once. Turns captured before a later rewind stay, as they happened.
 */
import { basename } from 'node:path';
import type { Conversation, ToolSummary, Turn } from '../conversation.js';
import { cleanTurnText } from '../clean-text.js';
import { firstInFile, readJsonlLines } from './jsonl-lines.js';
import { blockText, summariseTool, toolResult } from './tool-summary.js';

export interface ClaudeCodeRead {
  /** The session's new turns on its visible thread (none, or one conversation). */
  readonly conversations: Conversation[];
  /** Where the next incremental read starts: just past the last complete line read. */
  readonly nextOffset: number;
}

/** What threading and turn assembly need of one entry; tool results are cut to their summary at once. */
interface Entry {
  readonly uuid: string;
  readonly parent: string | undefined;
  readonly type: string;
  /** A message that is part of the conversation (not a sidechain, meta entry or compaction summary). */
  readonly visible: boolean;
  readonly at: number | undefined;
  readonly messageId: string | undefined;
  readonly texts: readonly string[];
  readonly tools: readonly { readonly id: string; readonly summary: ToolSummary }[];
  /** Results by the id of their tool_use; a result of Limbic's own call finds no tool and is dropped with it. */
  readonly results: readonly { readonly id: string; readonly text: string; readonly failed: boolean }[];
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

function time(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/** The parts of one user or assistant entry that a turn is made of. */
function toEntry(raw: Json): Entry | undefined {
  const uuid = str(raw.uuid);
  const type = str(raw.type);
  if (uuid === undefined || type === undefined) return undefined;
  const parent = str(raw.parentUuid) ?? str(raw.logicalParentUuid);
  const isMessage = type === 'user' || type === 'assistant';
  // Claude Code's own messages in the model's place (an API error, "No response requested.") carry the model "<synthetic>".
  const synthetic = raw.isApiErrorMessage === true || (isObject(raw.message) && raw.message.model === '<synthetic>');
  const visible =
    isMessage &&
    !synthetic &&
    raw.isSidechain !== true &&
    raw.isMeta !== true &&
    raw.isCompactSummary !== true &&
    raw.isVisibleInTranscriptOnly !== true;
  const base = { uuid, parent, type, at: time(raw.timestamp) };
  const message = raw.message;
  if (!visible || !isObject(message)) return { ...base, visible, messageId: undefined, texts: [], tools: [], results: [] };
  const texts: string[] = [];
  const tools: { id: string; summary: ToolSummary }[] = [];
  const results: { id: string; text: string; failed: boolean }[] = [];
  const content = message.content;
  if (typeof content === 'string') texts.push(content);
  else if (Array.isArray(content)) {
    for (const block of content) {
      if (!isObject(block)) continue;
      switch (block.type) {
        case 'text':
          if (typeof block.text === 'string') texts.push(block.text);
          break;
        case 'tool_use': {
          const summary = summariseTool(str(block.name) ?? 'tool', block.input);
          if (summary !== undefined) tools.push({ id: str(block.id) ?? '', summary });
          break;
        }
        case 'tool_result':
          results.push({ id: str(block.tool_use_id) ?? '', text: toolResult(blockText(block.content)), failed: block.is_error === true });
          break;
        default:
          // thinking, redacted_thinking, image, document: not the conversation's words.
          break;
      }
    }
  }
  return { ...base, visible, messageId: str(message.id), texts, tools, results };
}

/** The entries on the visible thread, oldest first: from the newest visible message back to the root, or out of `entries`. */
function visibleThread(entries: ReadonlyMap<string, Entry>, leaf: Entry | undefined): Entry[] {
  const thread: Entry[] = [];
  const seen = new Set<string>();
  for (let at = leaf; at !== undefined && !seen.has(at.uuid); at = at.parent === undefined ? undefined : entries.get(at.parent)) {
    seen.add(at.uuid);
    thread.push(at);
  }
  return thread.reverse();
}

interface TurnDraft {
  role: 'user' | 'assistant';
  texts: string[];
  tools: ToolSummary[];
  at: number | undefined;
  sourceId: string;
  messageId: string | undefined;
}

/**
 * Turns from the thread: a prompt is a user turn; the lines of one assistant API message, one
 * assistant turn. Tool results are looked up among all the entries read (tool ids are unique).
 */
function assembleTurns(thread: readonly Entry[], entries: ReadonlyMap<string, Entry>): Turn[] {
  const drafts: TurnDraft[] = [];
  const resultOf = new Map<string, { text: string; failed: boolean }>();
  for (const entry of entries.values()) for (const r of entry.results) resultOf.set(r.id, r);
  for (const entry of thread) {
    if (!entry.visible) continue;
    if (entry.type === 'user') {
      const text = entry.texts.join('\n\n');
      if (cleanTurnText(text) !== '')
        drafts.push({ role: 'user', texts: [text], tools: [], at: entry.at, sourceId: entry.uuid, messageId: undefined });
      continue;
    }
    const last = drafts.at(-1);
    const sameMessage = last?.role === 'assistant' && entry.messageId !== undefined && last.messageId === entry.messageId;
    const draft: TurnDraft = sameMessage
      ? last
      : { role: 'assistant', texts: [], tools: [], at: entry.at, sourceId: entry.uuid, messageId: entry.messageId };
    if (!sameMessage) drafts.push(draft);
    draft.texts.push(...entry.texts);
    for (const { id, summary } of entry.tools) {
      const result = resultOf.get(id);
      const full: ToolSummary =
        result === undefined ? summary : { ...summary, result: result.text, ...(result.failed ? { failed: true } : {}) };
      draft.tools.push(full);
    }
  }
  const turns: Turn[] = [];
  for (const d of drafts) {
    const text = cleanTurnText(d.texts.join('\n\n'));
    if (text === '' && d.tools.length === 0) continue;
    turns.push({
      role: d.role,
      text,
      ...(d.role === 'assistant' && d.tools.length > 0 ? { tools: d.tools } : {}),
      at: d.at,
      sourceId: d.sourceId,
    });
  }
  return turns;
}

/** The session's start and folder: the first message entry of the file that says them. */
async function sessionHead(
  path: string,
): Promise<{ startedAt: number | undefined; cwd: string | undefined; sessionId: string | undefined }> {
  const head = await firstInFile(path, (value) => {
    if (!isObject(value) || (value.type !== 'user' && value.type !== 'assistant') || value.isSidechain === true) return undefined;
    return { startedAt: time(value.timestamp), cwd: str(value.cwd), sessionId: str(value.sessionId) };
  });
  return head ?? { startedAt: undefined, cwd: undefined, sessionId: undefined };
}

/**
 * A Claude Code transcript's visible thread, whole (no `fromOffset`) or from a byte offset (hooks:
 * pass the `nextOffset` of the previous call; a read that finds no new complete line returns no
 * conversation and the same offset).
 * @example const { conversations, nextOffset } = await readClaudeCodeTranscript(input.transcript_path, { fromOffset: saved })
 */
export async function readClaudeCodeTranscript(path: string, options: { fromOffset?: number } = {}): Promise<ClaudeCodeRead> {
  const entries = new Map<string, Entry>();
  let leaf: Entry | undefined;
  let nextOffset = options.fromOffset ?? 0;
  let head: { startedAt: number | undefined; cwd: string | undefined; sessionId: string | undefined } | undefined;
  const fromStart = nextOffset === 0;
  for await (const line of readJsonlLines(path, nextOffset)) {
    nextOffset = line.end;
    if (!isObject(line.value)) continue;
    if (
      fromStart &&
      head === undefined &&
      (line.value.type === 'user' || line.value.type === 'assistant') &&
      line.value.isSidechain !== true
    ) {
      head = { startedAt: time(line.value.timestamp), cwd: str(line.value.cwd), sessionId: str(line.value.sessionId) };
    }
    const entry = toEntry(line.value);
    if (entry === undefined) continue;
    entries.set(entry.uuid, entry);
    if ((entry.type === 'user' || entry.type === 'assistant') && line.value.isSidechain !== true) leaf = entry;
  }
  const turns = assembleTurns(visibleThread(entries, leaf), entries);
  if (turns.length === 0) return { conversations: [], nextOffset };
  // A session keeps the start and folder of its first line, however it is read, so the hooks' pieces
  // and a later import of the whole file name the same session.
  head ??= await sessionHead(path);
  const id = basename(path).replace(/\.jsonl$/i, '') || head.sessionId || 'unknown';
  const conversation: Conversation = {
    source: 'claude-code',
    id,
    cwd: head.cwd,
    startedAt: head.startedAt ?? turns.find((t) => t.at !== undefined)?.at,
    turns,
  };
  return { conversations: [conversation], nextOffset };
}
