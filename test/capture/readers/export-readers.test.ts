/** ChatGPT and Claude.ai exports: the visible thread of each conversation tree, only what the user saw. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Conversation, Turn } from '../../../src/capture/conversation.js';
import { chatGptConversation } from '../../../src/capture/readers/chatgpt.js';
import { claudeAiConversation } from '../../../src/capture/readers/claude-ai.js';
import type { ReadItem } from '../../../src/capture/readers/read-item.js';
import { REPO_ROOT } from '../../helpers/fixtures.js';

const FIXTURES = join(REPO_ROOT, 'test/fixtures/capture');
const chatgpt = JSON.parse(readFileSync(join(FIXTURES, 'chatgpt/conversations.json'), 'utf8')) as unknown[];
const claudeAi = JSON.parse(readFileSync(join(FIXTURES, 'claude-ai/conversations.json'), 'utf8')) as unknown[];

const shape = (t: Turn): string =>
  [
    `${t.role}: ${t.text}`,
    ...(t.tools ?? []).map((x) => `  [${x.tool} ${x.target} → ${x.result}${x.failed === true ? ' (failed)' : ''}]`),
  ].join('\n');

function conversation(item: ReadItem): Conversation {
  if (item.kind !== 'conversation') throw new Error(`skipped: ${item.reason}`);
  return item.conversation;
}

describe('chatGptConversation', () => {
  it('follows current_node back to the root: the regenerated draft (children[0]) is not in the thread', () => {
    const c = conversation(chatGptConversation(chatgpt[0]));
    expect(c).toMatchObject({
      source: 'chatgpt',
      id: '6a1b2c3d-0000-4000-8000-000000000001',
      title: 'Email queue',
      startedAt: 1714550400000,
    });
    expect(c.turns.map(shape)).toEqual([
      'user: Which queue library for Node should I use for email jobs?',
      'assistant: BullMQ: it is maintained and runs on Redis.',
      'user: Here is my docker-compose; does it fit?',
      "assistant: Yes: the redis service is already there.\n  [python import yaml → dict_keys(['web', 'redis'])]",
      'user: thanks!',
      "assistant: You're welcome.",
    ]);
  });

  it('keeps create_time as when each turn happened; a message without one happened with the one before it', () => {
    const c = conversation(chatGptConversation(chatgpt[0]));
    expect(c.turns.map((t) => t.at)).toEqual([1714550400123, 1714550460000, 1714550520000, 1714550521000, 1714550600000, 1714550601000]);
  });

  it('leaves out hidden system messages, custom instructions, reasoning and image pointers', () => {
    const json = JSON.stringify(chatGptConversation(chatgpt[0]));
    for (const absent of ['DRAFT-DISCARDED', 'PROFILE-ONLY', 'THOUGHTS-ONLY', 'file-service', 'image_asset_pointer'])
      expect(json).not.toContain(absent);
  });

  it('without a current_node, follows the newest leaf: an edited prompt replaces the old branch', () => {
    const c = conversation(chatGptConversation(chatgpt[1]));
    expect(c.turns.map(shape)).toEqual([
      'user: Plan a trip to Lisbon in May.',
      'assistant: Three days: Alfama, Belém, Sintra.',
      'user: Make it four days with a day in Porto.',
      'assistant: Four days: add a train day to Porto.',
    ]);
  });

  it('skips, saying why, a conversation with nothing visible and an element that is no conversation', () => {
    expect(chatGptConversation(chatgpt[2])).toEqual({ kind: 'skipped', reason: 'no visible turns', where: 'Only hidden' });
    expect(chatGptConversation(chatgpt[3])).toMatchObject({ kind: 'skipped', reason: 'not a ChatGPT conversation (no "mapping")' });
    expect(chatGptConversation('text')).toMatchObject({ kind: 'skipped' });
  });

  it("leaves out ChatGPT's memory writes (calls to bio)", () => {
    const raw = {
      conversation_id: 'bio',
      current_node: 'c',
      mapping: {
        a: {
          id: 'a',
          parent: null,
          children: ['b'],
          message: { id: 'a', author: { role: 'user' }, content: { content_type: 'text', parts: ['I am vegetarian.'] } },
        },
        b: {
          id: 'b',
          parent: 'a',
          children: ['c'],
          message: {
            id: 'b',
            author: { role: 'assistant' },
            recipient: 'bio',
            content: { content_type: 'code', text: 'BIO-ONLY: is vegetarian' },
          },
        },
        c: {
          id: 'c',
          parent: 'b',
          children: [],
          message: { id: 'c', author: { role: 'assistant' }, content: { content_type: 'text', parts: ['Noted.'] } },
        },
      },
    };
    expect(conversation(chatGptConversation(raw)).turns.map(shape)).toEqual(['user: I am vegetarian.', 'assistant: Noted.']);
  });

  it('survives a cycle in the parent pointers and a current_node that is not in the mapping', () => {
    const looped = {
      conversation_id: 'loop',
      current_node: 'b',
      mapping: {
        a: {
          id: 'a',
          parent: 'b',
          children: ['b'],
          message: { id: 'a', author: { role: 'user' }, content: { content_type: 'text', parts: ['question'] } },
        },
        b: {
          id: 'b',
          parent: 'a',
          children: ['a'],
          message: { id: 'b', author: { role: 'assistant' }, content: { content_type: 'text', parts: ['answer'] } },
        },
      },
    };
    expect(conversation(chatGptConversation(looped)).turns.map(shape)).toEqual(['user: question', 'assistant: answer']);
    const lost = { ...looped, current_node: 'gone', mapping: { a: { ...looped.mapping.a, parent: null, children: [] } } };
    expect(conversation(chatGptConversation(lost)).turns.map(shape)).toEqual(['user: question']);
  });
});

describe('claudeAiConversation', () => {
  it('threads by parent_message_uuid from the newest leaf: the edited-away prompt and its reply are not in it', () => {
    const c = conversation(claudeAiConversation(claudeAi[0]));
    expect(c).toMatchObject({
      source: 'claude-ai',
      id: 'c0a10000-0000-4000-8000-0000000000a1',
      title: 'Postgres tuning',
      startedAt: Date.parse('2026-03-01T10:00:00Z'),
    });
    expect(c.turns.map(shape)).toEqual([
      'user: How large should shared_buffers be on a 16 GB server?',
      'assistant: About 4 GB: a quarter of the memory.',
      'user: And work_mem for 50 connections?',
      'assistant: Let me check the docs.\n\nStart at 16 MB and watch temp files.\n  [web_search postgres work_mem 50 connections → work_mem sets the memory of each sort; default 4MB]',
      'user: max_connections = 50\nshared_buffers = 4GB',
      'assistant: That config is fine.',
    ]);
    expect(c.turns.map((t) => t.at)).toEqual(
      ['10:00:00', '10:00:10', '10:02:00', '10:02:10', '10:03:00', '10:03:10'].map((t) => Date.parse(`2026-03-01T${t}Z`)),
    );
  });

  it('reads the words from content blocks when text is empty, and never keeps thinking', () => {
    const json = JSON.stringify(claudeAiConversation(claudeAi[0]));
    for (const absent of ['THINKING-ONLY', 'EDITED-AWAY', 'DRAFT-DISCARDED']) expect(json).not.toContain(absent);
  });

  it('follows current_leaf_message_uuid where the export has it', () => {
    const raw = { ...(claudeAi[0] as object), current_leaf_message_uuid: 'm4' };
    const turns = conversation(claudeAiConversation(raw)).turns.map(shape);
    expect(turns.at(-2)).toBe('user: EDITED-AWAY: And work_mem?');
    expect(turns.at(-1)).toBe('assistant: DRAFT-DISCARDED answer');
  });

  it('takes the array order when no message names a parent (older exports), and skips an empty conversation', () => {
    expect(conversation(claudeAiConversation(claudeAi[1])).turns.map(shape)).toEqual(['user: Name a prime above 100.', 'assistant: 101.']);
    expect(claudeAiConversation(claudeAi[2])).toMatchObject({ kind: 'skipped', reason: 'no visible turns' });
    expect(claudeAiConversation({ uuid: 'x' })).toMatchObject({
      kind: 'skipped',
      reason: 'not a Claude.ai conversation (no "chat_messages")',
    });
  });

  it("drops Limbic's own tool calls with their results", () => {
    const raw = {
      uuid: 'own',
      chat_messages: [
        { uuid: 'h', sender: 'human', text: 'what did we decide?', content: [] },
        {
          uuid: 'a',
          sender: 'assistant',
          text: '',
          parent_message_uuid: 'h',
          content: [
            { type: 'tool_use', id: 't1', name: 'mcp__limbic__search_nodes', input: { query: 'decision' } },
            { type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'LIMBIC-OWN-RESULT' }] },
            { type: 'text', text: 'We chose BullMQ.' },
          ],
        },
      ],
    };
    const json = JSON.stringify(claudeAiConversation(raw));
    expect(json).not.toContain('LIMBIC-OWN-RESULT');
    expect(json).not.toContain('search_nodes');
    expect(json).toContain('We chose BullMQ.');
  });
});
