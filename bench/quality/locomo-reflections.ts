/**
 * `bench:quality -- --consolidate` (issue 16): what reflections change on LoCoMo. Each
 * conversation's memory (one entity per turn, as locomo.ts loads it) is asked every question
 * under search_semantic and hybrid_search (the tools' defaults), then the consolidation run that
 * `run_consolidation` and `limbic consolidate` run (Reflections.consolidate, its defaults) writes
 * its reflections, they are embedded, and the questions are asked again: search_semantic and
 * hybrid_search with reflections included (the default), and hybrid_search with
 * include_reflections false.
 *
 * A reflection in the top k is scored two ways: strict, where it is a miss (LoCoMo's gold is the
 * evidence turns, and a reflection is not one), and credited, where it counts as hitting every gold
 * turn it links to with `reflects_on` (an agent would have to open it to reach them). Strict is the
 * fair reading of "did the search return the evidence"; credited is the most reflections could
 * be worth, since a large cluster links to many turns at once.
 */
import { readFileSync } from 'node:fs';
import type { EntityId } from '../../src/core/types.js';
import { LazyEmbedder, type Embedder } from '../../src/embed/embedder.js';
import { toHybridOptions } from '../../src/mcp/hybrid-options.js';
import { HeavySlots, heavySlotOptionsFromEnv } from '../../src/service/heavy-slots.js';
import { Reflections } from '../../src/service/reflections.js';
import { hybridSearch } from '../../src/service/search/hybrid-search.js';
import { searchSemantic } from '../../src/service/search/search-semantic.js';
import { cachedEmbedder } from './embed-cache.js';
import { Corpus, f3, loadModel, requireData } from './harness.js';
import { CATEGORY_NAMES, goldIds, LOCOMO_GROUPS, locomoGroups, locomoHalves, turnsOf, type DateStyle, type Sample } from './locomo.js';
import { Tally, type Half } from './tally.js';

const LIMIT = 10;

/** The searches asked, in report order; `after` ones run once the consolidation has run. */
const MODES = [
  { name: 'search_semantic', after: false },
  { name: 'hybrid_search', after: false },
  { name: 'search_semantic +reflections', after: true },
  { name: 'hybrid_search +reflections', after: true },
  { name: 'hybrid_search include_reflections=false', after: true },
] as const;
type ModeName = (typeof MODES)[number]['name'];

interface Cell {
  n: number;
  strict5: number;
  strict10: number;
  credited5: number;
  credited10: number;
  /** Reflections among the top 10, summed. */
  reflections10: number;
}

export interface ReflectionOptions {
  readonly samples?: number;
  readonly dates: DateStyle;
  readonly half?: Half;
}

/** Recall@k of one ranking: strict counts gold turns only, credited also a reflection's gold sources. */
function recalls(ranked: readonly EntityId[], gold: ReadonlySet<EntityId>, sources: ReadonlyMap<EntityId, readonly EntityId[]>, k: number) {
  const strict = new Set<EntityId>();
  const credited = new Set<EntityId>();
  let reflections = 0;
  for (const id of ranked.slice(0, k)) {
    if (gold.has(id)) {
      strict.add(id);
      credited.add(id);
    }
    const linked = sources.get(id);
    if (linked === undefined) continue;
    reflections++;
    for (const s of linked) if (gold.has(s)) credited.add(s);
  }
  return { strict: strict.size / gold.size, credited: credited.size / gold.size, reflections };
}

export async function runLocomoReflections(options: ReflectionOptions): Promise<{ report: string; tally: Tally }> {
  const data = JSON.parse(readFileSync(requireData('locomo/locomo10.json'), 'utf8')) as Sample[];
  const halves = locomoHalves(data.map((s) => s.sample_id));
  const engine = await loadModel();
  const model = cachedEmbedder(engine);
  const tally = new Tally();
  const cells = new Map<string, Cell>();
  const now = Date.UTC(2026, 0, 1);
  const notes: string[] = [];
  let questions = 0;
  let turns = 0;
  let consolidateMs = 0;
  const started = performance.now();
  for (const sample of data.slice(0, options.samples ?? Infinity)) {
    const half = halves.get(sample.sample_id) ?? 'A';
    if (options.half !== undefined && half !== options.half) continue;
    const { entities, additions } = turnsOf(sample, options.dates);
    turns += entities.length;
    const corpus = new Corpus(model);
    await corpus.load(entities, now, [], additions);
    const ids = await corpus.ids(entities.map((e) => e.name));
    const deps = { store: corpus.store, indexer: corpus.indexer, reranker: undefined };
    const qas = sample.qa.flatMap((qa) => {
      const gold = goldIds(qa.evidence, ids);
      return gold.size === 0 ? [] : [{ question: qa.question, gold, groups: locomoGroups(`cat${qa.category}`) }];
    });
    questions += qas.length;
    let sources = new Map<EntityId, EntityId[]>();
    const ask = async (mode: ModeName, question: string): Promise<EntityId[]> => {
      switch (mode) {
        case 'search_semantic':
        case 'search_semantic +reflections':
          return [...(await searchSemantic(deps, question, LIMIT, now)).ids];
        case 'hybrid_search':
        case 'hybrid_search +reflections':
          return [...(await hybridSearch(deps, toHybridOptions({ query: question, limit: LIMIT }), now)).ids];
        case 'hybrid_search include_reflections=false':
          return [...(await hybridSearch(deps, toHybridOptions({ query: question, limit: LIMIT, include_reflections: false }), now)).ids];
      }
    };
    const askAll = async (after: boolean): Promise<void> => {
      for (const { question, gold, groups } of qas) {
        for (const mode of MODES.filter((m) => m.after === after)) {
          const ranked = await ask(mode.name, question);
          tally.add(mode.name, half, groups, ranked, gold);
          const at5 = recalls(ranked, gold, sources, 5);
          const at10 = recalls(ranked, gold, sources, 10);
          for (const group of groups) {
            const key = `${mode.name}\u0000${half}\u0000${group}`;
            let c = cells.get(key);
            if (c === undefined) cells.set(key, (c = { n: 0, strict5: 0, strict10: 0, credited5: 0, credited10: 0, reflections10: 0 }));
            c.n++;
            c.strict5 += at5.strict;
            c.strict10 += at10.strict;
            c.credited5 += at5.credited;
            c.credited10 += at10.credited;
            c.reflections10 += at10.reflections;
          }
        }
      }
    };
    await askAll(false);

    // The consolidation run as the tool and the CLI run it: the same class, its defaults.
    const t0 = performance.now();
    const reflections = new Reflections({
      store: corpus.store,
      embedder: new LazyEmbedder(async (): Promise<Embedder> => model),
      slots: new HeavySlots(heavySlotOptionsFromEnv({})),
      afterWrite: () => undefined,
      clock: () => now,
      hybridSearch: () => Promise.reject(new Error('not used by the consolidation run')),
    });
    const run = (await reflections.consolidate()) as {
      reflections_created: { name: string; sources: string[] }[];
      clusters_found: number;
      entities_scanned: number;
      method: string;
    };
    // The reflections, and the turns whose text now names the reflection linking them, are embedded.
    await corpus.indexer.drain();
    consolidateMs += performance.now() - t0;
    const created = run.reflections_created;
    const names = await corpus.ids(created.map((r) => r.name));
    sources = new Map(
      created.map((r) => [names.get(r.name) as EntityId, r.sources.map((s) => ids.get(s)).filter((x): x is EntityId => x !== undefined)]),
    );
    const sizes = created.map((r) => r.sources.length).sort((a, b) => a - b);
    notes.push(
      `${sample.sample_id} (half ${half}): ${entities.length} turns, ${run.entities_scanned} read, ${created.length} reflections ` +
        `(${run.method}; sources per reflection: median ${sizes[Math.floor(sizes.length / 2)] ?? 0}, max ${sizes[sizes.length - 1] ?? 0}, ` +
        `${sizes.reduce((a, b) => a + b, 0)} links in all)`,
    );
    await askAll(true);
    await corpus.close();
    process.stderr.write(`locomo-reflections: ${sample.sample_id} (half ${half}) done: ${notes[notes.length - 1] ?? ''}\n`);
  }
  const seconds = (performance.now() - started) / 1000;
  const lines = [
    `LoCoMo, turn level, dates stored as \`${options.dates}\`: ${questions} questions over ${turns} turns, limit ${LIMIT}; the suite took ${seconds.toFixed(0)} s,`,
    `of which the consolidation runs and embedding their changes ${(consolidateMs / 1000).toFixed(0)} s. Embedding cache (embed-cache.ts): ${model.counts.hits} texts from disk, ${model.counts.misses} embedded.`,
    'The first two modes ask before the consolidation run; the rest after it, on the same memory. strict: a reflection in the top k is a miss;',
    'credited: a reflection counts as every gold turn it links to (`reflects_on`). Strict is the fair reading; credited is the ceiling.',
    '"refl@10" is the mean number of reflections among the top 10.',
    '',
    ...notes.map((n) => `- ${n}`),
    '',
  ];
  for (const h of ['A', 'B'] as const) {
    if (options.half !== undefined && h !== options.half) continue;
    const table = [
      `| mode | ${h === 'A' ? 'half A (tuning)' : 'half B (held out)'} | n | recall@5 strict | recall@5 credited | recall@10 strict | recall@10 credited | refl@10 |`,
      '|---|---|---|---|---|---|---|---|',
    ];
    for (const { name } of MODES) {
      for (const group of LOCOMO_GROUPS) {
        const c = cells.get(`${name}\u0000${h}\u0000${group}`);
        if (c === undefined) continue;
        const strong = group.startsWith('all');
        const label = CATEGORY_NAMES[group] ?? group;
        const m = (x: number): string => f3(x / c.n);
        table.push(
          `| ${strong ? `**${name}**` : name} | ${strong ? `**${label}**` : label} | ${c.n} | ${m(c.strict5)} | ${m(c.credited5)} | ${m(c.strict10)} | ${m(c.credited10)} | ${(c.reflections10 / c.n).toFixed(2)} |`,
        );
      }
    }
    lines.push(table.join('\n'), '');
  }
  return { report: lines.join('\n'), tally };
}
