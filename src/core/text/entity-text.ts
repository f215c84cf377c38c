/**
 * The text an entity is embedded from (docs/ranking.md, "Legs"):
 * `{name} ({entityType}) | obs | obs | ... | Rel: type → target; ...` within a token budget,
 * choosing observations Head + Tail + Diversity when they do not all fit.
 */
import { DEFAULT_OBSERVATION_KIND, type Entity, type Relation } from '../types.js';
import { tokenizeWords } from './fts-query.js';
import { isStopword, readLanguage, stopwordLanguages } from './stopwords.js';

/**
 * An observation as the keyword index holds it: a kind other than generic goes first, in brackets
 * (the seed system's FTS text), so "decision" or "preference" finds the observations of that kind
 * (issue 25). Generic observations, most of them, are indexed as they are: queries that name no kind
 * score as before. The substring index of search_nodes never gets the kind (official contract).
 * @example keywordObservation('use SQLite', 'decision') // '[decision] use SQLite'
 */
export function keywordObservation(content: string, kind: string): string {
  return kind === DEFAULT_OBSERVATION_KIND ? content : `[${kind}] ${content}`;
}

/** The spec's budget (MAX_TOKENS). */
export const MAX_ENTITY_TOKENS = 480;
const SEPARATOR = ' | ';
/** Shares of the observation budget kept for the first and the last observations. */
const HEAD_SHARE = 0.4;
const TAIL_SHARE = 0.3;

export type TokenCounter = (text: string) => number;

function relationText(relations: readonly Relation[]): string {
  if (relations.length === 0) return '';
  return `Rel: ${relations.map((r) => `${r.relationType} → ${r.to}`).join('; ')}`;
}

function assemble(header: string, observations: readonly string[], rel: string): string {
  return [header, ...observations, ...(rel === '' ? [] : [rel])].join(SEPARATOR);
}

const headerOf = (entity: Entity): string => `${entity.name} (${entity.entityType})`;

/** Every observation of the entity's own language and every relation, as embedded when they fit. */
const wholeText = (entity: Entity, relations: readonly Relation[]): string =>
  assemble(headerOf(entity), ownObservations(entity.observations), relationText(relations));

/**
 * Function words an observation needs to tell its language: a word or two ("ja", "de la") tell
 * nothing, and two observations of one memory must not read as two languages by chance.
 */
const MIN_FUNCTION_WORDS = 2;
/** Words an observation needs to tell its language. */
const MIN_WORDS = 4;

/**
 * The language an observation reads as: a language of stopwords.ts (readLanguage), 'eng' for
 * English (no other language read), when at least MIN_WORDS words and MIN_FUNCTION_WORDS of them
 * that language's function words; undefined when its words do not tell ("Madrid", "born 1815").
 * @example observationLanguage('Der Nutzer hat mich gefragt, wo der Garten ist') // 'deu'
 * @example observationLanguage('she lives in the house by the river') // 'eng'
 */
export function observationLanguage(text: string): string | undefined {
  const words = tokenizeWords(text.toLowerCase());
  if (words.length < MIN_WORDS) return undefined;
  const read = readLanguage(words) ?? 'eng';
  let functionWords = 0;
  for (const w of words) {
    const languages = stopwordLanguages(w);
    if (read === 'eng' ? isStopword(w) && languages.length === 0 : languages.includes(read)) functionWords++;
  }
  return functionWords >= MIN_FUNCTION_WORDS ? read : undefined;
}

/**
 * The language an entity's first observation reads as, with fewer words to go on than
 * observationLanguage asks of the others: its function words' language (readLanguage), else
 * English when it holds an English function word ("on", "in": no other language was read), else
 * undefined ("Madrid", "born 1815"). The first observation is what the entity is, and most are a
 * few words ("they need water twice a week"): a note appended later in another language must not
 * become the entity's language because it is longer (a German note then went into the vector of
 * every such entity it was added to, and every German question found it).
 * @example firstLanguage('they need water twice a week') // 'eng'
 */
function firstLanguage(text: string): string | undefined {
  const words = tokenizeWords(text.toLowerCase());
  return readLanguage(words) ?? (words.some((w) => isStopword(w)) ? 'eng' : undefined);
}

/**
 * An entity's observations split by language: `own`, in the entity's language (its first
 * observation's, firstLanguage, when that tells one; else that of its first observation whose
 * words tell one), and those whose words tell another, `asides` — typically notes
 * an agent appended in the language it was asked in. Asides stay out of the entity's vector (a few
 * German sentences would pull a Spanish paragraph's single vector toward every German question)
 * and get vectors of their own (entityAsideText), so they are still found. Observations whose words
 * tell no language are the entity's own. A memory in one language has no asides.
 * @example splitAsides(['vive en Madrid', 'Der Nutzer fragte, wo sie wohnt']) // { own: ['vive en Madrid'], asides: ['Der Nutzer fragte, wo sie wohnt'] }
 */
export function splitAsides(observations: readonly string[]): { own: string[]; asides: string[] } {
  const known = splits.get(observations);
  if (known !== undefined) return { own: [...known.own], asides: [...known.asides] };
  let language: string | undefined = observations.length > 1 ? firstLanguage(observations[0] ?? '') : undefined;
  const own: string[] = [];
  const asides: string[] = [];
  for (const o of observations) {
    const read = observationLanguage(o);
    if (read !== undefined && language !== undefined && read !== language) asides.push(o);
    else {
      language ??= read;
      own.push(o);
    }
  }
  splits.set(observations, { own: [...own], asides: [...asides] });
  return { own, asides };
}

/** splitAsides' answers by observation list: one entity's text, budget and vectors ask for it several times. */
const splits = new WeakMap<readonly string[], { readonly own: readonly string[]; readonly asides: readonly string[] }>();

/**
 * What an aside's vector is handicapped by: a search answers an entity at the nearest of its own
 * vector, its observations' and its asides' plus this (cosine distance), so a note in the question's
 * language does not outrank the entities whose own text answers the question.
 */
export const ASIDE_DISTANCE = 0.03;

/**
 * How much nearer than its own vector an entity's asides may bring it (cosine distance): a note
 * holding the question it was asked, or one framed like every other note ("Der Nutzer hat mich
 * gefragt: …"), matches a like question far better than any entity's own text does, and before
 * this an agent's wrong first answer, once noted, stayed first, and the noted entities came first
 * for questions about the others. A note's own facts still lift its entity, by this much at most.
 * Chosen on the small memories' streams (both halves agree: the synthetic German note-writer's
 * worst window −0.017 → −0.008 on half A and −0.008 → 0.000 on half B; bench/results/stream-2026-11-28-s18-after.md).
 */
export const ASIDE_PULL = 0.02;

/**
 * An entity's distance when its nearest vector is an aside (`ranked`, ASIDE_DISTANCE added):
 * never more than ASIDE_PULL nearer than its own vector's (`own`), and never farther.
 * @example asidePull(0.1, 0.3) // 0.28
 * @example asidePull(0.29, 0.3) // 0.29
 */
export const asidePull = (ranked: number, own: number): number => Math.min(own, Math.max(ranked, own - ASIDE_PULL));

/**
 * The version of how entity vectors are made: a store whose vectors were made by an older one
 * queues again, once, the entities whose vectors it changed (2: asides left out, splitAsides; 3:
 * an entity's language read from its first observation however short, firstLanguage).
 */
export const ENTITY_TEXT_VERSION = '3';

/** Whether an entity has asides (splitAsides), so its vector may have changed with ENTITY_TEXT_VERSION 2 or 3. */
export const hasAsides = (observations: readonly string[]): boolean =>
  observations.length > 1 && splitAsides(observations).asides.length > 0;

/** The observations an entity's own vector is made from (splitAsides' `own`). */
export const ownObservations = (observations: readonly string[]): readonly string[] => {
  const { own, asides } = splitAsides(observations);
  return asides.length === 0 ? observations : own;
};

function wordSet(text: string): Set<string> {
  return new Set(tokenizeWords(text.toLowerCase()));
}

/**
 * Whether an entity's whole text (every observation but its asides, every relation) fits the budget: when it does not,
 * buildEntityText leaves observations out, and a store that keeps observation vectors gives each
 * observation one of its own (so a fact left out of the entity's text is still found by meaning).
 */
export function fitsEntityBudget(
  entity: Entity,
  relations: readonly Relation[],
  countTokens: TokenCounter,
  maxTokens: number = MAX_ENTITY_TOKENS,
): boolean {
  return countTokens(wholeText(entity, relations)) <= maxTokens;
}

/**
 * Characters of observations above which an entity may not fit one vector (480 tokens are rarely
 * fewer): where no tokenizer is at hand (an upgraded memory, a migrated one), an entity of more than
 * one observation and more characters is embedded again, and the model's tokenizer decides.
 */
export const MAY_NOT_FIT_CHARS = 1_000;

/** Whether an entity's observations may be too long for one vector (see MAY_NOT_FIT_CHARS). */
export const mayNotFitOneVector = (observations: readonly string[]): boolean =>
  observations.length > 1 && observations.reduce((n, o) => n + o.length, 0) > MAY_NOT_FIT_CHARS;

/**
 * Whether an entity may need vectors besides its own: observation vectors (too long for one) or
 * aside vectors (hasAsides). A copy of a memory leaves such an entity queued, to be embedded there.
 */
export const mayNeedMoreVectors = (observations: readonly string[]): boolean => mayNotFitOneVector(observations) || hasAsides(observations);

/**
 * The text of one observation's own vector: the entity's header, then the observation, so the
 * vector knows whose fact it is. @example observationText(ada, 'wrote the first program') // 'Ada (person) | wrote the first program'
 */
export function observationText(entity: Entity, observation: string): string {
  return assemble(headerOf(entity), [observation], '');
}

/**
 * The text of an aside's own vector: the entity's header, the aside, then the entity's own
 * observations as far as the model reads (it truncates), so the vector stays near what the entity
 * is about. @example entityAsideText(ada, ['wrote the first program'], 'Sie schrieb das erste Programm')
 *   // 'Ada (person) | Sie schrieb das erste Programm | wrote the first program'
 */
export function entityAsideText(entity: Entity, own: readonly string[], aside: string): string {
  return assemble(headerOf(entity), [aside, ...own], '');
}

/**
 * Builds an entity's text for embedding. All observations when they fit; otherwise the first ones
 * (head, the stable description), the last ones (tail, the latest news) and, from the middle, the
 * ones sharing the fewest words with what is already chosen (diversity). Chosen observations keep
 * their original order. Relations are listed last, as many as fit.
 * @example buildEntityText({name: 'Limbic', entityType: 'Project', observations: ['MCP server']}, [], t => t.length)
 *   // 'Limbic (Project) | MCP server'
 */
export function buildEntityText(
  entity: Entity,
  relations: readonly Relation[],
  countTokens: TokenCounter,
  maxTokens: number = MAX_ENTITY_TOKENS,
): string {
  const header = headerOf(entity);
  const full = wholeText(entity, relations);
  if (countTokens(full) <= maxTokens) return full;

  const sepCost = countTokens(SEPARATOR.trim()) || 1;
  const cost = (text: string): number => countTokens(text) + sepCost;

  // Relations get what is left after the header and at most a quarter of the budget.
  let budget = maxTokens - countTokens(header);
  const kept: Relation[] = [];
  const relBudget = Math.floor(maxTokens / 4);
  for (const r of relations) {
    const next = [...kept, r];
    if (cost(relationText(next)) > relBudget) break;
    kept.push(r);
  }
  const rel = relationText(kept);
  if (rel !== '') budget -= cost(rel);

  const obs = ownObservations(entity.observations);
  const costs = obs.map(cost);
  const chosen = new Set<number>();
  let used = 0;
  const take = (i: number, limit: number): boolean => {
    const c = costs[i] ?? 0;
    if (used + c > limit) return false;
    chosen.add(i);
    used += c;
    return true;
  };
  // Head: from the start while it fits its share (the first observation whenever it fits at all).
  for (let i = 0; i < obs.length; i++) {
    if (!take(i, i === 0 ? budget : budget * HEAD_SHARE)) break;
  }
  // Tail: from the end; the last observation (the latest news) whenever it fits at all.
  const tailLimit = used + budget * TAIL_SHARE;
  for (let i = obs.length - 1; i >= 0 && !chosen.has(i); i--) {
    if (!take(i, i === obs.length - 1 ? budget : tailLimit)) break;
  }
  // Diversity: greedily the middle observation with the fewest words already covered.
  const covered = new Set<string>();
  for (const i of chosen) for (const w of wordSet(obs[i] ?? '')) covered.add(w);
  const middle = obs.map((_, i) => i).filter((i) => !chosen.has(i));
  const words = new Map(middle.map((i) => [i, wordSet(obs[i] ?? '')]));
  while (middle.length > 0) {
    let best = -1;
    let bestNovelty = -1;
    for (const i of middle) {
      if (used + (costs[i] ?? 0) > budget) continue;
      const w = words.get(i) ?? new Set<string>();
      let fresh = 0;
      for (const x of w) if (!covered.has(x)) fresh++;
      const novelty = w.size === 0 ? 0 : fresh / w.size;
      if (novelty > bestNovelty) {
        bestNovelty = novelty;
        best = i;
      }
    }
    if (best < 0) break;
    take(best, budget);
    for (const x of words.get(best) ?? []) covered.add(x);
    middle.splice(middle.indexOf(best), 1);
  }

  const selected = obs.filter((_, i) => chosen.has(i));
  let text = assemble(header, selected, rel);
  // Token counts of parts need not add up exactly; drop from the middle of the selection until it fits.
  while (countTokens(text) > maxTokens && selected.length > 0) {
    selected.splice(Math.floor(selected.length / 2), 1);
    text = assemble(header, selected, rel);
  }
  return text;
}
