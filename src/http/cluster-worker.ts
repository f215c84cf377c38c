/**
 * The worker's side of `serve --http --workers N` (cluster-primary.ts holds the other): the gates
 * that ask the primary for a request's place, and the relay of writes to and from the other
 * workers, both over the IPC channel node:cluster opened to the primary.
 *
 * A place costs one round trip to the primary (two small JSON messages) before the request is
 * read, and a one-way message when it ends: measured in bench/results/http-workers-2026-11-28.md.
 * When the channel closes (the primary is gone, killed even), every request still waiting for an
 * answer is refused with 503, and so is every later one: the primary held the bounds.
 */
import type { Admission, Gate } from './request-gate.js';
import type { ChangeRelay } from './listen-streams.js';
import type { WrongCodeBound } from './oauth/rate-limit.js';
import type { SearchRelay } from './namespaces.js';
import { asEntityId } from '../core/types.js';
import type { RingNews } from '../service/refinding.js';
import { isClusterMessage, type GateKind, type PrimaryMessage, type RingMessage, type WorkerMessage } from './cluster-messages.js';

/** The IPC channel to the primary: `process` in a worker; a fake pair in unit tests. */
export interface PrimaryChannel {
  send(message: WorkerMessage): void;
  onMessage(listener: (message: unknown) => void): void;
  onDisconnect(listener: () => void): void;
}

/** `process` as the channel, in a process node:cluster (or child_process.fork) started. */
export function processChannel(): PrimaryChannel {
  return {
    send: (message) => {
      if (process.connected) process.send?.(message);
    },
    onMessage: (listener) => void process.on('message', listener),
    onDisconnect: (listener) => void process.once('disconnect', listener),
  };
}

const GONE: Admission = {
  ok: false,
  status: 503,
  message: 'This server is stopping (its primary process is gone) and runs nothing new; nothing was done. Retry shortly.',
  retryAfterSeconds: 5,
};

/** A gate whose places are the primary's: `acquire` asks it, `release` tells it. */
class RemoteGate implements Gate {
  private readonly waiting = new Map<number, (admission: Admission) => void>();

  constructor(
    private readonly kind: GateKind,
    private readonly link: WorkerLink,
  ) {}

  queued(): number {
    return this.waiting.size;
  }

  acquire(tokenId: string, namespace: string, abandoned?: AbortSignal): Promise<Admission> {
    if (this.link.gone) return Promise.resolve(GONE);
    const id = this.link.nextId();
    return new Promise<Admission>((resolve) => {
      const onAbort = (): void => this.link.send({ t: 'abandon', gate: this.kind, id });
      this.waiting.set(id, (admission) => {
        abandoned?.removeEventListener('abort', onAbort);
        resolve(admission);
      });
      abandoned?.addEventListener('abort', onAbort, { once: true });
      this.link.send({ t: 'acquire', gate: this.kind, id, tokenId, namespace });
    });
  }

  /** The primary's answer to request `id`. */
  answer(m: Extract<PrimaryMessage, { t: 'admission' }>): void {
    const settle = this.waiting.get(m.id);
    if (settle === undefined) return;
    this.waiting.delete(m.id);
    if (!m.ok) {
      settle({
        ok: false,
        status: m.status ?? 503,
        message: m.message ?? 'Refused by the server.',
        retryAfterSeconds: m.retryAfterSeconds ?? 1,
      });
      return;
    }
    let released = false;
    settle({
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        this.link.send({ t: 'release', gate: this.kind, id: m.id });
      },
    });
  }

  /** The channel closed: whatever waits is refused. */
  fail(): void {
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const settle of waiting) settle(GONE);
  }
}

/**
 * A worker's link to its primary: the two gates http-server.ts takes places in, and the relay of
 * writes (HttpServerOptions.worker).
 */
export class WorkerLink {
  readonly gates: { readonly requests: Gate; readonly heavy: Gate };
  readonly relay: ChangeRelay;
  /** Each namespace's searches and pairings (re-finding), to and from the other workers' rings. */
  readonly searches: SearchRelay;
  /** The consent page's count of wrong approval codes: the primary's. */
  readonly wrongCodes: WrongCodeBound;
  private readonly asked = new Map<number, (seconds: number | undefined) => void>();
  private readonly remote: Record<GateKind, RemoteGate>;
  private readonly listeners: ((namespace: string, uri: string) => void)[] = [];
  private readonly searchListeners: ((namespace: string, news: RingNews) => void)[] = [];
  private ids = 0;
  private closed = false;

  constructor(private readonly channel: PrimaryChannel) {
    this.remote = { requests: new RemoteGate('requests', this), heavy: new RemoteGate('heavy', this) };
    this.gates = this.remote;
    this.relay = {
      publish: (namespace, uri) => this.send({ t: 'change', namespace, uri }),
      subscribe: (listener) => void this.listeners.push(listener),
    };
    this.searches = {
      publish: (namespace, news) => this.send(ringMessage(namespace, news)),
      subscribe: (listener) => void this.searchListeners.push(listener),
    };
    this.wrongCodes = {
      refusal: (address, now) =>
        // With the primary gone nothing is served anyway; the page says to wait.
        this.closed
          ? 5
          : new Promise<number | undefined>((resolve) => {
              const id = this.nextId();
              this.asked.set(id, resolve);
              this.send({ t: 'codes', id, address, now });
            }),
      wrong: (address, now) => this.send({ t: 'wrong-code', address, now }),
    };
    channel.onMessage((m) => {
      if (!isClusterMessage(m)) return;
      if (m.t === 'admission') this.remote[m.gate].answer(m);
      else if (m.t === 'change') for (const listener of this.listeners) listener(m.namespace, m.uri);
      else if (m.t === 'search' || m.t === 'paired') {
        const news = ringNews(m);
        for (const listener of this.searchListeners) listener(m.namespace, news);
      } else if (m.t === 'wait') {
        this.asked.get(m.id)?.(m.seconds);
        this.asked.delete(m.id);
      }
    });
    channel.onDisconnect(() => {
      this.closed = true;
      this.remote.requests.fail();
      this.remote.heavy.fail();
      for (const settle of this.asked.values()) settle(5);
      this.asked.clear();
    });
  }

  /** Whether the channel to the primary closed. */
  get gone(): boolean {
    return this.closed;
  }

  nextId(): number {
    return ++this.ids;
  }

  send(message: WorkerMessage): void {
    if (!this.closed) this.channel.send(message);
  }
}

/** A ring's news as the IPC channel carries it: plain JSON, the query vector's float32 bytes in base64. */
export function ringMessage(namespace: string, news: RingNews): RingMessage {
  if (news.kind === 'paired') return { t: 'paired', namespace, key: news.key, ids: [...news.ids] };
  const { key, at, model, vector, listed } = news.search;
  const bytes = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
  return { t: 'search', namespace, key, at, model, vector: bytes.toString('base64'), listed: [...listed] };
}

/** The news a RingMessage carries (ringMessage's inverse). */
export function ringNews(m: RingMessage): RingNews {
  if (m.t === 'paired') return { kind: 'paired', key: m.key, ids: m.ids.map(asEntityId) };
  const bytes = Buffer.from(m.vector, 'base64');
  // Copied into a buffer of its own: base64 decoding may hand back a view of a shared pool.
  const vector = new Float32Array(bytes.byteLength / 4);
  new Uint8Array(vector.buffer).set(bytes);
  return { kind: 'search', search: { key: m.key, at: m.at, model: m.model, vector, listed: m.listed.map(asEntityId) } };
}
