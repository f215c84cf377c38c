/**
 * The two ends of `serve --http --workers N`'s IPC, each against the other over an in-process pair
 * of channels (workers.test.ts runs them as real processes): the primary's gates hand out the
 * server's places, a dead worker's places come back, and a worker whose primary is gone refuses
 * what waits instead of hanging it.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/cli/http-limits.js';
import { workerCount, modelThreads } from '../../src/cli/serve-http.js';
import { GateHost } from '../../src/http/cluster-primary.js';
import type { PrimaryMessage, RingMessage, WorkerMessage } from '../../src/http/cluster-messages.js';
import { WorkerLink, ringMessage, ringNews, type PrimaryChannel } from '../../src/http/cluster-worker.js';
import type { EntityId } from '../../src/core/types.js';
import { RecentSearches, type RingNews } from '../../src/service/refinding.js';
import type { Admission } from '../../src/http/request-gate.js';

/** Worker `id`'s link to `host`, over a pair of in-process channels (messages cross on a later turn, as IPC does). */
function linked(host: GateHost, id: number): { link: WorkerLink; disconnect: () => void } {
  let toWorker: ((m: unknown) => void) | undefined;
  let gone: (() => void) | undefined;
  const channel: PrimaryChannel = {
    send: (m: WorkerMessage) => {
      setImmediate(() => {
        if (m.t === 'acquire' || m.t === 'abandon' || m.t === 'release')
          host.handle(id, m, (answer: PrimaryMessage) => setImmediate(() => toWorker?.(answer)));
      });
    },
    onMessage: (listener) => (toWorker = listener),
    onDisconnect: (listener) => (gone = listener),
  };
  return { link: new WorkerLink(channel), disconnect: () => gone?.() };
}

const settled = async (p: Promise<Admission>): Promise<Admission | 'waiting'> =>
  Promise.race([p, new Promise<'waiting'>((r) => setTimeout(() => r('waiting'), 50))]);

describe('serve --http --workers: the primary holds the gates', () => {
  const limits = { ...DEFAULT_LIMITS, maxInFlightPerToken: 1, maxQueuedPerToken: 1, queueWaitMs: 60_000 };

  it("a token's place taken through one worker is not there for the same token through another", async () => {
    const host = new GateHost(limits);
    const a = linked(host, 1);
    const b = linked(host, 2);
    const first = await a.link.gates.requests.acquire('t', 'default');
    expect(first.ok).toBe(true);
    const second = b.link.gates.requests.acquire('t', 'default');
    expect(await settled(second)).toBe('waiting');
    const third = await b.link.gates.requests.acquire('t', 'default');
    expect(third).toMatchObject({ ok: false, status: 429 });
    if (first.ok) first.release();
    expect((await second).ok).toBe(true);
    expect(host.inFlight()).toBe(1);
  });

  it('a worker that dies gives its places back, and its waiting requests leave the queue', async () => {
    const host = new GateHost(limits);
    const a = linked(host, 1);
    const b = linked(host, 2);
    expect((await a.link.gates.requests.acquire('t', 'default')).ok).toBe(true);
    void a.link.gates.requests.acquire('t', 'default');
    await new Promise((r) => setTimeout(r, 20));
    // Worker 1 holds the place and the queue: worker 2 is refused at once.
    expect(await b.link.gates.requests.acquire('t', 'default')).toMatchObject({ ok: false, status: 429 });
    host.forget(1);
    expect(host.inFlight()).toBe(0);
    expect((await b.link.gates.requests.acquire('t', 'default')).ok).toBe(true);
  });

  it('a worker whose primary is gone refuses what waits, and every later request, with 503', async () => {
    const host = new GateHost(limits);
    const a = linked(host, 1);
    expect((await a.link.gates.requests.acquire('t', 'default')).ok).toBe(true);
    const waiting = a.link.gates.requests.acquire('t', 'default');
    await new Promise((r) => setTimeout(r, 20));
    a.disconnect();
    expect(await waiting).toMatchObject({ ok: false, status: 503, message: expect.stringMatching(/primary process is gone/) });
    expect(await a.link.gates.heavy.acquire('u', 'default')).toMatchObject({ ok: false, status: 503 });
    expect(await a.link.wrongCodes.refusal('127.0.0.1', Date.now())).toBe(5);
  });
});

describe('serve --http --workers: the count', () => {
  it('defaults to the cores, takes a whole number from 1, and refuses anything else saying what to give', () => {
    expect(workerCount(undefined, 8)).toBe(1);
    expect(workerCount('', 2)).toBe(1);
    expect(workerCount(' 3 ', 2)).toBe(3);
    for (const bad of ['0', '-1', '1.5', 'two', '257'])
      expect(() => workerCount(bad, 2)).toThrow(/is not a number of processes: give a whole number from 1 to 256/);
  });

  it("gives each worker's model an equal share of the cores, and one process every core but the one answering", () => {
    expect(modelThreads(1, 8)).toBe(7);
    expect(modelThreads(1, 1)).toBe(1);
    expect(modelThreads(2, 2)).toBe(1);
    expect(modelThreads(8, 8)).toBe(1);
    expect(modelThreads(2, 8)).toBe(4);
  });
});

describe("re-finding across workers: each ring hears the others' searches and pairings", () => {
  /** Two rings of one namespace, each telling the other through the IPC message as JSON (as the primary relays it). */
  const pair = (): [RecentSearches, RecentSearches] => {
    const rings: RecentSearches[] = [];
    const wire = (to: number) => (news: RingNews) =>
      rings[to]!.heard(ringNews(JSON.parse(JSON.stringify(ringMessage('default', news))) as RingMessage));
    rings.push(new RecentSearches(undefined, undefined, wire(1)), new RecentSearches(undefined, undefined, wire(0)));
    return [rings[0]!, rings[1]!];
  };
  const id = (n: number): EntityId => n as EntityId;
  const vector = Float32Array.from([0.1, -0.25, 1 / 3, 1e-7]);

  it("a use in one process pairs with another's search, its vector exact; a second use anywhere pairs nothing", () => {
    const [a, b] = pair();
    a.note(1_000, { vector, model: 'm' }, [id(1), id(2)]);
    const made = b.pairsFor([id(2), id(3)], 2_000);
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ entityId: 2, model: 'm', at: 2_000 });
    expect([...made[0]!.vector]).toEqual([...vector]);
    expect(a.pairsFor([id(2)], 3_000)).toEqual([]);
    expect(a.pairsFor([id(1)], 3_000)).toHaveLength(1);
    expect(b.pairsFor([id(1)], 3_000)).toEqual([]);
  });

  it('a search heard after a later one of its own is kept in time order: a use pairs with the newer search', () => {
    const [a, b] = pair();
    const newer = Float32Array.from([1, 0]);
    b.note(5_000, { vector: newer, model: 'm' }, [id(7)]);
    a.note(4_000, { vector: Float32Array.from([0, 1]), model: 'm' }, [id(7)]);
    expect([...b.pairsFor([id(7)], 6_000)[0]!.vector]).toEqual([...newer]);
  });
});
