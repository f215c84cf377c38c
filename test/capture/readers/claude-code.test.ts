/** Claude Code transcripts: the visible thread by parentUuid, chrome and Limbic's own calls left out, incremental reads. */
import { appendFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Conversation, Turn } from '../../../src/capture/conversation.js';
import { readClaudeCodeTranscript } from '../../../src/capture/readers/claude-code.js';
import { REPO_ROOT, tempDir } from '../../helpers/fixtures.js';

const SESSION = '3f2a9c1e-8b7d-4e21-9a55-0c1d2e3f4a5b';
const FIXTURE = join(REPO_ROOT, 'test/fixtures/capture/claude-code/-home-dev-shop', `${SESSION}.jsonl`);
const LINES = readFileSync(FIXTURE, 'utf8')
  .split('\n')
  .filter((l) => l !== '');

/** A turn as the assertions read it: who, what, which tools on what with which first result line. */
const shape = (t: Turn): string =>
  [`${t.role}: ${t.text}`, ...(t.tools ?? []).map((x) => `  [${x.tool} ${x.target} → ${x.result.split('\n')[0] ?? ''}]`)].join('\n');

const only = (conversations: Conversation[]): Conversation => {
  expect(conversations).toHaveLength(1);
  return conversations[0] as Conversation;
};

/** Byte offset just past the line whose entry has this uuid. */
function offsetAfter(uuid: string): number {
  const at = LINES.findIndex((l) => (JSON.parse(l) as { uuid?: string }).uuid === uuid);
  expect(at).toBeGreaterThanOrEqual(0);
  return LINES.slice(0, at + 1).reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
}

describe('readClaudeCodeTranscript', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir();
  });
  afterEach(() => tmp.cleanup());

  it('reads the visible thread from the latest leaf, not the file order, with the project folder from cwd', async () => {
    const { conversations, nextOffset } = await readClaudeCodeTranscript(FIXTURE);
    const c = only(conversations);
    expect(c).toMatchObject({
      source: 'claude-code',
      id: SESSION,
      cwd: '/home/dev/shop',
      startedAt: Date.parse('2026-11-20T09:00:01.000Z'),
    });
    expect(c.turns.map(shape)).toEqual([
      'user: Which job queue should we use for the email jobs?',
      'assistant: Let me look at what the project already runs.\n  [Bash grep -rn redis docker-compose.yml → docker-compose.yml:12:  redis:]',
      'assistant: Redis is already running, so BullMQ fits: retries and delayed jobs out of the box.',
      'user: ok',
      'assistant: Shall I add BullMQ to the email jobs?',
      'user: Yes, add BullMQ with 5 retries.',
      'assistant: Added BullMQ with 5 retries in src/jobs/queue.ts.\n  [Edit /home/dev/shop/src/jobs/queue.ts → The file /home/dev/shop/src/jobs/queue.ts has been updated.]',
      'user: Also log failed jobs with their error.',
      'assistant: Done: failed jobs are logged with their error and attempt count.',
    ]);
    expect(nextOffset).toBe(statSync(FIXTURE).size);
  });

  it('dates each turn, keeps tool results to their first lines and drops the chrome inside them', async () => {
    const c = only((await readClaudeCodeTranscript(FIXTURE)).conversations);
    expect(c.turns.map((t) => t.at)).toEqual(
      ['09:00:01', '09:00:03', '09:00:10', '09:00:20', '09:00:21', '09:01:00', '09:01:05', '10:30:00', '10:30:05'].map((t) =>
        Date.parse(`2026-11-20T${t}.000Z`),
      ),
    );
    const [bash] = c.turns[1]?.tools ?? [];
    expect(bash?.result.split('\n')).toHaveLength(3);
    const json = JSON.stringify(c);
    for (const absent of ['system-reminder', 'malicious', 'limbic-memory-brief', 'blue-green', 'thinking', 'check what runs already']) {
      expect(json).not.toContain(absent);
    }
  });

  it("never captures Limbic's own tool calls nor their results", async () => {
    const json = JSON.stringify((await readClaudeCodeTranscript(FIXTURE)).conversations);
    expect(json).not.toContain('mcp__memory__');
    expect(json).not.toContain('LIMBIC-OWN-RESULT');
  });

  it('leaves out rewound branches, sidechains, meta entries, slash commands and the compaction summary', async () => {
    const json = JSON.stringify((await readClaudeCodeTranscript(FIXTURE)).conversations);
    for (const absent of [
      'Kafka',
      'SUBAGENT-ONLY',
      'Caveat',
      '/model',
      'Set model to opus',
      'COMPACT-SUMMARY-ONLY',
      'Choosing the job queue',
    ]) {
      expect(json).not.toContain(absent);
    }
  });

  it('a Stop fired twice reads nothing new the second time', async () => {
    const first = await readClaudeCodeTranscript(FIXTURE);
    const second = await readClaudeCodeTranscript(FIXTURE, { fromOffset: first.nextOffset });
    expect(second).toEqual({ conversations: [], nextOffset: first.nextOffset });
  });

  it('read in pieces at each Stop, gives the same turns as read whole, each once', async () => {
    const whole = only((await readClaudeCodeTranscript(FIXTURE)).conversations);
    const path = join(tmp.dir, `${SESSION}.jsonl`);
    const bytes = readFileSync(FIXTURE);
    // Where Claude Code's Stop (after a reply) or PreCompact fires; u3..a7 is a branch rewound away later.
    const stops = ['a6', 'u3', 'sys1', 'u5'].map(offsetAfter);
    writeFileSync(path, '');
    let offset = 0;
    const pieces: Conversation[] = [];
    for (const end of [...stops, bytes.length]) {
      writeFileSync(path, bytes.subarray(0, end));
      const read = await readClaudeCodeTranscript(path, { fromOffset: offset });
      expect(read.nextOffset).toBe(end);
      offset = read.nextOffset;
      pieces.push(...read.conversations);
    }
    // Every piece names the same session, started when the file did, in the same folder.
    for (const p of pieces) expect(p).toMatchObject({ id: whole.id, startedAt: whole.startedAt, cwd: whole.cwd });
    const turns = pieces.flatMap((p) => p.turns.map(shape));
    // The branch the user later rewound away was captured when it happened ("may stay"), once.
    const rewound = 'user: Use Kafka instead.';
    expect(turns.filter((t) => t === rewound)).toHaveLength(1);
    expect(turns.filter((t) => t !== rewound)).toEqual(whole.turns.map(shape));
  });

  it('places a turn whose parent was in the part already read: the new branch after a rewind', async () => {
    const path = join(tmp.dir, `${SESSION}.jsonl`);
    writeFileSync(path, readFileSync(FIXTURE));
    const afterBranch = offsetAfter('a7');
    const read = await readClaudeCodeTranscript(path, { fromOffset: afterBranch });
    const turns = only(read.conversations).turns.map(shape);
    // u4's parent a6 is in the part already read: u4 still opens the new part's thread.
    expect(turns[0]).toBe('user: Yes, add BullMQ with 5 retries.');
    expect(turns.join('\n')).not.toContain('Kafka');
  });

  it('leaves a line still being written for the next read', async () => {
    const path = join(tmp.dir, `${SESSION}.jsonl`);
    const upTo = offsetAfter('u2');
    const next = LINES[LINES.findIndex((l) => l.includes('"uuid":"a6"'))] ?? '';
    writeFileSync(path, Buffer.concat([readFileSync(FIXTURE).subarray(0, upTo), Buffer.from(next.slice(0, 40))]));
    const first = await readClaudeCodeTranscript(path);
    expect(first.nextOffset).toBe(upTo);
    expect(only(first.conversations).turns.at(-1)?.text).toBe('ok');
    appendFileSync(path, `${next.slice(40)}\n`);
    const second = await readClaudeCodeTranscript(path, { fromOffset: first.nextOffset });
    expect(only(second.conversations).turns.map(shape)).toEqual(['assistant: Shall I add BullMQ to the email jobs?']);
  });

  it('takes the leaf from the main thread even when a sidechain line comes last, and skips noise lines and synthetic replies', async () => {
    const path = join(tmp.dir, 's.jsonl');
    const entry = (uuid: string, parent: string | null, type: string, content: unknown, extra: object = {}) =>
      JSON.stringify({
        type,
        uuid,
        parentUuid: parent,
        sessionId: 's',
        cwd: '/w',
        timestamp: '2026-01-01T00:00:00Z',
        message: { role: type, content },
        ...extra,
      });
    writeFileSync(
      path,
      [
        '{not json',
        entry('x1', null, 'user', 'first question'),
        entry('x2', 'x1', 'assistant', [{ type: 'text', text: 'first answer' }]),
        entry('x2b', 'x2', 'assistant', [{ type: 'text', text: 'API Error: 529 overloaded' }], { isApiErrorMessage: true }),
        JSON.stringify({
          type: 'assistant',
          uuid: 'x2c',
          parentUuid: 'x2b',
          sessionId: 's',
          message: { role: 'assistant', model: '<synthetic>', content: [{ type: 'text', text: 'No response requested.' }] },
        }),
        '',
        '[1,2,3]',
        entry('x3', 'x2', 'assistant', [{ type: 'text', text: 'side work' }], { isSidechain: true }),
      ].join('\n') + '\n',
    );
    const c = only((await readClaudeCodeTranscript(path)).conversations);
    expect(c.turns.map(shape)).toEqual(['user: first question', 'assistant: first answer']);
    expect(c.id).toBe('s');
  });

  it('returns nothing for a transcript with no visible turn', async () => {
    const path = join(tmp.dir, 'empty.jsonl');
    writeFileSync(path, `${JSON.stringify({ type: 'summary', summary: 'x', leafUuid: 'y' })}\n`);
    expect((await readClaudeCodeTranscript(path)).conversations).toEqual([]);
  });
});
