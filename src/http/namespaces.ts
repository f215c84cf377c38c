/**
 * Namespaces: separate memories in one server, one per project or agent. Each is its own database
 * file (SQLite) — so no query can reach another namespace's entities, relations, vectors or usage
 * signals, whatever a tool does: there is no namespace column to forget in a WHERE clause, the
 * store's code is unchanged, and a namespace is backed up, exported or deleted as one file.
 * The default namespace is the memory of today (the --db file), so stdio users see no change.
 *
 * On Postgres the same boundary is a schema per namespace (`limbic_<name>`, with the connection's
 * search_path set to it): the store's SQL stays unqualified and one database holds them all. The
 * registry only needs `openStore(location)`, so it serves either backend.
 */
import { basename, dirname, extname, join } from 'node:path';
import { ERROR_CODES, MemoryError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { LazyEmbedder, type Embedder, type LoadProgress } from '../embed/embedder.js';
import { MemoryService } from '../service/memory-service.js';
import type { Store } from '../store/store.js';

export const DEFAULT_NAMESPACE = 'default';

/** Lower-case letters, digits, - and _: safe as a file name everywhere and as a Postgres schema name. */
const NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export function parseNamespace(name: string): string {
  if (!NAME.test(name)) {
    throw new MemoryError(
      ERROR_CODES.INVALID_INPUT,
      `"${name}" is not a namespace name: use 1 to 63 lower-case letters, digits, - or _, starting with a letter or digit (for example "work" or "agent-1").`,
    );
  }
  return name;
}

const stem = (dbPath: string): string => join(dirname(dbPath), basename(dbPath, extname(dbPath)));

/** A database URL (postgres://…) rather than a SQLite file. */
const isUrl = (location: string): boolean => /^[a-z][a-z0-9+.-]*:\/\//i.test(location);

/** The database file of a namespace: the --db file itself for the default, else `<db stem>.namespaces/<name>.db`. */
export function namespaceDbPath(dbPath: string, namespace: string): string {
  if (parseNamespace(namespace) === DEFAULT_NAMESPACE) return dbPath;
  if (isUrl(dbPath)) {
    throw new MemoryError(
      ERROR_CODES.CONFIG_INVALID,
      `Namespace "${namespace}" needs a SQLite --db for now: on Postgres only the default namespace is served (a schema per namespace is planned). Drop --namespace or use a SQLite file.`,
    );
  }
  return join(`${stem(dbPath)}.namespaces`, `${namespace}.db`);
}

/** The token file beside the memory: `<db stem>.tokens.db`. */
export function tokenFilePath(dbPath: string): string {
  if (isUrl(dbPath)) {
    throw new MemoryError(
      ERROR_CODES.CONFIG_INVALID,
      'Tokens (and so serve --http) need a SQLite --db for now; with Postgres, serve over stdio.',
    );
  }
  return `${stem(dbPath)}.tokens.db`;
}

/**
 * A LazyEmbedder per namespace over one shared engine: the model (a worker thread, ~100 MB) loads
 * once per process, not once per namespace. Closing a view leaves the shared engine alone.
 */
export function embedderView(shared: LazyEmbedder): LazyEmbedder {
  return new LazyEmbedder(async (progress: LoadProgress) => {
    for (;;) {
      const engine = await shared.get();
      if (engine !== undefined) {
        const view: Embedder = {
          id: engine.id,
          dims: engine.dims,
          ...(engine.similarityFloor === undefined ? {} : { similarityFloor: engine.similarityFloor }),
          embed: (texts, kind) => engine.embed(texts, kind),
          embedEntities: (items) => engine.embedEntities(items),
        };
        return view;
      }
      const state = shared.state();
      if (state.state === 'unavailable') throw new Error(state.reason);
      if (state.state === 'loading') progress(state.detail ?? 'loading the model', state.installing);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }, 5_000);
}

export interface NamespaceRegistryDeps {
  readonly dbPath: string;
  readonly openStore: (path: string) => Store;
  /** The process's one embedder; every namespace embeds through it. */
  readonly embedder: LazyEmbedder;
  readonly logger: Logger;
  readonly clock?: () => number;
}

/** The open memories of a server: each opened on its first request, all closed on shutdown. */
export class NamespaceRegistry {
  private readonly open = new Map<string, MemoryService>();
  private closing = false;

  constructor(private readonly deps: NamespaceRegistryDeps) {}

  service(namespace: string): MemoryService {
    if (this.closing) throw new MemoryError(ERROR_CODES.STORE_BUSY, 'The server is shutting down; retry against the next one.');
    let service = this.open.get(namespace);
    if (service === undefined) {
      const path = namespaceDbPath(this.deps.dbPath, namespace);
      service = new MemoryService({
        store: this.deps.openStore(path),
        embedder: embedderView(this.deps.embedder),
        clock: this.deps.clock ?? Date.now,
        logger: this.deps.logger,
      });
      service.warm();
      this.open.set(namespace, service);
      this.deps.logger.info(`opened namespace ${namespace} (${path})`);
    }
    return service;
  }

  names(): string[] {
    return [...this.open.keys()];
  }

  /** Finishes each memory's pending work and closes it, then the shared model. */
  async close(): Promise<void> {
    this.closing = true;
    const services = [...this.open.values()];
    this.open.clear();
    await Promise.all(services.map((s) => s.close()));
    await this.deps.embedder.close();
  }
}
