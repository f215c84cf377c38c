/**
 * Codex sessions (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`): a `session_meta` line
 * (the session's id, start and `cwd`), then `turn_context`, `response_item` and `event_msg` lines.
 * Only `event_msg` lines of type `user_message` (what the user typed, without the instructions
 * and environment blocks the `response_item` copy carries) and `agent_message` (what the agent
 * said) are the conversation; Codex keeps no branches, so file order is the thread. Each message
 * is a turn of its own, so reading a session in pieces (`fromOffset`) gives the same turns as
 * reading it whole.
 */
import { basename } from 'node:path';
import { cleanTurnText } from '../clean-text.js';
import type { Conversation, Turn } from '../conversation.js';
import { firstInFile, readJsonlLines } from './jsonl-lines.js';
import { isObject, isoTime, type Json, str } from './read-item.js';

export interface CodexRead {
  readonly conversations: Conversation[];
  readonly nextOffset: number;
}

interface Meta {
  readonly id: string | undefined;
  readonly cwd: string | undefined;
  readonly startedAt: number | undefined;
}

function metaOf(line: Json): Meta | undefined {
  if (line.type !== 'session_meta' || !isObject(line.payload)) return undefined;
  const p = line.payload;
  return { id: str(p.id), cwd: str(p.cwd), startedAt: isoTime(p.timestamp) ?? isoTime(line.timestamp) };
}

/** The session id at the end of a rollout file's name (`rollout-2025-10-29T00-59-38-<uuid>.jsonl`). */
function idFromName(path: string): string {
  const name = basename(path).replace(/\.jsonl$/i, '');
  return /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i.exec(name)?.[1] ?? name;
}

/**
 * A Codex session's messages, whole or from a byte offset (as readClaudeCodeTranscript).
 * @example const { conversations } = await readCodexSession('~/.codex/sessions/2025/10/29/rollout-….jsonl')
 */
export async function readCodexSession(path: string, options: { fromOffset?: number } = {}): Promise<CodexRead> {
  let nextOffset = options.fromOffset ?? 0;
  let meta: Meta | undefined;
  let cwd: string | undefined;
  const turns: Turn[] = [];
  for await (const line of readJsonlLines(path, nextOffset)) {
    nextOffset = line.end;
    const value = line.value;
    if (!isObject(value)) continue;
    meta ??= metaOf(value);
    if (value.type === 'turn_context' && isObject(value.payload)) cwd ??= str(value.payload.cwd);
    if (value.type !== 'event_msg' || !isObject(value.payload)) continue;
    const payload = value.payload;
    const role = payload.type === 'user_message' ? 'user' : payload.type === 'agent_message' ? 'assistant' : undefined;
    if (role === undefined || typeof payload.message !== 'string') continue;
    // Older versions sent their instruction and environment blocks as user messages of another kind.
    if (role === 'user' && typeof payload.kind === 'string' && payload.kind !== 'plain') continue;
    const text = cleanTurnText(payload.message);
    if (text !== '') turns.push({ role, text, at: isoTime(value.timestamp) });
  }
  if (turns.length === 0) return { conversations: [], nextOffset };
  meta ??= await firstInFile(path, (v) => (isObject(v) ? metaOf(v) : undefined));
  const conversation: Conversation = {
    source: 'codex',
    id: meta?.id ?? idFromName(path),
    cwd: meta?.cwd ?? cwd,
    startedAt: meta?.startedAt ?? turns.find((t) => t.at !== undefined)?.at,
    turns,
  };
  return { conversations: [conversation], nextOffset };
}
