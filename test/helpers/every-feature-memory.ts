/**
 * A memory that uses every Limbic feature, built through the real service and stores, and read back
 * as a plain structure to compare field by field (issue 35: the export → import and migrate round
 * trips). Backend-neutral: it takes a Store (a SQLite file, a PostgreSQL schema), one per namespace.
 *
 * What the memory holds, in each namespace (with names of its own per namespace):
 * - observations of several kinds (generic, decision, metadata) with times of their own;
 * - superseded history (add_observations with `supersedes`, twice on one entity);
 * - every status (active, paused, completed, archived);
 * - an entity of a project (a captured session, dated turns of their own kinds);
 * - relations with and without a context, and one ended (end_relation);
 * - a reflection (an entity of type Reflection with its meta observations and `reflects_on` links);
 * - tuned ranking parameters (as `limbic tune --apply` stores them);
 * - access counts (from additions), which re-ranking reads.
 *
 * API (stable: other round-trip tests import it):
 * - `EVERY_FEATURE_NAMESPACES`: the two namespaces, `default` and `work`;
 * - `buildEveryFeatureMemory(store, namespace)`: writes the memory into an empty store;
 * - `readMemorySnapshot(store)`: the memory as plain data, sorted, comparable with toEqual;
 * - `searchAnswers(store)`: the answers of `EVERY_FEATURE_SEARCHES`, names and rounded scores.
 *   Searches append to the shadow log (not to the snapshot's memory part), so read the snapshot
 *   first when comparing `usage.shadowEvents`.
 */
import { noopLogger } from '../../src/core/logger.js';
import type { RankParameters } from '../../src/core/tune/shadow.js';
import { LazyEmbedder } from '../../src/embed/embedder.js';
import { MemoryService } from '../../src/service/memory-service.js';
import type { HybridSearchOptions } from '../../src/service/search/hybrid-search.js';
import type { Store } from '../../src/store/store.js';

export const EVERY_FEATURE_NAMESPACES = ['default', 'work'] as const;
export type EveryFeatureNamespace = (typeof EVERY_FEATURE_NAMESPACES)[number];

/** The build's first instant; every write after it is one minute later than the one before. */
export const EVERY_FEATURE_T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
/** The instant the searches run at (fixed: the temporal factor depends on it). */
export const EVERY_FEATURE_SEARCH_AT = Date.UTC(2026, 2, 1, 12, 0, 0);

/** The tuned parameters the build applies (none of them the default). */
export const EVERY_FEATURE_PARAMETERS: Readonly<Record<EveryFeatureNamespace, RankParameters>> = {
  default: { gamma: 0.42, betaSal: 0.17, rrfK: 23 },
  work: { gamma: 0.61, betaSal: 0.09, rrfK: 41 },
};

/** The project of the captured entity, per namespace. */
export const EVERY_FEATURE_PROJECT: Readonly<Record<EveryFeatureNamespace, string>> = {
  default: 'github.com/acme/billing',
  work: 'github.com/globex/ledger',
};

const noModel = (): LazyEmbedder =>
  new LazyEmbedder(async () => {
    throw new Error('no model in this memory (every-feature-memory.ts searches by words)');
  });

/** A service over `store` whose clock ticks one minute per reading from `start`. */
function serviceOver(store: Store, clock: () => number): MemoryService {
  return new MemoryService({ store, embedder: noModel(), clock, logger: noopLogger, catchUpWaitMs: 0 });
}

/** The names one namespace uses (so the two namespaces hold different memories). */
function names(namespace: EveryFeatureNamespace) {
  return namespace === 'default'
    ? { person: 'Alice Martin', other: 'Bob Keller', org: 'Acme Corp', topic: 'Billing rewrite', done: 'Q1 launch', paused: 'Mobile app' }
    : { person: 'Carol Diaz', other: 'Dan Ortiz', org: 'Globex Ltd', topic: 'Ledger migration', done: 'Audit 2025', paused: 'Data lake' };
}

/**
 * Writes the every-feature memory of `namespace` into `store` (empty, or it fails on duplicates),
 * through the real service (and the capture and tuning capabilities for a project and parameters).
 */
export async function buildEveryFeatureMemory(store: Store, namespace: EveryFeatureNamespace): Promise<void> {
  let t = EVERY_FEATURE_T0 + (namespace === 'default' ? 0 : 7 * 86_400_000);
  const clock = (): number => (t += 60_000);
  const service = serviceOver(store, clock);
  const n = names(namespace);
  await service.createEntities([
    { name: n.person, entityType: 'person', observations: [`${n.person} works at ${n.org} on the ${n.topic.toLowerCase()}`] },
    { name: n.other, entityType: 'person', observations: [`${n.other} was the tech lead of ${n.org}`, `${n.other} likes sailing`] },
    { name: n.org, entityType: 'organization', observations: [`${n.org} sells invoicing software`] },
    { name: n.topic, entityType: 'project', observations: [`The ${n.topic.toLowerCase()} replaces the old batch jobs`] },
    { name: n.done, entityType: 'milestone', observations: [`${n.done} shipped on time`] },
    { name: n.paused, entityType: 'project', observations: [`${n.paused} waits for a designer`] },
  ]);
  // Kinds, each addition at its own time.
  await service.addObservations([
    { entityName: n.person, contents: [`${n.person} decided to move ${n.topic.toLowerCase()} to PostgreSQL`], kind: 'decision' },
  ]);
  await service.addObservations([{ entityName: n.person, contents: ['source: onboarding notes'], kind: 'metadata' }]);
  await service.addObservations([{ entityName: n.topic, contents: [`${n.topic} must keep invoices for ten years`], kind: 'constraint' }]);
  // Superseded history: lives in Lyon → Berlin → Munich.
  await service.addObservations([{ entityName: n.person, contents: [`${n.person} lives in Lyon`], kind: 'fact' }]);
  await service.supersede([
    { entityName: n.person, contents: [`${n.person} lives in Berlin`], kind: 'fact', supersedes: `${n.person} lives in Lyon` },
  ]);
  await service.supersede([
    { entityName: n.person, contents: [`${n.person} lives in Munich`], kind: 'fact', supersedes: `${n.person} lives in Berlin` },
  ]);
  // Statuses.
  await service.setStatus(n.done, 'completed');
  await service.setStatus(n.paused, 'paused');
  await service.setStatus(n.other, 'archived');
  // Relations: with and without context, one ended.
  await service.createRelations([
    { from: n.person, to: n.org, relationType: 'works_at', context: 'since the 2024 reorganisation' },
    { from: n.person, to: n.topic, relationType: 'leads' },
    { from: n.other, to: n.org, relationType: 'works_at', context: 'tech lead until 2025' },
    { from: n.topic, to: n.done, relationType: 'delivered' },
  ]);
  await service.maintenance.endRelation({ from: n.other, to: n.org, relationType: 'works_at' });
  // A reflection (its meta observations and reflects_on links).
  await service.reflections.add({
    content: `${n.person} and ${n.other} carried the ${n.topic.toLowerCase()} together`,
    about: [n.person, n.topic],
    author: 'every-feature test',
    mood: 'confident',
  });
  // A project: a captured entity with dated observations of their own kinds.
  if (store.capture === undefined) throw new Error('every-feature-memory needs a backend with the capture capability');
  await store.capture.append(
    {
      name: `Session ${n.topic}`,
      entityType: 'session',
      project: EVERY_FEATURE_PROJECT[namespace],
      observations: [
        {
          content: `We agreed the ${n.topic.toLowerCase()} ships behind a flag`,
          kind: 'decision',
          createdAt: EVERY_FEATURE_T0 - 86_400_000,
        },
        { content: `User asked about rollback of the ${n.topic.toLowerCase()}`, kind: 'user', createdAt: EVERY_FEATURE_T0 - 86_000_000 },
      ],
      maxObservations: 1_000,
      maxBytes: 1_000_000,
    },
    clock(),
  );
  // Tuned ranking parameters.
  if (store.tuning === undefined) throw new Error('every-feature-memory needs a backend with the tuning capability');
  await store.tuning.setParameters(EVERY_FEATURE_PARAMETERS[namespace], clock());
  await service.settled();
}

export interface SnapshotEntity {
  readonly name: string;
  readonly entityType: string;
  readonly status: string;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly project: string | null;
  readonly observations: readonly { readonly content: string; readonly kind: string; readonly createdAt: number }[];
  readonly superseded: readonly {
    readonly content: string;
    readonly kind: string;
    readonly createdAt: number;
    readonly supersededAt: number;
    readonly supersededBy: string;
  }[];
}

export interface SnapshotRelation {
  readonly from: string;
  readonly to: string;
  readonly relationType: string;
  readonly context: string | null;
  readonly createdAt: number;
  readonly endedAt: number | null;
}

export interface MemorySnapshot {
  /** What a memory is: entities (by name) and relations (by from, to, type), every field. */
  readonly entities: readonly SnapshotEntity[];
  readonly relations: readonly SnapshotRelation[];
  /** The applied ranking parameters, or null for the defaults. */
  readonly tuning: (RankParameters & { readonly tunedAt: number | null }) | null;
  /** What use taught it: access counts by name, co-occurrence pairs, how many searches the shadow log holds. */
  readonly usage: {
    readonly access: Readonly<Record<string, { readonly count: number; readonly lastAccess: number; readonly days: readonly string[] }>>;
    readonly coOccurrences: readonly { readonly a: string; readonly b: string; readonly count: number; readonly lastCo: number }[];
    readonly shadowEvents: number;
  };
}

const PAGE = 200;
const byKey =
  <T>(key: (x: T) => string) =>
  (a: T, b: T): number =>
    key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;

/** The memory in `store`, every field, through its transfer and tuning capabilities; sorted. */
export async function readMemorySnapshot(store: Store): Promise<MemorySnapshot> {
  const transfer = store.transfer;
  if (transfer === undefined) throw new Error('readMemorySnapshot needs a backend with the transfer capability');
  const entities: SnapshotEntity[] = [];
  const access: Record<string, { count: number; lastAccess: number; days: readonly string[] }> = {};
  for (let cursor: number | undefined = 0; cursor !== undefined;) {
    const page = await transfer.readEntities(cursor, PAGE);
    for (const e of page.records) {
      entities.push({
        name: e.name,
        entityType: e.entityType,
        status: e.status,
        createdAt: e.createdAt,
        updatedAt: e.updatedAt,
        project: e.project ?? null,
        observations: e.observations.map((o) => ({ content: o.content, kind: o.kind, createdAt: o.createdAt })),
        superseded: e.superseded.map((s) => ({
          content: s.content,
          kind: s.kind,
          createdAt: s.createdAt,
          supersededAt: s.supersededAt,
          supersededBy: s.supersededBy,
        })),
      });
      if (e.access !== undefined && e.access.count > 0)
        access[e.name] = { count: e.access.count, lastAccess: e.access.lastAccess, days: [...e.access.days] };
    }
    cursor = page.next;
  }
  const relations: SnapshotRelation[] = [];
  for (let cursor: number | undefined = 0; cursor !== undefined;) {
    const page = await transfer.readRelations(cursor, PAGE);
    for (const r of page.records)
      relations.push({
        from: r.from,
        to: r.to,
        relationType: r.relationType,
        context: r.context ?? null,
        createdAt: r.createdAt,
        endedAt: r.endedAt ?? null,
      });
    cursor = page.next;
  }
  const coOccurrences: { a: string; b: string; count: number; lastCo: number }[] = [];
  for (let cursor: number | undefined = 0; cursor !== undefined;) {
    const page = await transfer.readCoOccurrences(cursor, PAGE);
    for (const c of page.records) {
      const [a, b] = c.a < c.b ? [c.a, c.b] : [c.b, c.a];
      coOccurrences.push({ a, b, count: c.count, lastCo: c.lastCo });
    }
    cursor = page.next;
  }
  const parameters = await store.tuning?.parameters();
  const tuning =
    parameters === undefined || parameters.source !== 'tuned'
      ? null
      : { gamma: parameters.gamma, betaSal: parameters.betaSal, rrfK: parameters.rrfK, tunedAt: parameters.tunedAt ?? null };
  return {
    entities: entities.sort(byKey((e) => e.name)),
    relations: relations.sort(byKey((r) => JSON.stringify([r.from, r.to, r.relationType]))),
    tuning,
    usage: {
      access,
      coOccurrences: coOccurrences.sort(byKey((c) => JSON.stringify([c.a, c.b]))),
      shadowEvents: (await store.tuning?.shadowEvents())?.length ?? 0,
    },
  };
}

const search = (query: string, extra: Partial<HybridSearchOptions> = {}): HybridSearchOptions => ({
  query,
  limit: 20,
  offset: 0,
  searchModes: ['fts'],
  fusionMethod: 'rrf',
  rrfK: undefined,
  weights: {},
  limbic: true,
  rerank: false,
  filters: {},
  explainQuery: false,
  ...extra,
});

/**
 * The fixed searches (by words: the memory has no model): one per feature a lost field would
 * change — a kind filter, a status filter, the reflections, the tuned k and re-rank, a project.
 */
export const EVERY_FEATURE_SEARCHES: readonly { readonly label: string; readonly options: HybridSearchOptions }[] = [
  {
    label: 'decisions (observation kind filter)',
    options: search('decided OR agreed OR move', { filters: { observationKinds: ['decision'] } }),
  },
  { label: 'constraints (kind filter)', options: search('invoices', { filters: { observationKinds: ['constraint'] } }) },
  { label: 'where they live (superseded text gone)', options: search('lives Lyon OR Berlin OR Munich') },
  { label: 'archived people (status filter)', options: search('lead OR sailing', { filters: { status: ['archived'] } }) },
  { label: 'reflections only', options: search('together', { reflections: { include: true, boost: 1, only: true } }) },
  { label: 'ranking (tuned k, re-rank)', options: search('works OR shipped OR project OR rewrite OR migration') },
  { label: 'inside the project', options: search('flag OR rollback OR ships', { project: 'github.com/acme/billing' }) },
];

export interface SearchAnswer {
  readonly label: string;
  readonly results: readonly {
    readonly name: string;
    readonly status: string;
    readonly observations: readonly string[];
    readonly final: number;
  }[];
}

/** The answers of EVERY_FEATURE_SEARCHES on `store` at EVERY_FEATURE_SEARCH_AT: names, statuses, observations shown, final scores (6 digits). */
export async function searchAnswers(store: Store): Promise<SearchAnswer[]> {
  const service = serviceOver(store, () => EVERY_FEATURE_SEARCH_AT);
  const answers: SearchAnswer[] = [];
  for (const { label, options } of EVERY_FEATURE_SEARCHES) {
    const answer = await service.hybridSearch(options);
    answers.push({
      label,
      results: answer.results.map((r) => ({
        name: r.name,
        status: r.status,
        observations: [...r.observations],
        final: Math.round(r.scores.final * 1e6) / 1e6,
      })),
    });
  }
  await service.settled();
  return answers;
}
