/**
 * `limbic migrate --from FILE_OR_URL --to FILE_OR_URL`: copies a whole memory between backends
 * (a SQLite file, a postgres:// URL) through each store's transfer capability: entities with their
 * statuses and times, observations with kinds and times, superseded observations, relations with
 * their end, usage signals, the tuner's shadow log and applied parameters, and vectors when both
 * sides use the same model (otherwise the target queues its entities to be embedded). Writes merge,
 * so a second run adds nothing, and a run killed half way is finished by running it again: each page
 * is one transaction on either backend. At the end it compares the target with the source
 * (migrate-check.ts) and fails, saying what differs, when the target lacks anything.
 *
 * The namespace is the one every command opens (--namespace, LIMBIC_NAMESPACE, else default);
 * --all-namespaces copies every namespace the source holds. The serve --http tokens of the copied
 * namespaces go with them to the target's tokens.
 */
import type { Command } from 'commander';
import { ERROR_CODES, MemoryError } from '../core/errors.js';
import { plural } from '../core/text/plural.js';
import type { ShadowEvent } from '../core/tune/shadow.js';
import { asEntityId, type EntityId } from '../core/types.js';
import type { Store } from '../store/store.js';
import type { TokenStore } from '../store/token-store.js';
import type { TransferStore } from '../store/transfer-store.js';
import { checkCopy, type MigrateCheck } from './migrate-check.js';

export interface MigrateDeps {
  /** A namespace's memory at a --from or --to location (its own file beside a SQLite one, its schema on PostgreSQL). */
  readonly openStore: (location: string, namespace: string) => Store;
  /** The namespaces the memory at a location holds, the default first (none: no memory there). */
  readonly namespaces: (location: string) => Promise<string[]>;
  /** The namespace the command opens: --namespace, else LIMBIC_NAMESPACE, else default. */
  readonly namespace: () => string;
  /** The serve --http tokens kept with the memory at a location; undefined when it has none (nothing is created). */
  readonly openTokens: (location: string, create: boolean) => TokenStore | undefined;
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
  /** The target compared with the source after the copy (migrate-check.ts). */
  readonly check: MigrateCheck;
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
  const check = await checkCopy(source, target, PAGE);
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
    check,
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
    .description(
      'copy a whole memory (the namespace --namespace names, or --all-namespaces) and its tokens between a SQLite file and a postgres:// URL, either way; checks the copy against the source; running it twice adds nothing',
    )
    .requiredOption('--from <file-or-url>', 'the memory to copy')
    .requiredOption('--to <file-or-url>', 'where to copy it (merged into what is there)')
    .option('--all-namespaces', 'copy every namespace the source holds, not only the one --namespace names')
    .action(async (o: { from: string; to: string; allNamespaces?: boolean }) => {
      if (o.from === o.to) deps.fail(new Error('--from and --to name the same memory; name two different ones.'));
      try {
        const held = await deps.namespaces(o.from);
        const wanted = o.allNamespaces === true ? held : [deps.namespace()];
        const missing = wanted.filter((n) => !held.includes(n));
        if (wanted.length === 0 || missing.length > 0) {
          throw new MemoryError(
            ERROR_CODES.CONFIG_INVALID,
            `There is no ${missing.length > 0 ? `namespace "${missing.join('", "')}"` : 'memory'} at ${o.from}; nothing was copied. ` +
              (held.length === 0
                ? 'Check --from.'
                : `Its namespaces: ${held.join(', ')} (pick one with --namespace NAME, or copy them all with --all-namespaces).`),
          );
        }
        const reports: Record<string, MigrateReport> = {};
        for (const namespace of wanted) {
          const label = wanted.length > 1 || namespace !== 'default' ? `namespace ${namespace}: ` : '';
          reports[namespace] = await migrateNamespace(deps, o.from, o.to, namespace, (n) =>
            process.stderr.write(`\rlimbic: ${label}${plural(n, 'entity', 'entities')} copied`),
          );
          process.stderr.write('\n');
        }
        const tokensAdded = await copyTokens(deps, o.from, o.to, wanted);
        const only = wanted.length === 1 && o.allNamespaces !== true ? reports[wanted[0] as string] : undefined;
        const output = only === undefined ? { namespaces: reports, tokensAdded } : { namespace: wanted[0], ...only, tokensAdded };
        process.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
        const differing = Object.entries(reports).filter(([, r]) => r.check.differences > 0);
        if (differing.length > 0) {
          throw new MemoryError(
            ERROR_CODES.STORE_FAILED,
            `The copy differs from the source: ${differing
              .map(
                ([n, r]) =>
                  `namespace ${n}: ${plural(r.check.differences, 'difference', 'differences')}, the first: ${r.check.examples.slice(0, 3).join(' | ')}`,
              )
              .join('; ')}. ` +
              'Run the same command again to finish an interrupted copy; a difference that stays is something the target already held with other values (it keeps its own): copy into an empty target to get an exact copy. The report above ("check") lists the first differences.',
          );
        }
      } catch (error) {
        deps.fail(error);
      }
    });
}

async function migrateNamespace(
  deps: MigrateDeps,
  fromLocation: string,
  toLocation: string,
  namespace: string,
  progress: (entities: number) => void,
): Promise<MigrateReport> {
  const from = deps.openStore(fromLocation, namespace);
  let to: Store | undefined;
  try {
    to = deps.openStore(toLocation, namespace);
    return await migrateMemory(from, to, progress);
  } finally {
    await to?.close();
    await from.close();
  }
}

/** The tokens of the copied namespaces, merged into the target's (a token the target has stays as it is). */
async function copyTokens(deps: MigrateDeps, fromLocation: string, toLocation: string, namespaces: readonly string[]): Promise<number> {
  const source = deps.openTokens(fromLocation, false);
  if (source === undefined) return 0;
  let target: TokenStore | undefined;
  try {
    const carried = (await source.entries()).filter((e) => namespaces.includes(e.record.namespace));
    if (carried.length === 0) return 0;
    target = deps.openTokens(toLocation, true);
    return (await target?.merge(carried)) ?? 0;
  } finally {
    await target?.close();
    await source.close();
  }
}
