/**
 * What re-finding across `serve --http --workers N` costs per search: each search a worker keeps
 * for re-finding (one that ran the semantic leg) is told to the other workers' rings through the
 * primary (service/refinding.ts, cluster-worker.ts ringMessage): the query vector's float32 bytes
 * in base64 and the ids the page listed, as JSON over node:cluster's IPC pipes. This forks real
 * workers: worker 1 keeps --searches searches in its ring (each announced as the server does), the
 * primary relays each to the others, and each of them hears it into its own ring; the CPU time of
 * each process (user + system, all its threads) is divided by the searches.
 *
 * Beside it, the other design, timed the same way: the ring kept in the store, one SQLite write
 * transaction per search (the row, then the ring cut to its newest RECENT_SEARCHES) in a WAL file
 * with Limbic's settings, alone (no other writer waiting, no PostgreSQL round trip: its floor).
 *
 *   npx tsx bench/cluster-refind.ts [--workers 2] [--searches 5000] [--dims 384] [--listed 10]
 */
import cluster from 'node:cluster';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { WorkerLink, processChannel } from '../src/http/cluster-worker.js';
import { isClusterMessage } from '../src/http/cluster-messages.js';
import type { EntityId } from '../src/core/types.js';
import { RECENT_SEARCHES, RecentSearches } from '../src/service/refinding.js';

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
};
const WORKERS = arg('workers', 2);
const SEARCHES = arg('searches', 5_000);
const DIMS = arg('dims', 384);
const LISTED = arg('listed', 10);

const cpuMs = (since: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

interface Result {
  readonly worker: number;
  readonly role: 'searches' | 'hears';
  readonly cpuUsPerSearch: number;
  readonly wallMs: number;
}

/** CPU µs and wall µs per search of the ring kept in an SQLite file instead: a write transaction each. */
function storeRing(): { cpuUsPerSearch: number; wallUsPerSearch: number } {
  const dir = mkdtempSync(join(tmpdir(), 'limbic-refind-ring-'));
  const db = new Database(join(dir, 'ring.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE recent_searches (id INTEGER PRIMARY KEY, at INTEGER, model TEXT, vector BLOB, listed TEXT)');
  const insert = db.prepare('INSERT INTO recent_searches (at, model, vector, listed) VALUES (?, ?, ?, ?)');
  const cut = db.prepare('DELETE FROM recent_searches WHERE id <= (SELECT max(id) FROM recent_searches) - ?');
  const keep = db.transaction((vector: Buffer, listed: string) => {
    insert.run(Date.now(), 'bench', vector, listed);
    cut.run(RECENT_SEARCHES);
  });
  const vector = Buffer.from(Float32Array.from({ length: DIMS }, () => Math.random() - 0.5).buffer);
  const listed = JSON.stringify(Array.from({ length: LISTED }, (_, i) => i + 1));
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < SEARCHES; i++) keep(vector, listed);
  const wall = performance.now() - start;
  const used = cpuMs(cpu);
  db.close();
  rmSync(dir, { recursive: true, force: true });
  return { cpuUsPerSearch: Math.round((used * 1000) / SEARCHES), wallUsPerSearch: Math.round((wall * 1000) / SEARCHES) };
}

if (cluster.isPrimary) {
  const inStore = storeRing();
  const results: Result[] = [];
  const workers = Array.from({ length: WORKERS }, () => cluster.fork());
  let ready = 0;
  let relayCpu: NodeJS.CpuUsage | undefined;
  let relayMs = 0;
  await new Promise<void>((done) => {
    for (const worker of workers)
      worker.on('message', (m: unknown) => {
        if (isClusterMessage(m) && (m.t === 'search' || m.t === 'paired')) {
          relayCpu ??= process.cpuUsage();
          // As cluster-primary.ts does: to every other worker.
          for (const other of workers) if (other !== worker) other.send(m);
          return;
        }
        const message = m as { ready?: true; result?: Result };
        if (message.ready === true && ++ready === WORKERS) workers[0]?.send({ go: true });
        if (message.result !== undefined) {
          results.push(message.result);
          if (message.result.role === 'hears' && relayCpu !== undefined && relayMs === 0) relayMs = cpuMs(relayCpu);
          if (results.length === WORKERS) done();
        }
      });
  });
  for (const w of workers) w.kill();
  console.log(
    JSON.stringify(
      {
        command: `npx tsx bench/cluster-refind.ts --workers ${WORKERS} --searches ${SEARCHES} --dims ${DIMS} --listed ${LISTED}`,
        node: process.version,
        primaryCpuUsPerSearch: Math.round((relayMs * 1000) / SEARCHES),
        workers: results,
        storeRing: inStore,
      },
      null,
      2,
    ),
  );
} else {
  const id = cluster.worker?.id ?? 0;
  const link = new WorkerLink(processChannel());
  const ring = new RecentSearches(undefined, undefined, (news) => link.searches.publish('default', news));
  let heard = 0;
  let since: NodeJS.CpuUsage | undefined;
  let started = 0;
  link.searches.subscribe((_namespace, news) => {
    if (since === undefined) {
      since = process.cpuUsage();
      started = performance.now();
    }
    ring.heard(news);
    if (++heard === SEARCHES) {
      const result: Result = {
        worker: id,
        role: 'hears',
        cpuUsPerSearch: Math.round((cpuMs(since) * 1000) / SEARCHES),
        wallMs: Math.round(performance.now() - started),
      };
      process.send?.({ result });
    }
  });
  process.on('message', (m: unknown) => {
    if ((m as { go?: true }).go !== true) return;
    const vectors = Array.from({ length: 64 }, () => Float32Array.from({ length: DIMS }, () => Math.random() - 0.5));
    const listed = Array.from({ length: LISTED }, (_, i) => (i + 1) as EntityId);
    const cpu = process.cpuUsage();
    const start = performance.now();
    for (let i = 0; i < SEARCHES; i++) ring.note(Date.now(), { vector: vectors[i % vectors.length]!, model: 'bench' }, listed);
    const result: Result = {
      worker: id,
      role: 'searches',
      cpuUsPerSearch: Math.round((cpuMs(cpu) * 1000) / SEARCHES),
      wallMs: Math.round(performance.now() - start),
    };
    process.send?.({ result });
  });
  process.send?.({ ready: true });
}
