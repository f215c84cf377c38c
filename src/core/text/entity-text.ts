/**
 * The text an entity is embedded from (docs/ranking.md, "Legs"):
 * `{name} ({entityType}) | obs | obs | ... | Rel: type → target; ...` within a token budget,
 * choosing observations Head + Tail + Diversity when they do not all fit.
 */
import { DEFAULT_OBSERVATION_KIND, type Entity, type Relation } from '../types.js';
import { tokenizeWords } from './fts-query.js';

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

/** Every observation and relation, as embedded when they fit. */
const wholeText = (entity: Entity, relations: readonly Relation[]): string =>
  assemble(headerOf(entity), entity.observations, relationText(relations));

function wordSet(text: string): Set<string> {
  return new Set(tokenizeWords(text.toLowerCase()));
}

/**
 * Whether an entity's whole text (every observation and relation) fits the budget: when it does not,
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
 * The text of one observation's own vector: the entity's header, then the observation, so the
 * vector knows whose fact it is. @example observationText(ada, 'wrote the first program') // 'Ada (person) | wrote the first program'
 */
export function observationText(entity: Entity, observation: string): string {
  return assemble(headerOf(entity), [observation], '');
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

  const obs = entity.observations;
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
