/**
 * `npx tsx bench/latency/aside-writes.ts [--asides 8] [--writes 10]`: what a write to an entity with
 * asides (notes in another language, issue 37) costs the embedding queue. One English entity
 * starts with `--asides` German notes; each of `--writes` writes adds one more, and the queue is
 * drained after each, with the real model on a SQLite file. Prints, per write, the texts the model
 * embedded by embed() (asides and observation vectors; the entity's own vector goes through
 * embedEntities and is not counted) and the drain's time. Not a test: timings depend on the machine.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { noopLogger } from '../../src/core/logger.js';
import { LazyEmbedder, passFitsOneVector, type Embedder, type EntityInput, type TextKind } from '../../src/embed/embedder.js';
import { EmbeddingIndexer } from '../../src/service/embedding-indexer.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { BENCH_MODEL, loadModel } from '../quality/harness.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const ASIDES = option('--asides', 8);
const WRITES = option('--writes', 10);

const topics = ['Garten', 'Keller', 'Dach', 'Küche', 'Balkon', 'Zaun', 'Brunnen', 'Schuppen', 'Teich', 'Weg', 'Tor', 'Beet'];
/** The n-th German note: four or more words, two or more of them German function words (an aside). */
const note = (n: number): string =>
  `Der Nutzer hat mich am Tag ${n + 1} gefragt, was mit dem ${topics[n % topics.length]} und der Nummer ${n + 1} los ist.`;

const model = await loadModel();
const texts: string[] = [];
const counting: Embedder = {
  id: model.id,
  dims: model.dims,
  similarityFloor: model.similarityFloor,
  embed: (list: readonly string[], kind: TextKind) => {
    texts.push(...list);
    return model.embed(list, kind);
  },
  embedEntities: (items: readonly EntityInput[]) => model.embedEntities(items),
  ...passFitsOneVector(model),
};
const dir = mkdtempSync(join(tmpdir(), 'limbic-aside-writes-'));
const store = openSqliteStore({ path: join(dir, 'memory.db') });
const indexer = new EmbeddingIndexer(store, new LazyEmbedder(async () => counting), noopLogger);
try {
  await indexer.ready();
  const now = Date.UTC(2026, 10, 28);
  await store.graph.createEntities(
    [
      {
        name: 'House',
        entityType: 'place',
        observations: [
          'The house has a garden with tomatoes, a cellar full of tools and a leaking roof.',
          ...Array.from({ length: ASIDES }, (_, n) => note(n)),
        ],
      },
    ],
    now,
  );
  await indexer.drain();
  const rows: { embedded: number; ms: number }[] = [];
  for (let w = 0; w < WRITES; w++) {
    texts.length = 0;
    await store.graph.addObservations([{ entityName: 'House', contents: [note(ASIDES + w)] }], now + w + 1);
    const t = performance.now();
    await indexer.drain();
    rows.push({ embedded: texts.length, ms: performance.now() - t });
  }
  const total = rows.reduce((s, r) => s + r.ms, 0);
  console.log(`Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}. Model: ${BENCH_MODEL}.`);
  console.log(`Command: npx tsx bench/latency/aside-writes.ts ${args.join(' ')}`);
  console.log(`Entity starting with ${ASIDES} asides; ${WRITES} writes, each adding one aside, the queue drained after each.`);
  console.log('| write | asides after | texts embedded | drain ms |');
  console.log('|---|---|---|---|');
  rows.forEach((r, w) => console.log(`| ${w + 1} | ${ASIDES + w + 1} | ${r.embedded} | ${r.ms.toFixed(0)} |`));
  console.log(
    `Total: ${rows.reduce((s, r) => s + r.embedded, 0)} texts embedded, ${total.toFixed(0)} ms draining (${(total / WRITES).toFixed(0)} ms a write).`,
  );
} finally {
  indexer.stop();
  await store.close();
  await model.close?.();
  rmSync(dir, { recursive: true, force: true });
}
