/**
 * `npm run bench:cold-start`: the first semantic answer after a restart, with the vector cache
 * file (`<db>.vectors`, src/store/sqlite/vector-cache/vector-cache-file.ts) present and absent. Writes
 * bench/results/cold-start-<date>.md.
 *
 *   --sizes 1000,100000,1000000   graph sizes (bench/latency/generate.ts graphs); the smallest
 *                            shows the floor: the server's start and its model load
 *   --runs 3                 runs per case; medians are reported
 *   --dir /tmp/limbic-cold-start   where the stores are built once and kept between runs
 *   --cold                   also drop the page cache of the database and the cache file before
 *                            each run (GNU dd's nocache), as after a reboot
 *   --clean                  delete the stores at the end
 *   --out FILE               where the report goes (default bench/results/cold-start-<date>.md)
 *   --present-only           only the MCP runs with the file present (skips the store-only runs
 *                            and the file-absent runs, which wait seconds for the file's save)
 *   --peer PATH              another build's dist/cli/main.js (e.g. a checkout of the previous
 *                            commit), started alternately with this one in the file-present MCP
 *                            case: its median and the ratio, measured in the same run
 *
 * Vectors are random unit vectors (the real model would take hours at 1M entities): load time does
 * not depend on what the vectors mean. They are stored under the id of the model the server loads
 * (found by starting it once on an empty database), so the server takes them as its own and
 * re-embeds nothing.
 *
 * Two measures, each in a fresh process:
 * - store only: openSqliteStore, then vectors.warm() to the first vectors.search() answer, in-process
 *   (and, with the file absent, the time close() takes to save it);
 * - end to end: the built server over MCP stdio (dist/cli/main.js --db FILE), spawn to the first
 *   hybrid_search answer with search_modes ["semantic"], the model load included.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { noopLogger, type Logger } from '../src/core/logger.js';
import { LazyEmbedder } from '../src/embed/embedder.js';
import { MemoryService } from '../src/service/memory-service.js';
import { processAlive } from '../src/os/process-alive.js';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { peekVectorFile, vectorFilePath } from '../src/store/sqlite/vector-cache/vector-cache-file.js';
import { importFile } from '../src/cli/import-file.js';
import { randomUnit, writeGraph } from './latency/generate.js';

const ROOT = join(import.meta.dirname, '..');
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const SELF = join(import.meta.dirname, 'cold-start.ts');
const exec = promisify(execFile);

const args = process.argv.slice(2);
const opt = (name: string, fallback: string): string => {
  const i = args.indexOf(name);
  return i >= 0 ? (args[i + 1] ?? fallback) : fallback;
};
const SIZES = opt('--sizes', '1000,100000,1000000').split(',').filter(Boolean).map(Number);
const RUNS = Number(opt('--runs', '3'));
const DIR = opt('--dir', join(tmpdir(), 'limbic-cold-start'));
const COLD = args.includes('--cold');
const PEER = opt('--peer', '');
const PRESENT_ONLY = args.includes('--present-only');
const log = (m: string) => process.stderr.write(`bench: ${m}\n`);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** The model id and size the server binds the vector table to, from a start on an empty database. */
async function serverModel(): Promise<{ model: string; dims: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'limbic-cold-probe-'));
  const db = join(dir, 'probe.db');
  const { client } = await connect(db);
  await client.callTool({
    name: 'create_entities',
    arguments: { entities: [{ name: 'probe', entityType: 't', observations: ['a probe'] }] },
  });
  await client.callTool({ name: 'search_semantic', arguments: { query: 'probe' } });
  await client.close();
  const meta = new Database(db, { readonly: true });
  const get = (key: string) => meta.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?').get(key)?.value;
  const model = get('vector_model');
  const dims = Number(get('vector_dims'));
  meta.close();
  rmSync(dir, { recursive: true, force: true });
  if (model === undefined) throw new Error('The server bound no model: is one installed (limbic model install)?');
  return { model, dims };
}

/** A store of `size` entities with random unit vectors under `model`; built once, kept in DIR. */
async function build(size: number, model: string, dims: number): Promise<string> {
  const dir = join(DIR, String(size));
  const db = join(dir, 'memory.db');
  if (!existsSync(join(dir, 'built'))) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const jsonl = join(dir, 'memory.jsonl');
    log(`${size}: generating`);
    await writeGraph(jsonl, size);
    const store = openSqliteStore({ path: db, vectorCacheFile: false });
    const service = new MemoryService({
      store,
      embedder: new LazyEmbedder(async () => Promise.reject(new Error('import without a model'))),
      clock: Date.now,
      logger: noopLogger,
    });
    log(`${size}: importing`);
    await importFile(service, jsonl);
    log(`${size}: random unit vectors`);
    const vectors = store.requireVectors();
    await vectors.configure(model, dims);
    const next = randomUnit(dims, size);
    for (;;) {
      const jobs = await vectors.takeJobs(5000);
      if (jobs.length === 0) break;
      await vectors.put(jobs.map((j) => ({ id: j.id, version: j.version, vector: next() })));
    }
    await store.close();
    rmSync(jsonl);
    writeFileSync(join(dir, 'built'), new Date().toISOString());
  }
  // A store built for another model is re-labelled, not re-embedded: the vectors are random anyway.
  const handle = new Database(db);
  const stored = handle.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'vector_dims'").get()?.value;
  if (Number(stored) !== dims)
    throw new Error(`The store in ${dir} holds ${stored}-dim vectors, the server's model ${dims}: delete ${dir} to rebuild it.`);
  handle.prepare("UPDATE meta SET value = ? WHERE key = 'vector_model'").run(model);
  handle.close();
  return db;
}

async function connect(db: string, cli = CLI): Promise<{ client: Client; transport: StdioClientTransport }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, '--db', db],
    stderr: 'pipe',
    env: { ...process.env } as Record<string, string>,
  });
  transport.stderr?.on('data', (d: Buffer) => {
    if (/warn|error/i.test(String(d))) process.stderr.write(`server: ${String(d)}`);
  });
  const client = new Client({ name: 'bench-cold-start', version: '1' });
  await client.connect(transport);
  return { client, transport };
}

/** Drops the page cache of these files (GNU dd: nocache), so the next read comes from the disk. */
function dropFileCache(files: string[]): void {
  for (const f of files.filter(existsSync)) execFileSync('dd', [`if=${f}`, 'iflag=nocache', 'count=0', 'status=none']);
}

function cacheFiles(db: string): string[] {
  return [db, `${db}-wal`, vectorFilePath(db)];
}

interface StoreRun {
  openMs: number;
  /** vectors.warm() called to the first vectors.search() answer. */
  firstAnswerMs: number;
  source: string | undefined;
  /** close(): the save of the cache file when it was owed one. */
  closeMs: number;
}

/** In a fresh process (this file with --child-store), so nothing is warm in the heap. */
async function storeRun(db: string): Promise<StoreRun> {
  const { stdout } = await exec(process.execPath, ['--import', 'tsx', SELF, '--child-store', db], { cwd: ROOT, maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as StoreRun;
}

async function childStore(db: string): Promise<void> {
  const warnings: string[] = [];
  const logger: Logger = { info: (m) => warnings.push(m), warn: (m) => warnings.push(m) };
  const t0 = performance.now();
  const store = openSqliteStore({ path: db, logger });
  const t1 = performance.now();
  const vectors = store.requireVectors();
  const dims = (await vectors.status()).dims ?? 0;
  const t2 = performance.now();
  await vectors.warm();
  const hits = await vectors.search(randomUnit(dims, 5)(), 10);
  const t3 = performance.now();
  if (hits.length !== 10) throw new Error(`expected 10 hits, got ${hits.length}`);
  const source = await vectors.cacheSource();
  const t4 = performance.now();
  await store.close();
  const t5 = performance.now();
  for (const w of warnings) process.stderr.write(`store: ${w}\n`);
  process.stdout.write(`${JSON.stringify({ openMs: t1 - t0, firstAnswerMs: t3 - t2, source, closeMs: t5 - t4 } satisfies StoreRun)}\n`);
}

interface McpRun {
  handshakeMs: number;
  firstSemanticMs: number;
  /** File absent at the start: first answer to the server's background save of it (undefined when present). */
  savedAfterMs: number | undefined;
  /** Did the server save the cache file at close (it was absent or unusable)? */
  rewrote: boolean;
  shutdownMs: number;
}

async function mcpRun(db: string, cli = CLI): Promise<McpRun> {
  const file = vectorFilePath(db);
  const before = existsSync(file) ? statSync(file).mtimeMs : undefined;
  const t0 = performance.now();
  const { client, transport } = await connect(db, cli);
  const handshakeMs = performance.now() - t0;
  const answer = (await client.callTool({
    name: 'hybrid_search',
    arguments: { query: 'kalo mirendor tisan', search_modes: ['semantic'], limit: 10 },
  })) as CallToolResult;
  const firstSemanticMs = performance.now() - t0;
  const text = JSON.stringify(answer.structuredContent ?? answer.content);
  if (answer.isError === true || !/"semantic"/.test(text))
    throw new Error(`the first answer did not come from the semantic leg: ${text.slice(0, 400)}`);
  let savedAfterMs: number | undefined;
  if (before === undefined) {
    // A session long enough for the save that follows a full load (SAVE_DELAY_MS, then the write);
    // a client closing at once kills a slow save at close (the SDK sends SIGKILL 4 s after closing stdin).
    const t = performance.now();
    while ((await peekVectorFile(file)) === undefined) {
      if (performance.now() - t > 300_000) throw new Error('the server did not save the vector cache file within 5 minutes');
      await new Promise((r) => setTimeout(r, 100));
    }
    savedAfterMs = performance.now() - t;
  }
  const pid = transport.pid;
  const t1 = performance.now();
  await client.close();
  // The server saves the cache file at close when it is owed one: wait for the process to end.
  while (pid !== null && processAlive(pid)) await new Promise((r) => setTimeout(r, 50));
  const shutdownMs = performance.now() - t1;
  const after = existsSync(file) ? statSync(file).mtimeMs : undefined;
  return { handshakeMs, firstSemanticMs, savedAfterMs, rewrote: after !== before, shutdownMs };
}

interface SizeResult {
  size: number;
  fileBytes: number;
  dbBytes: number;
  store: { absent: StoreRun[]; present: StoreRun[]; presentCold: StoreRun[] };
  mcp: { absent: McpRun[]; present: McpRun[]; presentCold: McpRun[]; peerPresent: McpRun[] };
}

async function benchSize(size: number, model: string, dims: number): Promise<SizeResult> {
  const db = await build(size, model, dims);
  const file = vectorFilePath(db);
  const result: SizeResult = {
    size,
    fileBytes: 0,
    dbBytes: statSync(db).size,
    store: { absent: [], present: [], presentCold: [] },
    mcp: { absent: [], present: [], presentCold: [], peerPresent: [] },
  };
  for (let run = 1; run <= (PRESENT_ONLY ? 0 : RUNS); run++) {
    rmSync(file, { force: true });
    const absent = await storeRun(db);
    log(`${size} store, file absent (run ${run}): ${JSON.stringify(absent)}`);
    result.store.absent.push(absent);
    const present = await storeRun(db);
    log(`${size} store, file present (run ${run}): ${JSON.stringify(present)}`);
    result.store.present.push(present);
    if (COLD) {
      dropFileCache(cacheFiles(db));
      const cold = await storeRun(db);
      log(`${size} store, file present, page cache dropped (run ${run}): ${JSON.stringify(cold)}`);
      result.store.presentCold.push(cold);
    }
  }
  if (PRESENT_ONLY && !existsSync(file)) await storeRun(db); // leaves the file saved at close
  result.fileBytes = statSync(file).size;
  for (let run = 1; run <= RUNS; run++) {
    if (!PRESENT_ONLY) {
      rmSync(file, { force: true });
      const absent = await mcpRun(db);
      log(`${size} MCP, file absent (run ${run}): ${JSON.stringify(absent)}`);
      result.mcp.absent.push(absent);
    }
    const present = await mcpRun(db);
    log(`${size} MCP, file present (run ${run}): ${JSON.stringify(present)}`);
    result.mcp.present.push(present);
    if (PEER !== '') {
      const peer = await mcpRun(db, PEER);
      log(`${size} MCP, file present, peer ${PEER} (run ${run}): ${JSON.stringify(peer)}`);
      result.mcp.peerPresent.push(peer);
    }
    if (COLD) {
      dropFileCache(cacheFiles(db));
      const cold = await mcpRun(db);
      log(`${size} MCP, file present, page cache dropped (run ${run}): ${JSON.stringify(cold)}`);
      result.mcp.presentCold.push(cold);
    }
  }
  return result;
}

function report(results: SizeResult[], model: string): string {
  const cols = results.map((r) => r.size.toLocaleString('en')).join(' | ');
  const row = (label: string, f: (r: SizeResult) => string) => `| ${label} | ${results.map(f).join(' | ')} |`;
  const ms = (xs: number[]) => (xs.length === 0 ? '—' : `${median(xs).toFixed(0)}`);
  const sources = (runs: StoreRun[]) => [...new Set(runs.map((r) => r.source))].join(', ');
  const gib = (b: number) => `${(b / 2 ** 30).toFixed(2)} GiB`;
  return [
    `# Cold start — ${new Date().toISOString().slice(0, 10)}`,
    '',
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}. Medians of ${RUNS} runs, each in a fresh process.`,
    `Graphs from bench/latency/generate.ts; vectors are **random unit vectors** stored under the server's model id (${model}), so nothing is re-embedded; load time does not depend on what they mean.`,
    'Page cache warm (the database and the file were read by the previous run) unless the row says "page cache dropped" (GNU dd nocache on the database, its WAL and the file: as after a reboot).',
    '',
    `| | ${cols} |`,
    `|---|${results.map(() => '---').join('|')}|`,
    row('database size', (r) => gib(r.dbBytes)),
    row('vector cache file size', (r) => gib(r.fileBytes)),
    row(
      'store: vectors.warm → first vectors.search answer, file absent (ms)',
      (r) => `${ms(r.store.absent.map((x) => x.firstAnswerMs))} (${sources(r.store.absent)})`,
    ),
    row(
      'store: vectors.warm → first vectors.search answer, file present (ms)',
      (r) => `${ms(r.store.present.map((x) => x.firstAnswerMs))} (${sources(r.store.present)})`,
    ),
    ...(COLD
      ? [
          row(
            'store: same, file present, page cache dropped (ms)',
            (r) => `${ms(r.store.presentCold.map((x) => x.firstAnswerMs))} (${sources(r.store.presentCold)})`,
          ),
        ]
      : []),
    row('store: saving the file at close after a full load (ms)', (r) => ms(r.store.absent.map((x) => x.closeMs))),
    row('store: openSqliteStore (ms)', (r) => ms(r.store.present.map((x) => x.openMs))),
    row('MCP: spawn → handshake (ms)', (r) => ms(r.mcp.present.map((x) => x.handshakeMs))),
    row('MCP: spawn → first semantic answer, file absent (ms)', (r) => ms(r.mcp.absent.map((x) => x.firstSemanticMs))),
    row('MCP: spawn → first semantic answer, file present (ms)', (r) => ms(r.mcp.present.map((x) => x.firstSemanticMs))),
    ...(COLD ? [row('MCP: same, file present, page cache dropped (ms)', (r) => ms(r.mcp.presentCold.map((x) => x.firstSemanticMs)))] : []),
    ...(PEER !== ''
      ? [
          row('MCP: same, file present, the --peer server, run alternately (ms)', (r) =>
            ms(r.mcp.peerPresent.map((x) => x.firstSemanticMs)),
          ),
          row('MCP: this server / the --peer server, file present', (r) =>
            (median(r.mcp.present.map((x) => x.firstSemanticMs)) / median(r.mcp.peerPresent.map((x) => x.firstSemanticMs))).toFixed(2),
          ),
        ]
      : []),
    row('MCP: file absent, first answer → the server has saved it (ms)', (r) => ms(r.mcp.absent.map((x) => x.savedAfterMs ?? NaN))),
    row('MCP: close → exit, file absent (ms)', (r) => ms(r.mcp.absent.map((x) => x.shutdownMs))),
    row('MCP: close → exit, file present (ms)', (r) => ms(r.mcp.present.map((x) => x.shutdownMs))),
    row('MCP runs with the file present that rewrote it (should be 0)', (r) => String(r.mcp.present.filter((x) => x.rewrote).length)),
    '',
    'First semantic answer: hybrid_search with search_modes ["semantic"], the first call after the handshake; it waits for the model and the vector cache, which load at the same time.',
    'With the file absent the client waits for the server to save it (5 s after the load, then the write) before closing, as a session of more than a few seconds would.',
    ...(PEER !== '' ? [`The --peer server: ${PEER}, started right after this one's file-present run each time.`] : []),
    '',
  ].join('\n');
}

if (args[0] === '--child-store') {
  await childStore(args[1] ?? '');
} else {
  if (!existsSync(CLI)) throw new Error('Build first: npm run build (the server runs from dist/).');
  log('finding the model the server binds (a start on an empty database)');
  const { model, dims } = await serverModel();
  log(`server model: ${model} (${dims} dims)`);
  const results: SizeResult[] = [];
  for (const size of SIZES) results.push(await benchSize(size, model, dims));
  const md = report(results, model);
  const out = opt('--out', join(ROOT, 'bench', 'results', `cold-start-${new Date().toISOString().slice(0, 10)}.md`));
  writeFileSync(out, md);
  process.stdout.write(md);
  log(`wrote ${out}`);
  if (args.includes('--clean')) rmSync(DIR, { recursive: true, force: true });
}
