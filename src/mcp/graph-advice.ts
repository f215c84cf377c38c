/**
 * What a graph tool's caller asks instead of an answer over LIMITS.maxAnswerBytes (issue 35): the
 * argument that shrinks what made the answer large, with a value that brings it within the bound.
 * The old advice listed every way to page, among them ones that could not help (relations were not
 * paged, so a hub's answer stayed as large whatever the caller did).
 */
import { LIMITS } from '../core/limits.js';
import type { GraphTool } from './answers.js';

/** The share of the bound a followed advice aims at, leaving room for what the estimate misses. */
const AIM = 0.85;
/** Bytes around each item in the pretty text besides its own JSON (indentation, comma, newline). */
const AROUND = 16;

/**
 * What one item costs in the answer: its JSON in structuredContent, and its JSON again inside the
 * text, where every quote and backslash is escaped once more (text that quotes costs double there).
 */
const cost = (value: unknown): number => {
  const json = JSON.stringify(value);
  return Buffer.byteLength(json) + Buffer.byteLength(JSON.stringify(json)) + AROUND;
};
const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0);
const mib = (n: number): string => (n / 2 ** 20).toFixed(1);

/** The longest prefix of `costs` whose sum stays within `room`. */
function prefixWithin(costs: readonly number[], room: number): number {
  let total = 0;
  for (let i = 0; i < costs.length; i++) {
    total += costs[i] ?? 0;
    if (total > room) return i;
  }
  return costs.length;
}

/** The most observations per entity that keep every entity's first ones within `room` (0: not even one). */
function observationsWithin(perEntity: readonly (readonly number[])[], room: number): number {
  const longest = Math.max(0, ...perEntity.map((c) => c.length));
  let fits = 0;
  // Each step adds every entity's next observation: the sums grow with k, so the first miss ends it.
  let total = 0;
  for (let k = 1; k <= longest; k++) {
    for (const costs of perEntity) total += costs[k - 1] ?? 0;
    if (total > room) break;
    fits = k;
  }
  return fits;
}

const relationsAdvice = (tool: GraphTool, k: number): string =>
  `call ${tool} again with the same arguments and relations_limit: ${k}, then relations_offset: next_relations_offset until it is absent (relationCount says how many there are)`;
const observationsAdvice = (tool: GraphTool, k: number): string =>
  `call ${tool} again with the same arguments and observations_limit: ${k}, then observations_offset: next_observations_offset until it is absent (observationCount says how many each entity holds)`;
const entitiesAdvice = (tool: GraphTool, k: number): string =>
  tool === 'open_nodes'
    ? `call open_nodes with at most ${k} of the names at a time`
    : `call ${tool} again with the same arguments and limit: ${k}, then offset: next_offset until it is absent`;

/**
 * The advice for a graph answer of `bytes` (entities and relations as structuredContent holds
 * them): what made it large, and the argument, with its value, that alone brings it within;
 * both paging arguments when neither alone does.
 * @example graphAdvice('open_nodes', { entities: [hub], relations: [...] }, 12_000_000)
 * // 'the observations make it large (7.9 MiB): call open_nodes again with the same arguments and observations_limit: 40, …'
 */
export function graphAdvice(tool: GraphTool, value: Record<string, unknown>, bytes: number): string {
  const entities = Array.isArray(value.entities) ? (value.entities as Record<string, unknown>[]) : [];
  const relations = Array.isArray(value.relations) ? (value.relations as unknown[]) : [];
  const relationCosts = relations.map(cost);
  // read_graph's compact outline carries no observations: nothing there for observations_limit to page.
  const observationCosts = entities.map((e) => (Array.isArray(e.observations) ? (e.observations as unknown[]).map(cost) : []));
  const entityCosts = entities.map(cost);
  const relationBytes = sum(relationCosts);
  const observationBytes = sum(observationCosts.map(sum));
  const aim = AIM * LIMITS.maxAnswerBytes;
  const rest = bytes - relationBytes - observationBytes;

  const byRelations = (): string | undefined => {
    const k = prefixWithin(relationCosts, aim - rest - observationBytes);
    return k >= 1 && k < relations.length
      ? `the relations make it large (${relations.length} of them, ${mib(relationBytes)} MiB): ${relationsAdvice(tool, k)}`
      : undefined;
  };
  const byObservations = (): string | undefined => {
    const k = observationsWithin(observationCosts, aim - rest - relationBytes);
    const longest = Math.max(0, ...observationCosts.map((c) => c.length));
    return k >= 1 && k < longest
      ? `the observations make it large (${mib(observationBytes)} MiB): ${observationsAdvice(tool, k)}`
      : undefined;
  };
  const byEntities = (): string | undefined => {
    // A smaller page of entities carries at most the relations this one does.
    const k = prefixWithin(entityCosts, aim - (bytes - sum(entityCosts)));
    return k >= 1 && k < entities.length ? `the ${entities.length} entities make it large: ${entitiesAdvice(tool, k)}` : undefined;
  };
  const largestFirst = relationBytes >= observationBytes ? [byRelations, byObservations] : [byObservations, byRelations];
  for (const advice of [...largestFirst, byEntities]) {
    const found = advice();
    if (found !== undefined) return found;
  }
  // Neither alone: each gets half of the room the rest leaves.
  const half = (aim - rest) / 2;
  const r = prefixWithin(relationCosts, half);
  const o = observationsWithin(observationCosts, half);
  if (half > 0 && r >= 1 && o >= 1) {
    return (
      `the relations (${mib(relationBytes)} MiB) and the observations (${mib(observationBytes)} MiB) make it large together: ` +
      `call ${tool} again with the same arguments, relations_limit: ${r} and observations_limit: ${o}, ` +
      'then page each with relations_offset: next_relations_offset and observations_offset: next_observations_offset'
    );
  }
  return entitiesAdvice(tool, 1);
}
