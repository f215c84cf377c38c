/**
 * Claude.ai's data export (`conversations.json`, or the zip it comes in): an array of
 * `{uuid, name, created_at, chat_messages[]}`. Editing a prompt or retrying a reply leaves the old
 * branch among the messages, so the thread is followed by `parent_message_uuid` from the current
 * leaf (`current_leaf_message_uuid` where the export has it, else the newest message nothing
 * answers) back to the root, whose parent is a sentinel uuid. A message's words are its `text`
 * content blocks (its `text` field may be empty, or repeat them); a message with no words of its
 * own but a pasted attachment keeps the attachment's text. tool_use and tool_result blocks become
 * tool summaries; thinking blocks are never captured.
 */
import { cleanTurnText } from '../clean-text.js';
import type { Conversation, ToolSummary, Turn } from '../conversation.js';
import { conversationItem, isObject, isoTime, type Json, type ReadItem, skippedItem, str } from './read-item.js';
import { blockText, summariseTool, toolResult } from './tool-summary.js';

/** Messages sorted by the export's own order when no parent pointers exist (older exports). */
function thread(messages: readonly Json[], currentLeaf: unknown): Json[] {
  const byId = new Map<string, Json>();
  for (const m of messages) {
    const id = str(m.uuid);
    if (id !== undefined) byId.set(id, m);
  }
  if (!messages.some((m) => str(m.parent_message_uuid) !== undefined && byId.has(str(m.parent_message_uuid) ?? ''))) {
    // No message names another as its parent: nothing branches, the array is the thread.
    return [...messages];
  }
  let leaf = typeof currentLeaf === 'string' ? byId.get(currentLeaf) : undefined;
  if (leaf === undefined) {
    const answered = new Set(messages.map((m) => str(m.parent_message_uuid)).filter((p): p is string => p !== undefined));
    // The newest message nothing answers; on a tie, the later in the array.
    for (const m of messages) {
      const id = str(m.uuid);
      if (id === undefined || answered.has(id)) continue;
      if (leaf === undefined || (isoTime(m.created_at) ?? 0) >= (isoTime(leaf.created_at) ?? 0)) leaf = m;
    }
  }
  const out: Json[] = [];
  const seen = new Set<string>();
  for (let at = leaf; at !== undefined;) {
    const id = str(at.uuid) ?? '';
    if (seen.has(id)) break;
    seen.add(id);
    out.push(at);
    const parent = str(at.parent_message_uuid);
    at = parent === undefined ? undefined : byId.get(parent);
  }
  return out.reverse();
}

/** The words of a message: its text blocks, else its `text`, else the text of what it attached. */
function messageWords(message: Json): string {
  const content = Array.isArray(message.content) ? message.content : [];
  const blocks = content
    .filter((b): b is Json => isObject(b) && b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text as string)
    .filter((t) => t.trim() !== '');
  if (blocks.length > 0) return blocks.join('\n\n');
  if (typeof message.text === 'string' && message.text.trim() !== '') return message.text;
  const attachments = Array.isArray(message.attachments) ? message.attachments : [];
  return attachments
    .map((a: unknown) => (isObject(a) && typeof a.extracted_content === 'string' ? a.extracted_content : ''))
    .filter((t) => t.trim() !== '')
    .join('\n\n');
}

/** The message's tool calls with their results, in order; Limbic's own calls are left out. */
function messageTools(message: Json): ToolSummary[] {
  const content = Array.isArray(message.content) ? message.content : [];
  // Limbic's own calls keep a place here only so that their results find them and go with them.
  const calls: { id: string | undefined; name: string; summary: ToolSummary | undefined; answered: boolean }[] = [];
  for (const block of content) {
    if (!isObject(block)) continue;
    if (block.type === 'tool_use') {
      const name = str(block.name) ?? 'tool';
      calls.push({ id: str(block.id), name, summary: summariseTool(name, block.input), answered: false });
    } else if (block.type === 'tool_result') {
      // By the call's id where the export keeps it, else the first call of that name still waiting.
      const id = str(block.tool_use_id);
      const name = str(block.name);
      const call =
        (id === undefined ? undefined : calls.find((c) => c.id === id)) ??
        calls.find((c) => !c.answered && (name === undefined || c.name === name));
      if (call === undefined) continue;
      call.answered = true;
      if (call.summary !== undefined) {
        call.summary = {
          ...call.summary,
          result: toolResult(blockText(block.content)),
          ...(block.is_error === true ? { failed: true } : {}),
        };
      }
    }
  }
  return calls.flatMap((c) => (c.summary === undefined ? [] : [c.summary]));
}

/**
 * One conversation of the export as the user saw it, or why it was left out.
 * @example claudeAiConversation(JSON.parse(exportText)[0])
 */
export function claudeAiConversation(raw: unknown): ReadItem {
  if (!isObject(raw) || !Array.isArray(raw.chat_messages)) return skippedItem('not a Claude.ai conversation (no "chat_messages")');
  const id = str(raw.uuid);
  const title = str(raw.name);
  if (id === undefined) return skippedItem('no conversation id', title);
  const messages = raw.chat_messages.filter(isObject);
  const startedAt = isoTime(raw.created_at);
  const turns: Turn[] = [];
  let lastAt = startedAt;
  for (const message of thread(messages, raw.current_leaf_message_uuid)) {
    const at = isoTime(message.created_at) ?? lastAt;
    lastAt = at;
    const sender = message.sender;
    const text = cleanTurnText(messageWords(message));
    if (sender === 'human') {
      if (text !== '') turns.push({ role: 'user', text, at, sourceId: str(message.uuid) });
    } else if (sender === 'assistant') {
      const tools = messageTools(message);
      if (text !== '' || tools.length > 0)
        turns.push({ role: 'assistant', text, ...(tools.length > 0 ? { tools } : {}), at, sourceId: str(message.uuid) });
    }
  }
  if (turns.length === 0) return skippedItem('no visible turns', title ?? id);
  const conversation: Conversation = {
    source: 'claude-ai',
    id,
    title,
    startedAt: startedAt ?? turns.find((t) => t.at !== undefined)?.at,
    turns,
  };
  return conversationItem(conversation);
}
