/**
 * The rules of request-gate.ts and session-table.ts on their own (issue 26), with a fake clock for
 * the sessions: who runs next, who is refused, whose session is given up.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, httpLimitsFromEnv } from '../../src/cli/serve-http.js';
import { RequestGate, type Admission, type RequestBounds } from '../../src/http/request-gate.js';
import { SessionTable, type Refusal, type Reservation, type SessionEntry } from '../../src/http/session-table.js';

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

interface FakeSession extends SessionEntry {
  closed: boolean;
}

describe('SessionTable', () => {
  let now = 1_000_000;
  let ids = 0;
  const tableOf = (bounds: Partial<ConstructorParameters<typeof SessionTable>[0]>) =>
    new SessionTable<FakeSession>(
      { maxSessions: 4, maxSessionsPerNamespace: 4, maxSessionsPerToken: 2, sessionReplaceAfterMs: 60_000, ...bounds },
      () => now,
    );
  const open = (table: SessionTable<FakeSession>, tokenId: string, namespace = 'ns'): FakeSession | Refusal => {
    const place: Reservation<FakeSession> | Refusal = table.reserve(tokenId, namespace);
    if ('status' in place) return place;
    const session: FakeSession = {
      id: `s${ids++}`,
      tokenId,
      tokenHash: `hash-${tokenId}`,
      namespace,
      lastUsed: now,
      busy: 0,
      closed: false,
      close: async () => void (session.closed = true),
    };
    place.commit(session);
    return session;
  };
  const session = (s: FakeSession | Refusal): FakeSession => {
    if ('status' in s) throw new Error(s.message);
    return s;
  };

  it('a token at its bound gets 429 with the seconds until its oldest session may be replaced, then replaces it', () => {
    const table = tableOf({});
    const first = session(open(table, 'a'));
    now += 1_000;
    session(open(table, 'a'));
    expect(open(table, 'a')).toMatchObject({ status: 429, retryAfterSeconds: 59 });
    now += 60_000;
    session(open(table, 'a'));
    expect(first.closed).toBe(true);
    expect(table.heldBy('a')).toBe(2);
  });

  it('a full server takes a session from the heaviest holder, its least recently used idle one; all busy means 503', () => {
    const table = tableOf({ maxSessionsPerToken: 3 });
    const heavy = [session(open(table, 'h')), session(open(table, 'h')), session(open(table, 'h'))];
    const light = session(open(table, 'l'));
    heavy[0]!.lastUsed = now + 5;
    session(open(table, 'new'));
    expect(heavy.map((s) => s.closed)).toEqual([false, true, false]);
    expect(light.closed).toBe(false);
    for (const s of table.values()) s.busy = 1;
    expect(open(table, 'late')).toMatchObject({ status: 503 });
  });

  it('concurrent reservations count before they commit; a cancelled one gives its place back', () => {
    const table = tableOf({ maxSessionsPerToken: 2 });
    const one = table.reserve('a', 'ns');
    const two = table.reserve('a', 'ns');
    expect(table.reserve('a', 'ns')).toMatchObject({ status: 429 });
    if ('status' in one || 'status' in two) throw new Error('refused');
    one.cancel();
    expect('status' in table.reserve('a', 'ns')).toBe(false);
  });

  it('closes the sessions of revoked tokens and finds a token by the hash of its bearer', () => {
    const table = tableOf({});
    const a = session(open(table, 'a'));
    const b = session(open(table, 'b'));
    expect(table.tokenOfHash('hash-a')).toBe('a');
    expect(table.closeTokens((id) => id === 'a')).toBe(1);
    expect([a.closed, b.closed]).toEqual([true, false]);
    expect(table.size).toBe(1);
    expect(table.tokenOfHash('hash-a')).toBeUndefined();
  });
});

describe('httpLimitsFromEnv', () => {
  it('reads each bound from its variable, leaves the unset ones to the defaults, and refuses a value that is not a whole number', () => {
    expect(
      httpLimitsFromEnv({ LIMBIC_HTTP_MAX_IN_FLIGHT_PER_TOKEN: '2', LIMBIC_HTTP_MAX_SESSIONS: ' 50 ', LIMBIC_HTTP_QUEUE_WAIT_MS: '' }),
    ).toEqual({
      maxInFlightPerToken: 2,
      maxSessions: 50,
    });
    expect(() => httpLimitsFromEnv({ LIMBIC_HTTP_MAX_QUEUED_PER_TOKEN: '0' })).toThrow(
      /LIMBIC_HTTP_MAX_QUEUED_PER_TOKEN=0 .*default \(64\)/,
    );
    expect(() => httpLimitsFromEnv({ LIMBIC_HTTP_MAX_IN_FLIGHT: 'many' })).toThrow(/whole number/);
    // Every bound has a setting, and the defaults leave other tokens room beside any one token.
    expect(DEFAULT_LIMITS.maxInFlightPerToken).toBeLessThan(DEFAULT_LIMITS.maxInFlightPerNamespace);
    expect(DEFAULT_LIMITS.maxInFlightPerNamespace).toBeLessThan(DEFAULT_LIMITS.maxInFlight);
    expect(DEFAULT_LIMITS.maxSessionsPerToken).toBeLessThan(DEFAULT_LIMITS.maxSessionsPerNamespace);
    expect(DEFAULT_LIMITS.maxSessionsPerNamespace).toBeGreaterThan(DEFAULT_LIMITS.maxInFlight);
  });
});
