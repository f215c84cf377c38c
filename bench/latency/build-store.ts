/**
 * Builds the latency benchmark's store (bench/latency/generate.ts's graph, vectors derived from real
 * text as `npm run bench` gives sizes past --real-vectors-up-to) in steps that each stop after a
 * time budget, so a 1M store (11-13 min of CPU in one go) can be built one short locked run at a
 * time. Run it again until it prints "built"; the store is then DIR/SIZE/memory.db, marked as
 * bench/cold-start.ts expects (`--dir DIR`), and bench/latency/profile.ts DIR/SIZE re-times it.
 *
 *   flock /tmp/limbic-bench.lock npx tsx bench/latency/build-store.ts --dir /tmp/limbic-1m --size 1000000 [--budget 360]
 *
 * Steps: the graph as a JSON-lines file; its import, LINES lines per run of `limbic import`'s code
 * (entities first, then relations, which are kept even while dangling); the vectors, 5,000 per
 * put, under the real model's id (the model is loaded for its id and the pool of real vectors).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync, createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { noopLogger } from '../../src/core/logger.js';
import { LazyEmbedder } from '../../src/embed/embedder.js';
import { MemoryService } from '../../src/service/memory-service.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { importFile } from '../../src/cli/import-file.js';
import { cachedEmbedder } from '../quality/embed-cache.js';
import { loadModel } from '../quality/harness.js';
import { writeGraph } from './generate.js';
import { derivedVectors, realTextVectors } from './pool-vectors.js';

const args = process.argv.slice(2);
const opt = (name: string, fallback: string): string => {
  const i = args.indexOf(name);
  return i >= 0 ? (args[i + 1] ?? fallback) : fallback;
};
const SIZE = Number(opt('--size', '1000000'));
const DIR = join(opt('--dir', '/tmp/limbic-1m'), String(SIZE));
const BUDGET_MS = Number(opt('--budget', '360')) * 1000;
/** Lines imported per chunk (one `importFile` call each). */
const LINES = 100_000;
const began = performance.now();
const left = (): boolean => performance.now() - began < BUDGET_MS;
const log = (m: string): void => void process.stderr.write(`build: ${((performance.now() - began) / 1000).toFixed(0)} s ${m}\n`);

mkdirSync(DIR, { recursive: true });
const db = join(DIR, 'memory.db');
const jsonl = join(DIR, 'memory.jsonl');
const progress = join(DIR, 'imported-lines');
if (existsSync(join(DIR, 'built'))) {
  console.log(`built: ${db}`);
  process.exit(0);
}
if (!existsSync(progress)) {
  log('generating the graph');
  await writeGraph(jsonl, SIZE);
  writeFileSync(progress, '0');
}

const store = openSqliteStore({ path: db, vectorCacheFile: false });
const service = new MemoryService({
  store,
  embedder: new LazyEmbedder(async () => Promise.reject(new Error('import without a model'))),
  clock: Date.now,
  logger: noopLogger,
});
const total = 2 * SIZE - 1;
let done = Number(readFileSync(progress, 'utf8'));
while (done < total && left()) {
  const chunk = join(DIR, 'chunk.jsonl');
  const out = createWriteStream(chunk);
  let line = 0;
  for await (const text of createInterface({ input: createReadStream(jsonl) })) {
    if (line >= done + LINES) break;
    if (line++ >= done && !out.write(`${text}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  await importFile(service, chunk);
  done = Math.min(total, done + LINES);
  writeFileSync(progress, String(done));
  log(`imported ${done} of ${total} lines`);
}
if (done >= total && left()) {
  const model = await loadModel(2);
  const pool = await realTextVectors(cachedEmbedder(model), 60);
  const vectors = store.requireVectors();
  await vectors.configure(model.id, model.dims);
  // The same vectors whichever run makes them: derived in order, skipping those already stored.
  const status = await vectors.status();
  const next = derivedVectors(pool.pool, SIZE);
  for (let i = 0; i < status.indexed; i++) next();
  let stored = status.indexed;
  while (left()) {
    const jobs = await vectors.takeJobs(5000);
    if (jobs.length === 0) break;
    await vectors.put(jobs.map((j) => ({ id: j.id, version: j.version, vector: next() })));
    stored += jobs.length;
    if (stored % 100_000 < 5000) log(`${stored} vectors`);
  }
  if ((await vectors.takeJobs(1)).length === 0) {
    rmSync(join(DIR, 'chunk.jsonl'), { force: true });
    rmSync(jsonl, { force: true });
    writeFileSync(join(DIR, 'built'), new Date().toISOString());
    log('built');
  }
}
await store.close();
console.log(existsSync(join(DIR, 'built')) ? `built: ${db}` : `not yet: run again (${done} of ${total} lines imported)`);
process.exit(0);
