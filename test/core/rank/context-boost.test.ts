import { describe, expect, it } from 'vitest';
import {
  contextBoosts,
  DEFAULT_CONTEXT_WEIGHTS,
  holdBehindSources,
  namedSpeakers,
  namedSpeakerTypes,
  NEIGHBOUR_WINDOW_MS,
  withoutNames,
  type ContextWeights,
} from '../../../src/core/rank/context-boost.js';
import { dateMatch, timeExpressions } from '../../../src/core/rank/time-expression.js';
import { asEntityId } from '../../../src/core/types.js';

const [a, b, c, d] = [1, 2, 3, 4].map(asEntityId) as [
  ReturnType<typeof asEntityId>,
  ReturnType<typeof asEntityId>,
  ReturnType<typeof asEntityId>,
  ReturnType<typeof asEntityId>,
];
const weights: ContextWeights = { timeWeight: 0.5, lateShare: 0.5, graphWeight: 0.25 };

describe('timeExpressions', () => {
  it.each([
    ['When did Melanie go camping in June?', [{ month: 5 }]],
    ['What setback did Melanie face in October 2023?', [{ year: 2023, month: 9 }]],
    ['What did she show on October 13, 2023?', [{ year: 2023, month: 9, day: 13 }]],
    ['What did Gina find on 1 February, 2023?', [{ year: 2023, month: 1, day: 1 }]],
    ['date: 1:56 pm on 8 May, 2023', [{ year: 2023, month: 4, day: 8 }]],
    ['¿Qué hizo Ana el 8 de mayo de 2023?', [{ year: 2023, month: 4, day: 8 }]],
    ['¿Qué pasó en julio de 2023?', [{ year: 2023, month: 6 }]],
    ['How often did she go to the beach in 2023?', [{ year: 2023 }]],
    ['notes of 2023-05-08', [{ year: 2023, month: 4, day: 8 }]],
  ])('reads %s', (text, expected) => {
    expect(timeExpressions(text)).toEqual(expected);
  });

  it('reads no date where a month word is not a time', () => {
    expect(timeExpressions('May I ask what you did?')).toEqual([]);
    expect(timeExpressions('nadó en mar abierto')).toEqual([]);
    expect(timeExpressions('who wrote the first computer program')).toEqual([]);
    expect(timeExpressions('we counted 2023 birds')).toEqual([]);
  });
});

describe('dateMatch', () => {
  const stored = { year: 2023, month: 6, day: 2 }; // 2 July 2023
  it('is 1 inside the expression, at its precision', () => {
    expect(dateMatch({ month: 6 }, stored, 0.5)).toBe(1);
    expect(dateMatch({ year: 2023 }, stored, 0.5)).toBe(1);
    expect(dateMatch({ year: 2023, month: 6 }, stored, 0.5)).toBe(1);
    expect(dateMatch({ year: 2023, month: 6, day: 2 }, stored, 0.5)).toBe(1);
  });
  it('gives the late share to a date just after (told after the event), and nothing before', () => {
    expect(dateMatch({ month: 5 }, stored, 0.5)).toBe(0.5);
    expect(dateMatch({ month: 11 }, { year: 2024, month: 0 }, 0.25)).toBe(0.25);
    expect(dateMatch({ year: 2023, month: 5, day: 28 }, stored, 0.5)).toBe(0.5);
    expect(dateMatch({ month: 7 }, stored, 0.5)).toBe(0);
    expect(dateMatch({ year: 2022, month: 6 }, stored, 0.5)).toBe(0);
    expect(dateMatch({ year: 2023, month: 6, day: 3 }, stored, 0.5)).toBe(0);
  });
  it('never matches a stored date without a month', () => {
    expect(dateMatch({ year: 2023 }, { year: 2023 }, 0.5)).toBe(0);
  });
});

describe('contextBoosts', () => {
  const strength = new Map([
    [a, 2],
    [b, -1],
    [c, 0.5],
    [d, -0.5],
  ]);

  it('adds a share of the strongest positive related candidate, never a sum, never a negative one', () => {
    const edges = [
      { from: a, to: b },
      { from: c, to: b },
      { from: d, to: b },
      { from: a, to: asEntityId(99) },
    ];
    const boosts = contextBoosts({ strength, edges, dates: new Map(), asked: [] }, weights);
    expect(boosts.get(b)).toEqual({ time: 0, graph: 0.25 * 2, neighbour: 0, speaker: 0 });
    expect(boosts.get(a)).toEqual({ time: 0, graph: 0, neighbour: 0, speaker: 0 }); // b is negative; 99 is no candidate
    expect(boosts.get(d)).toEqual({ time: 0, graph: 0, neighbour: 0, speaker: 0 });
    expect(boosts.has(asEntityId(99))).toBe(false);
  });

  it('with graphBelowSource, lifts a related candidate at most level with its source, never past it', () => {
    const edges = [
      { from: a, to: b },
      { from: a, to: c },
    ];
    const strong = { ...weights, graphWeight: 1, graphBelowSource: true };
    const boosts = contextBoosts({ strength, edges, dates: new Map(), asked: [] }, strong);
    expect(boosts.get(b)?.graph).toBe(2); // min(1 × 2, 2 − (−1) = 3)
    expect(boosts.get(c)?.graph).toBe(1.5); // min(1 × 2, 2 − 0.5): level with a, not past it
    const free = contextBoosts({ strength, edges, dates: new Map(), asked: [] }, { ...strong, graphBelowSource: false });
    expect(free.get(c)?.graph).toBe(2); // 0.5 + 2 would pass a
  });

  it('adds the time weight where a stored date answers the query, the late share just after', () => {
    const dates = new Map([
      [a, [{ year: 2023, month: 5, day: 20 }]],
      [b, [{ year: 2023, month: 6, day: 2 }]],
      [c, [{ year: 2023, month: 8, day: 1 }]],
    ]);
    const boosts = contextBoosts({ strength, edges: [], dates, asked: [{ month: 5 }] }, weights);
    expect(boosts.get(a)?.time).toBe(0.5);
    expect(boosts.get(b)?.time).toBe(0.25);
    expect(boosts.get(c)?.time).toBe(0);
    expect(boosts.get(d)?.time).toBe(0);
  });

  it('adds nothing with zero weights or a query without a date', () => {
    const dates = new Map([[a, [{ year: 2023, month: 5 }]]]);
    const off = contextBoosts(
      { strength, edges: [{ from: a, to: b }], dates, asked: [{ month: 5 }] },
      { timeWeight: 0, lateShare: 0, graphWeight: 0 },
    );
    expect([...off.values()].every((x) => x.time === 0 && x.graph === 0)).toBe(true);
    const noDate = contextBoosts({ strength, edges: [], dates, asked: [] }, DEFAULT_CONTEXT_WEIGHTS);
    expect(noDate.get(a)?.time).toBe(0);
  });

  it('lifts a candidate written next to a strong one: ids within the span, created within the window', () => {
    // a (id 1) is strong; b (2) was written right after it, c (3) two writes later, d (4) a day later.
    const hour = NEIGHBOUR_WINDOW_MS;
    const createdAt = new Map([
      [a, 0],
      [b, 1000],
      [c, 2000],
      [d, 2000 + 24 * hour],
    ]);
    const near = { ...weights, graphWeight: 0, neighbourWeight: 0.5 };
    const one = contextBoosts({ strength, edges: [], dates: new Map(), asked: [], createdAt }, near);
    expect(one.get(b)?.neighbour).toBe(0.5 * 2); // from a
    expect(one.get(c)?.neighbour).toBe(0); // b is negative and a is two ids away
    expect(one.get(a)?.neighbour).toBe(0); // b is negative
    expect(one.get(d)?.neighbour).toBe(0); // c is its neighbour by id, not by time
    const two = contextBoosts({ strength, edges: [], dates: new Map(), asked: [], createdAt }, { ...near, neighbourSpan: 2 });
    expect(two.get(c)?.neighbour).toBe(0.5 * 2);
    expect(two.get(a)?.neighbour).toBe(0.5 * 0.5); // from c
    // c (0.5) two writes after a (2): share would lift it past a; below stops level; gap moves part way.
    const lift = (neighbourMode: 'share' | 'below' | 'gap') =>
      contextBoosts(
        { strength, edges: [], dates: new Map(), asked: [], createdAt },
        { ...near, neighbourWeight: 1, neighbourSpan: 2, neighbourMode },
      ).get(c);
    expect(lift('share')).toMatchObject({ neighbour: 2, neighbourOf: a });
    expect(lift('below')).toMatchObject({ neighbour: 1.5, neighbourOf: a });
    expect(lift('gap')).toMatchObject({ neighbour: 1.5, neighbourOf: a });
    const off = contextBoosts({ strength, edges: [], dates: new Map(), asked: [], createdAt }, weights);
    expect([...off.values()].every((x) => x.neighbour === 0)).toBe(true);
  });

  it('lifts nothing by write order when every candidate was written within one window (issue 24)', () => {
    // The same memory, d written within the hour too: everything is everything's neighbour in time.
    const createdAt = new Map([
      [a, 0],
      [b, 1000],
      [c, 2000],
      [d, NEIGHBOUR_WINDOW_MS],
    ]);
    const near = { ...weights, graphWeight: 0, neighbourWeight: 1, neighbourSpan: 2, neighbourMode: 'below' as const };
    const boosts = contextBoosts({ strength, edges: [], dates: new Map(), asked: [], createdAt }, near);
    expect([...boosts.values()].every((x) => x.neighbour === 0 && x.neighbourOf === undefined)).toBe(true);
    // One write an hour and a millisecond later, and the pairs within the hour count again.
    createdAt.set(d, NEIGHBOUR_WINDOW_MS + 1);
    expect(contextBoosts({ strength, edges: [], dates: new Map(), asked: [], createdAt }, near).get(c)?.neighbourOf).toBe(a);
  });

  it('rejects a negative or non-finite weight, saying which', () => {
    expect(() => contextBoosts({ strength, edges: [], dates: new Map(), asked: [] }, { ...weights, graphWeight: -1 })).toThrow(
      /graphWeight/,
    );
    expect(() => contextBoosts({ strength, edges: [], dates: new Map(), asked: [] }, { ...weights, timeWeight: NaN })).toThrow(
      /timeWeight/,
    );
    expect(() =>
      contextBoosts({ strength, edges: [], dates: new Map(), asked: [] }, { ...weights, neighbourWeight: 0.5, neighbourSpan: 0 }),
    ).toThrow(/neighbourSpan/);
  });
});

describe('namedSpeakers and the speaker lift (issue 37)', () => {
  const DAY = 86_400_000;
  // A conversation of two sessions: a and b by Caroline, c and d by Melanie, days apart.
  const types = new Map([
    [a, 'Caroline'],
    [b, 'Caroline'],
    [c, 'Melanie'],
    [d, 'Melanie'],
  ]);
  const sessions = new Map([
    [a, 0],
    [b, 5 * DAY],
    [c, 0],
    [d, 5 * DAY],
  ]);

  it('finds the turns of the person the question names, as a whole word in the same case, possessives too', () => {
    expect([...namedSpeakers('What did Caroline research?', types, sessions)]).toEqual([a, b]);
    expect([...namedSpeakers("What are Melanie's pets' names?", types, sessions)]).toEqual([c, d]);
    expect(namedSpeakers('what did caroline research?', types, sessions).size).toBe(0);
    expect(namedSpeakers('What did Carolines research?', types, sessions).size).toBe(0);
  });

  it('finds none in a memory written in one sitting, when every speaker is named, or for a type that is no name', () => {
    const once = new Map([...sessions].map(([id]) => [id, 0]));
    expect(namedSpeakers('What did Caroline research?', types, once).size).toBe(0);
    expect(namedSpeakers('What did Caroline and Melanie both paint?', types, sessions).size).toBe(0);
    const common = new Map([
      [a, 'person'],
      [b, 'Event'],
      [c, 'Project X'],
      [d, 'Thing'],
    ]);
    expect(namedSpeakers('which person, which Project X?', common, sessions).size).toBe(0);
    expect([...namedSpeakers('Which Event was it?', common, sessions)]).toEqual([b]);
    // A sentence's first word is capitalised whatever it is: no sign of a name.
    expect(namedSpeakers('Event planning for June?', common, sessions).size).toBe(0);
    expect(namedSpeakers('¿Thing? Event planning.', common, sessions).size).toBe(0);
    expect([...namedSpeakers('Thing. Where is the Thing?', common, sessions)]).toEqual([d]);
  });

  it('adds the speaker weight to those turns and nothing to the others; 0 or absent turns it off', () => {
    const strength = new Map([...types].map(([id]) => [id, 0]));
    const spokenByNamed = namedSpeakers('What did Caroline research?', types, sessions);
    const on = contextBoosts({ strength, edges: [], dates: new Map(), asked: [], spokenByNamed }, { ...weights, speakerWeight: 1.5 });
    expect([a, b, c, d].map((id) => on.get(id)?.speaker)).toEqual([1.5, 1.5, 0, 0]);
    for (const off of [{ ...weights, speakerWeight: 0 }, weights]) {
      const none = contextBoosts({ strength, edges: [], dates: new Map(), asked: [], spokenByNamed }, off);
      expect([...none.values()].every((x) => x.speaker === 0)).toBe(true);
    }
    expect(() => contextBoosts({ strength, edges: [], dates: new Map(), asked: [] }, { ...weights, speakerWeight: -1 })).toThrow(
      /speakerWeight/,
    );
  });
});

describe('the query without the speakers it names (issue 37, withoutSpeakers)', () => {
  const DAY = 86_400_000;
  const types = new Map([
    [a, 'Caroline'],
    [b, 'Melanie'],
  ]);
  const sessions = new Map([
    [a, 0],
    [b, 5 * DAY],
  ]);

  it('names the types namedSpeakers lifts, by the same rule', () => {
    expect([...namedSpeakerTypes('What did Caroline research?', types, sessions)]).toEqual(['Caroline']);
    expect(namedSpeakerTypes('What did Caroline and Melanie both paint?', types, sessions).size).toBe(0);
    // The meaning leg leaves out every speaker named, though the lift then lifts no one.
    expect([...namedSpeakerTypes('What did Caroline and Melanie both paint?', types, sessions, true)]).toEqual(['Caroline', 'Melanie']);
    expect(namedSpeakerTypes('What did they both paint?', types, sessions, true).size).toBe(0);
    expect(
      namedSpeakerTypes(
        'What did Caroline research?',
        types,
        new Map([
          [a, 0],
          [b, 0],
        ]),
      ).size,
    ).toBe(0);
    expect(namedSpeakerTypes('Caroline research?', types, sessions).size).toBe(0);
  });

  it('leaves out each name mid-sentence with its possessive and the space after it, and nothing else', () => {
    const caroline = new Set(['Caroline']);
    expect(withoutNames('What did Caroline research?', caroline)).toBe('What did research?');
    expect(withoutNames("When did Caroline's sister visit?", caroline)).toBe('When did sister visit?');
    expect(withoutNames('When did Caroline’s sister visit?', caroline)).toBe('When did sister visit?');
    expect(withoutNames('Would Caroline like Carolines or CarolineX?', caroline)).toBe('Would like Carolines or CarolineX?');
    // A sentence's first word is kept: no sign of a name there (namesMidSentence).
    expect(withoutNames('Caroline. What did Caroline say?', caroline)).toBe('Caroline. What did say?');
    expect(withoutNames('Is it Caroline?', caroline)).toBe('Is it ?');
  });

  it('is undefined when nothing but the names is left', () => {
    expect(withoutNames(', Caroline!', new Set(['Caroline']))).toBeUndefined();
    expect(withoutNames('"Caroline"', new Set(['Caroline']))).toBe('"Caroline"');
    expect(withoutNames('and Caroline?', new Set(['Caroline']))).toBe('and ?');
  });
});

describe('holdBehindSources', () => {
  const r = (id: ReturnType<typeof asEntityId>, score: number) => ({ id, score });

  it('holds a lifted candidate just behind the match that lifted it, when it was behind it without the lift', () => {
    // b was lifted by a; the re-rank (usage) put it ahead; without the lift it ranked behind a.
    const out = holdBehindSources([r(b, 0.9), r(a, 0.8), r(c, 0.5)], [r(a, 0.8), r(c, 0.6), r(b, 0.4)], new Map([[b, { neighbourOf: a }]]));
    expect(out.map((x) => x.id)).toEqual([a, b, c]);
    expect(out[1]?.score).toBeLessThan(0.8);
    expect(out[1]?.score).toBeGreaterThan(0.8 - 1e-6);
  });

  it('leaves a candidate ahead that usage put ahead of its source without any lift', () => {
    const ranked = [r(b, 0.9), r(a, 0.8)];
    expect(holdBehindSources(ranked, [r(b, 0.85), r(a, 0.8)], new Map([[b, { neighbourOf: a }]]))).toEqual(ranked);
  });

  it('follows a chain: held behind a source that is itself held behind its own', () => {
    // a lifted b, b lifted c; the re-rank put c, then b, ahead of a.
    const out = holdBehindSources(
      [r(c, 0.95), r(b, 0.9), r(a, 0.8)],
      [r(a, 0.8), r(b, 0.5), r(c, 0.3)],
      new Map([
        [b, { neighbourOf: a }],
        [c, { neighbourOf: b }],
      ]),
    );
    expect(out.map((x) => x.id)).toEqual([a, b, c]);
    expect(out.map((x) => x.score)).toEqual([...out.map((x) => x.score)].sort((x, y) => y - x));
  });
});
