/**
 * Issue 38, item 3: `limbic serve --http --workers N`, as a user runs it: the built CLI as a child
 * process, its workers real processes, SDK clients over real HTTP. Each answer names the worker
 * that served it (`x-limbic-worker`), so a test can tell that every worker saw what it must: a
 * revocation, the server's request bounds, another worker's write. And the processes themselves:
 * none left behind after SIGTERM or after the primary is SIGKILLed, a crashed worker replaced,
 * `--workers 1` one process as before.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { request, type ClientRequest } from 'node:http';
import { join } from 'node:path';
import { Agent, getGlobalDispatcher, setGlobalDispatcher, type Dispatcher } from 'undici';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { processAlive } from '../../src/os/process-alive.js';
import { CLI, tempDir } from '../helpers/fixtures.js';
import { httpClient } from '../helpers/mcp-eras.js';
import { authorizeUrl, openConsent, pkce, register, submitConsent } from './oauth-e2e-helpers.js';

const GRAPH = 'memory://knowledge-graph';

const limbic = (db: string, ...args: string[]) =>
  spawnSync(process.execPath, [CLI, '--db', db, '--no-model', ...args], {
    encoding: 'utf8',
    env: { ...process.env, LIMBIC_NAMESPACE: '' },
  });

interface Served {
  readonly child: ChildProcess;
  readonly url: string;
  /** The worker pids the start line named. */
  readonly pids: number[];
  stderr(): string;
  exited: Promise<number | null>;
}

let children: ChildProcess[] = [];
let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children = [];
  for (const c of cleanups) c();
  cleanups = [];
});

/** `model`: each worker loads the installed model (the re-finding test needs a query's vector); else --no-model. */
async function serve(db: string, args: readonly string[], env: Record<string, string> = {}, model = false): Promise<Served> {
  const child = spawn(process.execPath, [CLI, '--db', db, ...(model ? [] : ['--no-model']), 'serve', '--http', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LIMBIC_NAMESPACE: '', ...env },
  });
  children.push(child);
  let stderr = '';
  let stdout = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await expect.poll(() => /at (http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(stderr)?.[1], { timeout: 30_000 }).toBeDefined();
  const url = /at (http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(stderr)![1]!;
  // With workers the pids come in the next line, which may arrive in a later chunk of stderr.
  const workers = Number(args[args.indexOf('--workers') + 1] ?? '1');
  if (workers > 1) await expect.poll(() => /worker processes: pids [\d, ]+\n/.test(stderr), { timeout: 10_000 }).toBe(true);
  const pids = (/worker processes: pids ([\d, ]+)/.exec(stderr)?.[1] ?? '')
    .split(', ')
    .filter((p) => p !== '')
    .map(Number);
  // stdout stays clean: nothing but MCP would ever go there.
  expect(stdout).toBe('');
  return { child, url, pids, stderr: () => stderr, exited };
}

/** What one answer said: which worker, what status. */
interface Answer {
  readonly worker: number | undefined;
  readonly status: number;
}

/**
 * A 2026-07-28 SDK client whose every request opens a new connection (the primary hands each to
 * the next worker in turn), recording which worker answered each and with what status.
 */
async function client(url: string, token: string) {
  const answers: Answer[] = [];
  const fetchVia = async (req: Request): Promise<Response> => {
    const agent = new Agent();
    const response = await fetch(req, { dispatcher: agent } as unknown as RequestInit);
    const worker = response.headers.get('x-limbic-worker');
    answers.push({ worker: worker === null ? undefined : Number(worker), status: response.status });
    return response;
  };
  const c = await httpClient('modern', `${url}/mcp`, { token, fetch: fetchVia });
  return { c, answers };
}

/**
 * A 2026-07-28 SDK client on one kept-alive connection, so one worker answers all its requests
 * (the one the primary handed that connection to); which one, its first answer says.
 */
async function pinned(url: string, token: string) {
  const agent = new Agent({ connections: 1, keepAliveTimeout: 60_000 });
  const answers: Answer[] = [];
  const fetchVia = async (req: Request): Promise<Response> => {
    const response = await fetch(req, { dispatcher: agent } as unknown as RequestInit);
    const worker = response.headers.get('x-limbic-worker');
    answers.push({ worker: worker === null ? undefined : Number(worker), status: response.status });
    return response;
  };
  const c = await httpClient('modern', `${url}/mcp`, { token, fetch: fetchVia });
  return { c, answers, worker: answers.at(-1)?.worker, close: () => c.close().then(() => agent.close()) };
}

/** A POST to /mcp whose body never ends: it holds a request place (taken before the body is read) until destroyed. */
function held(url: string, token: string): { req: ClientRequest; answer: Promise<Answer & { body: string }> } {
  const target = new URL(url);
  let req!: ClientRequest;
  const answer = new Promise<Answer & { body: string }>((resolve, reject) => {
    req = request(
      {
        host: target.hostname,
        port: target.port,
        method: 'POST',
        path: '/mcp',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': '1000',
        },
        agent: false,
      },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => {
          const worker = res.headers['x-limbic-worker'];
          resolve({ worker: worker === undefined ? undefined : Number(worker), status: res.statusCode ?? 0, body });
        });
      },
    );
    req.on('error', reject);
    req.write('{"jsonrpc":"2.0",');
  });
  answer.catch(() => undefined);
  return { req, answer };
}

const workersOf = (answers: readonly Answer[], status: number): Set<number | undefined> =>
  new Set(answers.filter((a) => a.status === status).map((a) => a.worker));

describe('limbic serve --http --workers N', () => {
  const setup = () => {
    const { dir, cleanup } = tempDir('limbic-workers-');
    cleanups.push(cleanup);
    const db = join(dir, 'memory.db');
    const token = limbic(db, 'token', 'create', '--namespace', 'default').stdout.trim();
    return { db, token };
  };

  it('starts N worker processes on one port with one start line; SIGTERM drains a request under way, then every worker and the primary exit', async () => {
    const { db, token } = setup();
    const s = await serve(db, ['--workers', '2'], { LIMBIC_HTTP_MAX_IN_FLIGHT_PER_TOKEN: '1', LIMBIC_HTTP_MAX_QUEUED_PER_TOKEN: '1' });
    expect(s.stderr()).toMatch(/serving MCP over HTTP at http:\/\/127\.0\.0\.1:\d+\/mcp .*\(2 worker processes; 1 token;/);
    expect(s.stderr().match(/serving MCP over HTTP at/g)).toHaveLength(1);
    expect(s.pids).toHaveLength(2);
    for (const pid of s.pids) expect(processAlive(pid)).toBe(true);
    const { c, answers } = await client(s.url, token);
    for (let i = 0; i < 4; i++) await c.callTool({ name: 'read_graph', arguments: {} });
    expect(workersOf(answers, 200)).toEqual(new Set([1, 2]));
    await c.close();
    // Two requests under way when the stop comes (their bodies not yet all sent; with one place and
    // one in the queue per token, a third is refused once both are in) are still answered.
    const holds = [held(s.url, token), held(s.url, token), held(s.url, token)];
    const settled: Answer[] = [];
    for (const h of holds)
      void h.answer.then(
        (a) => settled.push(a),
        () => undefined,
      );
    await expect.poll(() => settled.length, { timeout: 20_000 }).toBe(1);
    expect(settled[0]!.status).toBe(429);
    s.child.kill('SIGTERM');
    await expect.poll(() => s.stderr(), { timeout: 10_000 }).toMatch(/stopping: the 2 workers finish the requests under way/);
    const under = await Promise.all(
      holds.map(async (h, i) => {
        h.req.end(
          `"id":${i},"method":"tools/call","params":{"name":"read_graph","arguments":{}}}`.padEnd(1000 - '{"jsonrpc":"2.0",'.length, ' '),
        );
        return h.answer.catch(() => ({ status: 0, worker: undefined, body: '' }));
      }),
    );
    expect(under.filter((a) => a.status === 200)).toHaveLength(2);
    for (const a of under.filter((x) => x.status === 200)) expect(a.body).toMatch(/"id":[0-2]/);
    expect(await s.exited).toBe(0);
    for (const pid of s.pids) await expect.poll(() => processAlive(pid), { timeout: 10_000 }).toBe(false);
  });

  it('leaves no worker behind when the primary is SIGKILLed: each sees its channel close and exits', async () => {
    const { db } = setup();
    const s = await serve(db, ['--workers', '2']);
    expect(s.pids).toHaveLength(2);
    s.child.kill('SIGKILL');
    await s.exited;
    for (const pid of s.pids) await expect.poll(() => processAlive(pid), { timeout: 15_000 }).toBe(false);
  });

  it('replaces a worker that crashes, says so, and the server answers on', async () => {
    const { db, token } = setup();
    const s = await serve(db, ['--workers', '2']);
    process.kill(s.pids[0]!, 'SIGKILL');
    await expect.poll(() => s.stderr(), { timeout: 20_000 }).toMatch(/worker \d+ \(pid \d+\) exited \(SIGKILL\).*starting another/);
    await expect.poll(() => /worker (\d+) \(pid (\d+)\) is serving/.exec(s.stderr())?.[1], { timeout: 30_000 }).toBe('3');
    const { c, answers } = await client(s.url, token);
    for (let i = 0; i < 6 && workersOf(answers, 200).size < 2; i++) await c.callTool({ name: 'read_graph', arguments: {} });
    expect(workersOf(answers, 200)).toEqual(new Set([2, 3]));
    await c.close();
  });

  it('a token revoked by `limbic token revoke` (another process) is refused at its next request on every worker', async () => {
    const { db } = setup();
    const made = limbic(db, 'token', 'create', '--namespace', 'default', '--label', 'doomed');
    const doomed = made.stdout.trim();
    const s = await serve(db, ['--workers', '2']);
    const { c, answers } = await client(s.url, doomed);
    for (let i = 0; i < 8 && workersOf(answers, 200).size < 2; i++) await c.callTool({ name: 'read_graph', arguments: {} });
    expect(workersOf(answers, 200)).toEqual(new Set([1, 2]));
    const id = (JSON.parse(limbic(db, 'token', 'list', '--json').stdout) as { id: string; label?: string }[]).find(
      (r) => r.label === 'doomed',
    )!.id;
    expect(limbic(db, 'token', 'revoke', id).status).toBe(0);
    answers.length = 0;
    for (let i = 0; i < 8 && workersOf(answers, 401).size < 2; i++)
      await c.callTool({ name: 'read_graph', arguments: {} }).catch(() => undefined);
    expect(workersOf(answers, 401)).toEqual(new Set([1, 2]));
    expect(answers.filter((a) => a.status === 200)).toEqual([]);
    await c.close();
  });

  it("a token's bound on requests in flight holds for the whole server, whichever worker each request lands on", async () => {
    const { db, token } = setup();
    // One request running and one waiting per token, for the whole server.
    const s = await serve(db, ['--workers', '2'], { LIMBIC_HTTP_MAX_IN_FLIGHT_PER_TOKEN: '1', LIMBIC_HTTP_MAX_QUEUED_PER_TOKEN: '1' });
    // Eight requests on eight connections (the workers take them in turn), none of which ends.
    const holds = Array.from({ length: 8 }, () => held(s.url, token));
    const settled: (Answer & { body: string })[] = [];
    for (const h of holds)
      void h.answer.then(
        (a) => settled.push(a),
        () => undefined,
      );
    // Bounds split per worker would hold two on each worker (four in all) and refuse four; the server's bound holds two.
    await expect.poll(() => settled.length, { timeout: 20_000 }).toBe(6);
    expect(settled.every((a) => a.status === 429)).toBe(true);
    expect(settled[0]!.body).toMatch(/This token has .* its limit \(1 at once, 1 waiting\)/);
    expect(workersOf(settled, 429)).toEqual(new Set([1, 2]));
    // Their places come back when they go: the token is served again, on either worker.
    for (const h of holds) h.req.destroy();
    const { c, answers } = await client(s.url, token);
    await expect
      .poll(
        async () => {
          await c.callTool({ name: 'read_graph', arguments: {} }).catch(() => undefined);
          return workersOf(answers, 200).size;
        },
        { timeout: 20_000 },
      )
      .toBe(2);
    await c.close();
  });

  it('a write answered by one worker reaches a listener whose stream another worker holds', async () => {
    const { db, token } = setup();
    const s = await serve(db, ['--workers', '2']);
    const listening = await client(s.url, token);
    const heard: string[] = [];
    listening.c.setNotificationHandler('notifications/resources/updated', (n) => void heard.push(n.params.uri));
    await listening.c.listen({ resourceSubscriptions: [GRAPH] });
    const streamWorker = listening.answers.at(-1)!.worker;
    expect(streamWorker).toBeDefined();
    const writer = await client(s.url, token);
    writer.answers.length = 0; // its handshake's
    // Writes until one is answered by the other worker (each request goes to the next one in turn).
    for (let i = 0; i < 6 && !writer.answers.some((a) => a.worker !== streamWorker && a.status === 200); i++)
      await writer.c.callTool({
        name: 'create_entities',
        arguments: { entities: [{ name: `Written ${i}`, entityType: 't', observations: [] }] },
      });
    expect(writer.answers.some((a) => a.worker !== streamWorker && a.status === 200)).toBe(true);
    // Each write is heard once, wherever it was answered (without the relay, only those of the stream's own worker).
    await expect.poll(() => heard.length, { timeout: 10_000 }).toBe(writer.answers.length);
    expect(new Set(heard)).toEqual(new Set([GRAPH]));
    await writer.c.close();
    await listening.c.close();
  });

  it("the consent page's bound on wrong approval codes is the server's: 5 from one address, whichever workers the forms land on", async () => {
    const { db } = setup();
    const s = await serve(db, ['--workers', '2']);
    // Every request of this test on a new connection, so the workers take them in turn.
    const before = getGlobalDispatcher();
    const fresh = new Agent();
    fresh.dispatch = (options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) => new Agent().dispatch(options, handler);
    setGlobalDispatcher(fresh);
    try {
      const made = await register(s.url, {
        client_name: 'Guesser',
        redirect_uris: ['http://127.0.0.1:9/callback'],
        token_endpoint_auth_method: 'none',
      });
      expect(made.status).toBe(201);
      const tries: Answer[] = [];
      for (let i = 0; i < 14 && workersOf(tries, 429).size < 2; i++) {
        const page = await openConsent(
          authorizeUrl(s.url, {
            client_id: made.body.client_id as string,
            redirect_uri: 'http://127.0.0.1:9/callback',
            code_challenge: pkce().challenge,
            state: 's',
          }),
        );
        expect(page.status).toBe(200);
        // A page and its form make two connections; one more every other try, so the forms land on both workers.
        if (i % 2 === 1) await (await fetch(`${s.url}/.well-known/oauth-authorization-server`)).text();
        const answer = await submitConsent(page, 'AAAA-BBBB-CCCC');
        const worker = answer.headers.get('x-limbic-worker');
        tries.push({ worker: worker === null ? undefined : Number(worker), status: answer.status });
      }
      // Split per worker, the sixth and later would still be checked on the worker that had seen fewer.
      expect(tries.findIndex((t) => t.status === 429)).toBe(5);
      expect(workersOf(tries.slice(0, 5), 400).size).toBe(2);
      expect(workersOf(tries, 429)).toEqual(new Set([1, 2]));
      expect(tries.slice(5).every((t) => t.status === 429)).toBe(true);
    } finally {
      setGlobalDispatcher(before);
    }
  });

  it('a search answered by one worker and an open_nodes of what it listed answered by the other make a re-finding pair, once', async () => {
    const { db, token } = setup();
    const s = await serve(db, ['--workers', '2'], {}, true);
    const searcher = await pinned(s.url, token);
    let opener = await pinned(s.url, token);
    for (let i = 0; i < 6 && opener.worker === searcher.worker; i++) {
      await opener.close();
      opener = await pinned(s.url, token);
    }
    expect(new Set([searcher.worker, opener.worker])).toEqual(new Set([1, 2]));
    await searcher.c.callTool({
      name: 'create_entities',
      arguments: {
        entities: [
          { name: 'Ada', entityType: 'person', observations: ['Ada grows tomatoes and beans in her vegetable garden'] },
          { name: 'Bob', entityType: 'person', observations: ['Bob repairs old bicycles in his workshop'] },
          { name: 'Cy', entityType: 'person', observations: ['Cy plays the violin in an orchestra'] },
        ],
      },
    });
    // Searched (on the searcher's worker) until its model is loaded and the entities embedded: a
    // search by meaning, whose query vector a use can pair with.
    type Semantic = { results: { name: string; distance?: number }[] };
    await expect
      .poll(
        async () => {
          const found = (await searcher.c.callTool({ name: 'search_semantic', arguments: { query: 'who grows vegetables?', limit: 3 } }))
            .structuredContent as Semantic;
          return found.results.length === 3 && found.results.every((r) => r.distance !== undefined);
        },
        { timeout: 90_000, interval: 1_000 },
      )
      .toBe(true);
    expect(new Set(searcher.answers.map((a) => a.worker))).toEqual(new Set([searcher.worker]));
    // The search's news goes through the primary in milliseconds; an agent reads the answer before its next call.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const pairs = (): { entity: string; model: string }[] => {
      const read = new Database(db, { readonly: true });
      try {
        return read
          .prepare('SELECT e.name AS entity, p.model FROM refind_pairs p JOIN entities e ON e.id = p.entity_id ORDER BY p.id')
          .all() as { entity: string; model: string }[];
      } finally {
        read.close();
      }
    };
    expect(pairs()).toEqual([]);
    await opener.c.callTool({ name: 'open_nodes', arguments: { names: ['Ada'] } });
    expect(new Set(opener.answers.map((a) => a.worker))).toEqual(new Set([opener.worker]));
    // Without the relay the opener's worker knows of no search listing Ada: no pair, ever.
    await expect.poll(pairs, { timeout: 15_000 }).toHaveLength(1);
    expect(pairs()[0]!.entity).toBe('Ada');
    // A second use, on the searcher's worker, of what that search already paired makes none (as in one process).
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await searcher.c.callTool({ name: 'open_nodes', arguments: { names: ['Ada'] } });
    const uses = (): number => {
      const read = new Database(db, { readonly: true });
      try {
        return (
          read
            .prepare("SELECT a.access_count AS n FROM entity_access a JOIN entities e ON e.id = a.entity_id WHERE e.name = 'Ada'")
            .get() as { n: number }
        ).n;
      } finally {
        read.close();
      }
    };
    await expect.poll(uses, { timeout: 15_000 }).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(pairs()).toHaveLength(1);
    await searcher.close();
    await opener.close();
  });

  it('--workers 1 is one process, as before: no child process, no worker header', async () => {
    const { db, token } = setup();
    const s = await serve(db, ['--workers', '1']);
    expect(s.pids).toEqual([]);
    expect(s.stderr()).not.toMatch(/worker process|worker \d/);
    const pgrep = spawnSync('pgrep', ['-P', String(s.child.pid)], { encoding: 'utf8' });
    expect(pgrep.stdout.trim()).toBe('');
    const { c, answers } = await client(s.url, token);
    await c.callTool({ name: 'read_graph', arguments: {} });
    expect(answers.length).toBeGreaterThan(0);
    expect(answers.every((a) => a.worker === undefined && a.status === 200)).toBe(true);
    await c.close();
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  });

  it('refuses a --workers that is not a whole number from 1, saying what to give', () => {
    const { db } = setup();
    const run = limbic(db, 'serve', '--http', '--port', '0', '--workers', '0');
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/--workers \(LIMBIC_HTTP_WORKERS\) "0" is not a number of processes: give a whole number from 1/);
  });
});
