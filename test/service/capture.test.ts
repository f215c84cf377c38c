/**
 * service.capture (issue 34 item 2): a conversation becomes one session entity in its project, its
 * turns observations dated when they happened, each turn stored once however often it is captured,
 * a long session continued in parts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Conversation, Turn } from '../../src/capture/conversation.js';
import type { Project } from '../../src/capture/project.js';
import { CAPTURE_TURN_CHARS } from '../../src/core/text/capture-text.js';
import { harness, type Harness } from '../helpers/fixtures.js';

const T0 = Date.UTC(2026, 10, 27, 14, 3);
const NOW = Date.UTC(2026, 10, 28);
const shop: Project = { key: 'github.com/acme/shop', name: 'shop', root: '/src/shop', from: 'git-remote' };

const user = (text: string, minute: number): Turn => ({ role: 'user', text, at: T0 + minute * 60_000 });
const assistant = (text: string, minute: number, tools?: Turn['tools']): Turn => ({
  role: 'assistant',
  text,
  at: T0 + minute * 60_000,
  tools,
});

function session(turns: readonly Turn[], extra: Partial<Conversation> = {}): Conversation {
  return { source: 'claude-code', id: '3f2a9c1e-77aa-4c1d-9e0f-0123456789ab', cwd: '/src/shop', turns, ...extra };
}

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function open(): Promise<Harness> {
  h = await harness({ clock: () => NOW });
  return h;
}

async function stored(name: string) {
  const { graph, usage } = (h as Harness).store;
  const ids = await graph.idsByName([name]);
  const entity = (await graph.entitiesById(ids)).get(ids[0]!);
  const facts = (await usage.signals(ids)).facts.get(ids[0]!);
  return { entity, facts };
}

describe('service.capture', () => {
  it('stores a conversation as one session entity in its project: turns, replies, tool summaries, dated', async () => {
    const { service, store } = await open();
    const result = await service.capture(
      session([
        user('Make the checkout retry when the payment API times out', 0),
        assistant('I will add a retry with backoff.', 1, [
          { tool: 'Edit', target: 'src/checkout.ts', result: 'Applied 1 edit\nline 2\nline 3\nline 4' },
          { tool: 'Bash', target: 'npm test', result: 'FAIL checkout.test.ts', failed: true },
        ]),
        user('ok', 2),
        user("Let's go with three retries, never more", 3),
      ]),
      shop,
    );
    expect(result).toEqual({ session: 'Claude Code session 2026-11-27 3f2a9c1e', turnsAdded: 5, turnsSkipped: 1, redactions: [] });
    const { entity, facts } = await stored(result.session);
    expect(entity?.entityType).toBe('session');
    expect(entity?.observations).toEqual([
      'started: 2026-11-27 14:03 UTC, conversation id: 3f2a9c1e-77aa-4c1d-9e0f-0123456789ab',
      'user: Make the checkout retry when the payment API times out',
      'assistant: I will add a retry with backoff.',
      'tool Edit src/checkout.ts → Applied 1 edit / line 2 / line 3',
      'tool Bash npm test (failed) → FAIL checkout.test.ts',
      "user: Let's go with three retries, never more",
    ]);
    expect(entity?.kinds).toEqual(['metadata', 'prompt', 'reply', 'tool', 'tool', 'decision']);
    expect(facts).toMatchObject({ project: 'github.com/acme/shop', createdAt: T0, status: 'active' });
    const times = (await store.transfer?.readEntities(0, 10))?.records
      .find((r) => r.name === result.session)
      ?.observations.map((o) => o.createdAt);
    expect(times).toEqual([T0, T0, T0 + 60_000, T0 + 60_000, T0 + 60_000, T0 + 180_000]);
    const graph = await store.graph.openNodes([result.session, 'github.com/acme/shop']);
    expect(graph.relations).toEqual([{ from: result.session, to: 'github.com/acme/shop', relationType: 'part_of' }]);
    expect((await stored('github.com/acme/shop')).facts).toMatchObject({ entityType: 'project', project: 'github.com/acme/shop' });
  });

  it('stores each turn once: captured twice, seen by a hook and again in the transcript, or dated otherwise later', async () => {
    const { service } = await open();
    const first = await service.capture(session([user('Use Postgres for the job queue', 0)]), shop);
    // The Stop hook reads the transcript: the prompt the UserPromptSubmit hook stored, then the reply.
    const transcript = session([user('Use Postgres for the job queue', 0), assistant('Done: jobs table added.', 1)]);
    const second = await service.capture(transcript, shop);
    const third = await service.capture(transcript, shop);
    // A hook reading from the middle of the transcript of a session that began the day before.
    const later = await service.capture(session([user('Now add an index on run_at', 60 * 24)], { startedAt: T0 + 86_400_000 }), shop);
    expect([first.turnsAdded, second.turnsAdded, third.turnsAdded, later.turnsAdded]).toEqual([1, 1, 0, 1]);
    expect([second.turnsSkipped, third.turnsSkipped]).toEqual([1, 2]);
    expect(new Set([first.session, second.session, third.session, later.session]).size).toBe(1);
    expect((await stored(first.session)).entity?.observations.filter((o) => !o.startsWith('started'))).toEqual([
      'user: Use Postgres for the job queue',
      'assistant: Done: jobs table added.',
      'user: Now add an index on run_at',
    ]);
  });

  it('keeps two conversations apart that share the first 8 characters of their ids on different days', async () => {
    const { service } = await open();
    const a = await service.capture(session([user('first conversation', 0)], { id: '3f2a9c1e-aaaa' }), undefined);
    const b = await service.capture(
      session([user('second conversation', 0)], { id: '3f2a9c1e-bbbb', startedAt: T0 + 2 * 86_400_000 }),
      undefined,
    );
    expect(a.session).not.toBe(b.session);
    expect(b.session).toBe('Claude Code session 2026-11-29 3f2a9c1e');
  });

  it('continues a session past 1,000 observations in part 2, related continues, and stores nothing twice across parts', async () => {
    const { service, store } = await open();
    const turns = Array.from({ length: 1_100 }, (_, i) => user(`step ${i}: change line ${i}`, i));
    const result = await service.capture(session(turns, { title: 'A long refactor' }), shop);
    expect(result.turnsAdded).toBe(1_100);
    const part1 = await stored(result.session);
    const part2 = await stored(`${result.session} part 2`);
    expect(part1.entity?.observations).toHaveLength(1_000);
    expect(part1.entity?.observations.slice(0, 3)).toEqual([
      'title: A long refactor',
      'started: 2026-11-27 14:03 UTC, conversation id: 3f2a9c1e-77aa-4c1d-9e0f-0123456789ab',
      'user: step 0: change line 0',
    ]);
    expect(part2.entity?.observations).toHaveLength(102);
    expect(part2.entity?.observations[0]).toBe('user: step 998: change line 998');
    expect(part2.facts).toMatchObject({ entityType: 'session', project: 'github.com/acme/shop' });
    const relations = (await store.graph.openNodes([`${result.session} part 2`])).relations;
    expect(relations).toEqual(
      expect.arrayContaining([
        { from: `${result.session} part 2`, to: 'github.com/acme/shop', relationType: 'part_of' },
        { from: `${result.session} part 2`, to: result.session, relationType: 'continues' },
      ]),
    );
    const again = await service.capture(session([...turns, user('one more thing', 2_000)]), shop);
    expect(again).toMatchObject({ session: result.session, turnsAdded: 1, turnsSkipped: 1_100 });
    expect((await stored(`${result.session} part 2`)).entity?.observations.at(-1)).toBe('user: one more thing');
  });

  it('cuts a turn longer than the capture bound, saying how much was left out', async () => {
    const { service } = await open();
    const long = 'x'.repeat(20_000);
    const result = await service.capture(session([user(long, 0)]), undefined);
    const turn = (await stored(result.session)).entity?.observations.find((o) => o.startsWith('user:')) ?? '';
    expect([...turn].length).toBeLessThanOrEqual(CAPTURE_TURN_CHARS);
    expect(turn).toMatch(/ … \[cut: \d+ more characters\]$/);
  });

  it('leaves a conversation without a project global, and stores nothing for one with nothing to say', async () => {
    const { service, store } = await open();
    const chat = await service.capture(
      { source: 'chatgpt', id: '6a1b2c3d-0000', title: 'Trip to Lisbon', startedAt: T0, turns: [user('Plan three days in Lisbon', 0)] },
      undefined,
    );
    expect(chat.session).toBe('ChatGPT conversation 2026-11-27 6a1b2c3d');
    const { facts } = await stored(chat.session);
    expect(facts?.project).toBeUndefined();
    expect((await store.graph.openNodes([chat.session])).relations).toEqual([]);
    const empty = await service.capture(session([user('thanks!', 0), assistant('', 1)], { id: 'ffff0000' }), shop);
    expect(empty).toMatchObject({ turnsAdded: 0, turnsSkipped: 1 });
    expect(await store.graph.idsByName([empty.session])).toEqual([]);
  });
});
