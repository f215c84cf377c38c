/**
 * ChatGPT's data export (`conversations.json`, or the zip it comes in): an array of conversations,
 * each a tree of nodes (`mapping`: id → `{message, parent, children}`). Regenerating a reply or
 * editing a prompt adds a sibling branch, so the first child is often a draft the user discarded:
 * the visible thread is `current_node` followed back to the root, reversed. Only what the user
 * saw is kept: user and assistant messages that are not hidden (`metadata.
 * is_visually_hidden_from_conversation`, custom instructions), their text (`text`, `code`,
 * `multimodal_text` parts that are text; images, reasoning and memory updates are not); an
 * assistant message addressed to a tool (`recipient` other than "all": code for python, a browser
 * query) becomes a tool summary, filled with the tool's answer when one follows. Consecutive
 * assistant nodes are one turn, as the app shows them.
 */
import { cleanTurnText } from '../clean-text.js';
import type { Conversation, ToolSummary, Turn } from '../conversation.js';
import { conversationItem, isObject, type Json, type ReadItem, secondsTime, skippedItem, str } from './read-item.js';
import { summariseTool, toolResult } from './tool-summary.js';

/** Content that carries a message's words; reasoning (`thoughts`), memory writes and browsing records do not. */
const TEXT_CONTENT = new Set(['text', 'multimodal_text', 'code']);
/** Tools whose calls are not the conversation: `bio` writes ChatGPT's own memory of the user. */
const SKIPPED_RECIPIENTS = new Set(['bio']);

/** The text a message shows: `parts` that are strings or carry text, or `text` (code, execution output). */
function contentText(content: unknown): string {
  if (!isObject(content)) return '';
  const pieces: string[] = [];
  if (Array.isArray(content.parts)) {
    for (const part of content.parts) {
      if (typeof part === 'string') pieces.push(part);
      // Voice transcripts and other typed parts that carry words; image and file pointers carry none.
      else if (isObject(part) && typeof part.text === 'string') pieces.push(part.text);
    }
  }
  if (pieces.length === 0 && typeof content.text === 'string') pieces.push(content.text);
  return pieces.join('\n\n');
}

/** The node to follow back: `current_node`, or (when it is missing) the leaf written last. */
function startNode(mapping: Json, current: unknown): string | undefined {
  if (typeof current === 'string' && isObject(mapping[current])) return current;
  let best: { id: string; at: number } | undefined;
  for (const [id, node] of Object.entries(mapping)) {
    if (!isObject(node) || (Array.isArray(node.children) && node.children.length > 0)) continue;
    const at = isObject(node.message) ? (secondsTime(node.message.create_time) ?? 0) : 0;
    if (best === undefined || at >= best.at) best = { id, at };
  }
  return best?.id;
}

/** The messages of the visible thread, root first. */
function visibleMessages(mapping: Json, current: unknown): Json[] {
  const thread: Json[] = [];
  const seen = new Set<string>();
  for (let id = startNode(mapping, current); id !== undefined && !seen.has(id);) {
    seen.add(id);
    const node = mapping[id];
    if (!isObject(node)) break;
    if (isObject(node.message)) thread.push(node.message);
    id = str(node.parent);
  }
  return thread.reverse();
}

function hidden(message: Json): boolean {
  const metadata = isObject(message.metadata) ? message.metadata : {};
  return (
    metadata.is_visually_hidden_from_conversation === true ||
    metadata.is_user_system_message === true ||
    message.channel === 'analysis' ||
    metadata.channel === 'analysis'
  );
}

interface Draft {
  texts: string[];
  tools: ToolSummary[];
  at: number | undefined;
  sourceId: string | undefined;
}

/**
 * One conversation of the export as the user saw it, or why it was left out.
 * @example chatGptConversation(JSON.parse(exportText)[0])
 */
export function chatGptConversation(raw: unknown): ReadItem {
  if (!isObject(raw) || !isObject(raw.mapping)) return skippedItem('not a ChatGPT conversation (no "mapping")');
  const title = str(raw.title);
  const id = str(raw.conversation_id) ?? str(raw.id) ?? str(raw.current_node);
  if (id === undefined) return skippedItem('no conversation id', title);
  const startedAt = secondsTime(raw.create_time);
  const turns: Turn[] = [];
  let assistant: Draft | undefined;
  let lastAt = startedAt;
  const closeAssistant = (): void => {
    if (assistant === undefined) return;
    const text = cleanTurnText(assistant.texts.join('\n\n'));
    if (text !== '' || assistant.tools.length > 0) {
      turns.push({
        role: 'assistant',
        text,
        ...(assistant.tools.length > 0 ? { tools: assistant.tools } : {}),
        at: assistant.at,
        sourceId: assistant.sourceId,
      });
    }
    assistant = undefined;
  };
  for (const message of visibleMessages(raw.mapping, raw.current_node)) {
    const role = isObject(message.author) ? message.author.role : undefined;
    // A message without a time (older exports, system nodes) happened when the one before it did.
    const at = secondsTime(message.create_time) ?? lastAt;
    lastAt = at;
    if (hidden(message)) continue;
    const content = isObject(message.content) ? message.content : {};
    const contentType = str(content.content_type) ?? 'text';
    if (role === 'user') {
      if (!TEXT_CONTENT.has(contentType)) continue;
      closeAssistant();
      const text = cleanTurnText(contentText(content));
      if (text !== '') turns.push({ role: 'user', text, at, sourceId: str(message.id) });
    } else if (role === 'assistant') {
      assistant ??= { texts: [], tools: [], at, sourceId: str(message.id) };
      const recipient = str(message.recipient) ?? 'all';
      if (SKIPPED_RECIPIENTS.has(recipient)) continue;
      if (recipient !== 'all') {
        // A call: code for python, a query for the browser, an image prompt.
        const summary = summariseTool(recipient, contentText(content));
        if (summary !== undefined) assistant.tools.push(summary);
      } else if (TEXT_CONTENT.has(contentType)) {
        assistant.texts.push(contentText(content));
      }
    } else if (role === 'tool' && assistant !== undefined) {
      // The answer to the latest call still waiting for one.
      const waiting = assistant.tools.findLastIndex((t) => t.result === '');
      const result = toolResult(contentText(content));
      const call = assistant.tools[waiting];
      if (call !== undefined && result !== '') assistant.tools[waiting] = { ...call, result };
    }
  }
  closeAssistant();
  if (turns.length === 0) return skippedItem('no visible turns', title ?? id);
  const conversation: Conversation = {
    source: 'chatgpt',
    id,
    title,
    startedAt: startedAt ?? turns.find((t) => t.at !== undefined)?.at,
    turns,
  };
  return conversationItem(conversation);
}
