/** Query routing (docs/ranking.md, "Routing"), with English keywords beside the spec's Spanish ones. */

export type RoutingStrategy = 'cosine_heavy' | 'limbic_heavy' | 'hybrid_balanced';

export interface RoutingWeights {
  readonly cosine: number;
  readonly limbic: number;
}

/**
 * The three blends. The spec's reference code left the balanced route unblended; here it blends
 * 50/50 like the other two, so every route is the same kind of score.
 */
export const ROUTING_WEIGHTS: Readonly<Record<RoutingStrategy, RoutingWeights>> = {
  cosine_heavy: { cosine: 0.7, limbic: 0.3 },
  limbic_heavy: { cosine: 0.3, limbic: 0.7 },
  hybrid_balanced: { cosine: 0.5, limbic: 0.5 },
};

const FACTUAL = [
  'qué es',
  'que es',
  'definición',
  'definicion',
  'cómo funciona',
  'como funciona',
  'es un',
  'es una',
  'what is',
  'what are',
  "what's",
  'define',
  'definition',
  'meaning of',
  'how does',
  'how do',
  'who is',
  'which is',
];
const INTERMEDIATE = [
  'relación',
  'relacion',
  'diferencia',
  'ejemplos',
  'comparar',
  'compare',
  'comparison',
  'difference',
  'differences',
  'examples',
  'versus',
  ' vs ',
];
const EXPLORATORY = [
  'explícame',
  'explicame',
  'cuéntame',
  'cuentame',
  'relación entre',
  'relacion entre',
  'dime todo',
  'qué piensas',
  'que piensas',
  'explain',
  'tell me everything',
  'tell me about',
  'everything about',
  'relationship between',
  'what do you think',
  'overview',
  'summarize',
  'summarise',
];

/**
 * Lower case without accents: "Cuéntame", "cuentame" and "CUENTAME" read alike, as do "qué es" and
 * "que es" (people type Spanish without accents; the seed system matched accents exactly and so
 * listed "cuentame" alone).
 */
function fold(text: string): string {
  return text
    .toLowerCase()
    .normalize('NFD')
    .replace(/\p{M}+/gu, '');
}

const [FACTUAL_FOLDED, INTERMEDIATE_FOLDED, EXPLORATORY_FOLDED] = [FACTUAL, INTERMEDIATE, EXPLORATORY].map((list) => [
  ...new Set(list.map(fold)),
]) as [string[], string[], string[]];

/** Whole-word patterns, compiled once per phrase: building them per query cost 0.7 ms a search. */
const wordPatterns = new Map<string, RegExp>();

function containsPhrase(text: string, phrase: string): boolean {
  if (phrase.startsWith(' ') || phrase.endsWith(' ')) return text.includes(phrase);
  if (!text.includes(phrase)) return false;
  let pattern = wordPatterns.get(phrase);
  if (pattern === undefined) {
    // Whole-word match so "define" does not fire inside "undefined".
    const escaped = phrase.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    pattern = new RegExp(`(^|[^\\p{L}\\p{N}])${escaped}($|[^\\p{L}\\p{N}])`, 'u');
    wordPatterns.set(phrase, pattern);
  }
  return pattern.test(text);
}

/**
 * Scores a query: factual keywords +2, intermediate +1, exploratory -2, ≤3 words +1, ≥10 words -1,
 * limit ≤3 +1, limit ≥10 -1. "difference between" and "relationship between" count as exploratory
 * only (the longer phrase wins over the shorter intermediate word it contains).
 */
export function queryTypeScore(query: string, limit: number | undefined): number {
  const text = ` ${fold(query).replace(/\s+/g, ' ').trim()} `;
  let score = 0;
  if (FACTUAL_FOLDED.some((k) => containsPhrase(text, k))) score += 2;
  const exploratory = EXPLORATORY_FOLDED.filter((k) => containsPhrase(text, k));
  const intermediate = INTERMEDIATE_FOLDED.filter((k) => containsPhrase(text, k) && !exploratory.some((e) => e.includes(k.trim())));
  if (intermediate.length > 0) score += 1;
  if (exploratory.length > 0) score -= 2;
  const words = text
    .trim()
    .split(' ')
    .filter((w) => w.length > 0).length;
  if (words <= 3) score += 1;
  if (words >= 10) score -= 1;
  if (limit !== undefined && limit <= 3) score += 1;
  if (limit !== undefined && limit >= 10) score -= 1;
  return score;
}

/**
 * Score ≥ 2 → cosine_heavy, ≤ -2 → limbic_heavy, otherwise hybrid_balanced. Without a limit the
 * spec's K terms are left out: a paged search (hybrid_search) routes on the query's words alone, so
 * one query keeps one order whatever the page size.
 * @example detectQueryType('what is FTS5', 5) // 'cosine_heavy'
 */
export function detectQueryType(query: string, limit: number | undefined): RoutingStrategy {
  const score = queryTypeScore(query, limit);
  if (score >= 2) return 'cosine_heavy';
  if (score <= -2) return 'limbic_heavy';
  return 'hybrid_balanced';
}
