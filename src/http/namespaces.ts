/**
 * Namespaces: separate memories in one server, one per project or agent. Each is its own database
 * file (SQLite) — so no query can reach another namespace's entities, relations, vectors or usage
 * signals, whatever a tool does: there is no namespace column to forget in a WHERE clause, the
 * store's code is unchanged, and a namespace is backed up, exported or deleted as one file.
 * The default namespace is the memory of today (the --db file), so stdio users see no change.
 *
 * On PostgreSQL the same boundary is a schema per namespace (`limbic_<name>`; the default is the
 * database's default schema, as before namespaces): each namespace's store has a pool of its own
 * whose connections start with search_path set to that schema, so the store's SQL stays unqualified
 * and no pool ever serves two namespaces (src/store/postgres/pg-connection.ts). The registry only
 * needs `openStore(location, namespace)`, so it serves either backend.
 */
import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ERROR_CODES, MemoryError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { LazyEmbedder, passFitsOneVector, type Embedder, type LoadProgress } from '../embed/embedder.js';
import { ModelAbsentError } from '../embed/model-state.js';
import type { HeavySlotOptions } from '../service/heavy-slots.js';
import type { Redactor } from '../core/text/redaction.js';
import { MemoryService } from '../service/memory-service.js';
import { RecentSearches, type RingNews } from '../service/refinding.js';
import { startAutoTune, type AutoTune } from '../service/tuning.js';
import { redactPassword } from '../core/redact.js';
import type { Store } from '../store/store.js';

export const DEFAULT_NAMESPACE = 'default';

/** Lower-case letters, digits, - and _: safe as a file name everywhere and as a Postgres schema name. */
const NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/**
 * Windows' device names, which name a device rather than a file in every folder, whatever the
 * extension (`con.db` is the console): a namespace so named could not be made, copied or restored
 * there. Refused on every platform and backend, so a memory moves between machines and backends
 * (limbic migrate) under the same name.
 */
const WINDOWS_DEVICE = /^(?:con|prn|aux|nul|com[0-9]|lpt[0-9])$/;

export function parseNamespace(name: string): string {
  if (!NAME.test(name)) {
    throw new MemoryError(
      ERROR_CODES.INVALID_INPUT,
      `"${name}" is not a namespace name: use 1 to 63 lower-case letters, digits, - or _, starting with a letter or digit (for example "work" or "agent-1").`,
    );
  }
  if (WINDOWS_DEVICE.test(name)) {
    throw new MemoryError(
      ERROR_CODES.INVALID_INPUT,
      `"${name}" is not a namespace name: it is a Windows device name (con, prn, aux, nul, com0-com9, lpt0-lpt9), which cannot name a file there. Choose another, such as "${name}-notes".`,
    );
  }
  return name;
}

const stem = (dbPath: string): string => join(dirname(dbPath), basename(dbPath, extname(dbPath)));

/** A database URL (postgres://…) rather than a SQLite file. */
const isUrl = (location: string): boolean => /^[a-z][a-z0-9+.-]*:\/\//i.test(location);

/** PostgreSQL names are at most 63 bytes; a longer one would be cut, and two namespaces could meet. */
const SCHEMA_PREFIX = 'limbic_';
const MAX_SCHEMA_BYTES = 63;

/**
 * The PostgreSQL schema of a namespace: undefined for the default (the database's default schema,
 * where Limbic kept its tables before namespaces), else `limbic_<name>`.
 */
export function namespaceSchema(namespace: string): string | undefined {
  if (parseNamespace(namespace) === DEFAULT_NAMESPACE) return undefined;
  if (SCHEMA_PREFIX.length + namespace.length > MAX_SCHEMA_BYTES) {
    throw new MemoryError(
      ERROR_CODES.INVALID_INPUT,
      `"${namespace}" is too long for a namespace on PostgreSQL: its schema "${SCHEMA_PREFIX}${namespace}" would be over PostgreSQL's ${MAX_SCHEMA_BYTES}-byte limit on names. Use at most ${MAX_SCHEMA_BYTES - SCHEMA_PREFIX.length} characters.`,
    );
  }
  return SCHEMA_PREFIX + namespace;
}

/**
 * Where a namespace's memory is: on SQLite the --db file itself for the default, else
 * `<db stem>.namespaces/<name>.db`; on PostgreSQL the same URL (the schema comes from
 * namespaceSchema), checked here so a bad name fails before anything connects.
 */
export function namespaceDbPath(dbPath: string, namespace: string): string {
  if (parseNamespace(namespace) === DEFAULT_NAMESPACE) return dbPath;
  if (isUrl(dbPath)) {
    namespaceSchema(namespace);
    return dbPath;
  }
  return join(`${stem(dbPath)}.namespaces`, `${namespace}.db`);
}

/** The token file beside the memory (`<db stem>.tokens.db`); on PostgreSQL the database itself (a table, pg-tokens.ts). */
export function tokenFilePath(dbPath: string): string {
  return isUrl(dbPath) ? dbPath : `${stem(dbPath)}.tokens.db`;
}

/** A namespace's place for messages and logs: never a password. */
export function describeNamespace(dbPath: string, namespace: string): string {
  if (!isUrl(dbPath)) return namespaceDbPath(dbPath, namespace);
  const schema = namespaceSchema(namespace);
  return `${redactPassword(dbPath)}${schema === undefined ? '' : ` schema ${schema}`}`;
}

/**
 * A LazyEmbedder per namespace over one shared engine: the model (a worker thread, ~100 MB) loads
 * once per process, not once per namespace. Closing a view leaves the shared engine alone.
 */
export function embedderView(shared: LazyEmbedder): LazyEmbedder {
  const load = async (progress: LoadProgress, signal: AbortSignal): Promise<Embedder> => {
    for (;;) {
      const engine = await shared.get();
      if (engine !== undefined) {
        const view: Embedder = {
          id: engine.id,
          dims: engine.dims,
          ...(engine.similarityFloor === undefined ? {} : { similarityFloor: engine.similarityFloor }),
          embed: (texts, kind) => engine.embed(texts, kind),
          embedEntities: (items) => engine.embedEntities(items),
          ...passFitsOneVector(engine),
        };
        return view;
      }
      const state = shared.state();
      if (state.state === 'unavailable') {
        throw state.why === 'off' || state.why === 'not-installed'
          ? new ModelAbsentError(state.why, state.reason)
          : new Error(state.reason);
      }
      if (state.state === 'loading') progress(state.detail ?? 'loading the model', state.installing);
      await sleep(500, undefined, { signal });
    }
  };
  // A view that found no engine loads again as soon as the shared one is ready (it watches for a model itself).
  return new LazyEmbedder(load, 5_000, Date.now, {
    fingerprint: () => (shared.state().state === 'ready' ? 'ready' : undefined),
    everyMs: 250,
  });
}

export interface NamespaceRegistryDeps {
  readonly dbPath: string;
  /** Opens a namespace's memory: `path` from namespaceDbPath; PostgreSQL also needs `namespace` (its schema). */
  readonly openStore: (path: string, namespace: string) => Store;
  /** The process's one embedder; every namespace embeds through it. */
  readonly embedder: LazyEmbedder;
  readonly logger: Logger;
  readonly clock?: () => number;
  /** LIMBIC_AUTO_TUNE_MINUTES: each open memory tunes itself this often (tuning.ts); undefined, never. */
  readonly autoTuneMinutes?: number | undefined;
  /** Slots of the heavy maintenance tools, per namespace. @default MemoryService's */
  readonly heavySlots?: HeavySlotOptions | undefined;
  /** Config.inverseRelations: hierarchical relations in pairs. */
  readonly inverseRelations?: boolean | undefined;
  /** What every namespace's writes go through (one for the process: the rules load once). @default nothing redacted */
  readonly redactor?: Redactor | undefined;
  /** The other processes of `serve --http --workers N`, for re-finding (refinding.ts); undefined, this process alone. */
  readonly searches?: SearchRelay | undefined;
}

/** How the rings of recent searches of one memory, one in each process of a server, hear each other (refinding.ts). */
export interface SearchRelay {
  /** Tells the other processes what this one's ring of `namespace` kept or paired. */
  publish(namespace: string, news: RingNews): void;
  /** Hears what the other processes publish. */
  subscribe(listener: (namespace: string, news: RingNews) => void): void;
}

/** The open memories of a server: each opened on its first request, all closed on shutdown. */
export class NamespaceRegistry {
  private readonly open = new Map<string, MemoryService>();
  private readonly tunes = new Map<string, AutoTune>();
  /**
   * Each namespace's ring of recent searches when other processes share it: made at the first news
   * of it, so a search another worker answered is heard before this one opens that namespace.
   */
  private readonly rings = new Map<string, RecentSearches>();
  private closing = false;

  constructor(private readonly deps: NamespaceRegistryDeps) {
    deps.searches?.subscribe((namespace, news) => this.ring(namespace)?.heard(news));
  }

  /** The shared ring of `namespace`; undefined when this process is the whole server (the service keeps its own). */
  private ring(namespace: string): RecentSearches | undefined {
    const relay = this.deps.searches;
    if (relay === undefined) return undefined;
    let ring = this.rings.get(namespace);
    if (ring === undefined) {
      ring = new RecentSearches(undefined, undefined, (news) => relay.publish(namespace, news));
      this.rings.set(namespace, ring);
    }
    return ring;
  }

  service(namespace: string): MemoryService {
    if (this.closing) throw new MemoryError(ERROR_CODES.STORE_BUSY, 'The server is shutting down; retry against the next one.');
    let service = this.open.get(namespace);
    if (service === undefined) {
      const path = namespaceDbPath(this.deps.dbPath, namespace);
      service = new MemoryService({
        store: this.deps.openStore(path, namespace),
        embedder: embedderView(this.deps.embedder),
        clock: this.deps.clock ?? Date.now,
        logger: this.deps.logger,
        ...(this.deps.heavySlots === undefined ? {} : { heavySlots: this.deps.heavySlots }),
        inverseRelations: this.deps.inverseRelations,
        redactor: this.deps.redactor,
        recentSearches: this.ring(namespace),
      });
      service.warm();
      this.open.set(namespace, service);
      // Each namespace learns from its own searches only: its own shadow log, its own values.
      if (this.deps.autoTuneMinutes !== undefined)
        this.tunes.set(namespace, startAutoTune(service.store, this.deps.autoTuneMinutes, this.deps.logger, this.deps.clock));
      this.deps.logger.info(`opened namespace ${namespace} (${describeNamespace(this.deps.dbPath, namespace)})`);
    }
    return service;
  }

  names(): string[] {
    return [...this.open.keys()];
  }

  /** The periodic tune of an open namespace, when LIMBIC_AUTO_TUNE_MINUTES is set. */
  autoTune(namespace: string): AutoTune | undefined {
    return this.tunes.get(namespace);
  }

  /** Finishes each memory's pending work and closes it, then the shared model. */
  async close(): Promise<void> {
    this.closing = true;
    for (const tune of this.tunes.values()) tune.stop();
    this.tunes.clear();
    const services = [...this.open.values()];
    this.open.clear();
    await Promise.all(services.map((s) => s.close()));
    await this.deps.embedder.close();
  }
}

/**
 * The namespaces a memory holds (`limbic migrate --all-namespaces`), the default first: on SQLite the
 * --db file when it exists and every `<name>.db` beside it; on PostgreSQL the schemas `schemasOf`
 * finds holding a memory (`defaultSchema`: the database's default one does).
 */
export async function namespacesAt(
  dbPath: string,
  schemasOf: (url: string) => Promise<{ readonly defaultSchema: boolean; readonly schemas: readonly string[] }>,
): Promise<string[]> {
  const valid = (name: string): boolean => NAME.test(name) && name !== DEFAULT_NAMESPACE;
  if (isUrl(dbPath)) {
    const found = await schemasOf(dbPath);
    const named = found.schemas.filter((s) => s.startsWith(SCHEMA_PREFIX)).map((s) => s.slice(SCHEMA_PREFIX.length));
    return [...(found.defaultSchema ? [DEFAULT_NAMESPACE] : []), ...named.filter(valid).sort()];
  }
  const folder = `${stem(dbPath)}.namespaces`;
  const files = existsSync(folder) ? readdirSync(folder).filter((f) => f.endsWith('.db')) : [];
  return [
    ...(existsSync(dbPath) ? [DEFAULT_NAMESPACE] : []),
    ...files
      .map((f) => f.slice(0, -'.db'.length))
      .filter(valid)
      .sort(),
  ];
}
