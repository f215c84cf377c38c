/**
 * `limbic doctor`: every part Limbic needs, one line each (ok / warn / fail), and for each problem
 * the command that fixes it (a native module that does not load is named where it really is). The backends check their own parts (src/store/sqlite/sqlite-health.ts,
 * src/embed/onnx/model-health.ts); this runs them with the checks that need only Node (its version,
 * free disk) and prints the report. Broken means at least one fail.
 */
import { existsSync, readdirSync, statSync, statfsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { HealthCheck } from '../core/health.js';
import { healthCheck } from '../core/health.js';
import { namespaceDbPath, tokenFilePath } from '../http/namespaces.js';

/** Node 20 is the oldest line better-sqlite3 12 and our engines field support. */
const MIN_NODE_MAJOR = 20;
/** Below this the database can no longer grow through an import or a compaction. */
const DISK_FAIL_BYTES = 100 * 2 ** 20;
const DISK_WARN_BYTES = 2 ** 30;

export interface DoctorProbes {
  /** process.versions.node */
  readonly nodeVersion: string;
  readonly dbPath: string;
  /** The SQLite driver, FTS5, sqlite-vec, usearch. */
  readonly runtime: () => Promise<HealthCheck[]>;
  /** The model check and the id of the model that would embed. */
  readonly model: () => { check: HealthCheck; modelId: string | undefined };
  /** The ONNX runtime that runs the model (undefined with --no-model). */
  readonly modelRuntime?: () => Promise<HealthCheck>;
  /** The database file, compared with that model. */
  readonly database: (modelId: string | undefined) => Promise<HealthCheck[]>;
  /** The --db file (the default namespace), beside which its token file and other namespaces live. @default dbPath */
  readonly memoryRoot?: string;
  /** process.platform: file modes mean nothing on Windows. @default process.platform */
  readonly platform?: NodeJS.Platform;
}

export interface DoctorReport {
  /** False when any check failed. */
  readonly ok: boolean;
  readonly checks: readonly HealthCheck[];
}

export function checkNode(version: string): HealthCheck {
  const major = Number(version.split('.')[0]);
  return major >= MIN_NODE_MAJOR
    ? healthCheck('node', 'ok', `Node ${version}`)
    : healthCheck(
        'node',
        'fail',
        `Node ${version}; Limbic needs ${MIN_NODE_MAJOR} or newer`,
        `install Node ${MIN_NODE_MAJOR} or newer (https://nodejs.org, or nvm install ${MIN_NODE_MAJOR}), then npm ci`,
      );
}

const gb = (bytes: number): string => (bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(1)} GB` : `${(bytes / 2 ** 20).toFixed(0)} MB`);

/** Free space on the disk that holds (or will hold) the database. */
export function checkDisk(dbPath: string): HealthCheck {
  let dir = dirname(dbPath);
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  let free: number;
  try {
    const stats = statfsSync(dir);
    free = stats.bavail * stats.bsize;
  } catch (error) {
    return healthCheck('disk', 'warn', `cannot read the free space of ${dir}: ${(error as Error).message}`, 'check the disk with df -h');
  }
  const detail = `${gb(free)} free on the disk holding ${dir}`;
  const fix = `free some space there, or keep the database on another disk with --db (LIMBIC_DB)`;
  if (free < DISK_FAIL_BYTES) return healthCheck('disk', 'fail', `${detail}: too little for the database to grow`, fix);
  if (free < DISK_WARN_BYTES) return healthCheck('disk', 'warn', `${detail}: an import or re-embedding may run out`, fix);
  return healthCheck('disk', 'ok', detail);
}

/** Permission bits that let other users in: group and others, any of read, write, enter. */
const SHARED_BITS = 0o077;

/**
 * Whether the memory's files (the database with its -wal, -shm and side files, the token file, every
 * namespace) and its namespaces folder are its owner's alone (issue 35). Limbic makes them so; an
 * older one made them world-readable (0644, folders 0755), which is left as it was and reported here
 * with the chmod that fixes it. Undefined on Windows, where access is not a mode.
 */
export function checkPrivacy(root: string, platform: NodeJS.Platform = process.platform): HealthCheck | undefined {
  if (platform === 'win32') return undefined;
  const shared = (path: string): boolean => {
    try {
      return (statSync(path).mode & SHARED_BITS) !== 0;
    } catch {
      return false; // gone meanwhile, or not ours to read: nothing to tell
    }
  };
  const listed = (folder: string): string[] => {
    try {
      return readdirSync(folder);
    } catch {
      return [];
    }
  };
  const files = [basename(root), basename(tokenFilePath(root))].flatMap((name) =>
    listed(dirname(root))
      .filter((entry) => entry === name || entry.startsWith(`${name}-`) || entry.startsWith(`${name}.`))
      .map((entry) => join(dirname(root), entry)),
  );
  const namespaces = dirname(namespaceDbPath(root, 'namespace'));
  const sharedFiles = [...new Set(files)].filter(shared);
  const sharedNamespaces = existsSync(namespaces) && [namespaces, ...listed(namespaces).map((e) => join(namespaces, e))].some(shared);
  if (sharedFiles.length === 0 && !sharedNamespaces) {
    return healthCheck('privacy', 'ok', "the memory's files can be read by their owner only");
  }
  const named = [...sharedFiles, ...(sharedNamespaces ? [`${namespaces}/`] : [])];
  const shown = named.length > 4 ? `${named.slice(0, 4).join(', ')} and ${named.length - 4} more` : named.join(', ');
  const fix = [
    ...(sharedFiles.length > 0 ? [`chmod go-rwx ${sharedFiles.map((f) => JSON.stringify(f)).join(' ')}`] : []),
    ...(sharedNamespaces ? [`chmod -R go-rwx ${JSON.stringify(namespaces)}`] : []),
  ].join(' && ');
  return healthCheck(
    'privacy',
    'warn',
    `other users of this machine can read the memory (made by an older Limbic, or copied in): ${shown}`,
    `${fix} (owner-only, as Limbic makes them now)`,
  );
}

export async function runDoctor(probes: DoctorProbes): Promise<DoctorReport> {
  const checks: HealthCheck[] = [checkNode(probes.nodeVersion)];
  checks.push(...(await probes.runtime()));
  const model = probes.model();
  checks.push(model.check);
  if (probes.modelRuntime !== undefined) checks.push(await probes.modelRuntime());
  checks.push(...(await probes.database(model.modelId)));
  const privacy = checkPrivacy(probes.memoryRoot ?? probes.dbPath, probes.platform);
  if (privacy !== undefined) checks.push(privacy);
  checks.push(checkDisk(probes.dbPath));
  return { ok: checks.every((c) => c.status !== 'fail'), checks };
}

/** The report for a terminal: status, part, detail, and the fix under each problem. */
export function formatReport(report: DoctorReport): string {
  const width = Math.max(...report.checks.map((c) => c.name.length));
  const lines = report.checks.flatMap((c) => {
    const line = `${c.status.padEnd(4)}  ${c.name.padEnd(width)}  ${c.detail}`;
    return c.fix === undefined ? [line] : [line, `${' '.repeat(width + 8)}fix: ${c.fix}`];
  });
  const failed = report.checks.filter((c) => c.status === 'fail').length;
  const warned = report.checks.filter((c) => c.status === 'warn').length;
  const summary =
    failed > 0
      ? `${failed} problem${failed === 1 ? '' : 's'} to fix${warned > 0 ? `, ${warned} warning${warned === 1 ? '' : 's'}` : ''}.`
      : warned > 0
        ? `Everything works; ${warned} warning${warned === 1 ? '' : 's'}.`
        : 'Everything works.';
  return `${lines.join('\n')}\n\n${summary}\n`;
}
