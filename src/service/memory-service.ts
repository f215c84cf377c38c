/**
 * Use cases over one Store: remember (create, add), link (relations), recall (search), forget
 * (delete), reindex (embeddings). Adapters (MCP, CLI) call this and never touch a store directly.
 */
import { ERROR_CODES, MemoryError } from '../core/errors.js';
import { LIMITS } from '../core/limits.js';
import type { Logger } from '../core/logger.js';
import { NO_REDACTION, type RedactionCount, type RedactionTally, type Redactor } from '../core/text/redaction.js';
import type {
  Entity,
  EntityId,
  EntityStatus,
  KnowledgeGraph,
  NewEntity,
  ObservationAddition,
  ObservationAdditionResult,
  ObservationDeletion,
  Relation,
} from '../core/types.js';
import { isBareAcknowledgement } from '../core/text/acknowledgement.js';
import { DEFAULT_OBSERVATION_KIND, inverseRelationType, isCurrent } from '../core/types.js';
import { relationPage, relationWindow, windowOfRead, type RelationPageFields, type RelationsAsked } from './relation-page.js';
import type { ObservationBound } from '../core/rank/shown-observations.js';
import type { EmbedderState, LazyEmbedder } from '../embed/embedder.js';
import { modelNeededError } from '../embed/model-state.js';
import type { Reranker } from '../embed/reranker.js';
import type {
  CompactionListener,
  EntityOutline,
  ImportBatch,
  ImportCounts,
  Page,
  ProjectSummary,
  Store,
  Supersession,
  SupersessionResult,
  VectorStatus,
} from '../store/store.js';
import type { Conversation } from '../capture/conversation.js';
import { ALL_PROJECTS, type Project } from '../capture/project.js';
import { buildBrief, type BriefOptions } from './brief.js';
import { captureConversation, captureStore, type CaptureResult } from './capture.js';
import { PROJECT_TYPE, SESSION_PART_OF } from '../core/text/capture-text.js';
import { runSearch } from './search/pipeline.js';
import { keywordRequest } from './search/request.js';
import { EmbeddingIndexer, type DrainProgress } from './embedding-indexer.js';
import type { HeavySlotOptions } from './heavy-slots.js';
import { observationPage, type EntityPage, type ObservationWindow } from './observation-page.js';
import { Maintenance } from './maintenance.js';
import { Reflections } from './reflections.js';
import { hybridSearch, type HybridResponse, type HybridSearchOptions } from './search/hybrid-search.js';
import { searchSemantic, type SemanticResponse } from './search/search-semantic.js';
import { FEEDBACK_WINDOW_MS } from './search/shadow-log.js';
import { parametersInForce } from './tuning.js';
import { RecentSearches } from './refinding.js';
import { TextBatch } from './redaction-batch.js';
import type { ShadowEvent } from '../core/tune/shadow.js';

/**
 * A write touching more entities than this is a bulk load, not use: it records none (an agent
 * relating or extending a few entities uses them; a script writing hundreds does not). An
 * open_nodes of more records a use of each but no co-use: the spec pairs every two entities opened
 * together, n(n-1)/2 of them, which at 1,900 names was 1.8M upserts and seconds of the main thread,
 * and what a dump of the graph opened "together" says about any two of them is nothing.
 */
const USES_PER_CALL = 20;

/** What get_statistics reports of a store without a vector index. */
const NO_VECTORS: VectorStatus = { model: undefined, dims: undefined, indexed: 0, pending: 0 };

export interface MemoryServiceDeps {
  readonly store: Store;
  readonly embedder: LazyEmbedder;
  /** Epoch ms; injected so ranking replays exactly in tests. */
  readonly clock: () => number;
  readonly logger: Logger;
  /** A cross-encoder for hybrid_search's optional rerank stage; absent means reranking is off. */
  readonly reranker?: Reranker | undefined;
  /** How long a search waits for just-written entities to be embedded. @default CATCH_UP_WAIT_MS */
  readonly catchUpWaitMs?: number;
  /** Slots of the heavy maintenance tools (heavy-slots.ts). @default one slot, a 2 s wait */
  readonly heavySlots?: HeavySlotOptions;
  /**
   * Hierarchical relations come in pairs (Config.inverseRelations): creating `A contains B` also
   * creates `B part_of A`, and deleting either deletes both. @default false
   */
  readonly inverseRelations?: boolean;
  /**
   * The key of the project this service runs in (the stdio server's, from its folder: src/capture/project.ts):
   * searches leave out other projects' captured memories and prefer its own, unless a call names
   * another project or all of them. @default none: nothing is hidden
   */
  readonly project?: string | undefined;
  /**
   * What every write's text goes through before the store sees it (docs/redaction.md): names,
   * types, observations, relation contexts, imports, reflections, splits, and search queries before
   * the shadow log. @default NO_REDACTION (nothing redacted)
   */
  readonly redactor?: Redactor | undefined;
  /**
   * The ring of recent searches a use pairs with (re-finding): a server of several processes
   * (`serve --http --workers N`) gives one that hears the others' searches. @default this service's own
   */
  readonly recentSearches?: RecentSearches | undefined;
}

/** open_nodes' Limbic options (issue 25 item 18); neither given: the official answer. */
export interface OpenNodesOptions {
  /** Keep only observations of these kinds. */
  readonly kinds?: readonly string[] | undefined;
  /** Add each entity's `observation_kinds`, the kind of each of its observations in the same order. */
  readonly includeKinds?: boolean | undefined;
  /** One page of each entity's observations (after the kinds filter); absent: all of them. */
  readonly window?: ObservationWindow | undefined;
  /** List relations end_relation ended too, each with ended_at; absent: current relations only. */
  readonly includeEnded?: boolean | undefined;
  /** relations_offset and relations_limit as given; absent: the first page (relation-page.ts). */
  readonly relations?: RelationsAsked | undefined;
}

/** An entity as open_nodes shows it with include_kinds. */
export interface EntityWithKinds extends Entity {
  readonly observation_kinds: readonly string[];
}

/** What the automatic inverse of a hierarchical relation says of itself (the seed's "Inversa automática de <type>"). */
export const inverseContext = (relationType: string): string => `automatic inverse of ${relationType}`;

/** The relations with, after each hierarchical one, its inverse (contains ↔ part_of, contiene ↔ parte_de). */
function withInverses(relations: readonly Relation[], context: (r: Relation) => string | undefined): Relation[] {
  return relations.flatMap((r) => {
    const inverse = inverseRelationType(r.relationType);
    if (inverse === undefined || r.from === r.to) return [r];
    const ctx = context(r);
    return [r, { from: r.to, to: r.from, relationType: inverse, ...(ctx === undefined ? {} : { context: ctx }) }];
  });
}

export type { Page };
export type { EntityPage, ObservationWindow };

export interface GraphView {
  /** search_nodes' query; undefined reads the graph. */
  readonly query?: string | undefined;
  readonly page?: Page | undefined;
  /** read_graph only: names, types and observation counts. */
  readonly compact?: boolean | undefined;
  /** A page of each entity's observations; undefined, all of them. */
  readonly observations?: ObservationWindow | undefined;
  /** List relations end_relation ended too, each with ended_at; absent: current relations only (issue 33). */
  readonly includeEnded?: boolean | undefined;
  /** relations_offset and relations_limit as given; absent: the first page (relation-page.ts). */
  readonly relations?: RelationsAsked | undefined;
}

/**
 * The relations an answer lists: current ones, as the official tools answer (a relation listed
 * without a marker reads as current to their clients), or every one, an ended one with ended_at.
 */
const listed = (relations: readonly Relation[], includeEnded: boolean | undefined): readonly Relation[] =>
  includeEnded === true ? relations : relations.filter(isCurrent);

export interface GraphViewAnswer extends RelationPageFields {
  readonly entities: readonly (Entity | EntityOutline)[];
  readonly relations: readonly Relation[];
  /** With a page: how many entities the whole answer holds, and where the next page starts. */
  readonly total?: number;
  readonly offset?: number;
  readonly limit?: number;
  readonly next_offset?: number;
}

function withPage(
  entities: readonly (Entity | EntityOutline)[],
  relations: { readonly relations: readonly Relation[] } & RelationPageFields,
  total: number,
  page: Page | undefined,
): GraphViewAnswer {
  if (page === undefined) return { entities, ...relations };
  const next = page.offset + entities.length;
  return {
    entities,
    ...relations,
    total,
    offset: page.offset,
    limit: page.limit,
    ...(next < total && entities.length > 0 ? { next_offset: next } : {}),
  };
}

export interface Statistics {
  readonly entities: number;
  readonly observations: number;
  readonly relations: number;
  readonly database: { readonly path: string; readonly bytes: number | null };
  readonly fts: { readonly available: boolean; readonly indexed: number };
  readonly semantic: {
    readonly available: boolean;
    readonly indexed: number;
    readonly pending: number;
    readonly model: string | null;
  };
  readonly reranking: { readonly available: boolean; readonly model: string | null };
  readonly embeddings: {
    readonly available: boolean;
    readonly state: string;
    readonly model: string | null;
    readonly dims: number | null;
    readonly indexed: number;
    readonly pending: number;
    readonly reason?: string;
    /** While the model loads or is installed: what it is doing. */
    readonly progress?: string;
  };
  /** The ranking parameters in force and their source: the spec's defaults, or `limbic tune --apply`. */
  readonly ranking: {
    readonly gamma: number;
    readonly beta_sal: number;
    readonly rrf_k: number;
    readonly source: 'default' | 'tuned';
    readonly tuned_at: string | null;
  };
}

export class MemoryService {
  private readonly indexer: EmbeddingIndexer;
  /** Every write's text goes through it; the null object NO_REDACTION when redaction is off. */
  readonly redactor: Redactor;
  private readonly pending = new Set<Promise<void>>();
  /** The last searches' query vectors and pages, which a use pairs with what it used (re-finding). */
  private readonly recent: RecentSearches;
  /** Supersedes, end_relation, duplicates, consolidation report, splits (maintenance.ts). */
  readonly maintenance: Maintenance;
  /** add_reflection, search_reflections and the consolidation run (reflections.ts). */
  readonly reflections: Reflections;

  constructor(private readonly deps: MemoryServiceDeps) {
    this.redactor = deps.redactor ?? NO_REDACTION;
    this.recent = deps.recentSearches ?? new RecentSearches();
    this.indexer = new EmbeddingIndexer(deps.store, deps.embedder, deps.logger, undefined, deps.catchUpWaitMs);
    this.maintenance = new Maintenance({
      store: deps.store,
      embedder: deps.embedder,
      clock: deps.clock,
      afterWrite: () => this.afterWrite(),
      redactor: this.redactor,
      ...(deps.heavySlots === undefined ? {} : { slots: deps.heavySlots }),
    });
    this.reflections = new Reflections({
      store: deps.store,
      embedder: deps.embedder,
      slots: this.maintenance.slots,
      clock: deps.clock,
      afterWrite: () => this.afterWrite(),
      redactor: this.redactor,
      // The consolidation's own searches are not the agent's: a use never answers them.
      hybridSearch: (options) => this.runHybridSearch(options, false),
    });
  }

  get store(): Store {
    return this.deps.store;
  }

  /** Loads the model in the background and embeds whatever is queued; never blocks the caller. */
  warm(): void {
    void this.deps.store.graph.warmSearch?.();
    const vectors = this.deps.store.vectors;
    if (vectors === undefined) return;
    // The stored vectors load while the model does (each on its own), not one after the other.
    vectors
      .warm()
      .catch((error: unknown) => this.deps.logger.warn('loading the stored vectors failed; searches read them from the database', error));
    this.indexer.kick();
    this.redactor.warm?.().catch((error: unknown) => this.deps.logger.warn('loading the redaction rules failed', error));
  }

  /**
   * Stores a conversation from a hook, a transcript or a chat export as one session entity in its
   * project (capture.ts, docs/capture.md): redacted, acknowledgements skipped, each turn once.
   */
  async capture(conversation: Conversation, project: Project | undefined): Promise<CaptureResult> {
    return captureConversation(
      {
        store: this.deps.store,
        clock: this.deps.clock,
        redact: (texts) => this.redactor.redactAll(texts),
        afterWrite: () => this.afterWrite(),
        isAcknowledgement: isBareAcknowledgement,
      },
      conversation,
      project,
    );
  }

  /**
   * The brief at the start of a session in a project (brief.ts, docs/capture.md): fenced reference
   * data within 2,000 tokens and under 10,000 characters; '' when there is nothing to say. Keyword
   * search and usage only: it never loads the model.
   */
  async brief(project: Project | undefined, options: BriefOptions = {}): Promise<string> {
    const deps = { store: this.deps.store, indexer: this.indexer, reranker: undefined };
    const keywordSearch = async (query: string, scope: string | undefined, limit: number): Promise<EntityId[]> => {
      if (this.deps.store.keywords === undefined) return [];
      // limit 0: the ranked ids only; no candidate is read in full (a project's sessions are large).
      const outcome = await runSearch(deps, { ...keywordRequest(query, limit), project: scope }, this.deps.clock());
      return outcome.ranked.slice(0, limit).map((r) => r.id);
    };
    return buildBrief({ store: this.deps.store, clock: this.deps.clock, keywordSearch }, project, options);
  }

  /** The projects captured memories belong to, most recently updated first (limbic projects). */
  async projects(): Promise<ProjectSummary[]> {
    return captureStore(this.deps.store).projects();
  }

  /**
   * Gives every memory of project `from` to `to` (which may exist: they merge): the entities' project,
   * and the sessions' `part_of` relations, whose project entity `from` then goes. Returns how many
   * entities moved.
   */
  async moveProject(from: string, to: string): Promise<number> {
    const capture = captureStore(this.deps.store);
    const { graph } = this.deps.store;
    if (from === to) return 0;
    const moved = await capture.moveProject(from, to);
    const held = await graph.openNodes([from]);
    const project = held.entities.find((e) => e.name === from && e.entityType === PROJECT_TYPE);
    const members = held.relations.filter((r) => r.to === from && r.relationType === SESSION_PART_OF);
    if (project !== undefined || members.length > 0) {
      const now = this.deps.clock();
      await capture.append(
        {
          name: to,
          entityType: PROJECT_TYPE,
          project: to,
          observations: [],
          maxObservations: LIMITS.maxObservationsPerEntity,
          maxBytes: LIMITS.maxEntityTextBytes,
        },
        now,
      );
      await graph.createRelations(
        members.map((r) => ({ from: r.from, to, relationType: SESSION_PART_OF })),
        now,
      );
      if (project !== undefined) await graph.deleteEntities([from]);
      else await graph.deleteRelations(members, now);
    }
    this.afterWrite();
    return moved;
  }

  /**
   * One text through the redactor every write uses: what `capture` (and any other path that stores
   * text outside these use cases) calls before it stores anything.
   */
  async redact(text: string): Promise<{ text: string; findings: RedactionCount[] }> {
    const result = await this.redactor.redactAll([text]);
    return { text: result.texts[0] ?? text, findings: [...result.counts] };
  }

  /** Names, types and observations redacted; a name redacts the same wherever it appears, so references still meet. */
  async createEntities(given: readonly NewEntity[], tally?: RedactionTally): Promise<Entity[]> {
    const entities = await redactEntities(this.redactor, given, tally);
    const added = await this.deps.store.graph.createEntities(entities, this.deps.clock());
    this.afterWrite();
    return added;
  }

  /** Relating two entities uses both, together (a use each, a co-use per new relation). */
  async createRelations(asked: readonly Relation[], tally?: RedactionTally): Promise<Relation[]> {
    const given = await redactRelations(this.redactor, asked, tally);
    const relations = this.deps.inverseRelations === true ? withInverses(given, (r) => inverseContext(r.relationType)) : given;
    const added = await this.deps.store.graph.createRelations(relations, this.deps.clock());
    this.afterWrite();
    if (added.length > 0 && added.length <= USES_PER_CALL)
      this.later(async () => {
        // A relation may name an entity that does not exist (as in the official server): by name, one at a time.
        const idOf = new Map<string, EntityId>();
        for (const name of new Set(added.flatMap((r) => [r.from, r.to]))) {
          const [id] = await this.deps.store.graph.idsByName([name]);
          if (id !== undefined) idOf.set(name, id);
        }
        const pairs = added.flatMap((r) => {
          const [from, to] = [idOf.get(r.from), idOf.get(r.to)];
          return from === undefined || to === undefined ? [] : [[from, to] as const];
        });
        const now = this.deps.clock();
        await this.deps.store.usage.recordAccess([...idOf.values()], now, pairs);
        await this.recordRefinding([...idOf.values()], now);
      });
    return added;
  }

  /** Extending an entity uses it; entities extended in one call are not thereby used together. */
  async addObservations(given: readonly ObservationAddition[], tally?: RedactionTally): Promise<ObservationAdditionResult[]> {
    const items = await redactAdditions(this.redactor, given, tally);
    await this.withinEntityBounds(items);
    const results = await this.deps.store.graph.addObservations(items, this.deps.clock());
    this.afterWrite();
    this.noteExtended(results);
    return results;
  }

  /**
   * add_observations with `supersedes`: the same bounds as any addition (the replacement may be
   * longer than what it replaces), then the maintenance store's one transaction.
   */
  async supersede(given: readonly Supersession[], tally?: RedactionTally): Promise<SupersessionResult[]> {
    // `supersedes` names a stored observation, stored redacted: it is redacted the same way to meet it.
    const items = await redactAdditions(this.redactor, given, tally);
    await this.withinEntityBounds(items);
    const results = await this.maintenance.supersede(items);
    this.noteExtended(results);
    return results;
  }

  /**
   * Refuses, whole, an addition that would grow an entity past what one answer can carry (issue 26:
   * four acknowledged calls made an entity of 14.5 MiB that no tool could return over stdio). The
   * per-call limits hold each call; these hold the entity across calls. Items apply in order, as the
   * stores apply them: contents join, then the observation an item supersedes leaves.
   *
   * execute_entity_split needs no check: it moves observations an entity holds into new entities,
   * so none holds more than the original did.
   */
  private async withinEntityBounds(items: readonly Supersession[]): Promise<void> {
    const names = [...new Set(items.map((i) => i.entityName))];
    // The entities' observations alone (no relations, as open_nodes would read).
    const { graph } = this.deps.store;
    const current = new Map([...(await graph.entitiesById(await graph.idsByName(names))).values()].map((e) => [e.name, e.observations]));
    for (const name of names) {
      const held = current.get(name);
      if (held === undefined) continue; // a missing entity is the store's own error
      const after = new Set(held);
      for (const item of items) {
        if (item.entityName !== name) continue;
        for (const content of item.contents) after.add(content);
        if (item.supersedes !== undefined) after.delete(item.supersedes);
      }
      const count = after.size;
      let bytes = 0;
      for (const o of after) bytes += Buffer.byteLength(o);
      const fix =
        'Nothing was added. Replace old observations instead (add_observations with supersedes), or split the entity (analyze_entity_split).';
      if (count > LIMITS.maxObservationsPerEntity)
        throw new MemoryError(
          ERROR_CODES.INPUT_TOO_LARGE,
          `Entity ${name} would hold ${count} observations, over the ${LIMITS.maxObservationsPerEntity} one entity may hold, so that it stays readable. ${fix}`,
        );
      if (bytes > LIMITS.maxEntityTextBytes)
        throw new MemoryError(
          ERROR_CODES.INPUT_TOO_LARGE,
          `Entity ${name} would hold ${bytes} bytes of observations, over the ${LIMITS.maxEntityTextBytes} bytes one entity may hold, so that it stays readable. ${fix}`,
        );
    }
  }

  /** Records a use of each entity an addition extended (also add_observations with `supersedes`). */
  noteExtended(results: readonly { readonly entityName: string; readonly addedObservations: readonly string[] }[]): void {
    const extended = results.filter((r) => r.addedObservations.length > 0).map((r) => r.entityName);
    if (extended.length > 0 && extended.length <= USES_PER_CALL)
      this.later(async () => {
        const now = this.deps.clock();
        const ids = await this.deps.store.graph.idsByName(extended);
        await this.deps.store.usage.recordAccess(ids, now, []);
        await this.recordRefinding(ids, now);
      });
  }

  /** A use of these entities pairs each with the recent search that listed it, if one did (refinding.ts). */
  private async recordRefinding(ids: readonly EntityId[], now: number): Promise<void> {
    const pairs = this.recent.pairsFor(ids, now);
    if (pairs.length > 0) await this.deps.store.usage.recordRefinding(pairs);
  }

  /**
   * Deletions name what is stored both ways: redacted (as written since redaction), and as given, so
   * a secret stored before this version can still be deleted by its text.
   */
  async deleteEntities(names: readonly string[]): Promise<void> {
    await this.deps.store.graph.deleteEntities(bothForms(names, await this.redactNames(names)));
    this.afterWrite();
  }

  async deleteObservations(given: readonly ObservationDeletion[]): Promise<void> {
    const batch = new TextBatch();
    const read = given.map((d) => ({ d, name: batch.add(d.entityName), observations: d.observations.map((o) => batch.add(o)) }));
    await batch.run(this.redactor);
    const deletions = read.flatMap(({ d, name, observations }) => {
      const contents = bothForms(
        d.observations,
        observations.map((o) => o()),
      );
      return bothForms([d.entityName], [name()]).map((entityName) => ({ entityName, observations: contents }));
    });
    await this.deps.store.graph.deleteObservations(deletions, this.deps.clock());
    this.afterWrite();
  }

  async deleteRelations(asked: readonly Relation[]): Promise<void> {
    const redacted = await redactRelations(this.redactor, asked);
    const given = [...asked, ...redacted.filter((r, i) => JSON.stringify(r) !== JSON.stringify(asked[i]))];
    const relations = this.deps.inverseRelations === true ? withInverses(given, () => undefined) : given;
    await this.deps.store.graph.deleteRelations(relations, this.deps.clock());
    this.afterWrite();
  }

  async setStatus(given: string, status: EntityStatus): Promise<boolean> {
    const [name = given] = await this.redactNames([given]);
    return this.deps.store.graph.setStatus(name, status, this.deps.clock());
  }

  async importBatch(given: ImportBatch, tally?: RedactionTally): Promise<ImportCounts> {
    const [entities, relations] = await Promise.all([
      redactEntities(this.redactor, given.entities, tally),
      redactRelations(this.redactor, given.relations, tally),
    ]);
    return this.deps.store.graph.importBatch({ entities, relations }, this.deps.clock());
  }

  /** After a bulk load: compacts the keyword indexes so searches read less, reporting progress. */
  async optimizeIndexes(progress?: CompactionListener): Promise<void> {
    await this.deps.store.keywords?.optimize(progress);
  }

  /** Which of these names are entities, as given (a name with a secret: under its redacted form; no access is recorded). */
  async existingNames(names: readonly string[]): Promise<Set<string>> {
    const stored = await this.redactNames(names);
    // The entities alone: a hub's relations are not read to learn that it exists.
    const graph = await this.deps.store.graph.openNodes(stored, { offset: 0, limit: 0, includeEnded: false });
    const found = new Set(graph.entities.map((e) => e.name));
    return new Set(names.filter((n, i) => found.has(stored[i] ?? n)));
  }

  /**
   * The whole graph, without the paging's total: every relation, an ended one with ended_at, as
   * `limbic export` writes it; `includeEnded: false`, current relations only, as read_graph answers.
   */
  async readGraph(options: { readonly includeEnded?: boolean } = {}): Promise<KnowledgeGraph> {
    const { entities, relations } = await this.deps.store.graph.readGraph();
    return { entities, relations: listed(relations, options.includeEnded ?? true) };
  }

  /** The official search_nodes: every match, without the paging's total (inside a project, not another's). */
  async searchNodes(given: string): Promise<KnowledgeGraph> {
    const [query = given] = await this.redactNames([given]);
    const answer = await this.deps.store.graph.searchNodes(query);
    const { entities, relations } = (await this.hidesOtherProjects()) ? await this.withoutOtherProjects(answer, undefined) : answer;
    return { entities, relations: listed(relations, false) };
  }

  /** Whether searches here leave anything out: the service runs in a project and the memory holds another's. */
  private async hidesOtherProjects(): Promise<boolean> {
    const project = this.deps.project;
    return project !== undefined && (await this.deps.store.capture?.holdsOtherProjects(project)) === true;
  }

  /**
   * search_nodes' answer from inside the service's project, without other projects' entities nor
   * the relations naming them, and cut to `page` when given.
   */
  private async withoutOtherProjects<E extends Entity | EntityOutline>(
    answer: { readonly entities: readonly E[]; readonly relations: readonly Relation[] },
    page: Page | undefined,
  ): Promise<{ entities: readonly E[]; relations: readonly Relation[]; total: number }> {
    const project = this.deps.project;
    const { graph, usage } = this.deps.store;
    const names = [...new Set([...answer.entities.map((e) => e.name), ...answer.relations.flatMap((r) => [r.from, r.to])])];
    const facts = [...(await usage.signals(await graph.idsByName(names))).facts.values()];
    const hidden = new Set(facts.filter((f) => f.project !== undefined && f.project !== project).map((f) => f.name));
    // Relations name their ends: one to a hidden entity would show its name, so it goes too.
    const shownRelation = (r: Relation): boolean => !hidden.has(r.from) && !hidden.has(r.to);
    const kept = answer.entities.filter((e) => !hidden.has(e.name));
    if (page === undefined) return { entities: kept, relations: answer.relations.filter(shownRelation), total: kept.length };
    const shown = kept.slice(page.offset, page.offset + page.limit);
    const onPage = new Set(shown.map((e) => e.name));
    return {
      entities: shown,
      relations: answer.relations.filter((r) => shownRelation(r) && (onPage.has(r.from) || onPage.has(r.to))),
      total: kept.length,
    };
  }

  /**
   * read_graph and search_nodes with Limbic's options: a page (when `page` is given) with its total
   * and next offset, and read_graph's compact form. Neither option: exactly the official answer.
   */
  async graphView(view: GraphView): Promise<GraphViewAnswer> {
    const { graph } = this.deps.store;
    const { page } = view;
    const window = relationWindow(view.relations, view.includeEnded);
    const shown = (read: { readonly relations: readonly Relation[]; readonly relationCount?: number }): ReturnType<typeof relationPage> =>
      relationPage(read.relations, read.relationCount ?? read.relations.length, window, view.relations);
    const query = view.query === undefined ? undefined : ((await this.redactNames([view.query]))[0] ?? view.query);
    if (view.query === undefined && view.compact) {
      const outline = await graph.outline(page, window);
      return withPage(outline.entities, shown(outline), outline.total, page);
    }
    const answer =
      query === undefined
        ? await graph.readGraph(page, window)
        : (await this.hidesOtherProjects())
          ? // From inside a project the matches are read whole, then other projects' left out and the page cut here.
            await this.withoutOtherProjects(await graph.searchNodes(query), page).then((a) => ({
              ...a,
              ...windowOfRead(a.relations, window),
            }))
          : await graph.searchNodes(query, page, window);
    const entities = view.observations === undefined ? answer.entities : answer.entities.map((e) => observationPage(e, view.observations));
    return withPage(entities, shown(answer), answer.total, page);
  }

  /**
   * Opens entities and, after the answer is built, counts the use (and co-use of 2+ opened
   * together, up to USES_PER_CALL of them): opening is the agent's act of using what a search listed.
   */
  async openNodes(given: readonly string[], options: OpenNodesOptions = {}): Promise<KnowledgeGraph & RelationPageFields> {
    const relations = relationWindow(options.relations, options.includeEnded);
    const stored = await this.deps.store.graph.openNodes(await this.redactNames(given), relations);
    const page = relationPage(stored.relations, stored.relationCount ?? stored.relations.length, relations, options.relations);
    const read = { entities: stored.entities, relations: page.relations };
    const kinded = options.kinds === undefined && options.includeKinds !== true ? read : await this.withKinds(read, options);
    const window = options.window;
    const graph = {
      ...page,
      ...kinded,
      ...(window === undefined ? {} : { entities: kinded.entities.map((e) => observationPage(e, window)) }),
    };
    const opened = graph.entities.map((e) => e.name);
    this.later(async () => {
      const now = this.deps.clock();
      const ids = await this.deps.store.graph.idsByName(opened);
      const together = ids.length <= USES_PER_CALL;
      await this.deps.store.usage.recordAccess(ids, now, together ? 'all' : []);
      if (together) await this.recordRefinding(ids, now);
      // Opening what a search listed is the implicit relevance the tuner learns from.
      await this.deps.store.tuning?.recordFeedback(ids, now, FEEDBACK_WINDOW_MS);
    });
    return graph;
  }

  /** open_nodes' entities read again with their kinds, filtered by kind and/or showing them. */
  private async withKinds(graph: KnowledgeGraph, options: OpenNodesOptions): Promise<KnowledgeGraph> {
    const { store } = this.deps;
    const stored = await store.graph.entitiesById(await store.graph.idsByName(graph.entities.map((e) => e.name)));
    const byName = new Map([...stored.values()].map((e) => [e.name, e]));
    const wanted = options.kinds === undefined ? undefined : new Set(options.kinds);
    const entities = graph.entities.map((entity): Entity | EntityWithKinds => {
      const full = byName.get(entity.name);
      if (full === undefined) return entity;
      const kept = full.observations.map((content, i) => ({ content, kind: full.kinds[i] ?? DEFAULT_OBSERVATION_KIND }));
      const shown = wanted === undefined ? kept : kept.filter((o) => wanted.has(o.kind));
      const observations = shown.map((o) => o.content);
      return options.includeKinds === true
        ? { name: entity.name, entityType: entity.entityType, observations, observation_kinds: shown.map((o) => o.kind) }
        : { name: entity.name, entityType: entity.entityType, observations };
    });
    return { entities, relations: graph.relations };
  }

  /**
   * The project a search runs in: the one it names (ALL_PROJECTS: none), else the service's own.
   * @example service.searchProject(undefined) // the server's project, or undefined outside any
   */
  searchProject(asked: string | undefined): string | undefined {
    const project = asked ?? this.deps.project;
    return project === ALL_PROJECTS ? undefined : project;
  }

  /**
   * search_semantic: the pipeline's preset; what it showed goes to the shadow log afterwards.
   * `observations`: how many each result shows, matching first; undefined, all of them.
   */
  async searchSemantic(
    given: string,
    limit: number,
    observations?: ObservationBound,
    project?: string,
  ): Promise<Omit<SemanticResponse, 'ids' | 'shadow'>> {
    // The query is redacted before it is searched, embedded or logged (the shadow log keeps its hash).
    const [query = given] = await this.redactNames([given]);
    const now = this.deps.clock();
    const deps = { store: this.deps.store, indexer: this.indexer, reranker: undefined };
    const { ids, shadow, refindQuery, ...response } = await searchSemantic(deps, query, limit, now, {
      project: this.searchProject(project),
      ...(observations === undefined ? {} : { observations }),
    });
    this.recent.note(now, refindQuery, ids);
    this.later(() => this.recordSearch(shadow));
    return response;
  }

  /** hybrid_search: every option, scores explained; what it showed goes to the shadow log afterwards. */
  async hybridSearch(given: HybridSearchOptions): Promise<Omit<HybridResponse, 'ids' | 'shadow'>> {
    return this.runHybridSearch(given, true);
  }

  /** hybrid_search; `agents`: the agent asked it, so a use after it may answer it (re-finding). */
  private async runHybridSearch(given: HybridSearchOptions, agents: boolean): Promise<Omit<HybridResponse, 'ids' | 'shadow'>> {
    const options = await this.redactSearch(given);
    const now = this.deps.clock();
    const { ids, shadow, refindQuery, ...response } = await hybridSearch(
      { store: this.deps.store, indexer: this.indexer, reranker: this.deps.reranker },
      { ...options, project: this.searchProject(options.project) },
      now,
    );
    if (agents) this.recent.note(now, refindQuery, ids);
    this.later(() => this.recordSearch(shadow));
    return response;
  }

  async statistics(): Promise<Statistics> {
    const store = this.deps.store;
    const [stats, vectors, ranking] = await Promise.all([store.stats(), store.vectors?.status() ?? NO_VECTORS, parametersInForce(store)]);
    const state = this.deps.embedder.state();
    const ready = state.state === 'ready' ? state.embedder : undefined;
    return {
      entities: stats.entities,
      observations: stats.observations,
      relations: stats.relations,
      database: { path: stats.location, bytes: stats.databaseBytes ?? null },
      fts: { available: store.keywords !== undefined, indexed: store.keywords !== undefined ? stats.entities : 0 },
      semantic: {
        available: store.vectors !== undefined && state.state !== 'unavailable',
        indexed: vectors.indexed,
        pending: vectors.pending,
        model: ready?.id ?? vectors.model ?? null,
      },
      reranking: { available: this.deps.reranker !== undefined, model: this.deps.reranker?.id ?? null },
      embeddings: {
        available: store.vectors !== undefined && state.state !== 'unavailable',
        state: state.state,
        model: ready?.id ?? vectors.model ?? null,
        dims: ready?.dims ?? vectors.dims ?? null,
        indexed: vectors.indexed,
        pending: vectors.pending,
        ...(state.state === 'unavailable' ? { reason: state.reason } : {}),
        ...(state.state === 'loading' && state.detail !== undefined ? { progress: state.detail } : {}),
      },
      ranking: {
        gamma: ranking.gamma,
        beta_sal: ranking.betaSal,
        rrf_k: ranking.rrfK,
        source: ranking.source,
        tuned_at: ranking.tunedAt === undefined ? null : new Date(ranking.tunedAt).toISOString(),
      },
    };
  }

  /** The model's state once a load has been tried (an install under way is not waited for): model-state.ts words it. */
  async modelState(): Promise<EmbedderState> {
    await this.deps.embedder.get();
    return this.deps.embedder.state();
  }

  /** Queues every entity and embeds them all, reporting progress; resolves to how many were embedded. */
  async reembed(progress?: (done: number, total: number) => void): Promise<number> {
    // An install under way (this process's, or another's: the loader waits for it) is waited for.
    const embedder = await this.indexer.ready(true);
    if (embedder === undefined) {
      if (this.deps.store.vectors === undefined) {
        throw new MemoryError(
          ERROR_CODES.VECTOR_UNAVAILABLE,
          'Re-embedding needs the vector table, and this store keeps none (the sqlite-vec extension did not load). "limbic doctor" says why and how to fix it.',
        );
      }
      throw modelNeededError(this.deps.embedder.state(), 'Re-embedding needs the embedding model.');
    }
    // A drain the model's arrival started (onReady) ends first, so the count below is this run's.
    await this.indexer.idle();
    const total = (await this.deps.store.vectors?.requeueAll()) ?? 0;
    const onProgress: DrainProgress = (done) => progress?.(Math.min(done, total), total);
    return this.indexer.drain(onProgress);
  }

  /** Embeds whatever is queued now (used by import and tests); resolves to how many. */
  drainEmbeddings(progress?: DrainProgress): Promise<number> {
    return this.indexer.drain(progress);
  }

  /** Texts that name what is stored (names, queries): redacted as stored text was, so they meet it. */
  private async redactNames(texts: readonly string[]): Promise<string[]> {
    if (!this.redactor.enabled) return [...texts];
    return [...(await this.redactor.redactAll(texts)).texts];
  }

  /** hybrid_search's query and its name and type filters, redacted as stored text was. */
  private async redactSearch(options: HybridSearchOptions): Promise<HybridSearchOptions> {
    if (!this.redactor.enabled) return options;
    const batch = new TextBatch();
    const query = batch.add(options.query);
    const names = options.filters.names?.map((n) => batch.add(n));
    const types = options.filters.entityTypes?.map((t) => batch.add(t));
    await batch.run(this.redactor);
    return {
      ...options,
      query: query(),
      filters: {
        ...options.filters,
        ...(names === undefined ? {} : { names: names.map((n) => n()) }),
        ...(types === undefined ? {} : { entityTypes: types.map((t) => t()) }),
      },
    };
  }

  /**
   * After a search's answer: its shadow-log entry (what was shown, for the tuner). Being listed is
   * not being used, so a search records no access and no co-occurrence (issue 24): counted as use,
   * whatever was returned once was returned more, until a few entities answered every question.
   */
  private async recordSearch(shadow: ShadowEvent | undefined): Promise<void> {
    if (shadow !== undefined) await this.deps.store.tuning?.appendShadow(shadow);
  }

  /** Resolves when the usage signals of every answer given so far are recorded. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  private afterWrite(): void {
    this.indexer.kick();
  }

  /** Best-effort work after a response: never fails or slows the call that scheduled it. */
  private later(task: () => Promise<unknown>): void {
    const done = new Promise<void>((resolve) => {
      setImmediate(() => {
        task()
          .catch((error: unknown) => this.deps.logger.warn('recording usage signals failed', error))
          .finally(() => {
            this.pending.delete(done);
            resolve();
          });
      });
    });
    this.pending.add(done);
  }

  /** Finishes post-response work and any embedding batch under way, then closes the store. */
  async close(): Promise<void> {
    await Promise.all([...this.pending]);
    this.indexer.stop(); // a backlog stays queued for the next start, the batch under way with it
    await this.indexer.idle();
    await this.deps.embedder.close();
    await this.deps.store.close();
  }
}

/** Entities with their names, types and observations redacted (one pass for the whole call). */
export async function redactEntities<E extends NewEntity>(redactor: Redactor, given: readonly E[], tally?: RedactionTally): Promise<E[]> {
  if (!redactor.enabled) return [...given];
  const batch = new TextBatch();
  const read = given.map((e) => ({
    e,
    name: batch.add(e.name),
    type: batch.add(e.entityType),
    observations: e.observations.map((o) => batch.add(o)),
  }));
  await batch.run(redactor, tally);
  return read.map((r) => ({ ...r.e, name: r.name(), entityType: r.type(), observations: r.observations.map((o) => o()) }));
}

/** Relations with their ends, type and context redacted. */
export async function redactRelations(redactor: Redactor, given: readonly Relation[], tally?: RedactionTally): Promise<Relation[]> {
  if (!redactor.enabled) return [...given];
  const batch = new TextBatch();
  const read = given.map((r) => ({
    r,
    from: batch.add(r.from),
    to: batch.add(r.to),
    type: batch.add(r.relationType),
    context: batch.addOptional(r.context),
  }));
  await batch.run(redactor, tally);
  return read.map(({ r, from, to, type, context }) => {
    const c = context();
    return { ...r, from: from(), to: to(), relationType: type(), ...(c === undefined ? {} : { context: c }) };
  });
}

/** add_observations items (with or without `supersedes`) with their entity, contents and superseded text redacted. */
async function redactAdditions<I extends Supersession>(redactor: Redactor, given: readonly I[], tally?: RedactionTally): Promise<I[]> {
  if (!redactor.enabled) return [...given];
  const batch = new TextBatch();
  const lookups = new TextBatch(); // names what is stored: not counted as redacted for storing
  const read = given.map((i) => ({
    i,
    name: lookups.add(i.entityName),
    contents: i.contents.map((c) => batch.add(c)),
    supersedes: lookups.addOptional(i.supersedes),
  }));
  await Promise.all([batch.run(redactor, tally), lookups.run(redactor)]);
  return read.map(({ i, name, contents, supersedes }) => {
    const s = supersedes();
    return { ...i, entityName: name(), contents: contents.map((c) => c()), ...(s === undefined ? {} : { supersedes: s }) };
  });
}

/** The texts as given and as redacted, each once (a deletion matches either). */
const bothForms = (given: readonly string[], redacted: readonly string[]): string[] => [...new Set([...given, ...redacted])];
