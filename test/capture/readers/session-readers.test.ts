/** Codex sessions and Gemini CLI chats: the conversation as the user saw it, with the folder it ran in. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Turn } from '../../../src/capture/conversation.js';
import { readCodexSession } from '../../../src/capture/readers/codex.js';
import { readGeminiChat } from '../../../src/capture/readers/gemini.js';
import { REPO_ROOT } from '../../helpers/fixtures.js';

const FIXTURES = join(REPO_ROOT, 'test/fixtures/capture');
const CODEX = join(FIXTURES, 'codex/sessions/2025/10/29/rollout-2025-10-29T00-59-38-019a2d7a-41c4-78b1-b7cc-a45d62a89cd5.jsonl');
const GEMINI = join(FIXTURES, 'gemini/tmp/shop/chats/session-2026-11-21T08-00-9d8c7b6a.jsonl');

const shape = (t: Turn): string =>
  [
    `${t.role}: ${t.text}`,
    ...(t.tools ?? []).map((x) => `  [${x.tool} ${x.target} → ${x.result}${x.failed === true ? ' (failed)' : ''}]`),
  ].join('\n');

describe('readCodexSession', () => {
  it('reads only event_msg user and agent messages, with the session id, start and cwd of session_meta', async () => {
    const { conversations } = await readCodexSession(CODEX);
    expect(conversations).toHaveLength(1);
    const c = conversations[0];
    expect(c).toMatchObject({
      source: 'codex',
      id: '019a2d7a-41c4-78b1-b7cc-a45d62a89cd5',
      cwd: '/home/dev/shop',
      startedAt: Date.parse('2025-10-29T00:59:38.308Z'),
    });
    expect(c?.turns.map(shape)).toEqual([
      'user: Why does the build fail on CI?',
      'assistant: The build fails because `tsc` finds an unused import in src/app.ts.',
      'user: Fix it and run the tests.',
      'assistant: Removed the import; the build and the tests pass.',
    ]);
    expect(c?.turns.map((t) => t.at)).toEqual(
      ['59:38.318', '59:41.644', '59:55.000', '59:59.000'].map((t) => Date.parse(`2025-10-29T00:${t}Z`)),
    );
    const json = JSON.stringify(conversations);
    for (const absent of ['environment_context', 'REASONING-ONLY', 'EXEC-OUTPUT-ONLY', 'INSTRUCTIONS-ONLY'])
      expect(json).not.toContain(absent);
  });

  it('reads from an offset the same session, and nothing when nothing was added', async () => {
    const whole = await readCodexSession(CODEX);
    const again = await readCodexSession(CODEX, { fromOffset: whole.nextOffset });
    expect(again.conversations).toEqual([]);
  });
});

describe('readGeminiChat', () => {
  it('replays the records: updates in place, a rewind drops what followed, info lines and thoughts are left out', async () => {
    const item = await readGeminiChat(GEMINI);
    if (item.kind !== 'conversation') throw new Error(item.reason);
    const c = item.conversation;
    expect(c).toMatchObject({
      source: 'gemini',
      id: '9d8c7b6a-1111-4222-8333-444455556666',
      cwd: '/home/dev/shop',
      startedAt: Date.parse('2026-11-21T08:00:00Z'),
    });
    expect(c.turns.map(shape)).toEqual([
      'user: Explain @src/app.ts',
      "assistant: It starts the HTTP server on port 8080.\n  [read_file /home/dev/shop/src/app.ts → import http from 'node:http';\nhttp.createServer().listen(8080);]",
      'user: Keep the name; add a health route.',
      'assistant: Added GET /health.\n  [replace /home/dev/shop/src/app.ts → Failed to edit: old_string not found (failed)]',
    ]);
    const json = JSON.stringify(c);
    for (const absent of [
      'FILE-BODY-ONLY',
      'THOUGHTS-ONLY',
      'THOUGHT-PART-ONLY',
      'INFO-ONLY',
      'REWOUND-AWAY',
      'Rename it',
      'LIMBIC-OWN-RESULT',
      'mcp_memory_',
    ]) {
      expect(json).not.toContain(absent);
    }
  });

  it('reads the older single-JSON chat, without a project when its folder is only a hash', async () => {
    const path = join(
      FIXTURES,
      'gemini/tmp/5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8/chats/session-2025-09-01T10-00-aaaa1111.json',
    );
    const item = await readGeminiChat(path);
    if (item.kind !== 'conversation') throw new Error(item.reason);
    expect(item.conversation.cwd).toBeUndefined();
    expect(item.conversation.turns.map(shape)).toEqual(['user: What does ENOSPC mean?', 'assistant: The disk is full.']);
  });

  it("skips a subagent's chat", async () => {
    const path = join(FIXTURES, 'gemini/tmp/shop/chats/9d8c7b6a-1111-4222-8333-444455556666/helper-1.jsonl');
    expect(await readGeminiChat(path)).toMatchObject({ kind: 'skipped', reason: "a subagent's chat" });
  });
});
