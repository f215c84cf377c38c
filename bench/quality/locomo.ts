/**
 * LoCoMo (../shared/data/locomo/locomo10.json): one store per sample, ONE ENTITY PER TURN
 * (name = dia_id such as "D1:3", entityType = the speaker, observations = [turn text, plus the
 * image caption when the turn shared one]), and each turn's session date as the memory would hold
 * it (`dates`, below). Every question (categories 1-5) is asked under every mode; recall@k is the
 * share of its (cleaned) gold turns in the top k. The ten conversations are split in two halves by
 * a seeded shuffle: parameters are chosen on half A and reported on half B (issue 18).
 */
import { readFileSync } from 'node:fs';
import { rng } from '../latency/generate.js';
import { METADATA_KIND, type EntityId, type NewEntity, type ObservationAddition, type Relation } from '../../src/core/types.js';
import { cachedEmbedder } from './embed-cache.js';
import { Corpus, GRAPH_MODES, loadModel, MODES, requireData, type Mode, type Probe } from './harness.js';
import { Tally, type Half } from './tally.js';

interface Turn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}
export interface Sample {
  sample_id: string;
  conversation: Record<string, unknown>;
  qa: { question: string; evidence: string[]; category: number }[];
}

/**
 * How a turn's session date is stored:
 * - `none`: not at all (the harness before issue 18);
 * - `prefix`: in the turn's observation, "[1:56 pm on 8 May, 2023] text", as an assistant writing
 *   a dated note would, so both legs see it;
 * - `metadata`: as a second observation "date: 1:56 pm on 8 May, 2023" of kind `metadata`, Limbic's
 *   kind for facts about an entity rather than of it (embedded and indexed like any observation).
 */
export type DateStyle = 'none' | 'prefix' | 'metadata';
export const DATE_STYLES: readonly DateStyle[] = ['none', 'prefix', 'metadata'];

/** The split's seed; the issue number. */
const SPLIT_SEED = 18;
const LIMIT = 10;
/** Candidates the fusion study reads per leg (hybrid_search's depth). */
const STUDY_DEPTH = 150;

export const CATEGORY_NAMES: Readonly<Record<string, string>> = {
  cat1: 'multi-hop',
  cat2: 'temporal',
  cat3: 'open-domain',
  cat4: 'single-hop',
  cat5: 'adversarial',
};
export const LOCOMO_GROUPS = ['cat1', 'cat2', 'cat3', 'cat4', 'cat5', 'all 1-4', 'all 1-5'] as const;
/** A question's category and the totals it counts in. */
export const locomoGroups = (category: string): string[] =>
  category === 'cat5' ? [category, 'all 1-5'] : [category, 'all 1-4', 'all 1-5'];

/** "D8:6; D9:17" → two ids; "D:11:26" → "D11:26"; "D30:05" → "D30:5". */
export function cleanEvidence(raw: readonly string[]): string[] {
  const ids: string[] = [];
  for (const chunk of raw) {
    for (const part of chunk.split(/[;,\s]+/).filter(Boolean)) {
      const m = /^D:?(\d+):0*(\d+)$/.exec(part.trim());
      if (m) ids.push(`D${m[1]}:${m[2]}`);
    }
  }
  return ids;
}

/** The entity ids of a question's (cleaned) evidence turns that the store holds. */
export function goldIds(evidence: readonly string[], ids: ReadonlyMap<string, EntityId>): Set<EntityId> {
  return new Set(
    cleanEvidence(evidence)
      .map((d) => ids.get(d))
      .filter((x): x is EntityId => x !== undefined),
  );
}

/** Which half each sample is in: a seeded shuffle of the sample ids, the first half of it is A. */
export function locomoHalves(ids: readonly string[]): Map<string, Half> {
  const random = rng(SPLIT_SEED);
  const order = [...ids].sort();
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j] as string, order[i] as string];
  }
  return new Map(order.map((id, i) => [id, i < Math.ceil(order.length / 2) ? 'A' : 'B']));
}

/** "1:56 pm on 8 May, 2023" → epoch ms (UTC); undefined for anything else. */
export function sessionTime(text: string): number | undefined {
  const m = /^(\d+):(\d+) (am|pm) on (\d+) (\w+), (\d+)$/.exec(text.trim());
  if (m === null) return undefined;
  const at = Date.parse(`${m[4]} ${m[5]} ${m[6]} ${m[1]}:${m[2]} ${m[3]} UTC`);
  return Number.isNaN(at) ? undefined : at;
}

/**
 * A sample's turns as entities, and when each was written: at its session's date and time, as a
 * memory kept during the conversation would have them (sessions days or weeks apart), so the
 * context stage's write-order neighbours are the turns of one session, not the whole conversation.
 */
export function turnsOf(sample: Sample, dates: DateStyle) {
  const entities: NewEntity[] = [];
  const writtenAt: (number | undefined)[] = [];
  const additions: ObservationAddition[] = [];
  const next: Relation[] = [];
  for (const [key, value] of Object.entries(sample.conversation)) {
    const session = /^session_(\d+)$/.exec(key);
    if (!session || !Array.isArray(value)) continue;
    const date = sample.conversation[`session_${session[1]}_date_time`];
    const when = typeof date === 'string' && dates !== 'none' ? date : undefined;
    let previous: string | undefined;
    for (const turn of value as Turn[]) {
      const observations = [when !== undefined && dates === 'prefix' ? `[${when}] ${turn.text}` : turn.text];
      if (turn.blip_caption) observations.push(`[shared an image: ${turn.blip_caption}]`);
      entities.push({ name: turn.dia_id, entityType: turn.speaker, observations });
      writtenAt.push(typeof date === 'string' ? sessionTime(date) : undefined);
      if (when !== undefined && dates === 'metadata')
        additions.push({ entityName: turn.dia_id, contents: [`date: ${when}`], kind: METADATA_KIND });
      if (previous !== undefined) next.push({ from: previous, to: turn.dia_id, relationType: 'followed_by' });
      previous = turn.dia_id;
    }
  }
  return { entities, additions, next, writtenAt };
}

/**
 * A conversation's sessions as entities (ONE ENTITY PER SESSION: its turns are the observations,
 * "Speaker: text", the shape of a captured conversation), each session's date as a `metadata`
 * observation, and which session each turn is in (bench/quality/long-entities.ts,
 * bench/quality/shown-observations.ts).
 */
export function sessionsOf(sample: Sample): {
  entities: NewEntity[];
  dates: ObservationAddition[];
  sessionOfTurn: Map<string, string>;
  /** Each turn's observation, by dia_id. */
  turnText: Map<string, string>;
} {
  const entities: NewEntity[] = [];
  const dates: ObservationAddition[] = [];
  const sessionOfTurn = new Map<string, string>();
  const turnText = new Map<string, string>();
  for (const [key, value] of Object.entries(sample.conversation)) {
    const session = /^session_(\d+)$/.exec(key);
    if (!session || !Array.isArray(value)) continue;
    const name = `session ${session[1]}`;
    const turns = value as Turn[];
    const observations = turns.map((t) => `${t.speaker}: ${t.text}${t.blip_caption ? ` [shared an image: ${t.blip_caption}]` : ''}`);
    entities.push({ name, entityType: 'conversation', observations });
    turns.forEach((t, i) => {
      sessionOfTurn.set(t.dia_id, name);
      turnText.set(t.dia_id, observations[i] ?? '');
    });
    const date = sample.conversation[`session_${session[1]}_date_time`];
    if (typeof date === 'string') dates.push({ entityName: name, contents: [`date: ${date}`], kind: METADATA_KIND });
  }
  return { entities, dates, sessionOfTurn, turnText };
}

export interface LocomoOptions {
  readonly samples?: number;
  readonly dates: DateStyle;
  /** Run only one half (a quicker comparison of date styles on half A). */
  readonly half?: Half;
  /** Skip the second store with turn-to-turn relations (hybrid-graph). */
  readonly graph: boolean;
}

export async function runLocomo(options: LocomoOptions, probes?: Probe[]): Promise<{ report: string; tally: Tally }> {
  const data = JSON.parse(readFileSync(requireData('locomo/locomo10.json'), 'utf8')) as Sample[];
  const halves = locomoHalves(data.map((s) => s.sample_id));
  const embedder = cachedEmbedder(await loadModel());
  const tally = new Tally();
  const now = Date.UTC(2026, 0, 1);
  let turns = 0;
  let questions = 0;
  let embedMs = 0;
  const started = performance.now();
  for (const sample of data.slice(0, options.samples ?? Infinity)) {
    const half = halves.get(sample.sample_id) ?? 'A';
    if (options.half !== undefined && half !== options.half) continue;
    const { entities, additions, next, writtenAt } = turnsOf(sample, options.dates);
    turns += entities.length;
    // Plain turns for every mode; a second store whose turns are linked to the next turn of their
    // session (the relation is part of each turn's embedded text there) for the graph column.
    const variants = [['', [] as Relation[], MODES]] as [string, Relation[], readonly Mode[]][];
    if (options.graph) variants.push([' +followed_by', next, GRAPH_MODES]);
    for (const [variant, relations, modes] of variants) {
      const corpus = new Corpus(embedder);
      const t0 = performance.now();
      await corpus.load(entities, now, relations, additions, writtenAt);
      embedMs += performance.now() - t0;
      const ids = await corpus.ids(entities.map((e) => e.name));
      for (const qa of sample.qa) {
        const gold = goldIds(qa.evidence, ids);
        if (gold.size === 0) continue;
        const groups = locomoGroups(`cat${qa.category}`);
        for (const mode of modes) tally.add(`${mode}${variant}`, half, groups, await corpus.search(mode, qa.question, LIMIT, now), gold);
        if (variant !== '') continue;
        questions++;
        if (probes !== undefined)
          probes.push({
            half,
            group: `cat${qa.category}`,
            gold: [...gold],
            limit: LIMIT,
            legs: await corpus.legs(qa.question, STUDY_DEPTH),
          });
      }
      await corpus.close();
    }
    process.stderr.write(`locomo: ${sample.sample_id} (half ${half}) done (${entities.length} turns)\n`);
  }
  const seconds = (performance.now() - started) / 1000;
  const split = [...halves].sort((a, b) => a[1].localeCompare(b[1]) || a[0].localeCompare(b[0]));
  const metrics = ['recall5', 'recall10', 'hit1', 'hit5', 'mrr'] as const;
  const lines = [
    `LoCoMo, turn level, categories 1-5, one store per sample, dates stored as \`${options.dates}\`: ${questions} questions over ${turns} turns`,
    `(embedding all turns took ${(embedMs / 1000).toFixed(1)} s, the suite ${seconds.toFixed(0)} s). Limit ${LIMIT}.`,
    `Half A (tuning): ${split
      .filter(([, h]) => h === 'A')
      .map(([id]) => id)
      .join(', ')}; half B (held out): ${split
      .filter(([, h]) => h === 'B')
      .map(([id]) => id)
      .join(', ')} (seeded shuffle, seed ${SPLIT_SEED}).`,
    '',
  ];
  for (const half of ['A', 'B'] as const) {
    if (options.half !== undefined && half !== options.half) continue;
    lines.push(tally.table(half, LOCOMO_GROUPS, metrics, CATEGORY_NAMES), '');
  }
  return { report: lines.join('\n'), tally };
}
