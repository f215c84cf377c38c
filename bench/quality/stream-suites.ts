/**
 * The suites bench:stream asks (bench/quality/stream.ts) and the re-finding sweep replays
 * (bench/quality/refind-sweep.ts): each a set of memories, each memory with the stream of
 * questions asked of it in order, split into windows. Built here once so both ask the same.
 */
import { readFileSync } from 'node:fs';
import type { NewEntity, ObservationAddition } from '../../src/core/types.js';
import { rng } from '../latency/generate.js';
import { requireData } from './harness.js';
import { cleanEvidence, locomoHalves, turnsOf, type Sample } from './locomo.js';
import { smallMemories } from './small-memory.js';
import type { Half } from './tally.js';
import { articleHalves, loadXquad } from './xquad.js';

export interface Question {
  readonly text: string;
  readonly gold: ReadonlySet<string>;
  readonly half: Half;
  /** 0-based window of the stream it is asked in. */
  readonly window: number;
  /** The same question in other words (XQuAD: the other language's question of the same id). */
  readonly paraphrase?: string;
}

/** One memory and the stream asked of it. */
export interface Stream {
  readonly label: string;
  readonly entities: readonly NewEntity[];
  readonly additions: readonly ObservationAddition[];
  /** When each entity was written (LoCoMo's sessions); the stream's start where undefined. */
  readonly writtenAt?: readonly (number | undefined)[];
  readonly questions: readonly Question[];
}

export interface Suite {
  readonly name: string;
  readonly limit: number;
  readonly windows: number;
  /** The headline metric. */
  readonly metric: 'hit1' | 'hit5' | 'recall5';
  readonly streams: readonly Stream[];
}

/** Windows by position: question i of n is in window floor(i·w/n). */
export const inWindows = <T extends object>(items: readonly T[], windows: number): (T & { window: number })[] =>
  items.map((q, i) => ({ ...q, window: Math.floor((i * windows) / items.length) }));

export function xquadSuite(): Suite {
  const en = loadXquad('en');
  const es = loadXquad('es');
  const halves = articleHalves(en.articles);
  const streams: Stream[] = [];
  for (const [docs, docLang] of [
    [en, 'en'],
    [es, 'es'],
  ] as const)
    for (const [qs, qLang] of [
      [en, 'en'],
      [es, 'es'],
    ] as const) {
      // The other language's question of the same id: the same need in other words.
      const other = qLang === 'en' ? es : en;
      const questions = [...qs.questions].map(([id, q]) => ({
        text: q.question,
        gold: new Set([q.paragraph]),
        half: halves[q.article] ?? 'A',
        paraphrase: other.questions.get(id)?.question,
      }));
      streams.push({ label: `${qLang}→${docLang}`, entities: docs.entities, additions: [], questions: inWindows(questions, 7) });
    }
  return { name: 'XQuAD', limit: 5, windows: 7, metric: 'hit5', streams };
}

export function locomoSuite(samples: number): Suite {
  const data = JSON.parse(readFileSync(requireData('locomo/locomo10.json'), 'utf8')) as Sample[];
  const halves = locomoHalves(data.map((s) => s.sample_id));
  const streams = data.slice(0, samples).map((sample): Stream => {
    const { entities, additions, writtenAt } = turnsOf(sample, 'metadata');
    const names = new Set(entities.map((e) => e.name));
    const half = halves.get(sample.sample_id) ?? 'A';
    const questions = sample.qa
      .map((qa) => ({ text: qa.question, gold: new Set(cleanEvidence(qa.evidence).filter((d) => names.has(d))), half }))
      .filter((q) => q.gold.size > 0);
    return { label: sample.sample_id, entities, additions, writtenAt, questions: inWindows(questions, 5) };
  });
  return { name: 'LoCoMo', limit: 10, windows: 5, metric: 'recall5', streams };
}

/** Small memories: each memory's questions asked in four rounds, each round in a new seeded order. */
export function smallSuite(): Suite {
  const ROUNDS = 4;
  const streams = smallMemories().map((m, n): Stream => {
    const random = rng(24_000 + n);
    const questions: Question[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order = m.questions.map((q) => ({ q, key: random() })).sort((a, b) => a.key - b.key);
      for (const { q } of order) questions.push({ text: q.text, gold: new Set([q.answer]), half: m.half, window: round });
    }
    return { label: m.label, entities: m.entities, additions: [], questions };
  });
  return { name: 'Small memories', limit: 10, windows: ROUNDS, metric: 'hit1', streams };
}
