/**
 * The rules of request-gate.ts on their own (issue 26): who runs next, who is refused. (serve --http
 * keeps no sessions since issue 28, so there is no session table to bound.)
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, httpLimitsFromEnv } from '../../src/cli/serve-http.js';
import { RequestGate, type Admission, type RequestBounds } from '../../src/http/request-gate.js';

const gateOf = (bounds: Partial<RequestBounds>): RequestGate =>
  new RequestGate({
    maxInFlight: 2,
    maxInFlightPerNamespace: 2,
    maxInFlightPerToken: 1,
    maxQueuedPerToken: 2,
    queueWaitMs: 60_000,
    ...bounds,
  });

const released = (a: Admission): (() => void) => {
  if (!a.ok) throw new Error(`refused: ${a.message}`);
  return a.release;
};

describe('RequestGate', () => {
  it('runs within every bound, queues past one, and refuses a token whose queue is full with 429', async () => {
    const gate = gateOf({});
    const first = released(await gate.acquire('a', 'ns'));
    const waiting = [gate.acquire('a', 'ns'), gate.acquire('a', 'ns')];
    expect(gate.queued()).toBe(2);
    const refused = await gate.acquire('a', 'ns');
    expect(refused).toMatchObject({ ok: false, status: 429, retryAfterSeconds: 1 });
    // Another token is not held up by a's queue.
    const other = released(await gate.acquire('b', 'ns'));
    first();
    released(await waiting[0]!)();
    released(await waiting[1]!)();
    other();
    expect(gate.inFlight()).toBe(0);
  });

  it('gives a freed place to the least busy token, then the one served longest ago, not the oldest request', async () => {
    const gate = gateOf({ maxQueuedPerToken: 5 });
    const a = released(await gate.acquire('a', 'ns'));
    const b = released(await gate.acquire('b', 'ns'));
    const order: string[] = [];
    const aQueue = [1, 2, 3].map(() => gate.acquire('a', 'ns').then((x) => (order.push('a'), x)));
    const cWaits = gate.acquire('c', 'ns').then((x) => (order.push('c'), x));
    a();
    const c = released(await cWaits);
    expect(order).toEqual(['c']);
    b();
    c();
    for (const waiting of aQueue) released(await waiting)();
    expect(order).toEqual(['c', 'a', 'a', 'a']);
  });

  it("requests arriving together start one per turn, fairest first: another namespace's request arriving behind a flood starts second, not after the flood (issue 35)", async () => {
    const gate = gateOf({ maxInFlight: 16, maxInFlightPerNamespace: 8, maxInFlightPerToken: 4, maxQueuedPerToken: 64 });
    const order: string[] = [];
    const take = (token: string, namespace: string) =>
      gate.acquire(token, namespace).then((a) => {
        order.push(token);
        return a;
      });
    // 8 of the flooder's requests read in one turn of the event loop, then one of another namespace.
    const flood = Array.from({ length: 8 }, () => take('flooder', 'default'));
    const other = take('other', 'other');
    released(await other)();
    expect(order).toEqual(['flooder', 'other']);
    // The flooder's excess waits its turn (4 at once), and nothing of its is refused.
    await expect.poll(() => gate.inFlight()).toBe(4);
    expect(gate.queued()).toBe(4);
    for (const waiting of flood) released(await waiting)();
    expect(gate.inFlight()).toBe(0);
  });

  it('a token refused only past its places and its queue, whatever arrives at once', async () => {
    const gate = gateOf({ maxInFlight: 8, maxInFlightPerNamespace: 8, maxInFlightPerToken: 2, maxQueuedPerToken: 3 });
    const arriving = Array.from({ length: 6 }, () => gate.acquire('a', 'ns'));
    const answers = await Promise.all(
      arriving.slice(0, 5).map((p) => Promise.race([p, new Promise((r) => setTimeout(() => r('waiting'), 50))])),
    );
    expect(answers.filter((a) => a === 'waiting')).toHaveLength(3);
    expect(await arriving[5]).toMatchObject({ ok: false, status: 429 });
    for (const a of answers) if (a !== 'waiting') released(a as Admission)();
    for (const p of arriving.slice(0, 5)) {
      const a = await p;
      if (a.ok) a.release();
    }
  });

  it('bounds a namespace: a token of another namespace still runs', async () => {
    const gate = gateOf({ maxInFlight: 3, maxInFlightPerNamespace: 1 });
    const a = released(await gate.acquire('a', 'one'));
    const b = gate.acquire('b', 'one');
    expect(gate.queued()).toBe(1);
    released(await gate.acquire('c', 'two'))();
    a();
    released(await b)();
  });

  it('a request that waits too long is refused: 429 behind its own token, 503 behind others; a client that leaves gives up its place', async () => {
    const gate = gateOf({ maxInFlight: 1, queueWaitMs: 5 });
    const a = released(await gate.acquire('a', 'ns'));
    expect(await gate.acquire('a', 'ns')).toMatchObject({ ok: false, status: 429 });
    expect(await gate.acquire('b', 'ns')).toMatchObject({ ok: false, status: 503 });
    const leaving = new AbortController();
    const left = gate.acquire('c', 'ns', leaving.signal);
    leaving.abort();
    expect(await left).toMatchObject({ ok: false });
    expect(gate.queued()).toBe(0);
    a();
  });
});

describe('httpLimitsFromEnv', () => {
  it('reads each bound from its variable, leaves the unset ones to the defaults, and refuses a value that is not a whole number', () => {
    expect(
      httpLimitsFromEnv({ LIMBIC_HTTP_MAX_IN_FLIGHT_PER_TOKEN: '2', LIMBIC_HTTP_MAX_IN_FLIGHT: ' 50 ', LIMBIC_HTTP_QUEUE_WAIT_MS: '' }),
    ).toEqual({
      maxInFlightPerToken: 2,
      maxInFlight: 50,
    });
    expect(() => httpLimitsFromEnv({ LIMBIC_HTTP_MAX_QUEUED_PER_TOKEN: '0' })).toThrow(
      /LIMBIC_HTTP_MAX_QUEUED_PER_TOKEN=0 .*default \(64\)/,
    );
    expect(() => httpLimitsFromEnv({ LIMBIC_HTTP_MAX_IN_FLIGHT: 'many' })).toThrow(/whole number/);
    // Every bound has a setting, and the defaults leave other tokens room beside any one token.
    expect(DEFAULT_LIMITS.maxInFlightPerToken).toBeLessThan(DEFAULT_LIMITS.maxInFlightPerNamespace);
    expect(DEFAULT_LIMITS.maxInFlightPerNamespace).toBeLessThan(DEFAULT_LIMITS.maxInFlight);
  });
});
