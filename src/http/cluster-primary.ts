/**
 * The primary of `serve --http --workers N` (N > 1). It serves no request itself: node:cluster
 * forks N workers that run the same command, each a whole `serve --http` with its own namespaces,
 * memories and model worker, all accepting on one port (the primary accepts each connection and
 * hands it to the next worker in turn, node:cluster's round-robin). Every worker opens the same
 * SQLite files (WAL; each in-memory index replays the others' writes from its log before it
 * answers) or PostgreSQL database, and checks every request's token against the store, so a
 * revocation reaches each of them at its next request.
 *
 * What must hold for the whole server and not per worker lives here:
 * - the request bounds (per token, per namespace, in all; and the heavy calls'): the primary holds
 *   the two RequestGates, and a worker asks for each request's place over IPC (cluster-worker.ts);
 * - change notifications: a write on one worker is relayed to every other, whose listen streams of
 *   that namespace hear it;
 * - the searches a use may answer (re-finding pairs): each worker's searches and pairings of a
 *   namespace are relayed to every other's ring of it (service/refinding.ts).
 *
 * A worker that exits while the server runs is replaced, and the line says so; its places are
 * given back. On stop every worker drains (its requests under way finish, as one process's
 * shutdown does) while the gates keep answering, and the primary exits when the last one has. A
 * worker whose primary is gone (killed) sees its IPC channel close and stops too: no orphans.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from '../core/logger.js';
import { ERROR_CODES, MemoryError, type ErrorCode } from '../core/errors.js';
import { isClusterMessage, type GateKind, type PrimaryMessage, type WorkerMessage } from './cluster-messages.js';
import type { HttpLimits } from './http-server.js';
import { RequestGate, heavyBounds } from './request-gate.js';
import { WrongCodeLimiter } from './oauth/rate-limit.js';

/** A place granted or awaited, by worker and request id. */
interface Held {
  readonly abandon: AbortController;
  release?: () => void;
}

/**
 * The server's gates, held by the primary and asked by its workers: one answer per `acquire`,
 * places counted per worker so a worker that dies gives its own back.
 */
export class GateHost {
  private readonly gates: Record<GateKind, RequestGate>;
  private readonly held = new Map<number, Map<string, Held>>();

  constructor(limits: HttpLimits) {
    this.gates = { requests: new RequestGate(limits), heavy: new RequestGate(heavyBounds(limits)) };
  }

  /** Requests running now in all workers (the server's whole gate). */
  inFlight(): number {
    return this.gates.requests.inFlight();
  }

  /** Handles worker `worker`'s gate message; `reply` sends the answer back to it. */
  handle(
    worker: number,
    m: Extract<WorkerMessage, { t: 'acquire' | 'abandon' | 'release' }>,
    reply: (answer: PrimaryMessage) => void,
  ): void {
    const mine = this.held.get(worker) ?? new Map<string, Held>();
    this.held.set(worker, mine);
    const key = `${m.gate}:${m.id}`;
    switch (m.t) {
      case 'acquire': {
        const entry: Held = { abandon: new AbortController() };
        mine.set(key, entry);
        void this.gates[m.gate].acquire(m.tokenId, m.namespace, entry.abandon.signal).then((admission) => {
          if (admission.ok) {
            // The worker died while this waited: the place goes back at once.
            if (mine.get(key) !== entry) return admission.release();
            entry.release = admission.release;
            reply({ t: 'admission', gate: m.gate, id: m.id, ok: true });
          } else {
            mine.delete(key);
            const { status, message, retryAfterSeconds } = admission;
            reply({ t: 'admission', gate: m.gate, id: m.id, ok: false, status, message, retryAfterSeconds });
          }
        });
        return;
      }
      case 'abandon':
        mine.get(key)?.abandon.abort();
        return;
      case 'release': {
        const entry = mine.get(key);
        mine.delete(key);
        entry?.release?.();
        return;
      }
      default: {
        const _exhaustive: never = m;
        return _exhaustive;
      }
    }
  }

  /** Worker `worker` is gone: its places are given back, its waiting requests leave the queue. */
  forget(worker: number): void {
    const mine = this.held.get(worker);
    this.held.delete(worker);
    const entries = [...(mine?.values() ?? [])];
    // Emptied first: a place granted after this (its answer was on its way) is seen as orphaned and given back.
    mine?.clear();
    for (const entry of entries) {
      entry.abandon.abort();
      entry.release?.();
    }
  }
}

export interface PrimaryOptions {
  readonly workers: number;
  readonly limits: HttpLimits;
  readonly logger: Logger;
  /** A replacement worker waits this long when the one it replaces lived less than a minute. @default 1000 */
  readonly restartDelayMs?: number;
}

export interface RunningPrimary {
  /** Where the workers accept requests. */
  readonly url: string;
  /** The workers' process ids now. */
  pids(): number[];
  /** Every worker drains and exits; resolves when the last one has. */
  stop(): Promise<void>;
}

/**
 * Forks the workers and resolves once every one accepts requests; rejects with the first worker's
 * reason when one cannot start (a port in use, a database it cannot open), having stopped the rest.
 */
export function startPrimary(o: PrimaryOptions): Promise<RunningPrimary> {
  const host = new GateHost(o.limits);
  // The consent page's bounds on wrong approval codes, for the whole server (oauth/rate-limit.ts).
  const wrongCodes = new WrongCodeLimiter();
  const workers = new Set<Worker>();
  let stopping = false;
  let url: string | undefined;
  const restartDelayMs = o.restartDelayMs ?? 1_000;

  const broadcast = (from: Worker, m: PrimaryMessage): void => {
    for (const w of workers) if (w !== from && w.isConnected()) w.send(m);
  };

  return new Promise<RunningPrimary>((resolve, reject) => {
    let listening = 0;
    let failed = false;

    const fork = (): Worker => {
      const worker = cluster.fork();
      const born = Date.now();
      let up = false;
      workers.add(worker);
      worker.on('message', (m: unknown) => {
        if (!isClusterMessage(m)) return;
        switch (m.t) {
          case 'acquire':
          case 'abandon':
          case 'release':
            host.handle(worker.id, m, (answer) => {
              if (worker.isConnected()) worker.send(answer);
            });
            return;
          case 'change':
          case 'search':
          case 'paired':
            broadcast(worker, m);
            return;
          case 'codes': {
            const seconds = wrongCodes.refusal(m.address, m.now);
            if (worker.isConnected()) worker.send({ t: 'wait', id: m.id, ...(seconds === undefined ? {} : { seconds }) });
            return;
          }
          case 'wrong-code':
            wrongCodes.wrong(m.address, m.now);
            return;
          case 'listening':
            up = true;
            url ??= m.url;
            if (running !== undefined) o.logger.info(`worker ${worker.id} (pid ${worker.process.pid ?? '?'}) is serving`);
            else if (++listening === o.workers) started();
            return;
          case 'failed':
            if (running === undefined) startFailed(m.message, m.code);
            else o.logger.warn(`worker ${worker.id} could not start: ${m.message}`);
            return;
          default:
            return;
        }
      });
      // A worker must not hang the primary on a broken channel (EPIPE while it exits).
      worker.on('error', (error) => o.logger.warn(`worker ${worker.id}: IPC error`, error));
      worker.on('exit', (code, signal) => {
        workers.delete(worker);
        host.forget(worker.id);
        if (stopping) return;
        if (running === undefined) {
          if (!up) startFailed(`a worker exited before it accepted requests (${signal ?? `exit code ${code}`}); the lines above say why`);
          return;
        }
        const lived = Date.now() - born;
        o.logger.warn(
          `worker ${worker.id} (pid ${worker.process.pid ?? '?'}) exited (${signal ?? `exit code ${code}`}) after ${Math.round(lived / 1000)} s: starting another`,
        );
        // One that died young waits a little, so a worker that cannot run does not spin the machine.
        setTimeout(
          () => {
            if (!stopping) fork();
          },
          lived < 60_000 ? restartDelayMs : 0,
        ).unref();
      });
      return worker;
    };

    let running: RunningPrimary | undefined;

    const stop = async (): Promise<void> => {
      stopping = true;
      const left = [...workers];
      await Promise.all(
        left.map(
          (w) =>
            new Promise<void>((done) => {
              if (w.process.exitCode !== null || w.process.signalCode !== null) return done();
              w.once('exit', () => done());
              w.process.kill('SIGTERM');
              // A worker that has not finished draining well after its own bound is ended.
              setTimeout(() => w.process.kill('SIGKILL'), o.limits.drainMs + 10_000).unref();
            }),
        ),
      );
    };

    const startFailed = (message: string, code?: string): void => {
      if (failed) return;
      failed = true;
      void stop().then(() => {
        const known = code !== undefined && (Object.values(ERROR_CODES) as string[]).includes(code);
        reject(known ? new MemoryError(code as ErrorCode, message) : new Error(message));
      });
    };

    const started = (): void => {
      if (failed || url === undefined) return;
      running = {
        url,
        pids: () => [...workers].map((w) => w.process.pid ?? 0),
        stop,
      };
      resolve(running);
    };

    for (let i = 0; i < o.workers; i++) fork();
  });
}
