/** Writes ChatGPT-shaped exports of any size for the import's streaming tests, one conversation at a time. */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

/** One conversation of `messages` alternating user/assistant turns, with a discarded draft on the first reply. */
export function chatGptConversation(index: number, messages: number, words = 60): object {
  const mapping: Record<string, unknown> = { root: { id: 'root', message: null, parent: null, children: ['n0'] } };
  let previous = 'root';
  const start = 1_700_000_000 + index * 1000;
  for (let i = 0; i < messages; i++) {
    const id = `n${i}`;
    const role = i % 2 === 0 ? 'user' : 'assistant';
    const children = i < messages - 1 ? [`n${i + 1}`] : [];
    if (i === 0 && messages > 1) children.unshift('draft');
    const text = `${role} turn ${i} of conversation ${index}: ${'lorem ipsum dolor sit amet '.repeat(Math.ceil(words / 5))}`.trim();
    mapping[id] = {
      id,
      parent: previous,
      children,
      message: {
        id,
        author: { role },
        create_time: start + i,
        content: { content_type: 'text', parts: [text] },
        recipient: 'all',
        metadata: {},
      },
    };
    previous = id;
  }
  mapping.draft = {
    id: 'draft',
    parent: 'n0',
    children: [],
    message: {
      id: 'draft',
      author: { role: 'assistant' },
      create_time: start + 0.5,
      content: { content_type: 'text', parts: ['DRAFT-DISCARDED'] },
    },
  };
  return { title: `Conversation ${index}`, create_time: start, mapping, current_node: previous, conversation_id: `conv-${index}` };
}

/** A `conversations.json` of `count` conversations written to `path` without holding it in memory. */
export async function writeChatGptExport(path: string, count: number, messages: number, words?: number): Promise<void> {
  const out = createWriteStream(path);
  out.write('[');
  for (let i = 0; i < count; i++) {
    if (!out.write(`${i === 0 ? '' : ','}${JSON.stringify(chatGptConversation(i, messages, words))}`)) await once(out, 'drain');
  }
  out.end(']');
  await once(out, 'finish');
}
