/**
 * Reflections (issue 16, part 2): higher-order notes about the memory, stored as entities of type
 * REFLECTION_TYPE linked `reflects_on` to what they are about, so every search, export and tool
 * sees them and hybrid_search can include, boost or isolate them (docs/tools.md, "Reflections").
 * add_reflection writes one by hand; the consolidation run (no LLM) clusters entities by meaning and
 * co-occurrence and writes one per cluster. Unlike the seed system's, reflections are searchable by
 * words and meaning, and an `about` entity must exist.
 */
import { entityNotFound } from '../core/errors.js';
import { dot, rescaledCosine } from '../core/maintenance/duplicates.js';
import { CUT_DISTANCE, CUT_DISTANCE_RESCALED, nameGroups, semanticGroups, topicWords } from '../core/maintenance/split.js';
import { NO_REDACTION, type RedactionTally, type Redactor } from '../core/text/redaction.js';
import type { EntityId } from '../core/types.js';
import type { LazyEmbedder } from '../embed/embedder.js';
import type { Store } from '../store/store.js';
import type { HeavySlots } from './heavy-slots.js';
import { TextBatch } from './redaction-batch.js';
import { REFLECTION_TYPE, type HybridResponse, type HybridSearchOptions } from './search/hybrid-search.js';

export const REFLECTS_ON = 'reflects_on';
const META_KIND = 'reflection-meta';
/** Text of an entity read by the consolidation run: enough to place it, not its whole history. */
const ENTITY_TEXT_CHARS = 1_000;
/** Co-occurrence adds this much similarity per shared use, up to three uses. */
const COOC_STEP = 0.1;
/**
 * A cluster with more members than this is split again with a tighter cut. Measured on LoCoMo
 * (bench/quality/locomo-reflections.ts): every turn of a conversation is within the split cut of
 * the others on average, so one cut made one reflection of all 369 turns, which says nothing.
 */
const MAX_SOURCES = 20;
/** How much tighter each re-split cuts (in rescaled-cosine distance). */
const CUT_STEP = 0.1;

export interface ReflectionsDeps {
  readonly store: Store;
  readonly embedder: LazyEmbedder;
  readonly slots: HeavySlots;
  readonly afterWrite: () => void;
  readonly clock: () => number;
  /** What every text written goes through (memory-service.ts). @default NO_REDACTION */
  readonly redactor?: Redactor;
  readonly hybridSearch: (options: HybridSearchOptions) => Promise<Omit<HybridResponse, 'ids' | 'shadow'>>;
}

export interface NewReflection {
  readonly content: string;
  readonly about?: readonly string[] | undefined;
  readonly author?: string | undefined;
  readonly mood?: string | undefined;
}

export interface ConsolidationOptions {
  /** Entities read, newest first. @default 500 */
  readonly maxEntities?: number;
  /** Entities a cluster needs to become a reflection. @default 3 */
  readonly minSize?: number;
  /** Find the clusters and say what would be written, writing nothing. @default false */
  readonly dryRun?: boolean;
}

/**
 * A cluster holding more than this share of the entities scanned is no theme: in a small memory
 * everything can fall into one cluster, and its reflection ("Reflection: Acme Prefers") linked
 * every entity to a name made of two common words (issue 25).
 */
const BROAD_SHARE = 0.5;

export class Reflections {
  constructor(private readonly deps: ReflectionsDeps) {}

  async add(given: NewReflection, tally?: RedactionTally): Promise<Record<string, unknown>> {
    const r = await this.redacted(given, tally);
    const about = [...new Set(r.about ?? [])];
    const found = await this.deps.store.graph.idsByName(about);
    if (found.length !== about.length) {
      const known = new Set((await this.deps.store.graph.openNodes(about)).entities.map((e) => e.name));
      throw entityNotFound(about.find((n) => !known.has(n)) ?? '');
    }
    const name = await this.freeName(`Reflection: ${firstWords(r.content)}`);
    await this.write(name, r.content, about, [
      ...(r.author === undefined ? [] : [`author: ${r.author}`]),
      ...(r.mood === undefined ? [] : [`mood: ${r.mood}`]),
    ]);
    return {
      reflection: {
        name,
        content: r.content,
        about,
        ...(r.author === undefined ? {} : { author: r.author }),
        ...(r.mood === undefined ? {} : { mood: r.mood }),
      },
    };
  }

  async search(query: string, limit: number): Promise<Record<string, unknown>> {
    const answer = await this.deps.hybridSearch({
      query,
      limit,
      offset: 0,
      searchModes: undefined,
      fusionMethod: 'rrf',
      rrfK: undefined,
      weights: {},
      limbic: true,
      rerank: false,
      filters: {},
      explainQuery: false,
      reflections: { include: true, boost: 1, only: true },
    });
    const names = answer.results.map((r) => r.name);
    const links = names.length === 0 ? [] : (await this.deps.store.graph.openNodes(names)).relations;
    // When each was written (issue 25): a reflection is a thought at a time.
    const stored = await this.deps.store.graph.entitiesById(await this.deps.store.graph.idsByName(names));
    const createdAt = new Map([...stored.values()].map((e) => [e.name, new Date(e.createdAt).toISOString()]));
    return {
      results: answer.results.map((r) => ({
        name: r.name,
        content: r.observations[0] ?? '',
        observations: r.observations,
        about: links.filter((l) => l.from === r.name && l.relationType === REFLECTS_ON).map((l) => l.to),
        ...(createdAt.has(r.name) ? { created_at: createdAt.get(r.name) } : {}),
        score: r.scores.final,
      })),
      ...(answer.warnings === undefined ? {} : { warnings: answer.warnings }),
    };
  }

  /** The consolidation run: clusters of related entities become reflections; an existing one is kept. */
  consolidate(options: ConsolidationOptions = {}): Promise<Record<string, unknown>> {
    return this.deps.slots.run(async () => {
      const { store } = this.deps;
      const maxEntities = options.maxEntities ?? 500;
      const minSize = Math.max(2, options.minSize ?? 3);
      const outline = (await store.graph.outline()).entities.filter((e) => e.entityType !== REFLECTION_TYPE && e.observationCount > 0);
      const chosen = outline.slice(-maxEntities).map((e) => e.name);
      const ids = await store.graph.idsByName(chosen);
      const full = await store.graph.entitiesById(ids);
      const entities = ids.flatMap((id) => {
        const e = full.get(id);
        // Observations only: a name and type shared by many entities ("Note 3 (Note)") made them all alike.
        return e === undefined ? [] : [{ id, name: e.name, text: e.observations.join(' | ').slice(0, ENTITY_TEXT_CHARS) }];
      });
      const n = entities.length;
      const co = new Map<string, number>();
      for (const p of (await store.usage.signals(entities.map((e) => e.id))).coOccurrences) co.set(pairKey(p.a, p.b), p.count);
      const { similarity, floor, method } = await this.similarity(entities.map((e) => e.text));
      const withUse = (i: number, j: number): number =>
        Math.min(
          1,
          similarity(i, j) +
            COOC_STEP * Math.min(3, co.get(pairKey((entities[i] as { id: EntityId }).id, (entities[j] as { id: EntityId }).id)) ?? 0),
        );
      const cut = floor > 0 || method === 'words' ? CUT_DISTANCE_RESCALED : CUT_DISTANCE;
      const groups = n < 2 ? [] : boundedGroups([...Array(n).keys()], withUse, cut, minSize, Math.max(minSize, MAX_SOURCES));
      const themes = nameGroups(groups.map((g) => g.map((i) => (entities[i] as { text: string }).text)));
      const created: Record<string, unknown>[] = [];
      let existing = 0;
      let broad = 0;
      for (const [k, theme] of Object.keys(themes).entries()) {
        const members = (groups[k] ?? []).map((i) => (entities[i] as { name: string }).name);
        if (members.length > BROAD_SHARE * n) {
          broad++;
          continue;
        }
        const name = `Reflection: ${theme}`;
        if ((await store.graph.idsByName([name])).length > 0) {
          existing++;
          continue;
        }
        const used = (groups[k] ?? []).some((i, x, g) =>
          g.slice(x + 1).some((j) => co.has(pairKey((entities[i] as { id: EntityId }).id, (entities[j] as { id: EntityId }).id))),
        );
        const content = `Theme "${theme}": ${listNames(members)} are related by ${method === 'semantic' ? 'meaning' : 'shared words'}${used ? ' and are used together' : ''} (${members.length} entities).`;
        if (options.dryRun !== true) await this.write(name, content, members, ['source: consolidation run']);
        created.push({ name, content, sources: members });
      }
      const note =
        broad > 0
          ? `${broad} cluster${broad === 1 ? '' : 's'} held more than half of the ${n} entities scanned: no theme, nothing written for ${broad === 1 ? 'it' : 'them'}.`
          : undefined;
      return {
        ...(options.dryRun === true ? { dry_run: true, reflections_to_create: created } : { reflections_created: created }),
        clusters_found: groups.length,
        existing_kept: existing,
        broad_skipped: broad,
        entities_scanned: n,
        method,
        ...(note === undefined ? {} : { note }),
      };
    });
  }

  /** A reflection's text, its author, mood and the names it is about, redacted in one pass. */
  private async redacted(r: NewReflection, tally?: RedactionTally): Promise<NewReflection> {
    const batch = new TextBatch();
    const content = batch.add(r.content);
    const author = batch.addOptional(r.author);
    const mood = batch.addOptional(r.mood);
    const names = new TextBatch(); // names what is stored: not counted
    const about = r.about?.map((a) => names.add(a));
    await Promise.all([batch.run(this.redactor(), tally), names.run(this.redactor())]);
    return { content: content(), author: author(), mood: mood(), about: about?.map((a) => a()) };
  }

  /**
   * Writes one reflection. Everything goes through the redactor again, the consolidation run's
   * text too: it is made of stored names and text, which a memory written before redaction may
   * still hold secrets in (redacting redacted text changes nothing).
   */
  private async write(givenName: string, givenContent: string, givenAbout: readonly string[], givenMeta: readonly string[]): Promise<void> {
    const batch = new TextBatch();
    const [nameOf, contentOf] = [batch.add(givenName), batch.add(givenContent)];
    const [aboutOf, metaOf] = [givenAbout.map((a) => batch.add(a)), givenMeta.map((m) => batch.add(m))];
    await batch.run(this.redactor());
    const [name, content, about, meta] = [nameOf(), contentOf(), aboutOf.map((a) => a()), metaOf.map((m) => m())];
    const { graph } = this.deps.store;
    const now = this.deps.clock();
    await graph.createEntities([{ name, entityType: REFLECTION_TYPE, observations: [content] }], now);
    if (meta.length > 0) await graph.addObservations([{ entityName: name, contents: meta, kind: META_KIND }], now);
    if (about.length > 0)
      await graph.createRelations(
        about.map((to) => ({ from: name, to, relationType: REFLECTS_ON })),
        now,
      );
    this.deps.afterWrite();
  }

  private redactor(): Redactor {
    return this.deps.redactor ?? NO_REDACTION;
  }

  private async freeName(base: string): Promise<string> {
    let name = base;
    for (let k = 2; (await this.deps.store.graph.idsByName([name])).length > 0; k++) name = `${base} (${k})`;
    return name;
  }

  /** Meaning with the loaded model; shared content words (Jaccard) without one. */
  private async similarity(
    texts: readonly string[],
  ): Promise<{ similarity: (i: number, j: number) => number; floor: number; method: 'semantic' | 'words' }> {
    const embedder = texts.length < 2 ? undefined : await this.deps.embedder.get();
    if (embedder !== undefined) {
      const vectors = await embedder.embed(texts, 'passage');
      const floor = embedder.similarityFloor ?? 0;
      return {
        similarity: (i, j) => rescaledCosine(dot(vectors[i] as Float32Array, vectors[j] as Float32Array), floor),
        floor,
        method: 'semantic',
      };
    }
    const sets = texts.map((t) => new Set(topicWords(t)));
    return {
      similarity: (i, j) => {
        const [a, b] = [sets[i] as Set<string>, sets[j] as Set<string>];
        let shared = 0;
        for (const w of a) if (b.has(w)) shared++;
        return shared === 0 ? 0 : shared / (a.size + b.size - shared);
      },
      floor: 0,
      method: 'words',
    };
  }
}

const pairKey = (a: EntityId, b: EntityId): string => (a < b ? `${a}:${b}` : `${b}:${a}`);

/**
 * Average-linkage clusters of `members` of at least `minSize`; one larger than `maxSize` is
 * clustered again, alone, with a cut CUT_STEP tighter, until it falls apart into themes.
 */
function boundedGroups(
  members: readonly number[],
  similarity: (i: number, j: number) => number,
  cut: number,
  minSize: number,
  maxSize: number,
): number[][] {
  const groups = semanticGroups(members.length, (i, j) => similarity(members[i] as number, members[j] as number), cut);
  return groups.flatMap((g) => {
    const ids = g.map((i) => members[i] as number);
    if (ids.length < minSize) return [];
    if (ids.length <= maxSize) return [ids];
    return cut > CUT_STEP ? boundedGroups(ids, similarity, cut - CUT_STEP, minSize, maxSize) : [];
  });
}

/** The opening words, cut in code points: a cut inside a surrogate pair would store a lone surrogate. */
function firstWords(text: string): string {
  const points = [...text.trim().split(/\s+/).slice(0, 8).join(' ')];
  return points.length > 60 ? `${points.slice(0, 57).join('')}...` : points.join('');
}

function listNames(names: readonly string[]): string {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} and ${names[names.length - 1] ?? ''}`;
}
