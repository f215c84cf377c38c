/**
 * `limbic migrate --from FILE_OR_URL --to FILE_OR_URL`: copies a whole memory between backends
 * (a SQLite file, a postgres:// URL) through each store's transfer capability: entities with their
 * statuses and times, observations with kinds and times, relations, usage signals, and vectors when
 * both sides use the same model (otherwise the target queues its entities to be embedded). Writes
 * merge, so a second run adds nothing.
 */
import type { Command } from 'commander';
import type { Store } from '../store/store.js';
import type { TransferStore } from '../store/transfer-store.js';

export interface MigrateDeps {
  readonly openStore: (location: string) => Store;
  readonly fail: (error: unknown) => never;
}

export interface MigrateReport {
  readonly entities: number;
  readonly entitiesAdded: number;
  readonly observationsAdded: number;
  readonly relationsAdded: number;
  readonly coOccurrences: number;
  readonly vectorsCopied: number;
  /** Why vectors were not copied, when they were not. */
  readonly vectorNote: string | undefined;
}

const PAGE = 500;

export async function migrateMemory(from: Store, to: Store, progress?: (entities: number) => void): Promise<MigrateReport> {
  const source = transferOf(from, 'source');
  const target = transferOf(to, 'target');
  const model = await source.vectorModel();
  let copyVectors = false;
  let vectorNote: string | undefined;
  if (model === undefined) vectorNote = 'the source has no vectors';
  else if (to.vectors === undefined) vectorNote = 'the target has no vector index';
  else {
    const targetModel = await target.vectorModel();
    if (targetModel !== undefined && (targetModel.model !== model.model || targetModel.dims !== model.dims)) {
      vectorNote = `the target's vectors are made with ${targetModel.model}, the source's with ${model.model}: its entities are queued for embedding instead`;
    } else {
      if (targetModel === undefined) await to.vectors.configure(model.model, model.dims);
      copyVectors = true;
    }
  }
  let entities = 0;
  let entitiesAdded = 0;
  let observationsAdded = 0;
  let vectorsCopied = 0;
  for (let cursor: number | undefined = 0; cursor !== undefined;) {
    const page = await source.readEntities(cursor, PAGE);
    const written = await target.writeEntities(page.records, copyVectors);
    entities += page.records.length;
    entitiesAdded += written.entities;
    observationsAdded += written.observations;
    vectorsCopied += written.vectors;
    progress?.(entities);
    cursor = page.next;
  }
  let relationsAdded = 0;
  for (let cursor: number | undefined = 0; cursor !== undefined;) {
    const page = await source.readRelations(cursor, PAGE);
    relationsAdded += await target.writeRelations(page.records);
    cursor = page.next;
  }
  let coOccurrences = 0;
  for (let cursor: number | undefined = 0; cursor !== undefined;) {
    const page = await source.readCoOccurrences(cursor, PAGE);
    coOccurrences += await target.writeCoOccurrences(page.records);
    cursor = page.next;
  }
  return { entities, entitiesAdded, observationsAdded, relationsAdded, coOccurrences, vectorsCopied, vectorNote };
}

function transferOf(store: Store, side: string): TransferStore {
  if (store.transfer !== undefined) return store.transfer;
  throw new Error(`The ${side} backend cannot copy a whole memory (it has no transfer capability).`);
}

export function registerMigrateCommand(program: Command, deps: MigrateDeps): void {
  program
    .command('migrate')
    .description('copy a whole memory between a SQLite file and a postgres:// URL (either way); running it twice adds nothing')
    .requiredOption('--from <file-or-url>', 'the memory to copy')
    .requiredOption('--to <file-or-url>', 'where to copy it (merged into what is there)')
    .action(async (o: { from: string; to: string }) => {
      if (o.from === o.to) deps.fail(new Error('--from and --to name the same memory; name two different ones.'));
      const from = deps.openStore(o.from);
      let to: Store | undefined;
      try {
        to = deps.openStore(o.to);
        const report = await migrateMemory(from, to, (n) => process.stderr.write(`\rlimbic: ${n} entities copied`));
        process.stderr.write('\n');
        process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      } catch (error) {
        deps.fail(error);
      } finally {
        await to?.close();
        await from.close();
      }
    });
}
