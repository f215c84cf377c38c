/**
 * `npm run bench:search-load`: searches by meaning from many clients at once (issue 38, item 4):
 * searches per second, p50 and p99 at 1, 10 and 50 concurrent clients, each client a loop of
 * search_semantic and hybrid_search calls (alternating) against one MemoryService in this process,
 * the model in its worker thread as `serve` runs it (one thread on a 2-core machine).
 *
 * Two mixes: `distinct`, every search a text not asked before in the run (XQuAD and LoCoMo
 * questions, cycled, so a text comes back only after thousands of others: no cache can answer it);
 * `repeats`, a share of the searches (--repeat, 0.3) drawn from 20 texts asked over and over, as
 * an agent or a team re-asks a question.
 *
 * The memory: XQuAD's 240 English and 240 Spanish paragraphs, one entity each, embedded before the
 * clock starts. No HTTP: bench/http-load.ts measures the transport; this one what the model's
 * worker makes of concurrent searches.
 *
 * Options: --root DIR (a built checkout whose dist/ is measured; default this one, so the same
 * driver measures another branch's build), --seconds N per cell (6), --runs N (3, the median
 * is reported), --clients 1,10,50, --repeat 0.3, --paragraphs N (480: the memory's size),
 * --mixes distinct,repeats, --wait-ms N (the worker's batch wait bound instead of the default one;
 * a build without batching ignores it), --query-batch N (the most query texts in one forward pass
 * instead of the default; 1 turns batching off: an A/B of batching on one build), --store DIR (the memory, embedded, kept in DIR after the
 * run and taken from it when there: two builds then search the same store), --json FILE (the raw figures).
 *
 *   flock /tmp/limbic-bench.lock npm run bench:search-load
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = join(import.meta.dirname, '..');
const DATA = join(ROOT, '..', 'shared', 'data');
const { values: args } = parseArgs({
  options: {
    root: { type: 'string', default: ROOT },
    seconds: { type: 'string', default: '6' },
    runs: { type: 'string', default: '3' },
    clients: { type: 'string', default: '1,10,50' },
    repeat: { type: 'string', default: '0.3' },
    paragraphs: { type: 'string', default: '480' },
    mixes: { type: 'string', default: 'distinct,repeats' },
    store: { type: 'string' },
    'wait-ms': { type: 'string' },
    'query-batch': { type: 'string' },
    json: { type: 'string' },
  },
});
const SECONDS = Number(args.seconds);
const RUNS = Number(args.runs);
const CLIENTS = args.clients.split(',').map(Number);
const REPEAT = Number(args.repeat);
const MIXES = args.mixes.split(',') as ('distinct' | 'repeats')[];

interface Squad {
  data: { title: string; paragraphs: { context: string; qas: { question: string }[] }[] }[];
}
interface LocomoSample {
  qa: { question: string }[];
}

function readData(): { paragraphs: { name: string; text: string }[]; questions: string[]; hot: string[] } {
  const paragraphs: { name: string; text: string }[] = [];
  const questions: string[] = [];
  for (const lang of ['en', 'es']) {
    const squad = JSON.parse(readFileSync(join(DATA, 'xquad', `xquad.${lang}.json`), 'utf8')) as Squad;
    squad.data.forEach((article, a) =>
      article.paragraphs.forEach((p, i) => {
        paragraphs.push({ name: `${article.title} ${lang} ${a}-${i}`, text: p.context });
        for (const q of p.qas) questions.push(q.question);
      }),
    );
  }
  const locomo = JSON.parse(readFileSync(join(DATA, 'locomo', 'locomo10.json'), 'utf8')) as LocomoSample[];
  const asked = locomo.flatMap((s) => s.qa.map((q) => q.question));
  const distinct = [...new Set([...questions, ...asked])];
  // The hot texts are taken out of the distinct stream, so that a distinct search is never one of them.
  return { paragraphs, questions: distinct.slice(20), hot: distinct.slice(0, 20) };
}

/** The parts of a built checkout this bench drives (its dist/, so that main and a branch are measured alike). */
interface Built {
  App: new (options: () => { db?: string }) => {
    config(): {
      dbPath: string;
      namespace: string;
      heavyToolSlots: number;
      heavyToolWaitMs: number;
      inverseRelations: boolean;
      modelDir: string | undefined;
      modelCacheDir: string;
      modelId: string;
    };
    embedder(config: unknown, threads?: number, server?: boolean): LazyEmbedderLike;
    openStore(location: string, namespace: string, config: unknown): unknown;
    redactor(config: unknown): unknown;
  };
  MemoryService: new (deps: Record<string, unknown>) => Service;
  LazyEmbedder: new (load: () => Promise<unknown>) => LazyEmbedderLike;
  ThreadedEmbedder: { start(options: Record<string, unknown>): Promise<unknown> };
  toHybridOptions(input: { query: string; limit?: number }): unknown;
  stderrLogger: unknown;
}
interface LazyEmbedderLike {
  loaded(): Promise<{ queryStats?: () => Record<string, number> } | undefined>;
}
interface Service {
  createEntities(entities: { name: string; entityType: string; observations: string[] }[]): Promise<unknown>;
  drainEmbeddings(): Promise<number>;
  searchSemantic(query: string, limit: number): Promise<unknown>;
  hybridSearch(options: unknown): Promise<unknown>;
  close(): Promise<void>;
}

async function load(root: string): Promise<Built> {
  const from = (path: string): Promise<Record<string, unknown>> =>
    import(pathToFileURL(join(root, 'dist', path)).href) as Promise<Record<string, unknown>>;
  const [app, service, hybrid, embedder, threaded] = await Promise.all([
    from('cli/app.js'),
    from('service/memory-service.js'),
    from('mcp/hybrid-options.js'),
    from('embed/embedder.js'),
    from('embed/onnx/threaded-embedder.js'),
  ]);
  return {
    LazyEmbedder: embedder.LazyEmbedder as Built['LazyEmbedder'],
    ThreadedEmbedder: threaded.ThreadedEmbedder as Built['ThreadedEmbedder'],
    App: app.App as Built['App'],
    stderrLogger: app.stderrLogger,
    MemoryService: service.MemoryService as Built['MemoryService'],
    toHybridOptions: hybrid.toHybridOptions as Built['toHybridOptions'],
  };
}

const percentile = (sorted: readonly number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

interface Cell {
  readonly searchesPerSecond: number;
  readonly p50: number;
  readonly p99: number;
  readonly errors: number;
}

async function main(): Promise<void> {
  const built = await load(args.root);
  const data = readData();
  data.paragraphs.splice(Number(args.paragraphs));
  const dir = mkdtempSync(join(tmpdir(), 'limbic-search-load-'));
  const kept = args.store !== undefined && existsSync(join(args.store, 'memory.db'));
  if (kept) cpSync(args.store as string, dir, { recursive: true });
  const app = new built.App(() => ({ db: join(dir, 'memory.db') }));
  const config = app.config();
  // As `serve` builds it (src/cli/app.ts, service()), keeping the embedder to read its statistics.
  const waitMs = args['wait-ms'];
  const queryBatch = args['query-batch'];
  const embedder =
    waitMs === undefined && queryBatch === undefined
      ? app.embedder(config, undefined, true)
      : new built.LazyEmbedder(() =>
          built.ThreadedEmbedder.start({
            model: {
              modelDir: config.modelDir,
              cacheDir: config.modelCacheDir,
              modelId: config.modelId,
              allowRemote: false,
              threads: Math.max(1, availableParallelism() - 1),
            },
            ...(waitMs === undefined ? {} : { batchWaitMs: Number(waitMs) }),
            ...(queryBatch === undefined ? {} : { queryBatch: Number(queryBatch) }),
          }),
        );
  const service = new built.MemoryService({
    store: app.openStore(config.dbPath, config.namespace, config),
    embedder,
    clock: Date.now,
    logger: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
    heavySlots: { slots: config.heavyToolSlots, waitMs: config.heavyToolWaitMs },
    inverseRelations: config.inverseRelations,
    project: undefined,
    redactor: app.redactor(config),
  });
  const engine = await embedder.loaded();
  if (engine === undefined) throw new Error('No embedding model: run "limbic model install" first.');
  let t0 = performance.now();
  for (let i = 0; !kept && i < data.paragraphs.length; i += 50) {
    await service.createEntities(
      data.paragraphs.slice(i, i + 50).map((p) => ({ name: p.name, entityType: 'paragraph', observations: [p.text] })),
    );
  }
  await service.drainEmbeddings();
  console.error(`memory: ${data.paragraphs.length} paragraphs embedded in ${((performance.now() - t0) / 1000).toFixed(0)} s`);

  let next = 0;
  let drawn = 0;
  let hot = 0;
  const nextText = (mix: 'distinct' | 'repeats'): string => {
    // A fixed pattern, not a random one: both builds see the same sequence of texts, REPEAT of them hot.
    drawn++;
    if (mix === 'repeats' && Math.floor(drawn * REPEAT) !== Math.floor((drawn - 1) * REPEAT))
      return data.hot[hot++ % data.hot.length] as string;
    return data.questions[next++ % data.questions.length] as string;
  };
  let call = 0;
  const search = (text: string): Promise<unknown> =>
    call++ % 2 === 0 ? service.searchSemantic(text, 10) : service.hybridSearch(built.toHybridOptions({ query: text, limit: 10 }));

  async function cell(clients: number, mix: 'distinct' | 'repeats'): Promise<Cell> {
    // Warm: a few searches of texts the cell does not time.
    await Promise.all(Array.from({ length: clients }, () => search(nextText('distinct'))));
    const latencies: number[] = [];
    let errors = 0;
    const end = performance.now() + SECONDS * 1000;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (performance.now() < end) {
          const text = nextText(mix);
          const t = performance.now();
          try {
            await search(text);
            latencies.push(performance.now() - t);
          } catch {
            errors++;
          }
        }
      }),
    );
    const elapsed = (performance.now() - start) / 1000;
    latencies.sort((a, b) => a - b);
    return { searchesPerSecond: latencies.length / elapsed, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), errors };
  }

  const results: Record<string, Cell[]> = {};
  for (let run = 0; run < RUNS; run++) {
    for (const mix of MIXES) {
      for (const clients of CLIENTS) {
        const key = `${mix} ${clients}`;
        const measured = await cell(clients, mix);
        (results[key] ??= []).push(measured);
        console.error(
          `run ${run + 1} ${key}: ${measured.searchesPerSecond.toFixed(1)}/s p50 ${measured.p50.toFixed(0)} ms p99 ${measured.p99.toFixed(0)} ms`,
        );
      }
    }
  }
  const stats = engine.queryStats?.();
  t0 = performance.now();
  await service.close();
  if (args.store !== undefined && !kept) cpSync(dir, args.store, { recursive: true });
  rmSync(dir, { recursive: true, force: true });

  console.log(`| mix | clients | searches/s | p50 ms | p99 ms | errors |`);
  console.log(`|---|---:|---:|---:|---:|---:|`);
  for (const [key, cells] of Object.entries(results)) {
    const [mix, clients] = key.split(' ');
    console.log(
      `| ${mix} | ${clients} | ${median(cells.map((c) => c.searchesPerSecond)).toFixed(1)} | ${median(cells.map((c) => c.p50)).toFixed(0)} | ${median(cells.map((c) => c.p99)).toFixed(0)} | ${cells.reduce((n, c) => n + c.errors, 0)} |`,
    );
  }
  if (stats !== undefined) console.log(`\nquery vectors: ${JSON.stringify(stats)}`);
  if (args.json !== undefined)
    writeFileSync(args.json, JSON.stringify({ root: args.root, seconds: SECONDS, runs: RUNS, results, stats }, null, 2));
}

await main();
