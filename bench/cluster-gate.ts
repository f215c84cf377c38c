/**
 * What a request place costs a worker of `serve --http --workers N`: the primary holds the request
 * gate (cluster-primary.ts GateHost) and each worker asks it over node:cluster's IPC channel
 * (cluster-worker.ts WorkerLink), one round trip per request before its body is read, plus a
 * one-way release. This forks real workers and times acquire → admission → release against the
 * real gate: sequentially (the latency one request pays) and with many in flight from every worker
 * at once (what the primary's thread can hand out per second). Bounds are set high so nothing waits
 * for a place: only the IPC and the gate's bookkeeping are measured.
 *
 *   npx tsx bench/cluster-gate.ts [--workers 2] [--sequential 5000] [--concurrent 20000] [--in-flight 16]
 */
import cluster from 'node:cluster';
import { DEFAULT_LIMITS } from '../src/cli/http-limits.js';
import { GateHost } from '../src/http/cluster-primary.js';
import { WorkerLink, processChannel } from '../src/http/cluster-worker.js';
import { isClusterMessage } from '../src/http/cluster-messages.js';

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
};
const WORKERS = arg('workers', 2);
const SEQUENTIAL = arg('sequential', 5_000);
const CONCURRENT = arg('concurrent', 20_000);
const IN_FLIGHT = arg('in-flight', 16);

const quantile = (sorted: readonly number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

if (cluster.isPrimary) {
  const limits = { ...DEFAULT_LIMITS, maxInFlight: 1e6, maxInFlightPerNamespace: 1e6, maxInFlightPerToken: 1e6, maxQueuedPerToken: 1e6 };
  const host = new GateHost(limits);
  const results: unknown[] = [];
  await new Promise<void>((done) => {
    for (let i = 0; i < WORKERS; i++) {
      const worker = cluster.fork();
      worker.on('message', (m: unknown) => {
        if (isClusterMessage(m) && (m.t === 'acquire' || m.t === 'abandon' || m.t === 'release')) {
          host.handle(worker.id, m, (answer) => worker.send(answer));
        } else if (typeof m === 'object' && m !== null && 'result' in m) {
          results.push((m as { result: unknown }).result);
          worker.kill();
          if (results.length === WORKERS) done();
        }
      });
    }
  });
  console.log(
    JSON.stringify(
      {
        command: `npx tsx bench/cluster-gate.ts --workers ${WORKERS} --sequential ${SEQUENTIAL} --concurrent ${CONCURRENT} --in-flight ${IN_FLIGHT}`,
        node: process.version,
        workers: results,
      },
      null,
      2,
    ),
  );
} else {
  const link = new WorkerLink(processChannel());
  const gate = link.gates.requests;
  const token = `t${cluster.worker?.id ?? 0}`;
  // Sequential: the round trip one request waits for before its body is read.
  const rtt: number[] = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    const t0 = process.hrtime.bigint();
    const a = await gate.acquire(token, 'default');
    rtt.push(Number(process.hrtime.bigint() - t0) / 1e3);
    if (a.ok) a.release();
  }
  rtt.sort((a, b) => a - b);
  // Concurrent: IN_FLIGHT requests of this worker asking at once, every worker at the same time.
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next++ < CONCURRENT) {
        const a = await gate.acquire(token, 'default');
        if (a.ok) a.release();
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  process.send?.({
    result: {
      worker: cluster.worker?.id,
      sequential: { places: SEQUENTIAL, p50_us: +quantile(rtt, 0.5).toFixed(1), p99_us: +quantile(rtt, 0.99).toFixed(1) },
      concurrent: { places: CONCURRENT, inFlight: IN_FLIGHT, placesPerSecond: Math.round(CONCURRENT / seconds) },
    },
  });
}
