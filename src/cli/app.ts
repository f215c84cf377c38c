/**
 * The composition root: reads argv's global flags and the environment into one frozen Config, and
 * builds store → embedder → service from it. The only module that reads the environment or names a
 * concrete backend (SQLite, PostgreSQL, the ONNX model); the commands (src/cli/commands/) receive
 * an App and never do either (test/invariants/layering.test.ts holds both rules).
 */
import { readFileSync, statSync } from 'node:fs';
import { availableParallelism, homedir, userInfo } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { resolveProject, type Project } from '../capture/project.js';
import { envFlag, envOff, parseConfig, TOOL_PROFILES, type Config, type ToolProfile } from '../core/config.js';
import { ERROR_CODES, MemoryError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { LazyEmbedder, type LoadProgress } from '../embed/embedder.js';
import { installingElsewhere, modelNotInstalled, modelSwitchedOff } from '../embed/model-state.js';
import { ThreadedEmbedder } from '../embed/onnx/threaded-embedder.js';
import {
  DEFAULT_PACKAGE,
  MODEL_PACKAGES,
  findModelPackage,
  installModelPackage,
  installedModels,
  installsUnderWay,
  verifyInstalledModel,
  type ModelPackage,
} from '../embed/onnx/model-files.js';
import { resolvePipSettings } from '../embed/onnx/pip-config.js';
import { DEFAULT_NAMESPACE, namespaceDbPath, namespacesAt, namespaceSchema } from '../http/namespaces.js';
import type { ServerInfo } from '../mcp/server.js';
import { heavySlotOptionsFromEnv } from '../service/heavy-slots.js';
import { MemoryService } from '../service/memory-service.js';
import { createRedactor } from '../service/redaction.js';
import type { Redactor } from '../core/text/redaction.js';
import { autoTuneMinutes } from '../service/tuning.js';
import { isPostgresUrl, openPgStore, redactPassword } from '../store/postgres/pg-store.js';
import { pgMemorySchemas } from '../store/postgres/pg-namespaces.js';
import { openPgTokenStore } from '../store/postgres/pg-tokens.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import { openSqliteTokenStore } from '../store/sqlite/sqlite-tokens.js';
import type { Store } from '../store/store.js';
import type { TokenStore } from '../store/token-store.js';
import type { Where } from './connect.js';
import { checkDbLocation, requireExistingMemory, willCreate } from './db-location.js';
import { httpLimitsFromEnv } from './http-limits.js';
import type { HttpLimits } from '../http/http-server.js';
import type { DoctorProbes } from './doctor.js';

/** How often a load waiting for another process's model install looks again. */
const INSTALL_POLL_MS = 500;

/** What a --db location is, as the PostgreSQL backend reads it. */
const URL_RULES = { isPostgresUrl, redactPassword };

/**
 * The user's home folder: $HOME, or the account's when $HOME is set but empty (a hook or a service
 * started with HOME=""). Node's homedir() answers "" then, and every default path (the memory, the
 * models, the hooks' state) would land in the current folder: the user's repository, for a hook.
 * @example userHome(() => '', () => '/home/me') // '/home/me'
 */
export function userHome(home: () => string = homedir, account: () => string = () => userInfo().homedir): string {
  const fromEnv = home();
  if (fromEnv !== '') return fromEnv;
  let fromAccount = '';
  try {
    fromAccount = account();
  } catch {
    // No account entry (a container's arbitrary uid): nothing better to offer.
  }
  if (fromAccount !== '') return fromAccount;
  throw new MemoryError(
    ERROR_CODES.CONFIG_INVALID,
    "HOME is empty and this account has no home folder, so Limbic cannot tell where your memory, its models and its hooks' state live: set HOME to your home folder.",
  );
}

const PACKAGE = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'package.json'), 'utf8')) as {
  version: string;
};

/** commander's view of the global flags; `--no-model` sets `model` to false. */
export interface GlobalOptions {
  db?: string;
  modelDir?: string;
  model?: boolean;
  namespace?: string;
  inverseRelations?: boolean;
  tools?: string;
  /** `--no-redact` sets it to false. */
  redact?: boolean;
  redactPii?: boolean;
}

export const stderrLogger: Logger = {
  info: (message) => process.stderr.write(`limbic: ${message}\n`),
  warn: (message, error) =>
    process.stderr.write(
      `limbic: warning: ${message}${error === undefined ? '' : `: ${error instanceof Error ? error.message : String(error)}`}\n`,
    ),
};

type Env = Readonly<Record<string, string | undefined>>;

const nonEmpty = (v: string | undefined): string | undefined => (v === undefined || v === '' ? undefined : v);

function numberFrom(env: Env, name: string): number | undefined {
  const value = nonEmpty(env[name]);
  return value === undefined || !Number.isFinite(Number(value)) ? undefined : Number(value);
}

/** LIMBIC_QUERY_BATCH: a whole number of search texts from 1 to 64; anything else is refused, saying what to give. */
function queryBatch(env: Env): number | undefined {
  const raw = nonEmpty(env.LIMBIC_QUERY_BATCH?.trim());
  if (raw === undefined) return undefined;
  const texts = Number(raw);
  if (Number.isInteger(texts) && texts >= 1 && texts <= 64) return texts;
  throw new MemoryError(
    ERROR_CODES.CONFIG_INVALID,
    `LIMBIC_QUERY_BATCH=${raw} is not a number of search texts: give a whole number from 1 to 64 (1, the default, embeds each search alone; more embeds the searches that waited while the model was busy in one pass, which pays only where the model runs on many cores).`,
  );
}

/** --tools or LIMBIC_TOOLS as a profile; anything else is refused with the profiles there are. */
function toolProfile(flag: string | undefined, env: Env): ToolProfile {
  const chosen = flag ?? nonEmpty(env.LIMBIC_TOOLS);
  if (chosen === undefined) return 'all';
  const profile = TOOL_PROFILES.find((p) => p === chosen.trim().toLowerCase());
  if (profile !== undefined) return profile;
  throw new MemoryError(
    ERROR_CODES.CONFIG_INVALID,
    `${flag === undefined ? `LIMBIC_TOOLS=${chosen}` : `--tools ${chosen}`} is no tool profile: use ${TOOL_PROFILES.map((p) => `"${p}"`).join(' or ')} (core: the official nine tools and search_semantic).`,
  );
}

/**
 * The Config of the --db database itself (serve --http and the token commands start from it):
 * flags first, then the environment, then the defaults.
 */
export function buildConfig(options: GlobalOptions, env: Env, home: string): Config {
  const dataHome = nonEmpty(env.XDG_DATA_HOME) ?? join(home, '.local', 'share');
  const cacheHome = nonEmpty(env.XDG_CACHE_HOME) ?? join(home, '.cache');
  const modelDir = options.modelDir ?? nonEmpty(env.LIMBIC_MODEL_DIR);
  const chosenDb = options.db ?? nonEmpty(env.LIMBIC_DB);
  const heavy = heavySlotOptionsFromEnv(env);
  return parseConfig({
    dbPath: chosenDb === undefined ? resolve(dataHome, 'limbic', 'memory.db') : checkDbLocation(chosenDb, true, URL_RULES),
    modelDir: modelDir === undefined ? undefined : resolve(modelDir),
    modelCacheDir: resolve(nonEmpty(env.LIMBIC_MODEL_CACHE) ?? join(cacheHome, 'limbic', 'models')),
    modelId: nonEmpty(env.LIMBIC_MODEL),
    allowRemoteModels: !envFlag(env.LIMBIC_OFFLINE) && !envFlag(env.HF_HUB_OFFLINE),
    noModel: options.model === false || envFlag(env.LIMBIC_NO_MODEL),
    inverseRelations: options.inverseRelations === true || envFlag(env.LIMBIC_INVERSE_RELATIONS),
    tools: toolProfile(options.tools, env),
    project: nonEmpty(env.LIMBIC_PROJECT?.trim()),
    redact: options.redact !== false && !envFlag(env.LIMBIC_NO_REDACT),
    redactPii: options.redactPii === true || envFlag(env.LIMBIC_REDACT_PII),
    namespace: options.namespace ?? nonEmpty(env.LIMBIC_NAMESPACE) ?? DEFAULT_NAMESPACE,
    queryBatch: queryBatch(env),
    heavyToolSlots: heavy.slots,
    heavyToolWaitMs: heavy.waitMs,
    autoTuneMinutes: autoTuneMinutes(env),
    pgPoolSize: numberFrom(env, 'LIMBIC_PG_POOL_SIZE'),
    pgStatementTimeoutMs: numberFrom(env, 'LIMBIC_PG_STATEMENT_TIMEOUT_MS'),
    capture: !envOff(env.LIMBIC_CAPTURE),
    hookStateDir: resolve(cacheHome, 'limbic', 'hooks'),
    brief: !envOff(env.LIMBIC_BRIEF),
  });
}

/** How `limbic model install` reports; the command draws the bar. */
export interface InstallProgress {
  readonly message: (text: string) => void;
  readonly download?: (done: number, total: number | undefined) => void;
}

/**
 * onnxruntime reads ORT_DISABLE_TELEMETRY when it loads: no usage reports from a memory server
 * unless the user asked for them (transformers.js set it too, but in the embedding worker, whose
 * process.env is its own copy that the native library never reads). Set here, on the main thread,
 * before the runtime loads in any thread.
 */
function quietOnnxRuntime(): void {
  process.env.ORT_DISABLE_TELEMETRY ??= '1';
}

/** The application one run of the CLI builds: its settings and the parts made from them. */
export class App {
  readonly info: ServerInfo = { name: 'limbic', version: PACKAGE.version };
  readonly logger: Logger = stderrLogger;
  /** The process's environment, read here only. */
  private readonly env: Env = process.env;
  private built: Config | undefined;

  constructor(private readonly options: () => GlobalOptions) {}

  /** The --db database itself, whatever the namespace. */
  rootConfig(): Config {
    // Built once, at the first command's first need (commander has parsed the flags by then).
    this.built ??= buildConfig(this.options(), this.env, userHome());
    return this.built;
  }

  /** The chosen namespace's memory: its own file beside the --db one, or on PostgreSQL the same URL in the namespace's schema. */
  config(): Config {
    const root = this.rootConfig();
    return Object.freeze({ ...root, dbPath: namespaceDbPath(root.dbPath, root.namespace) });
  }

  /**
   * config() for a command that only reads the memory: a SQLite file that does not exist is an
   * error naming it, never a new, empty memory (db-location.ts, requireExistingMemory).
   */
  existingConfig(command: string): Config {
    const config = this.config();
    requireExistingMemory(config.dbPath, command, config.namespace, URL_RULES);
    return config;
  }

  /** Whether --namespace (not the environment) chose the namespace: serve --http refuses it. */
  namespaceFlagGiven(): boolean {
    return this.options().namespace !== undefined;
  }

  /** The --db flag or LIMBIC_DB, checked; undefined when the default location is used. */
  chosenDb(): string | undefined {
    const chosen = this.options().db ?? nonEmpty(this.env.LIMBIC_DB);
    return chosen === undefined ? undefined : checkDbLocation(chosen, true, URL_RULES);
  }

  /** A --db value given to a command itself (migrate's source and target), checked as --db is. */
  checkLocation(location: string): string {
    return checkDbLocation(location, true, URL_RULES);
  }

  isPostgres(location: string): boolean {
    return isPostgresUrl(location);
  }

  redact(location: string): string {
    return redactPassword(location);
  }

  /** serve --http's bounds on requests in flight set in the environment (LIMBIC_HTTP_*). */
  httpLimits(): Partial<HttpLimits> {
    return httpLimitsFromEnv(this.env);
  }

  /** LIMBIC_HTTP_WORKERS: serve --http's worker processes when --workers is not given (serve-http.ts workerCount checks it). */
  httpWorkers(): string | undefined {
    return nonEmpty(this.env.LIMBIC_HTTP_WORKERS?.trim());
  }

  /**
   * serve --http's OAuth settings: the flags when given, else LIMBIC_PUBLIC_URL and
   * LIMBIC_OAUTH_CLIENT_HOSTS (comma-separated). serve-http.ts checks them.
   */
  oauthSettings(flags: { publicUrl?: string | undefined; clientHosts?: readonly string[] | undefined }): {
    publicUrl: string | undefined;
    oauthClientHosts: readonly string[];
  } {
    const fromEnv = nonEmpty(this.env.LIMBIC_OAUTH_CLIENT_HOSTS?.trim());
    return {
      publicUrl: flags.publicUrl ?? nonEmpty(this.env.LIMBIC_PUBLIC_URL?.trim()),
      oauthClientHosts:
        flags.clientHosts ??
        (fromEnv === undefined
          ? []
          : fromEnv
              .split(',')
              .map((h) => h.trim())
              .filter((h) => h !== '')),
    };
  }

  /**
   * The project a folder belongs to (src/capture/project.ts): `explicit` (a command's --project),
   * else LIMBIC_PROJECT, else what the folder says; undefined outside any project (`/`, the home folder).
   */
  async project(folder: string, explicit?: string): Promise<Project | undefined> {
    return resolveProject(folder, { explicit: explicit ?? this.rootConfig().project, home: userHome() });
  }

  /** Where connect and doctor look for clients and commands: this user's environment. */
  where(): Where {
    return { env: this.env, home: userHome(), platform: process.platform };
  }

  /**
   * The service over the config's memory. The model runs in a worker thread with one core fewer
   * than the machine has (at least one), so the thread answering MCP always has a core of its own;
   * `threads` overrides that (the CLI's bulk re-embedding takes every core). `server`: the worker
   * starts before the store opens (a start's first semantic answer waits for the model), and a
   * missing model is installed in the background; any other command only uses an installed one.
   */
  service(config: Config, threads: number = Math.max(1, availableParallelism() - 1), server = false, project?: string): MemoryService {
    const embedder = this.embedder(config, threads, server);
    const store = this.openStore(config.dbPath, config.namespace, config);
    return new MemoryService({
      store,
      embedder,
      clock: Date.now,
      logger: stderrLogger,
      heavySlots: { slots: config.heavyToolSlots, waitMs: config.heavyToolWaitMs },
      inverseRelations: config.inverseRelations,
      project,
      redactor: this.redactor(config),
    });
  }

  /**
   * A service for a short run that reads or writes a little and exits (`limbic brief`, the hooks):
   * no model, and on SQLite none of what a server loads to answer many searches fast (sqlite-vec,
   * the vector cache, the in-memory keyword index, the keyword worker), each of which costs such a
   * run more to load than it saves. Writes queue their embeddings as always, for a server to make.
   * A hook passes how long it waits for another writer and where its warnings go (docs/hooks.md).
   */
  lightService(config: Config, options: { busyTimeoutMs?: number; logger?: Logger } = {}): MemoryService {
    const logger = options.logger ?? stderrLogger;
    const store = isPostgresUrl(config.dbPath)
      ? this.openStore(config.dbPath, config.namespace, config)
      : openSqliteStore({
          path: config.dbPath,
          logger,
          busyTimeoutMs: options.busyTimeoutMs,
          vectors: false,
          keywordTopK: false,
          keywordSplitFrom: Infinity,
        });
    return new MemoryService({
      store,
      embedder: new LazyEmbedder(async () => {
        throw new Error('this command runs without the embedding model');
      }),
      clock: Date.now,
      logger,
      inverseRelations: config.inverseRelations,
      redactor: this.redactor(config),
    });
  }

  /** What every write goes through: secretlint's rules (loaded at the first write), or nothing with --no-redact. */
  redactor(config: Config): Redactor {
    return createRedactor(config.redact, { pii: config.redactPii });
  }

  /**
   * The store a --db value names: a postgres:// URL opens PostgreSQL with pgvector (TLS from the
   * URL's sslmode and friends), anything else is a SQLite file.
   */
  openStore(location: string, namespace: string = DEFAULT_NAMESPACE, config: Config = this.rootConfig()): Store {
    if (!isPostgresUrl(location)) {
      const created = willCreate(location);
      const store = openSqliteStore({ path: location, logger: stderrLogger });
      if (created) process.stderr.write(`limbic: created a new, empty memory at ${location}\n`);
      return store;
    }
    return openPgStore({
      url: location,
      poolSize: config.pgPoolSize,
      statementTimeoutMs: config.pgStatementTimeoutMs,
      schema: namespaceSchema(namespace),
    });
  }

  /** The namespaces the memory at a --db value holds, the default first (limbic migrate --all-namespaces). */
  namespacesAt(location: string): Promise<string[]> {
    return namespacesAt(location, pgMemorySchemas);
  }

  /** The tokens of serve --http: a file beside a SQLite memory, a table in a PostgreSQL one. */
  openTokens(location: string): TokenStore {
    return isPostgresUrl(location) ? openPgTokenStore(location) : openSqliteTokenStore(location);
  }

  /**
   * The process's embedder (serve --http shares one among its namespaces); see service(). It loads
   * again by itself when a model arrives after it found none (installed by another process, a
   * --model-dir that appeared), and its onReady starts the embedding queue then.
   */
  embedder(config: Config, threads: number = Math.max(1, availableParallelism() - 1), server = false): LazyEmbedder {
    const installOnce = this.autoInstaller(config);
    const embedder = new LazyEmbedder(
      async (progress, signal) => {
        if (config.noModel) throw modelSwitchedOff();
        // With a model in place the worker thread starts before this first awaits, so it loads while
        // the caller goes on (serve builds the MCP server meanwhile). The ONNX runtime loads in it.
        const arriving = this.modelArrival(config, server, progress, signal, installOnce);
        if (arriving !== undefined) await arriving;
        progress('loading the model');
        quietOnnxRuntime();
        const engine = await ThreadedEmbedder.start({ model: { ...this.onnxOptions(config), threads }, queryBatch: config.queryBatch });
        if (engine.description.note !== undefined) stderrLogger.info(engine.description.note);
        return engine;
      },
      undefined,
      undefined,
      { fingerprint: () => this.modelFingerprint(config) },
    );
    if (server) embedder.warm();
    return embedder;
  }

  /**
   * Before a load: undefined when there is a model to load (or the hub to fetch one from, for a
   * model Limbic does not install). Otherwise what brings one: another process's install under way
   * is waited for (never a second one beside it); a server installs the default model itself; any
   * other command says the model is not installed (model-state.ts), installing nothing.
   */
  private modelArrival(
    config: Config,
    server: boolean,
    progress: LoadProgress,
    signal: AbortSignal,
    installOnce: (progress: LoadProgress) => Promise<void>,
  ): Promise<void> | undefined {
    const present = (): boolean =>
      config.modelDir !== undefined ||
      this.modelFingerprint(config) !== undefined ||
      (config.modelId !== DEFAULT_PACKAGE.id && config.allowRemoteModels);
    if (present()) return undefined;
    return (async () => {
      let waitedFor: string | undefined;
      for (;;) {
        if (present()) return;
        const others = installsUnderWay(config.modelCacheDir, DEFAULT_PACKAGE.id);
        if (others.length === 0) break;
        const detail = installingElsewhere(DEFAULT_PACKAGE.id, others);
        if (detail !== waitedFor) stderrLogger.info(`waiting: ${detail}`);
        waitedFor = detail;
        progress(detail, true);
        await sleep(INSTALL_POLL_MS, undefined, { signal });
      }
      const offline = !config.allowRemoteModels;
      if (!server || offline || config.modelId !== DEFAULT_PACKAGE.id) {
        throw modelNotInstalled({ cacheDir: config.modelCacheDir, modelId: DEFAULT_PACKAGE.id, offline });
      }
      await installOnce(progress);
    })();
  }

  /**
   * What identifies the model files a load would use now (a file's path and time), or undefined
   * when there are none: the embedder's watch loads again when it changes.
   */
  private modelFingerprint(config: Config): string | undefined {
    const stamp = (path: string): string | undefined => {
      try {
        return `${path}@${statSync(path).mtimeMs}`;
      } catch {
        return undefined;
      }
    };
    if (config.modelDir !== undefined) return stamp(join(config.modelDir, 'tokenizer.json'));
    const wanted = join(config.modelCacheDir, basename(config.modelId));
    const installed = installedModels(config.modelCacheDir)[0];
    return (
      stamp(join(wanted, 'tokenizer.json')) ?? (installed === undefined ? undefined : `${installed.dir}@${installed.manifest.installedAt}`)
    );
  }

  /** The model packages `limbic model install` knows, by short name. */
  modelPackages(): Readonly<Record<string, ModelPackage>> {
    return MODEL_PACKAGES;
  }

  defaultModelPackage(): ModelPackage {
    return DEFAULT_PACKAGE;
  }

  /** Which model is in use and where its files came from (loads it). */
  async describeModel(config: Config): Promise<Record<string, unknown>> {
    // Showing is a read: it fetches nothing (without this, a model not installed was looked for on the hub).
    if (config.modelDir === undefined && config.modelId === DEFAULT_PACKAGE.id && this.modelFingerprint(config) === undefined) {
      throw modelNotInstalled({ cacheDir: config.modelCacheDir, modelId: DEFAULT_PACKAGE.id, offline: !config.allowRemoteModels });
    }
    const { loadOnnxEmbedder } = await import('../embed/onnx/onnx-embedder.js');
    quietOnnxRuntime();
    const engine = await loadOnnxEmbedder(this.onnxOptions(config));
    return { ...engine.description, cacheDir: config.modelCacheDir, defaultModel: config.modelId };
  }

  /**
   * Installs a model package (the default when `name` is undefined) into the config's cache; with
   * `ifMissing`, does nothing when it is installed and verified. Returns the folder and whether it installed.
   */
  async installModel(
    config: Config,
    name: string | undefined,
    ifMissing: boolean,
    progress: InstallProgress,
  ): Promise<{ id: string; dir: string; installed: boolean }> {
    const pkg = name === undefined ? DEFAULT_PACKAGE : findModelPackage(name);
    const current = installedModels(config.modelCacheDir).find((m) => m.manifest.id === pkg.id);
    if (ifMissing && current !== undefined && verifyInstalledModel(current.dir).length === 0) {
      return { id: pkg.id, dir: current.dir, installed: false };
    }
    const dir = await installModelPackage(pkg, config.modelCacheDir, progress.message, undefined, {
      pip: this.pipSettings(),
      ...(progress.download === undefined ? {} : { onDownload: progress.download }),
    });
    return { id: pkg.id, dir, installed: true };
  }

  /** What `limbic doctor` checks, for the config's SQLite file; `cli` is how its advice names the command. */
  async doctorProbes(config: Config, cli: string): Promise<DoctorProbes> {
    const { checkModel } = await import('../embed/onnx/model-health.js');
    const { checkOnnxRuntime } = await import('../embed/onnx/native-runtime.js');
    const { checkDatabase, checkSqliteRuntime } = await import('../store/sqlite/sqlite-health.js');
    quietOnnxRuntime();
    return {
      nodeVersion: process.versions.node,
      dbPath: config.dbPath,
      runtime: () => checkSqliteRuntime(),
      model: () => checkModel({ ...this.onnxOptions(config), noModel: config.noModel, cli }),
      ...(config.noModel ? {} : { modelRuntime: checkOnnxRuntime }),
      database: (modelId) => checkDatabase(config.dbPath, { modelId, cli }),
      memoryRoot: this.rootConfig().dbPath,
    };
  }

  /** The index, proxy and certificates a pip user configured, for fetching model wheels without pip. */
  private pipSettings() {
    return resolvePipSettings({ env: this.env, home: userHome(), platform: process.platform });
  }

  private onnxOptions(config: Config) {
    return {
      modelDir: config.modelDir,
      cacheDir: config.modelCacheDir,
      modelId: config.modelId,
      allowRemote: config.allowRemoteModels,
    };
  }

  /**
   * A server started with nothing installed installs the default model itself, in the background
   * (the tools answer meanwhile; searches are keyword-only and say why), once per process.
   * modelArrival decides when: not with --model-dir, not when another model is installed (it is
   * used, with a note), not offline, not while another process installs it, not outside a server.
   */
  private autoInstaller(config: Config): (progress: LoadProgress) => Promise<void> {
    let outcome: Promise<void> | undefined;
    return (progress) => {
      outcome ??= (async () => {
        const started = Date.now();
        stderrLogger.info(
          `no embedding model is installed: installing ${DEFAULT_PACKAGE.id} in the background (keyword search answers meanwhile)`,
        );
        progress(`installing ${DEFAULT_PACKAGE.id}`, true);
        await installModelPackage(
          DEFAULT_PACKAGE,
          config.modelCacheDir,
          (message) => {
            progress(`installing ${DEFAULT_PACKAGE.id}: ${message}`, true);
            stderrLogger.info(message);
          },
          undefined,
          { pip: this.pipSettings() },
        );
        stderrLogger.info(`installed ${DEFAULT_PACKAGE.id} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      })();
      return outcome;
    };
  }
}
