/**
 * One process on a shared SQLite file, writing and draining the embedding queue as a server does
 * (the service, its background indexer), for test/faults/queue-drain.test.ts and
 * bench/queue-drain.ts, started by queue-drain.ts startDrainWorker with its WorkerPlan as JSON.
 *
 * It keeps changing the `churn` entities (an observation added, the previous one removed) while it
 * creates its own entities and imports its file, prints `written` when those are in, and then
 * answers lines on stdin: `stop-churn` (prints `churn-stopped`) and `exit` (closes and exits 0).
 */
import { availableParallelism } from 'node:os';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { importFile } from '../../src/cli/import-file.js';
import { DEFAULT_MODEL_ID } from '../../src/core/config.js';
import type { Logger } from '../../src/core/logger.js';
import { LazyEmbedder, type Embedder } from '../../src/embed/embedder.js';
import { ThreadedEmbedder } from '../../src/embed/onnx/threaded-embedder.js';
import { MemoryService } from '../../src/service/memory-service.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { FakeEmbedder, modelCacheDir } from './fixtures.js';
import type { WorkerPlan } from './queue-drain.js';

/** The fake embedder, taking as long per batch as a model would: the queue's timing, none of its meaning. */
class FakeSlowEmbedder extends FakeEmbedder {
  constructor(private readonly batchMs: number) {
    super();
  }
  override async embed(texts: readonly string[]): Promise<Float32Array[]> {
    await sleep(this.batchMs);
    return super.embed(texts);
  }
}

const stderrLogger: Logger = {
  info: (message) => process.stderr.write(`${message}\n`),
  warn: (message, error) => process.stderr.write(`${message}: ${String(error)}\n`),
};

const plan = JSON.parse(process.argv[2] ?? '{}') as WorkerPlan;
const store = openSqliteStore({ path: plan.db, logger: stderrLogger });
/** The installed model as a server runs it (src/cli/main.ts buildEmbedder): a worker thread on one core fewer than the machine has. */
const serverEngine = (): Promise<Embedder> =>
  ThreadedEmbedder.start({
    model: {
      modelDir: undefined,
      cacheDir: modelCacheDir(),
      modelId: DEFAULT_MODEL_ID,
      allowRemote: false,
      threads: Math.max(1, availableParallelism() - 1),
    },
  });
const embedder = new LazyEmbedder(async () => (plan.embedder === 'real' ? serverEngine() : new FakeSlowEmbedder(plan.fakeBatchMs ?? 100)));
const service = new MemoryService({ store, embedder, clock: Date.now, logger: stderrLogger });
service.warm();

let churning = plan.churn !== undefined;
const churn = (async () => {
  const spec = plan.churn;
  if (spec === undefined) return;
  let previous: string | undefined;
  for (let tick = 0; churning; tick++) {
    const content = `tick ${spec.tag} ${tick}`;
    await service.addObservations(spec.names.map((entityName) => ({ entityName, contents: [content] })));
    if (previous !== undefined) {
      const observations = [previous];
      await service.deleteObservations(spec.names.map((entityName) => ({ entityName, observations })));
    }
    previous = content;
    await sleep(spec.everyMs);
  }
})();

if (plan.create !== undefined) {
  const { prefix, count, batch } = plan.create;
  for (let at = 0; at < count; at += batch) {
    const names = Array.from({ length: Math.min(batch, count - at) }, (_, i) => `${prefix}${at + i}`);
    await service.createEntities(names.map((name) => ({ name, entityType: 'note', observations: [`${name} was written by ${prefix}`] })));
    await sleep(10);
  }
}
if (plan.importFile !== undefined) await importFile(service, plan.importFile);
process.stdout.write('written\n');

for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'stop-churn') {
    churning = false;
    await churn;
    process.stdout.write('churn-stopped\n');
  } else if (line === 'exit') {
    churning = false;
    await churn;
    break;
  }
}
await service.close();
process.exit(0);
