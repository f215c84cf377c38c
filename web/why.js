// How a search result explains itself (one sentence, its factors, the observations worth showing):
// shared by the page (app.js) and the MCP App view (src/mcp/app/view/), so both say the same thing
// of the same answer. Plain functions over the tools' answers (docs/answers.md): no DOM, no network.

/** A number short enough to read; '–' for a missing value. */
export const fmt = (n, digits = 3) =>
  n === null || n === undefined ? '–' : typeof n === 'number' ? Number(n.toFixed(digits)).toString() : String(n);

/** A count with its noun in agreement: "1 result", "2 results" (src/core/text/plural.ts on the server). */
export const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** What usage did to a result's place, from the limbic factors both searches return. */
function useClause(l) {
  const { usage_lift: lift, usage_places: places } = l;
  const factors = `importance ${fmt(l.importance, 2)}, recency ${fmt(l.temporal_factor, 2)}, co-use ${fmt(l.cooc_boost, 2)}`;
  // The lift's two parts (answers older than re-finding give neither: all of it was the base level).
  const refind = l.usage_lift_refinding ?? 0;
  const use =
    refind > 0
      ? `re-finding +${fmt(refind, 4)}, asked like this before it was used; base level +${fmt(l.usage_lift_base_level ?? lift - refind, 4)}: ${factors}`
      : factors;
  if (places > 0) return `moved up ${places} place${places === 1 ? '' : 's'} by use (+${fmt(lift, 4)}: ${use})`;
  if (places < 0) return `moved down ${-places} place${places === -1 ? '' : 's'}: used entities lifted past it`;
  if (lift > 0) return `used (+${fmt(lift, 4)}: ${use}), its place unchanged`;
  return 'never used: its place is its relevance';
}

/** The speaker lift (docs/ranking.md, Context): a conversation's turn spoken by the person the question names. */
const speakerClause = (lift) => `spoken by the person the question names (+${fmt(lift, 2)})`;

/**
 * What the meaning leg searched, when it was not the question as written (both tools'
 * `searched_without_names`, docs/answers.md): a sentence to follow the answer's summary, or ''.
 */
export const searchedNote = (answer) =>
  typeof answer.searched_without_names === 'string'
    ? ` Searched by meaning as “${answer.searched_without_names}”: the people it names are read as who spoke.`
    : '';

/** The legs that found a hybrid_search result: 'keyword', 'semantic', both, or none (a filter only). */
export function hybridLegs(s) {
  return [...(s.fts_rank !== null ? ['keyword'] : []), ...(s.semantic_rank !== null ? ['semantic'] : [])];
}

/** One sentence on why a hybrid_search result ranked where it did, from its score breakdown. */
export function why(s, position) {
  const legs = [];
  if (s.fts_rank !== null) legs.push(`words (keyword rank ${s.fts_rank})`);
  if (s.semantic_rank !== null) legs.push(`meaning (semantic rank ${s.semantic_rank})`);
  const found = `found by ${legs.length ? legs.join(' and ') : 'a filter only'}`;
  const parts = [`#${position}: ${s.name_match ? `named what was searched for, so it comes first; ${found}` : found}`];
  if (s.limbic) {
    parts.push(useClause(s.limbic));
    if (s.limbic.multiplier < 0.999) parts.push(`lowered ×${fmt(s.limbic.multiplier, 2)} (status or metadata)`);
  }
  if (s.speaker_lift) parts.push(speakerClause(s.speaker_lift));
  if (s.graph_boost) parts.push(`graph boost ${fmt(s.graph_boost)}`);
  if (s.rerank_score !== null) parts.push(`re-ranked (${fmt(s.rerank_score)})`);
  return `${parts.join('; ')}.`;
}

/** hybrid_search's factors of one result, as [label, value] rows (missing ones left out). */
export function scoreRows(s) {
  const rows = [
    ['name match', s.name_match ? 'yes' : null],
    ['final', s.final],
    ['rrf', s.rrf],
    ['keyword rank', s.fts_rank],
    ['bm25', s.fts_score],
    ['semantic rank', s.semantic_rank],
    ['distance', s.semantic_distance],
    ['speaker lift', s.speaker_lift],
    ['usage lift', s.limbic?.usage_lift],
    ['base-level lift', s.limbic?.usage_lift_base_level],
    ['re-finding lift', s.limbic?.usage_lift_refinding],
    ['usage places', s.limbic?.usage_places],
    ['status ×', s.limbic?.multiplier],
    ['importance', s.limbic?.importance],
    ['recency', s.limbic?.temporal_factor],
    ['co-occurrence', s.limbic?.cooc_boost],
    ['routing', s.limbic?.routing_strategy],
  ];
  return rows.filter(([, v]) => v !== null && v !== undefined);
}

/**
 * The legs that found a search_semantic result. Its answer gives a distance to what the semantic leg
 * found and says which legs ran (`mode`), but not the keyword leg's hits one by one: a result with
 * no distance came from the keyword leg alone, one with a distance from the semantic leg (and maybe
 * the keyword leg too, which hybrid_search would say).
 */
export function semanticLegs(r, mode) {
  if (mode === 'keyword') return ['keyword'];
  return r.distance === undefined ? ['keyword'] : ['semantic'];
}

/** One sentence on why a search_semantic result ranked where it did. */
export function semanticWhy(r, position) {
  const found = r.distance === undefined ? 'words (the keyword leg)' : `meaning (distance ${fmt(r.distance)})`;
  const speaker = r.scoring.speaker_lift ? `; ${speakerClause(r.scoring.speaker_lift)}` : '';
  return `#${position}: found by ${found}${speaker}; ${useClause(r.scoring)}.`;
}

/** search_semantic's factors of one result, as [label, value] rows (not rrf_score: the order does not follow it). */
export function semanticRows(r) {
  const rows = [
    ['limbic score', r.limbic_score],
    ['distance', r.distance],
    ['speaker lift', r.scoring.speaker_lift],
    ['usage lift', r.scoring.usage_lift],
    ['base-level lift', r.scoring.usage_lift_base_level],
    ['re-finding lift', r.scoring.usage_lift_refinding],
    ['usage places', r.scoring.usage_places],
    ['importance', r.scoring.importance],
    ['recency', r.scoring.temporal_factor],
    ['co-occurrence', r.scoring.cooc_boost],
  ];
  return rows.filter(([, v]) => v !== null && v !== undefined);
}

/** Up to two observations, those holding a word of the query first (the one that matched, not merely the first). */
export function snippet(observations, query) {
  const fold = (t) =>
    t
      .toLowerCase()
      .normalize('NFD')
      .replace(/\p{M}+/gu, '');
  const words = fold(query)
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length >= 3);
  const hits = observations.filter((o) => words.some((w) => fold(o).includes(w)));
  return [...new Set([...hits, ...observations])].slice(0, 2).join(' · ');
}
