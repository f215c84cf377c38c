/**
 * The maintenance tools as use cases (docs/tools.md, "Maintenance" and "State and lifecycle"):
 * superseding observations, ending relations, finding duplicate observations, the consolidation
 * report and entity splitting. The heavy ones run in a bounded number of slots (heavy-slots.ts).
 * Meaning comes from the loaded embedding model; without one, duplicates are found by shared words
 * and splits by keywords, and the answer says so.
 */
import { ERROR_CODES, MemoryError, entityNotFound } from '../core/errors.js';
import {
  DEFAULT_DUPLICATE_THRESHOLDS,
  dot,
  findDuplicates,
  rescaledCosine,
  type DuplicateThresholds,
} from '../core/maintenance/duplicates.js';
import { CUT_DISTANCE, CUT_DISTANCE_RESCALED, analyzeSplit, splitThreshold, type SplitAnalysis } from '../core/maintenance/split.js';
import { CONTAINS, PART_OF, type Entity, type Relation } from '../core/types.js';
import type { RedactionTally, Redactor } from '../core/text/redaction.js';
import type { LazyEmbedder } from '../embed/embedder.js';
import type { EntityObservations, MaintenanceStore, SplitOutcome, Store, Supersession, SupersessionResult } from '../store/store.js';
import type { EntityPage, ObservationWindow } from './observation-page.js';
import { HeavySlots, heavySlotOptionsFromEnv, type HeavySlotOptions } from './heavy-slots.js';
import { TextBatch } from './redaction-batch.js';
import { NO_REDACTION } from '../core/text/redaction.js';

const DAY_MS = 86_400_000;
const iso = (ms: number): string => new Date(ms).toISOString();
const round4 = (x: number): number => Math.round(x * 10_000) / 10_000;

export interface MaintenanceDeps {
  readonly store: Store;
  readonly embedder: LazyEmbedder;
  readonly clock: () => number;
  /** Called after a write, so the new text is embedded. */
  readonly afterWrite: () => void;
  readonly slots?: HeavySlotOptions;
  /** What every text written goes through (memory-service.ts); names given are redacted to meet the stored ones. @default NO_REDACTION */
  readonly redactor?: Redactor;
}

export interface ApprovedSplit {
  readonly name: string;
  readonly entity_type?: string | undefined;
  readonly observations: readonly string[];
}

/** Pairwise cosine of some texts, rescaled to the model's floor; undefined without a model. */
type Similarity = ((i: number, j: number) => number) | undefined;

interface Meaning {
  readonly similarity: Similarity;
  /** The model's similarity floor (0 without a model). */
  readonly floor: number;
}

export class Maintenance {
  /** Shared by every heavy tool, the consolidation run included. */
  readonly slots: HeavySlots;

  constructor(private readonly deps: MaintenanceDeps) {
    this.slots = new HeavySlots(deps.slots ?? heavySlotOptionsFromEnv({}));
  }

  /** add_observations with `supersedes` on some items: one transaction for the whole call. */
  async supersede(items: readonly Supersession[]): Promise<SupersessionResult[]> {
    const results = await this.store().supersede(items, this.deps.clock());
    this.deps.afterWrite();
    return results;
  }

  /**
   * open_nodes with include_superseded: the answer plus each entity's history and ended relations.
   * With a window (the entities then carry one page of their observations), the history is paged by
   * the same window, and the next page starts where either list goes on.
   */
  async withHistory(
    graph: { readonly entities: readonly (Entity | EntityPage)[]; readonly relations: readonly Relation[] },
    window?: ObservationWindow,
  ): Promise<Record<string, unknown>> {
    const history = await this.store().history(graph.entities.map((e) => e.name));
    const ended = new Map(history.endedRelations.map((r) => [JSON.stringify([r.from, r.to, r.relationType]), r.endedAt]));
    return {
      entities: graph.entities.map((e) => {
        const all = history.superseded.get(e.name) ?? [];
        const shown = window === undefined ? all : all.slice(window.offset, window.offset + window.limit);
        const superseded_observations = shown.map((s) => ({
          content: s.content,
          kind: s.kind,
          created_at: iso(s.createdAt),
          superseded_at: iso(s.supersededAt),
          superseded_by: s.supersededBy,
        }));
        if (window === undefined) return { ...e, superseded_observations };
        const { next_observations_offset: _next, ...entity } = e as EntityPage;
        const end = window.offset + window.limit;
        const more = end < Math.max(all.length, 'observationCount' in e ? e.observationCount : e.observations.length);
        return { ...entity, superseded_observations, supersededCount: all.length, ...(more ? { next_observations_offset: end } : {}) };
      }),
      relations: graph.relations.map((r) => {
        const at = ended.get(JSON.stringify([r.from, r.to, r.relationType]));
        return at === undefined ? r : { ...r, ended_at: iso(at) };
      }),
    };
  }

  async endRelation(given: Relation): Promise<Record<string, unknown>> {
    const batch = new TextBatch();
    const [from, to, type] = [batch.add(given.from), batch.add(given.to), batch.add(given.relationType)];
    await batch.run(this.redactor());
    const relation: Relation = { from: from(), to: to(), relationType: type() };
    const outcome = await this.store().endRelation(relation, this.deps.clock());
    if (outcome.state === 'missing') {
      throw new MemoryError(
        ERROR_CODES.INVALID_INPUT,
        `Relation ${relation.from} -[${relation.relationType}]-> ${relation.to} not found; from, to and relationType must match a relation exactly (open_nodes lists an entity's relations).`,
      );
    }
    const shown = { ...relation, ended_at: iso(outcome.endedAt) };
    if (outcome.state === 'already-ended') return { relation: shown, notice: 'This relation had already ended; nothing was changed.' };
    this.deps.afterWrite();
    return { relation: shown };
  }

  findDuplicateObservations(given: string, thresholds: Partial<DuplicateThresholds>): Promise<Record<string, unknown>> {
    return this.slots.run(async () => {
      const name = await this.storedName(given);
      const entity = await this.entity(name);
      const texts = entity.observations.map((o) => o.content);
      const t = { ...DEFAULT_DUPLICATE_THRESHOLDS, ...thresholds };
      const similarity = texts.length < 2 ? undefined : await this.similarity(texts);
      const { pairs, clusters } = findDuplicates(texts, similarity, t);
      return {
        entity: name,
        total_observations: texts.length,
        method:
          texts.length < 2
            ? 'none'
            : similarity === undefined
              ? 'words: no embedding model is loaded, so only containment was checked'
              : 'semantic',
        duplicates_found: pairs.length,
        clusters: clusters.map((c) => ({ size: c.length, observations: c.map((i) => entity.observations[i]) })),
        pairs: pairs.map((p) => ({ a: texts[p.a], b: texts[p.b], match_type: p.type, similarity: round4(p.score) })),
      };
    });
  }

  consolidationReport(staleDays: number, maxDuplicateEntities: number): Promise<Record<string, unknown>> {
    return this.slots.run(async () => {
      const now = this.deps.clock();
      const overview = await this.store().overview();
      const splitCandidates: Record<string, unknown>[] = [];
      const large: Record<string, unknown>[] = [];
      for (const e of overview) {
        const threshold = splitThreshold(e.entityType);
        if (e.observationCount > threshold) {
          const analysis = await this.analysis(await this.entity(e.name));
          if (!analysis.needs_split) continue;
          const ratio = e.observationCount / threshold;
          splitCandidates.push({
            entity_name: e.name,
            entity_type: e.entityType,
            observation_count: e.observationCount,
            threshold,
            topic_diversity: Math.round(analysis.split_score * 100) / 100,
            recommendation: `Split recommended: ${e.observationCount} observations, ${ratio.toFixed(1)}x the threshold of ${threshold}, in ${Object.keys(analysis.topics).length} topics (propose_entity_split shows how)`,
          });
        } else if (e.observationCount >= 0.8 * threshold) {
          // The seed system listed only entities over the threshold here, which are all split candidates.
          large.push({
            entity_name: e.name,
            entity_type: e.entityType,
            observation_count: e.observationCount,
            threshold,
            recommendation: 'Near the split threshold: monitor growth',
          });
        }
      }
      const staleMs = staleDays * DAY_MS;
      const stale = overview
        // Never accessed counts from creation: a new entity is not stale (Limbic records no access on create).
        .filter(
          (e) => e.observationCount > 0 && e.status !== 'archived' && e.accessCount <= 2 && now - (e.lastAccess ?? e.createdAt) > staleMs,
        )
        .sort(
          (a, b) =>
            (a.lastAccess === undefined ? -Infinity : a.lastAccess) - (b.lastAccess === undefined ? -Infinity : b.lastAccess) ||
            a.createdAt - b.createdAt,
        )
        .map((e) => {
          const days = Math.floor((now - (e.lastAccess ?? e.createdAt)) / DAY_MS);
          return {
            entity_name: e.name,
            entity_type: e.entityType,
            status: e.status,
            observation_count: e.observationCount,
            last_access: e.lastAccess === undefined ? null : iso(e.lastAccess),
            access_count: e.accessCount,
            days_since_access: e.lastAccess === undefined ? null : days,
            recommendation:
              e.lastAccess === undefined
                ? `Never accessed in the ${days} days since it was created: consider archiving (set_entity_status) or deleting it`
                : `Not accessed in ${days} days: consider archiving (set_entity_status)`,
          };
        });
      // Duplicates cost a model pass over every observation: the entities with the most are scanned first.
      const scan = overview.filter((e) => e.observationCount >= 2).sort((a, b) => b.observationCount - a.observationCount);
      const duplicateClusters: Record<string, unknown>[] = [];
      for (const e of scan.slice(0, maxDuplicateEntities)) {
        const entity = await this.entity(e.name);
        const texts = entity.observations.map((o) => o.content);
        const { clusters } = findDuplicates(texts, await this.similarity(texts), DEFAULT_DUPLICATE_THRESHOLDS);
        if (clusters.length > 0) duplicateClusters.push({ entity_name: e.name, clusters: clusters.map((c) => c.map((i) => texts[i])) });
      }
      return {
        summary: {
          total_entities: overview.length,
          total_observations: overview.reduce((s, e) => s + e.observationCount, 0),
          superseded_observations: overview.reduce((s, e) => s + e.supersededCount, 0),
          split_candidates_count: splitCandidates.length,
          duplicate_clusters_count: duplicateClusters.reduce((s, d) => s + (d.clusters as unknown[]).length, 0),
          stale_entities_count: stale.length,
          large_entities_count: large.length,
        },
        split_candidates: splitCandidates,
        duplicate_clusters: duplicateClusters,
        duplicates_scanned: { entities: Math.min(scan.length, maxDuplicateEntities), of: scan.length },
        stale_entities: stale,
        large_entities: large,
      };
    });
  }

  analyzeEntitySplit(given: string): Promise<{ analysis: SplitAnalysis }> {
    return this.slots.run(async () => ({ analysis: await this.analysis(await this.entity(await this.storedName(given))) }));
  }

  proposeEntitySplit(given: string): Promise<Record<string, unknown>> {
    return this.slots.run(async () => {
      const name = await this.storedName(given);
      const entity = await this.entity(name);
      const analysis = await this.analysis(entity);
      if (!analysis.needs_split) {
        return {
          proposal: null,
          message: `${name} does not need splitting: ${analysis.observation_count} observations, threshold ${analysis.threshold} for type ${entity.entityType}.`,
        };
      }
      const taken = new Set<string>();
      const splits: { name: string; entity_type: string; observations: string[] }[] = [];
      for (const [topic, observations] of Object.entries(analysis.topics)) {
        let child = `${name} - ${topic}`;
        for (let k = 2; taken.has(child) || (await this.store().observationsOf(child)) !== undefined; k++)
          child = `${name} - ${topic} ${k}`;
        taken.add(child);
        splits.push({ name: child, entity_type: entity.entityType, observations });
      }
      return {
        proposal: {
          original_entity: { name, entity_type: entity.entityType },
          suggested_splits: splits,
          relations_to_create: splits.flatMap((s) => [
            { from: name, to: s.name, relationType: CONTAINS },
            { from: s.name, to: name, relationType: PART_OF },
          ]),
          analysis: {
            observation_count: analysis.observation_count,
            threshold: analysis.threshold,
            split_score: analysis.split_score,
            num_topics: splits.length,
            method: analysis.method,
          },
        },
      };
    });
  }

  /**
   * The new names and types are written, so they are redacted (counted in `tally`); the original,
   * the parent and the observations to move name what is stored, and are redacted to meet it.
   */
  executeEntitySplit(
    givenName: string,
    givenSplits: readonly ApprovedSplit[],
    givenParent: string | undefined,
    tally?: RedactionTally,
  ): Promise<{ result: Record<string, unknown> }> {
    return this.slots.run(async () => {
      const written = new TextBatch();
      const lookups = new TextBatch();
      const [nameOf, parentOf] = [lookups.add(givenName), lookups.addOptional(givenParent)];
      const read = givenSplits.map((s) => ({
        name: written.add(s.name),
        type: written.addOptional(s.entity_type),
        observations: s.observations.map((o) => lookups.add(o)),
      }));
      await Promise.all([written.run(this.redactor(), tally), lookups.run(this.redactor())]);
      const [name, parent] = [nameOf(), parentOf()];
      const splits: ApprovedSplit[] = read.map((s) => ({
        name: s.name(),
        entity_type: s.type(),
        observations: s.observations.map((o) => o()),
      }));
      const entity = await this.entity(name);
      const outcome: SplitOutcome = await this.store().executeSplit(
        {
          original: name,
          parent: parent ?? name,
          children: splits.map((s) => ({ name: s.name, entityType: s.entity_type ?? entity.entityType, observations: s.observations })),
        },
        this.deps.clock(),
      );
      this.deps.afterWrite();
      return {
        result: {
          new_entities: outcome.newEntities,
          moved_observations: outcome.movedObservations,
          relations_created: outcome.relationsCreated,
          original_observations_remaining: outcome.originalObservationsRemaining,
        },
      };
    });
  }

  findSplitCandidates(): Promise<{ candidates: SplitAnalysis[] }> {
    return this.slots.run(async () => {
      const candidates: SplitAnalysis[] = [];
      for (const e of await this.store().overview()) {
        if (e.observationCount <= splitThreshold(e.entityType)) continue;
        const analysis = await this.analysis(await this.entity(e.name));
        if (analysis.needs_split) candidates.push(analysis);
      }
      return { candidates };
    });
  }

  private async analysis(entity: EntityObservations): Promise<SplitAnalysis> {
    const texts = entity.observations.map((o) => o.content);
    const meaning = texts.length > splitThreshold(entity.entityType) ? await this.meaning(texts) : undefined;
    return analyzeSplit(
      entity.name,
      entity.entityType,
      texts,
      meaning?.similarity,
      (meaning?.floor ?? 0) > 0 ? CUT_DISTANCE_RESCALED : CUT_DISTANCE,
    );
  }

  private redactor(): Redactor {
    return this.deps.redactor ?? NO_REDACTION;
  }

  /** A name given to a tool, as the redacted name it was stored under. */
  private async storedName(given: string): Promise<string> {
    return (await this.redactor().redactAll([given])).texts[0] ?? given;
  }

  private async entity(name: string): Promise<EntityObservations> {
    const entity = await this.store().observationsOf(name);
    if (entity === undefined) throw entityNotFound(name);
    return entity;
  }

  /** Embeds the raw texts (no kind prefix, as the seed system) with the loaded model, if any. */
  private async similarity(texts: readonly string[]): Promise<Similarity> {
    return (await this.meaning(texts)).similarity;
  }

  private async meaning(texts: readonly string[]): Promise<Meaning> {
    const embedder = await this.deps.embedder.get();
    if (embedder === undefined) return { similarity: undefined, floor: 0 };
    const vectors = await embedder.embed(texts, 'passage');
    const floor = embedder.similarityFloor ?? 0;
    return { similarity: (i, j) => rescaledCosine(dot(vectors[i] as Float32Array, vectors[j] as Float32Array), floor), floor };
  }

  private store(): MaintenanceStore {
    const m = this.deps.store.maintenance;
    if (m !== undefined) return m;
    throw new MemoryError(
      ERROR_CODES.INVALID_INPUT,
      'This storage backend has no maintenance tools (supersedes, end_relation, duplicates, consolidation report, splits). Use the SQLite backend for them; every other tool works.',
    );
  }
}
