/**
 * What both backends' maintenance (sqlite-maintenance.ts, pg-maintenance.ts) refuse, and how they
 * say it: one wording for the same mistake on either backend, and one place to change it.
 */
import { ERROR_CODES, MemoryError } from '../core/errors.js';
import { CONTAINS, PART_OF } from '../core/types.js';
import type { SplitPlan } from './maintenance-store.js';

/** The relations a split leaves between the original's parent and each new entity (the seed's contiene / parte_de, in English). */
export const SPLIT_CONTAINS = CONTAINS;
export const SPLIT_PART_OF = PART_OF;

const invalid = (message: string): MemoryError => new MemoryError(ERROR_CODES.INVALID_INPUT, message);

/** A text as an error quotes it: at most 120 code points, never cut inside a surrogate pair. */
export function quote(s: string): string {
  const points = [...s];
  return JSON.stringify(points.length > 120 ? `${points.slice(0, 117).join('')}...` : s);
}

export const supersedesItself = (i: number): MemoryError =>
  invalid(
    `observations[${i}].supersedes is one of its own contents: an observation cannot replace itself; send the new text in contents and the old one in supersedes. Nothing was saved.`,
  );

export const notCurrentObservation = (i: number, text: string, entityName: string): MemoryError =>
  invalid(
    `observations[${i}].supersedes: ${quote(text)} is not a current observation of ${entityName}; pass its exact text (open_nodes lists them). Nothing was saved.`,
  );

/**
 * Refuses a split plan that names a new entity twice or one that exists (`existing`), moves an
 * observation the original does not have now (`current`), or gives one observation to two
 * entities; the first mistake in the plan's order is the one reported. Returns each moved
 * observation with the new entity it goes to.
 */
export function checkSplitPlan(
  plan: SplitPlan,
  current: { has(content: string): boolean },
  existing: ReadonlySet<string>,
): ReadonlyMap<string, string> {
  const claimed = new Map<string, string>();
  const names = new Set<string>();
  for (const [i, child] of plan.children.entries()) {
    if (names.has(child.name))
      throw invalid(
        `approved_splits[${i}].name ${quote(child.name)} is given twice; give each new entity its own name. Nothing was changed.`,
      );
    names.add(child.name);
    if (existing.has(child.name))
      throw invalid(
        `approved_splits[${i}].name: an entity named ${quote(child.name)} exists already; choose a new name (a split never overwrites an entity). Nothing was changed.`,
      );
    for (const content of child.observations) {
      if (!current.has(content))
        throw invalid(
          `approved_splits[${i}].observations: ${quote(content)} is not a current observation of ${plan.original}; use the exact texts from propose_entity_split or open_nodes. Nothing was changed.`,
        );
      const other = claimed.get(content);
      if (other !== undefined && other !== child.name)
        throw invalid(
          `approved_splits[${i}].observations: ${quote(content)} is given to both ${quote(other)} and ${quote(child.name)}; move each observation to one entity. Nothing was changed.`,
        );
      claimed.set(content, child.name);
    }
  }
  return claimed;
}
