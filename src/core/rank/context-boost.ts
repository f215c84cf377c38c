/**
 * Context the memory already has (issue 18, part 3), as one re-scoring of the fused candidates
 * before the limbic re-rank:
 * - time: when the query names a date ("in June", "on 8 May, 2023"), a candidate whose stored date
 *   (a date in its metadata observations) answers it gains `timeWeight` (time-expression.ts);
 * - graph: a candidate gains `graphWeight` × the strongest positive score among its related
 *   candidates: a turn next to the one that matches, a project of the person who matches. The
 *   strongest one, not a sum, so a hub with many weak neighbours gains no more than anyone.
 * - written together: the same for candidates written next to each other (ids at most
 *   `neighbourSpan` apart, created within NEIGHBOUR_WINDOW_MS): the turn before or after the one
 *   that matches, the fact noted in the same breath. Memory knows its write order without anyone
 *   relating the two; ids only grow, so neighbouring ids are neighbouring writes. Only where the
 *   candidates were not all written in one sitting: then write order tells nothing apart.
 * - speaker (issue 37): a conversation's turn, typed by who said it, gains `speakerWeight` when the
 *   query names that person (namedSpeakers); also only where the candidates were not all written in
 *   one sitting.
 * Scores are in the fused strength's own units (z-scores: fuse-zscore.ts, before its logistic),
 * so a weight of 0.5 is half a standard deviation of the legs' scores. Like the spec's graph
 * signal (graph-boost.ts) it re-ranks the candidates and adds none.
 */
import { dateMatch, type CalendarDate } from './time-expression.js';
import type { EntityId } from '../types.js';

export interface ContextWeights {
  /** Added for a stored date inside the query's time expression. 0 turns the time match off. */
  readonly timeWeight: number;
  /** Share of a stored date just after the expression (the next month / 7 days) counted as a match. */
  readonly lateShare: number;
  /** Share of the strongest related candidate's positive score. 0 turns the graph off. */
  readonly graphWeight: number;
  /**
   * Lift a related candidate at most level with the one that lifts it, never past it: the match
   * keeps its place and its neighbours come up behind it. @default false
   */
  readonly graphBelowSource?: boolean;
  /** Share of the strongest candidate written next to this one. 0 or absent turns it off. */
  readonly neighbourWeight?: number;
  /** How many ids apart two writes may be and still be neighbours. @default 1 */
  readonly neighbourSpan?: number;
  /**
   * `share`: a neighbour gains neighbourWeight × the strong one's score, as the graph does.
   * `below`: the same, but at most level with the strong one.
   * `gap`: it moves neighbourWeight of the way from its own score to the strong one's.
   * In every mode the final order keeps it behind the strong one (holdBehindSources). @default 'share'
   */
  readonly neighbourMode?: 'share' | 'below' | 'gap';
  /**
   * Added to a candidate whose entity type the query names as a person (namedSpeakers): in a
   * conversation stored a turn per entity, typed by its speaker, "What did Caroline research?" is
   * asked of Caroline's turns. 0 or absent turns it off.
   */
  readonly speakerWeight?: number;
  /**
   * The meaning leg searches the query without the speakers it names (issue 37): "What did
   * Caroline research?" is embedded as "What did research?" — the turns seldom say their speaker's
   * name, and the name drew the query toward turns that say it; the speaker lift reads the name
   * instead. Only when the speaker lift is on and the query names a speaker by its rule (every
   * speaker too: "What did Caroline and Melanie both paint?" searches "What did and both paint?").
   * @default false
   */
  readonly withoutSpeakers?: boolean;
}

/** Two writes further apart in time than this are not neighbours, however close their ids. */
export const NEIGHBOUR_WINDOW_MS = 60 * 60 * 1000;

/**
 * search_semantic's weights, from the LoCoMo context study (bench/results/quality-2026-11-23-context.md,
 * bench/results/quality-2026-11-23-neighbours.md). Time 1 and graph 0.5: on half A recall@5 0.551 → 0.605 with hit@1 and MRR
 * level or better (graph 0.5 was picked after half B was seen; that report says so). Neighbours
 * 0.75 within 2 ids, at most level with the match (`below`): chosen on half A alone by the study's
 * rule (best recall@5 whose hit@1 is within 0.01 of no context) on turns no one related: half A
 * 0.557 → 0.643, held-out half B 0.586 → 0.641, hit@1 level (0.650 with fuse-zscore.ts's spread floor).
 * Speaker 1.5 (issue 37): chosen on half A among 0.25-3 by the same rule, A 0.641 → 0.686, held-out
 * B 0.658 → 0.687, hit@1 B 0.403 → 0.438 (bench/results/quality-2026-11-28-spread.md).
 * Without speakers (the meaning leg without the named speakers, issue 37): A 0.686 → 0.715, held-out
 * B 0.687 → 0.720, adversarial B 0.610 → 0.716 (bench/results/quality-2026-11-28-s18-candidates.md).
 */
export const DEFAULT_CONTEXT_WEIGHTS: ContextWeights = Object.freeze({
  timeWeight: 1,
  lateShare: 0.5,
  graphWeight: 0.5,
  neighbourWeight: 0.75,
  neighbourSpan: 2,
  neighbourMode: 'below',
  speakerWeight: 1.5,
  withoutSpeakers: true,
});

export interface ContextInputs {
  /** Each candidate's fused strength, higher is better. */
  readonly strength: ReadonlyMap<EntityId, number>;
  /** Relations among or touching the candidates; direction does not matter. */
  readonly edges: readonly { readonly from: EntityId; readonly to: EntityId }[];
  /** Dates each candidate's metadata observations hold. */
  readonly dates: ReadonlyMap<EntityId, readonly CalendarDate[]>;
  /** The query's time expressions; empty when it names none. */
  readonly asked: readonly CalendarDate[];
  /** When each candidate was created (ms); needed only when neighbourWeight is on (speakerWeight reads it through namedSpeakers). */
  readonly createdAt?: ReadonlyMap<EntityId, number>;
  /** Candidates spoken by a person the query names (namedSpeakers); needed only when speakerWeight is on. */
  readonly spokenByNamed?: ReadonlySet<EntityId>;
}

export interface ContextBoost {
  readonly time: number;
  readonly graph: number;
  /** From a candidate written next to this one. */
  readonly neighbour: number;
  /** The candidate whose strength gave `neighbour`, when it is above 0. */
  readonly neighbourOf?: EntityId;
  /** From the query naming its speaker (its entity type). */
  readonly speaker: number;
}

/**
 * Each candidate's boost (added to its strength): time, graph and neighbour parts, all ≥ 0. The
 * graph and neighbour parts read the strengths before any boost, so a boost never propagates.
 * @example contextBoosts({ strength: new Map([[a, 1], [b, -1]]), edges: [{ from: a, to: b }], dates: new Map(), asked: [] },
 *   { timeWeight: 0.5, lateShare: 0.5, graphWeight: 0.25 }) // b: { time: 0, graph: 0.25, neighbour: 0, speaker: 0 }, a: all 0
 */
export function contextBoosts(inputs: ContextInputs, weights: ContextWeights): Map<EntityId, ContextBoost> {
  const neighbourWeight = weights.neighbourWeight ?? 0;
  const speakerWeight = weights.speakerWeight ?? 0;
  const span = weights.neighbourSpan ?? 1;
  for (const [name, value] of [
    ['timeWeight', weights.timeWeight],
    ['lateShare', weights.lateShare],
    ['graphWeight', weights.graphWeight],
    ['neighbourWeight', neighbourWeight],
    ['speakerWeight', speakerWeight],
  ] as const) {
    if (!Number.isFinite(value) || value < 0) throw new RangeError(`Context weight ${name} is ${value}; it must be finite and >= 0.`);
  }
  if (!Number.isInteger(span) || span < 1) throw new RangeError(`Context neighbourSpan is ${span}; it must be an integer >= 1.`);
  const { strength } = inputs;
  const graph = liftsAlong(inputs.edges, strength, weights.graphWeight, weights.graphBelowSource === true ? 'below' : 'share');
  const near =
    neighbourWeight > 0
      ? liftsAlong(
          writeNeighbours(strength, inputs.createdAt ?? new Map(), span),
          strength,
          neighbourWeight,
          weights.neighbourMode ?? 'share',
        )
      : new Map<EntityId, Lift>();
  const boosts = new Map<EntityId, ContextBoost>();
  for (const id of strength.keys()) {
    let time = 0;
    if (weights.timeWeight > 0 && inputs.asked.length > 0) {
      let match = 0;
      for (const stored of inputs.dates.get(id) ?? [])
        for (const q of inputs.asked) match = Math.max(match, dateMatch(q, stored, weights.lateShare));
      time = weights.timeWeight * match;
    }
    const n = near.get(id);
    const speaker = speakerWeight > 0 && inputs.spokenByNamed?.has(id) === true ? speakerWeight : 0;
    boosts.set(id, {
      time,
      graph: graph.get(id)?.lift ?? 0,
      neighbour: n?.lift ?? 0,
      ...(n === undefined ? {} : { neighbourOf: n.from }),
      speaker,
    });
  }
  return boosts;
}

type Edge = { readonly from: EntityId; readonly to: EntityId };
type Lift = { readonly lift: number; readonly from: EntityId };

/**
 * Per candidate, the largest lift across its edges (either direction) from a positive strength s:
 * `share` weight × s; `below` the same but never past s; `gap` weight × (s − own), never below 0.
 */
function liftsAlong(
  edges: readonly Edge[],
  strength: ReadonlyMap<EntityId, number>,
  weight: number,
  mode: 'share' | 'below' | 'gap',
): Map<EntityId, Lift> {
  const best = new Map<EntityId, Lift>();
  if (weight === 0) return best;
  const reach = (from: EntityId, to: EntityId): void => {
    const own = strength.get(from);
    if (from === to || own === undefined) return;
    const s = strength.get(to);
    if (s === undefined || !(s > 0)) return;
    const lift =
      mode === 'gap' ? weight * Math.max(0, s - own) : mode === 'below' ? Math.min(weight * s, Math.max(0, s - own)) : weight * s;
    if (lift > (best.get(from)?.lift ?? 0)) best.set(from, { lift, from: to });
  };
  for (const e of edges) {
    reach(e.from, e.to);
    reach(e.to, e.from);
  }
  return best;
}

/** Written in more than one sitting: the candidates' write times span more than NEIGHBOUR_WINDOW_MS. */
function writtenApart(ids: Iterable<EntityId>, createdAt: ReadonlyMap<EntityId, number>): boolean {
  const times = [...ids].map((id) => createdAt.get(id)).filter((t): t is number => t !== undefined);
  return times.length > 0 && Math.max(...times) - Math.min(...times) > NEIGHBOUR_WINDOW_MS;
}

const WORD_CHAR = /[\p{L}\p{N}]/u;
/** What may stand between a sentence's end (or the query's start) and its first word. */
const OPENERS = new Set([' ', '\t', '\n', '\r', '\u00a0', '¿', '¡', '"', "'", '“', '‘', '(', '[', '-']);
const SENTENCE_ENDS = new Set(['.', '!', '?', ':', ';']);

/**
 * Whether the word at `at` opens a sentence, where a capital is no sign of a name ("Project
 * deadlines?"): only openers before it, back to the start or to a sentence's end and a space.
 */
function opensSentence(text: string, at: number): boolean {
  let i = at - 1;
  let spaced = false;
  for (; i >= 0 && OPENERS.has(text[i] as string); i--) if ((text[i] as string).trim() === '') spaced = true;
  return i < 0 || (spaced && SENTENCE_ENDS.has(text[i] as string));
}

/** Whether `query` holds `word` as a whole word, in its case, other than as a sentence's first word. */
function namesMidSentence(query: string, word: string): boolean {
  for (let at = query.indexOf(word); at >= 0; at = query.indexOf(word, at + 1)) {
    const before = query[at - 1];
    const after = query[at + word.length];
    const whole = (before === undefined || !WORD_CHAR.test(before)) && (after === undefined || !WORD_CHAR.test(after));
    if (whole && !opensSentence(query, at)) return true;
  }
  return false;
}

/**
 * The candidates whose entity type the query names as a person: a conversation stored a turn per
 * entity, each typed by its speaker (LoCoMo-style memories, imported chats), asked "What did
 * Caroline research?". A type counts when it is written as a name (a capital first letter, no
 * space) and the query holds it as a whole word in the same case, not as a sentence's first word
 * (where every word is capitalised: "Project deadlines?" names no type Project). None unless the candidates were
 * written in more than one sitting (a conversation's sessions: the rule write order follows) and
 * the named types leave some candidates out: a memory written at once, a query naming every
 * speaker or none, and types in lower case ("what person…") lift nothing.
 * @example namedSpeakers('What did Caroline research?', new Map([[1, 'Caroline'], [2, 'Melanie']]),
 *   new Map([[1, 0], [2, 86_400_000]])) // Set { 1 }
 */
export function namedSpeakers(
  query: string,
  types: ReadonlyMap<EntityId, string>,
  createdAt: ReadonlyMap<EntityId, number>,
): Set<EntityId> {
  const named = namedSpeakerTypes(query, types, createdAt);
  return new Set([...types].filter(([, type]) => named.has(type)).map(([id]) => id));
}

/**
 * The entity types namedSpeakers reads as named by the query (the speakers whose turns it lifts),
 * by the same rule; empty when it lifts none. With `everySpeaker`, also when the query names every
 * speaker: the meaning leg leaves them all out (withoutSpeakers), though the lift lifts no one.
 * @example namedSpeakerTypes('What did Caroline research?', new Map([[1, 'Caroline'], [2, 'Melanie']]),
 *   new Map([[1, 0], [2, 86_400_000]])) // Set { 'Caroline' }
 */
export function namedSpeakerTypes(
  query: string,
  types: ReadonlyMap<EntityId, string>,
  createdAt: ReadonlyMap<EntityId, number>,
  everySpeaker = false,
): Set<string> {
  const none = new Set<string>();
  if (!writtenApart(types.keys(), createdAt)) return none;
  const named = new Set<string>();
  for (const type of new Set(types.values())) if (/^\p{Lu}[\p{L}\p{M}'-]*$/u.test(type) && namesMidSentence(query, type)) named.add(type);
  if (named.size === 0 || everySpeaker) return named;
  // A query naming every speaker lifts no one's turns.
  return [...types.values()].every((type) => named.has(type)) ? none : named;
}

const POSSESSIVE = new Set(["'s", '’s']);

/**
 * `query` without the names it holds as whole words (not as a sentence's first word, as
 * namesMidSentence reads them), each with a possessive "'s" and the spaces after it; undefined
 * when that leaves no word. What the meaning leg searches when the query names a speaker
 * (ContextWeights.withoutSpeakers).
 * @example withoutNames("When did Caroline's sister visit?", new Set(['Caroline'])) // 'When did sister visit?'
 */
export function withoutNames(query: string, names: ReadonlySet<string>): string | undefined {
  let out = query;
  for (const name of names) {
    let kept = '';
    let from = 0;
    for (let at = out.indexOf(name); at >= 0; at = out.indexOf(name, at + 1)) {
      if (at < from) continue;
      const before = out[at - 1];
      let end = at + name.length;
      const after = out[end];
      const whole = (before === undefined || !WORD_CHAR.test(before)) && (after === undefined || !WORD_CHAR.test(after));
      if (!whole || opensSentence(out, at)) continue;
      const possessive = out.slice(end, end + 2);
      if (POSSESSIVE.has(possessive) && !WORD_CHAR.test(out[end + 2] ?? ' ')) end += 2;
      while (end < out.length && (out[end] === ' ' || out[end] === '\t')) end++;
      kept += out.slice(from, at);
      from = end;
    }
    out = kept + out.slice(from);
  }
  out = out.trim();
  return [...out].some((c) => WORD_CHAR.test(c)) ? out : undefined;
}

/**
 * Pairs of candidates written next to each other: ids at most `span` apart, created within the
 * window. None when every candidate was written within one window (issue 24): in a memory written
 * in one sitting every entity is a neighbour in time of every other, so write order says nothing
 * of which belong together, and lifting by it alone put an unrelated note beside the match.
 */
function writeNeighbours(strength: ReadonlyMap<EntityId, number>, createdAt: ReadonlyMap<EntityId, number>, span: number): Edge[] {
  if (!writtenApart(strength.keys(), createdAt)) return [];
  const ids = [...strength.keys()].sort((x, y) => x - y);
  const pairs: Edge[] = [];
  for (let i = 0; i < ids.length; i++) {
    const from = ids[i] as EntityId;
    const at = createdAt.get(from);
    if (at === undefined) continue;
    for (let j = i + 1; j < ids.length && (ids[j] as number) - from <= span; j++) {
      const to = ids[j] as EntityId;
      const other = createdAt.get(to);
      if (other !== undefined && Math.abs(other - at) <= NEIGHBOUR_WINDOW_MS) pairs.push({ from, to });
    }
  }
  return pairs;
}

/**
 * A candidate lifted by write order comes up behind the match that lifted it, in the final order
 * too: after the limbic re-rank, whose usage boosts (and min-max blend) could carry the lift past
 * the match, its score is held just below its source's, unless it was already ahead of it in
 * `unlifted` (the same ranking of the candidates without write-order lifts): usage may still raise
 * it past the match as before. Under `below` and `gap` a source is stronger than what it lifts, so
 * chains end; under `share` two may lift each other, and the passes stop at the number of candidates.
 * @example holdBehindSources([{ id: 2, score: 0.9 }, { id: 1, score: 0.8 }], [{ id: 1, score: 0.8 }, { id: 2, score: 0.5 }],
 *   new Map([[2, { neighbourOf: 1 }]])) // [{ id: 1, score: 0.8 }, { id: 2, score: 0.8 × (1 − 1e-9) }]
 */
export function holdBehindSources<T extends { readonly id: EntityId; readonly score: number }>(
  ranked: readonly T[],
  unlifted: readonly { readonly id: EntityId }[],
  boosts: ReadonlyMap<EntityId, Pick<ContextBoost, 'neighbourOf'>>,
): T[] {
  const score = new Map(ranked.map((r) => [r.id, r.score]));
  const place = new Map(unlifted.map((r, i) => [r.id, i]));
  const aheadOnItsOwn = (id: EntityId, source: EntityId): boolean =>
    (place.get(id) ?? Number.POSITIVE_INFINITY) < (place.get(source) ?? Number.POSITIVE_INFINITY);
  let changed = false;
  // A source may itself be held behind its own source: as many passes as the longest chain.
  for (let pass = 0; pass < ranked.length; pass++) {
    let moved = false;
    for (const r of ranked) {
      const source = boosts.get(r.id)?.neighbourOf;
      const now = score.get(r.id);
      const cap = source === undefined ? undefined : score.get(source);
      if (source === undefined || now === undefined || cap === undefined || now < cap || aheadOnItsOwn(r.id, source)) continue;
      score.set(r.id, cap * (1 - 1e-9));
      moved = changed = true;
    }
    if (!moved) break;
  }
  if (!changed) return [...ranked];
  return ranked
    .map((r) => (score.get(r.id) === r.score ? r : { ...r, score: score.get(r.id) as number }))
    .sort((a, b) => b.score - a.score || a.id - b.id);
}
