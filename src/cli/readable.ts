/**
 * What `limbic stats` and `limbic search` print for a person at a terminal (issue 25): a few lines
 * instead of kilobytes of JSON. Scripts (stdout not a terminal) and `--json` get the JSON as before.
 */
import type { HybridResponse } from '../service/search/hybrid-search.js';
import type { Statistics } from '../service/memory-service.js';

/** JSON unless a person reads it: --json, or stdout is not a terminal. */
export const wantsJson = (flag: boolean | undefined, isTty: boolean | undefined): boolean => flag === true || isTty !== true;

const mb = (bytes: number | null): string => (bytes === null ? 'unknown size' : `${(bytes / 1e6).toFixed(1)} MB`);
const count = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/** `limbic stats` for a person. */
export function statsText(s: Statistics): string {
  const e = s.embeddings;
  const model = e.model === null ? 'no model' : `${e.model} (${e.state})`;
  return [
    `${count(s.entities, 'entity', 'entities')}, ${count(s.observations, 'observation', 'observations')}, ${count(s.relations, 'relation', 'relations')}`,
    `database   ${s.database.path} (${mb(s.database.bytes)})`,
    `keywords   ${s.fts.available ? `${s.fts.indexed} indexed` : 'off'}`,
    `meaning    ${model}: ${e.indexed} embedded${e.pending > 0 ? `, ${e.pending} waiting` : ''}${e.reason === undefined ? '' : ` — ${e.reason}`}`,
    `ranking    γ ${s.ranking.gamma}, β_sal ${s.ranking.beta_sal}, k ${s.ranking.rrf_k} (${s.ranking.source})`,
    '',
  ].join('\n');
}

/** `limbic search` for a person: one block per result, the page and how to see the next. */
export function searchText(r: Omit<HybridResponse, 'ids' | 'shadow'>): string {
  if (r.results.length === 0) return `Nothing found for "${r.query}".${r.warnings === undefined ? '' : ` ${r.warnings.join(' ')}`}\n`;
  const lines = r.results.flatMap((x, i) => {
    const shown = x.observations.slice(0, 3).map((o) => `     - ${o.length > 160 ? `${o.slice(0, 157)}…` : o}`);
    // The answer carries the observations matching the query first, and counts those it left out.
    const left = Math.max(0, x.observations.length - 3) + (x.observations_omitted ?? 0);
    const more = left > 0 ? [`     (${left} more)`] : [];
    return [`${r.offset + i + 1}. ${x.name} (${x.entityType})  score ${x.scores.final.toFixed(3)}`, ...shown, ...more];
  });
  const next = r.offset + r.results.length;
  return [
    ...lines,
    '',
    `${r.results.length} of ${r.count} (legs: ${r.search_modes_used.join(', ')}).${next < r.count ? ` Next page: --offset ${next}.` : ''} --json for everything.`,
    ...(r.warnings ?? []),
    '',
  ].join('\n');
}
