/**
 * The context stage (issue 18, part 3), between fusion and the limbic re-rank: the memory's own
 * context re-scores the fused candidates (core/rank/context-boost.ts): dates stored as metadata
 * observations against the query's time expressions, relations to other strong candidates,
 * candidates written next to a strong one, and a conversation's turns by the person the query
 * names. It reads the store only for what can count: relations between candidates when the graph weight is on,
 * observations only when the query names a date; write order and speakers (entity types) come
 * from the candidates' facts. It works on z-score fusion's strength (the logit of its base);
 * other fusions' bases are not on a scale a fixed weight means anything on, so they pass through.
 */
import { contextBoosts, namedSpeakers, type ContextBoost, type ContextWeights } from '../../core/rank/context-boost.js';
import { timeExpressions, type CalendarDate } from '../../core/rank/time-expression.js';
import { METADATA_KIND, type EntityId } from '../../core/types.js';
import type { EntityFacts } from '../../core/signals.js';
import type { GraphStore } from '../../store/graph-store.js';
import type { Fused } from './fuse.js';

export interface ContextOutcome {
  readonly fused: Fused;
  /** Per candidate, what the stage added to its strength; empty when nothing was added. */
  readonly boosts: ReadonlyMap<EntityId, ContextBoost>;
  /**
   * The same candidates without the write-order lifts, when any was given: the pipeline ranks both,
   * so a lifted candidate stays behind its match unless it was ahead of it on its own.
   */
  readonly withoutNeighbours?: Fused;
}

const EDGE = 1e-12;
const logit = (p: number): number => {
  const q = Math.min(1 - EDGE, Math.max(EDGE, p));
  return Math.log(q / (1 - q));
};
const logistic = (s: number): number => 1 / (1 + Math.exp(-s));

/**
 * How much of an entity's metadata is read for dates on a search that names one (issue 35): the
 * head of each metadata observation, where a record states its date ("date: 1:56 pm on 8 May,
 * 2023"), and a budget per entity. Every search naming a date reads every candidate's metadata, so
 * without a bound one entity's 4 MiB of metadata cost each of those searches its whole length.
 */
export const DATE_TEXT_LIMITS = { perObservation: 1_000, perEntity: 20_000 } as const;

/** The heads of `texts` read for dates, within DATE_TEXT_LIMITS. */
function dateTexts(texts: readonly string[]): string[] {
  const heads: string[] = [];
  let left = DATE_TEXT_LIMITS.perEntity;
  for (const text of texts) {
    if (left <= 0) break;
    const head = text.slice(0, Math.min(DATE_TEXT_LIMITS.perObservation, left));
    heads.push(head);
    left -= head.length;
  }
  return heads;
}

/**
 * Dates in each entity's metadata observations (their heads: DATE_TEXT_LIMITS), those precise to a
 * month at least. Only entities the ranking facts say have metadata are read: a whole entity per
 * candidate cost 10 ms a search at 100k entities when the query named a date.
 */
async function storedDates(
  graph: GraphStore,
  ids: readonly EntityId[],
  facts: ReadonlyMap<EntityId, EntityFacts>,
): Promise<Map<EntityId, CalendarDate[]>> {
  const dates = new Map<EntityId, CalendarDate[]>();
  const withMetadata = ids.filter((id) => (facts.get(id)?.metadataRatio ?? 1) > 0);
  if (withMetadata.length === 0) return dates;
  for (const [id, entity] of await graph.entitiesById(withMetadata)) {
    const found = dateTexts(entity.observations.filter((_, i) => entity.kinds[i] === METADATA_KIND))
      .flatMap((text) => timeExpressions(text))
      .filter((d) => d.year !== undefined && d.month !== undefined);
    if (found.length > 0) dates.set(id, found);
  }
  return dates;
}

export async function contextStage(
  graph: GraphStore,
  query: string,
  fused: Fused,
  weights: ContextWeights | undefined,
  facts: ReadonlyMap<EntityId, EntityFacts> = new Map(),
): Promise<ContextOutcome> {
  const none = { fused, boosts: new Map<EntityId, ContextBoost>() };
  if (weights === undefined || fused.candidates.length === 0) return none;
  const asked = weights.timeWeight > 0 ? timeExpressions(query) : [];
  const useTime = asked.length > 0;
  const useGraph = weights.graphWeight > 0;
  const useNeighbours = (weights.neighbourWeight ?? 0) > 0;
  const useSpeakers = (weights.speakerWeight ?? 0) > 0;
  if (!useTime && !useGraph && !useNeighbours && !useSpeakers) return none;
  const ids = fused.candidates.map((c) => c.candidate.id);
  const strength = new Map(fused.candidates.map((c) => [c.candidate.id, logit(c.base)]));
  const [edges, dates] = await Promise.all([
    // Only relations between two candidates can lift (context-boost.ts): the others are not read.
    useGraph ? graph.edgesAmong(ids) : Promise.resolve([]),
    useTime ? storedDates(graph, ids, facts) : Promise.resolve(new Map<EntityId, CalendarDate[]>()),
  ]);
  const createdAt = new Map<EntityId, number>();
  const types = new Map<EntityId, string>();
  if (useNeighbours || useSpeakers)
    for (const id of ids) {
      const f = facts.get(id);
      if (f === undefined) continue;
      createdAt.set(id, f.createdAt);
      types.set(id, f.entityType);
    }
  const spokenByNamed = useSpeakers ? namedSpeakers(query, types, createdAt) : undefined;
  const boosts = contextBoosts({ strength, edges, dates, asked, createdAt, spokenByNamed }, weights);
  const rescored = (withNeighbours: boolean): Fused['candidates'] =>
    fused.candidates.map((c) => {
      const b = boosts.get(c.candidate.id);
      // A relation and write order often link the same two (a turn and the next): the stronger counts.
      const added = (b?.time ?? 0) + (b?.speaker ?? 0) + Math.max(b?.graph ?? 0, withNeighbours ? (b?.neighbour ?? 0) : 0);
      return added === 0 ? c : { candidate: c.candidate, base: logistic((strength.get(c.candidate.id) ?? 0) + added) };
    });
  const lifted = [...boosts.values()].some((b) => b.neighbour > 0);
  return {
    fused: { ...fused, candidates: rescored(true) },
    boosts,
    ...(lifted ? { withoutNeighbours: { ...fused, candidates: rescored(false) } } : {}),
  };
}
