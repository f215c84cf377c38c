/**
 * The speaker lift (issue 37, core/rank/context-boost.ts namedSpeakers): in a conversation stored a
 * turn per entity, each typed by its speaker and written at its session's time, a question naming a
 * person is asked of that person's turns. Real model, over MCP, both tools, SQLite and PostgreSQL (on-postgres.test.ts). A memory written in one
 * sitting (not a conversation's sessions) ranks as without the lift.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from '../helpers/fixtures.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 23);

type Turn = readonly [speaker: string, text: string];
/** Session 1: Melanie's pottery, at length. Session 2, days later: Caroline's one pottery turn among others. */
const SESSION_1: Turn[] = [
  ['Melanie', 'Caroline, I finally finished my pottery class, we made bowls and mugs on the wheel.'],
  ['Caroline', 'That sounds lovely, how did it go?'],
  ['Melanie', 'The pottery class was hard at first, Caroline, my first bowls collapsed on the wheel.'],
  ['Caroline', 'I would love to see them.'],
  ['Melanie', 'My pottery teacher says I have a steady hand now, Caroline; the class is on Thursdays.'],
  ['Melanie', 'Next term the pottery class moves on to glazing and firing in the kiln, Caroline.'],
  ['Melanie', 'Caroline, I took the kids to a pottery class too, they painted little plates.'],
  ['Caroline', 'Your kids must have had fun.'],
];
const SESSION_2: Turn[] = [
  ['Caroline', 'Guess what, I signed up for a ceramics course at the community center!'],
  ['Melanie', 'Oh wow, good for you!'],
  ['Caroline', 'I also went to the support group meeting on Tuesday.'],
  ['Melanie', 'How was the meeting?'],
];

const turns = (session: number, list: readonly Turn[]) =>
  list.map(([speaker, text], i) => ({ name: `D${session}:${i + 1}`, entityType: speaker, observations: [text] }));

interface Result {
  readonly name: string;
  readonly entityType: string;
  readonly scoring: { readonly speaker_lift?: number };
}

/** A memory of two sessions of turns, each session written at `written(session)`, then embedded. */
async function conversation(sessions: readonly [Turn[], Turn[]], written: (session: number) => number): Promise<Harness> {
  let now = NOW;
  const h = await harness({ embedder: 'real', clock: () => now });
  for (const [i, list] of sessions.entries()) {
    now = written(i + 1);
    await h.ok('create_entities', { entities: turns(i + 1, list) });
  }
  now = NOW;
  await h.service.drainEmbeddings();
  return h;
}

const memory = (written: (session: number) => number) => conversation([SESSION_1, SESSION_2], written);

const QUERY = 'What pottery class did Caroline take?';

describe('a question naming a speaker, in a conversation of several sessions (real model)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await memory((session) => NOW - (10 - 5 * session) * DAY);
  });
  afterAll(async () => {
    await h.close();
  });

  it("puts the named speaker's turn of a later session into the top 5, and says why", async () => {
    const r = await h.ok<{ results: Result[] }>('search_semantic', { query: QUERY, limit: 5 });
    const names = r.results.map((x) => x.name);
    expect(names).toContain('D2:1');
    const lifted = r.results.find((x) => x.name === 'D2:1');
    expect(lifted?.scoring.speaker_lift).toBe(1.5);
    // Only Caroline's turns are lifted.
    for (const x of r.results) expect(x.scoring.speaker_lift !== undefined).toBe(x.entityType === 'Caroline');
  });

  it('does the same in hybrid_search with its defaults', async () => {
    const r = await h.ok<{ results: { name: string; scores: { speaker_lift?: number } }[] }>('hybrid_search', { query: QUERY, limit: 5 });
    expect(r.results.map((x) => x.name)).toContain('D2:1');
    expect(r.results.find((x) => x.name === 'D2:1')?.scores.speaker_lift).toBe(1.5);
  });

  it('is explained on the page and in the MCP App view (web/why.js), for both tools', async () => {
    const page: string = '../../web/why.js'; // plain JavaScript for the browser, without types
    const why = (await import(page)) as {
      semanticWhy: (r: unknown, position: number) => string;
      semanticRows: (r: unknown) => [string, unknown][];
      why: (s: unknown, position: number) => string;
      scoreRows: (s: unknown) => [string, unknown][];
    };
    const semantic = await h.ok<{ results: Result[] }>('search_semantic', { query: QUERY, limit: 5 });
    const turn = semantic.results.find((x) => x.name === 'D2:1');
    expect(why.semanticWhy(turn, 1)).toContain('spoken by the person the question names (+1.5)');
    expect(why.semanticRows(turn)).toContainEqual(['speaker lift', 1.5]);
    const other = semantic.results.find((x) => x.entityType === 'Melanie');
    if (other !== undefined) expect(why.semanticWhy(other, 2)).not.toContain('spoken by');
    const hybrid = await h.ok<{ results: { name: string; scores: unknown }[] }>('hybrid_search', { query: QUERY, limit: 5 });
    const scores = hybrid.results.find((x) => x.name === 'D2:1')?.scores;
    expect(why.why(scores, 1)).toContain('spoken by the person the question names (+1.5)');
    expect(why.scoreRows(scores)).toContainEqual(['speaker lift', 1.5]);
  });
});

describe('the same turns written in one sitting (not a conversation of sessions)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await memory(() => NOW);
  });
  afterAll(async () => {
    await h.close();
  });

  it('lifts nothing for the name', async () => {
    const r = await h.ok<{ results: Result[] }>('search_semantic', { query: QUERY, limit: 5 });
    expect(r.results.every((x) => x.scoring.speaker_lift === undefined)).toBe(true);
  });
});

/**
 * The meaning leg searches without the name (issue 37, ContextWeights.withoutSpeakers): the turns
 * seldom say their speaker's name while the other speaker's do ("Caroline, that is so brave"), and
 * the name drew the question's vector toward them. The speaker lift still reads the name.
 */
const READING_1: Turn[] = [
  ['Melanie', 'Caroline, did you sleep well? You looked tired yesterday, Caroline.'],
  ['Caroline', 'I slept fine, thanks for asking.'],
  ['Melanie', 'Caroline, I went hiking with the kids on Sunday, it was beautiful.'],
  ['Caroline', 'I have been reading about adoption agencies all week, comparing what each one asks.'],
  ['Melanie', 'Caroline, that is so brave of you!'],
  ['Caroline', 'Thanks, Melanie, it means a lot to me.'],
];
const READING_2: Turn[] = [
  ['Caroline', 'Hey Melanie, how was your week?'],
  ['Melanie', 'Busy, Caroline! I painted a sunset for the living room.'],
  ['Caroline', 'I went to the library and looked into a few studies on fostering older kids.'],
  ['Melanie', 'Caroline, you always know so much.'],
];
const READING = 'What has Caroline been reading about?';

const reading = (written: (session: number) => number) => conversation([READING_1, READING_2], written);

describe('a question naming a speaker searches by meaning without the name (real model)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await reading((session) => NOW - (10 - 5 * session) * DAY);
  });
  afterAll(async () => {
    await h.close();
  });

  it('puts the turn that answers first, and says what it searched, in both tools', async () => {
    const semantic = await h.ok<{ results: Result[]; searched_without_names?: string }>('search_semantic', { query: READING, limit: 5 });
    expect(semantic.results[0]?.name).toBe('D1:4');
    expect(semantic.searched_without_names).toBe('What has been reading about?');
    expect(semantic.results[0]?.scoring.speaker_lift).toBe(1.5);
    const hybrid = await h.ok<{ results: { name: string }[]; searched_without_names?: string }>('hybrid_search', {
      query: READING,
      limit: 5,
    });
    expect(hybrid.results[0]?.name).toBe('D1:4');
    expect(hybrid.searched_without_names).toBe('What has been reading about?');
  });

  it('leaves out every speaker a question names, though it lifts no one then', async () => {
    const r = await h.ok<{ results: Result[]; searched_without_names?: string }>('search_semantic', {
      query: 'What have Caroline and Melanie been reading about?',
      limit: 5,
    });
    expect(r.searched_without_names).toBe('What have and been reading about?');
    expect(r.results.every((x) => x.scoring.speaker_lift === undefined)).toBe(true);
  });

  it('searches the question as written when it names no speaker', async () => {
    const r = await h.ok<{ searched_without_names?: string }>('search_semantic', { query: 'Who read about adoption agencies?', limit: 5 });
    expect(r.searched_without_names).toBeUndefined();
  });

  it('says what it searched on the page and in the MCP App view (web/why.js), for both tools', async () => {
    const page: string = '../../web/why.js'; // plain JavaScript for the browser, without types
    const why = (await import(page)) as { searchedNote: (answer: unknown) => string };
    for (const tool of ['search_semantic', 'hybrid_search'])
      expect(why.searchedNote(await h.ok(tool, { query: READING, limit: 5 }))).toBe(
        ' Searched by meaning as “What has been reading about?”: the people it names are read as who spoke.',
      );
    expect(why.searchedNote(await h.ok('hybrid_search', { query: 'Who read about adoption agencies?', limit: 5 }))).toBe('');
  });
});

describe('the same reading turns written in one sitting', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await reading(() => NOW);
  });
  afterAll(async () => {
    await h.close();
  });

  it('searches the question as written', async () => {
    for (const tool of ['search_semantic', 'hybrid_search'])
      expect((await h.ok<{ searched_without_names?: string }>(tool, { query: READING, limit: 5 })).searched_without_names).toBeUndefined();
  });
});
