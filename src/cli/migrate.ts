/**
 * `limbic migrate --from FILE_OR_URL --to FILE_OR_URL`: copies a whole memory between backends
 * (a SQLite file, a postgres:// URL) through each store's transfer capability: entities with their
 * statuses and times, observations with kinds and times, superseded observations, relations with
 * their end, usage signals, the tuner's shadow log and applied parameters, and vectors when both
 * sides use the same model (otherwise the target queues its entities to be embedded). Writes merge,
 * so a second run adds nothing.
 */
import type { Command } from 'commander';
import { plural } from '../core/text/plural.js';
import type { ShadowEvent } from '../core/tune/shadow.js';
import { asEntityId, type EntityId } from '../core/types.js';
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
  readonly supersededAdded: number;
  readonly relationsAdded: number;
  readonly coOccurrences: number;
  readonly vectorsCopied: number;
  /** Why vectors were not copied, when they were not. */
  readonly vectorNote: string | undefined;
  /** Logged searches the target's shadow log gained. */
  readonly shadowEventsAdded: number;
  /** The applied ranking parameters: copied, kept (the target's are as new or newer), or none to copy. */
  readonly tuningParameters: 'copied' | 'kept' | 'none';
}

const PAGE = 500;
/** Entities looked up at once when mapping the shadow log's ids. */
const BATCH = 1_000;

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
  let supersededAdded = 0;
  let vectorsCopied = 0;
  for (let cursor: number | undefined = 0; cursor !== undefined;) {
    const page = await source.readEntities(cursor, PAGE);
    const written = await target.writeEntities(page.records, copyVectors);
    entities += page.records.length;
    entitiesAdded += written.entities;
    observationsAdded += written.observations;
    supersededAdded += written.superseded;
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
  const tuning = await copyTuning(from, to);
  return {
    entities,
    entitiesAdded,
    observationsAdded,
    supersededAdded,
    relationsAdded,
    coOccurrences,
    vectorsCopied,
    vectorNote,
    ...tuning,
  };
}

/**
 * The tuner's shadow log and applied parameters, through each side's tuning capability (after the
 * entities, whose ids differ between the two). A logged candidate names its entity by id: it is
 * mapped by name, and one whose entity is gone keeps a negative id no entity has. A search the
 * target has already logged (same time, query, page and candidates) is not logged again.
 */
async function copyTuning(from: Store, to: Store): Promise<Pick<MigrateReport, 'shadowEventsAdded' | 'tuningParameters'>> {
  if (from.tuning === undefined || to.tuning === undefined) return { shadowEventsAdded: 0, tuningParameters: 'none' };
  const source = await from.tuning.shadowEvents();
  const sourceNames = await namesOf(from, source);
  const targetIds = new Map<string, EntityId>();
  const wanted = [...new Set(sourceNames.values())];
  for (let i = 0; i < wanted.length; i += BATCH) {
    const ids = await to.graph.idsByName(wanted.slice(i, i + BATCH));
    for (const [id, e] of await to.graph.entitiesById(ids)) targetIds.set(e.name, id);
  }
  const existing = await to.tuning.shadowEvents();
  const targetNames = await namesOf(to, existing);
  // How many times the target holds each search: a search logged twice in the source is copied twice.
  const held = new Map<string, number>();
  for (const e of existing) {
    const key = eventKey(e, targetNames);
    held.set(key, (held.get(key) ?? 0) + 1);
  }
  let shadowEventsAdded = 0;
  for (const event of source) {
    const key = eventKey(event, sourceNames);
    const n = held.get(key) ?? 0;
    if (n > 0) {
      held.set(key, n - 1);
      continue;
    }
    const { id: _id, ...rest } = event;
    await to.tuning.appendShadow({
      ...rest,
      candidates: event.candidates.map((c) => {
        const name = sourceNames.get(c.id);
        return { ...c, id: (name === undefined ? undefined : targetIds.get(name)) ?? asEntityId(-Math.abs(c.id)) };
      }),
    });
    shadowEventsAdded++;
  }
  const parameters = await from.tuning.parameters();
  if (parameters === undefined) return { shadowEventsAdded, tuningParameters: 'none' };
  const current = await to.tuning.parameters();
  if (current !== undefined && (current.tunedAt ?? 0) >= (parameters.tunedAt ?? 0)) return { shadowEventsAdded, tuningParameters: 'kept' };
  await to.tuning.setParameters(parameters, parameters.tunedAt ?? Date.now());
  return { shadowEventsAdded, tuningParameters: 'copied' };
}

/** Names of the entities the events' candidates list, by id (ids of deleted entities are absent). */
async function namesOf(store: Store, events: readonly ShadowEvent[]): Promise<Map<number, string>> {
  const ids = [...new Set(events.flatMap((e) => e.candidates.map((c) => c.id)))].filter((id) => id > 0);
  const names = new Map<number, string>();
  for (let i = 0; i < ids.length; i += BATCH) {
    for (const [id, e] of await store.graph.entitiesById(ids.slice(i, i + BATCH))) names.set(id, e.name);
  }
  return names;
}

/** A search as both sides can compare it: its fields and its candidates by name, without the relevance credited later. */
function eventKey(event: ShadowEvent, names: ReadonlyMap<number, string>): string {
  const { id: _id, candidates, ...fields } = event;
  return JSON.stringify([fields, candidates.map(({ id, relevance: _relevance, ...rest }) => [names.get(id) ?? null, rest])]);
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
        const report = await migrateMemory(from, to, (n) => process.stderr.write(`\rlimbic: ${plural(n, 'entity', 'entities')} copied`));
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
