/** The ranking's constants, under the names docs/ranking.md uses in its formulas. */

/** Weight of the salience boost: importance 1.0 gives a 1.5x boost. */
export const BETA_SAL = 0.5;
/** Weight of graph degree inside importance. */
export const BETA_DEG = 0.15;
/** Relation count at which the degree signal saturates. */
export const D_MAX = 15;
/** Weight of multi-day consolidation inside importance (max boost 1.2x). */
export const ALPHA_CONS = 0.2;
/** Temporal decay rate per hour: half-life ln 2 / 0.0001 ≈ 6931 h ≈ 289 days. */
export const LAMBDA_HOURLY = 0.0001;
/** Weight of the co-occurrence boost: a tiebreaker, not a primary signal. */
export const GAMMA = 0.01;
/** No entity is ever fully forgotten. */
export const TEMPORAL_FLOOR = 0.1;
/** Floor of the co-occurrence decay. */
export const COOC_TEMPORAL_FLOOR = 0.1;
/** Reciprocal Rank Fusion smoothing constant. */
export const RRF_K = 60;
/** Each retrieval leg fetches limit × EXPANSION_FACTOR candidates. */
export const EXPANSION_FACTOR = 3;

/** FTS-only base relevance is mapped into [FTS_BASE_FLOOR, FTS_BASE_FLOOR + FTS_BASE_SPAN]. */
export const FTS_BASE_FLOOR = 0.2;
export const FTS_BASE_SPAN = 0.6;

/** Status deboosts: the final score's status factor (docs/ranking.md). */
export const STATUS_DEBOOST = {
  active: 1.0,
  paused: 0.85,
  completed: 0.7,
  archived: 0.5,
} as const;

/** More than this share of metadata observations triggers the penalty. */
export const METADATA_THRESHOLD = 0.5;
export const METADATA_PENALTY = 0.7;

/**
 * A search from inside a project (docs/capture.md, "Projects") multiplies its own project's entities
 * by this, beside the status factor: they come first among candidates of close relevance, never past
 * a clearly better global memory (the same size of nudge as a paused entity's 0.85 the other way).
 */
export const PROJECT_BOOST = 1.15;

export const HOUR_MS = 3_600_000;

/**
 * Usage may reorder candidates only within the uncertainty of their relevance (issue 24): the most
 * the limbic factors can add to a candidate's base relevance (at the balanced route; the other
 * routes scale it by their limbic share, so at most 1.4 × USAGE_BAND). Base relevance is on the
 * fusion's own [0, 1] scale; two candidates further apart than this keep their order whatever their
 * usage. With USE_PIVOT, chosen on bench:stream's feedback study (bench/quality/stream.ts): what one
 * use buys the used entity, it costs a new one, at a rate the one-use lift sets (0.005 to 0.04
 * tried; docs/ranking.md).
 */
export const USAGE_BAND = 0.02;
/**
 * Re-finding (issue 37, docs/ranking.md "Re-finding"): the most a candidate gains because the query
 * is like past queries after which the agent used it (ACT-R's context term beside the base level),
 * at the balanced route; routes scale it as they scale USAGE_BAND. Chosen on half A of the XQuAD and
 * small-memory streams (bench/quality/refind-sweep.ts): 0.02 to 0.1 tried; wider bands bought little
 * on siblings (XQuAD +0.01 to +0.03 hit@1) and cost the agents that open the first or a wrong result more.
 */
export const REFIND_BAND = 0.02;
/**
 * The most usage of both kinds adds together (base level + re-finding), at the balanced route: two
 * candidates further apart than this × the route's share keep their order whatever their use. The
 * same band as USAGE_BAND alone (issue 37: "the sum of both stays within one band"), so re-finding
 * widens no guarantee: an agent that keeps opening a wrong result can cost no more than before.
 */
export const LIFT_BAND = 0.02;
/**
 * Rescaled query similarity (cosineSimilarity over the model's floor) below which a past query says
 * nothing about the present one; above it the score rises linearly to 1 at identity. 0.5 is e5's
 * cosine 0.87: a paraphrase, or the same question in another language (≈ 0.58), lifts; a neighbouring
 * question on the same topic (≈ 0.26) does not. 0.2 to 0.6 tried: lower thresholds lifted paragraphs
 * of the same article past the right one; 0.6 left out the other language for little safety.
 */
export const REFIND_THRESHOLD = 0.5;
/** Days after which a re-finding pair counts half (exponential forgetting from when it was made). */
export const REFIND_HALF_LIFE_DAYS = 30;
/** Re-finding pairs kept per entity (the newest) and in all (the oldest go first). */
export const REFIND_PAIRS_PER_ENTITY = 8;
export const REFIND_PAIRS_MAX = 20_000;
/** Uses at which the global access scale reaches one half: n / (n + USE_PIVOT); one use is weak evidence. */
export const USE_PIVOT = 10;
/** Distinct days of use at which consolidation reaches one half: d / (d + DAYS_PIVOT). */
export const DAYS_PIVOT = 3;
