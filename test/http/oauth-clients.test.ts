/**
 * Issue 36, clients: which redirect URIs a client may have and how a presented one is matched
 * (src/http/oauth/redirects.ts), who a client_id names (src/http/oauth/clients.ts), and the client
 * metadata document fetcher with its guard against reaching private addresses
 * (src/http/oauth/client-metadata.ts), against real servers on 127.0.0.1.
 */
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  addressRefusal,
  cleanClientName,
  ClientMetadataFetcher,
  clientIdUrlProblem,
  parseClientMetadata,
  type ResolveHost,
} from '../../src/http/oauth/client-metadata.js';
import { resolveClient } from '../../src/http/oauth/clients.js';
import { redirectUriMatches, redirectUriProblem } from '../../src/http/oauth/redirects.js';
import { hashSecret, newId } from '../../src/http/oauth/secrets.js';
import type { OAuthStore, RegisteredClient } from '../../src/store/oauth-store.js';
import { openSqliteTokenStore } from '../../src/store/sqlite/sqlite-tokens.js';
import { REPO_ROOT, tempDir } from '../helpers/fixtures.js';

describe('redirectUriProblem: what a client may register', () => {
  const accepted = [
    'https://claude.ai/api/mcp/auth_callback',
    'https://chatgpt.com/connector_platform_oauth_redirect',
    'https://app.example/cb?x=1',
    'https://app.example:8443/cb',
    'http://127.0.0.1/callback',
    'http://127.0.0.1:33418/callback',
    'http://[::1]:8080/cb',
    'http://localhost:6274/oauth/callback',
    'http://localhost/',
    'cursor://anysphere.cursor-retrieval/oauth/user-limbic/callback',
    'vscode://vscode.github-authentication/did-authenticate',
    'com.example.app:/oauth2redirect',
  ];
  it.each(accepted)('accepts %s', (uri) => {
    expect(redirectUriProblem(uri)).toBeUndefined();
  });

  const refused: [string, RegExp][] = [
    ['', /empty/],
    ['/callback', /not an absolute URL/],
    ['claude.ai/callback', /not an absolute URL/],
    ['http://example.com/cb', /plain http is allowed only to 127\.0\.0\.1/],
    ['http://192.168.1.10/cb', /plain http/],
    ['http://127.0.0.2/cb', /plain http/],
    ['http://localhost.evil.example/cb', /plain http/],
    ['https://app.example/cb#frag', /fragment/],
    ['https://app.example/cb#', /fragment/],
    ['http://127.0.0.1:8080/cb#x', /fragment/],
    ['https://user:pass@app.example/cb', /user name or password/],
    ['https://@app.example/cb', /user name or password/],
    ['http://localhost@evil.example/cb', /user name or password/],
    ['javascript:alert(1)', /scheme javascript:/],
    ['JavaScript:alert(1)', /scheme javascript:/],
    ['data:text/html,<script>alert(1)</script>', /scheme data:/],
    ['file:///etc/passwd', /scheme file:/],
    ['vbscript:msgbox(1)', /scheme vbscript:/],
    ['blob:https://app.example/1234', /scheme blob:/],
    ['about:blank', /scheme about:/],
    ['https://app.example/c b', /space, control character or backslash/],
    ['https://app.example/cb\n', /space, control character or backslash/],
    ['https://good.example\\@evil.example/cb', /user name or password|backslash/],
    ['https://good.example\\evil.example/cb', /space, control character or backslash/],
    ['https:app.example/cb', /not written as https:\/\/host\/path/],
    ['myapp:', /nothing after its scheme/],
    [`https://app.example/${'a'.repeat(2000)}`, /at most 2000/],
  ];
  it.each(refused)('refuses %j', (uri, reason) => {
    expect(redirectUriProblem(uri)).toMatch(reason);
  });

  it('quotes a long refused URI only in part', () => {
    const problem = redirectUriProblem(`javascript:${'x'.repeat(1500)}`) ?? '';
    expect(problem).toMatch(/scheme javascript:/);
    expect(problem.length).toBeLessThan(400);
  });
});

describe('redirectUriMatches: exact, except a loopback port (RFC 8252 §7.3)', () => {
  const table: [readonly string[], string, boolean][] = [
    [['https://app.example/cb'], 'https://app.example/cb', true],
    [['https://app.example/cb'], 'https://app.example/cb/', false],
    [['https://app.example/cb'], 'https://app.example/CB', false],
    [['https://app.example/cb'], 'https://APP.example/cb', false],
    [['https://app.example/cb'], 'https://app.example/cb?x=1', false],
    [['https://app.example/cb'], 'https://app.example:443/cb', false],
    [['https://app.example/cb'], 'https://app.example:8443/cb', false],
    [['https://app.example/cb'], 'https://app.example/cb#x', false],
    [['https://app.example/cb'], 'https://app.example.evil.example/cb', false],
    [['https://a.example/cb', 'https://b.example/cb'], 'https://b.example/cb', true],
    [['http://127.0.0.1/callback'], 'http://127.0.0.1:53012/callback', true],
    [['http://127.0.0.1:1234/callback'], 'http://127.0.0.1:53012/callback', true],
    [['http://127.0.0.1:1234/callback'], 'http://127.0.0.1/callback', true],
    [['http://[::1]/cb'], 'http://[::1]:9000/cb', true],
    [['http://localhost:3000/oauth/callback'], 'http://localhost:6274/oauth/callback', true],
    [['http://127.0.0.1/callback'], 'http://127.0.0.1:53012/other', false],
    [['http://127.0.0.1/callback'], 'http://127.0.0.1:53012/callback?x=1', false],
    [['http://127.0.0.1/callback'], 'http://127.0.0.1:53012/callback#x', false],
    [['http://127.0.0.1/callback'], 'http://localhost:53012/callback', false],
    [['http://localhost/callback'], 'http://127.0.0.1:53012/callback', false],
    [['http://127.0.0.1/callback'], 'https://127.0.0.1:53012/callback', false],
    [['http://127.0.0.1/callback'], 'http://127.0.0.1:99999/callback', false],
    [['http://127.0.0.1/callback'], 'http://127.0.0.1:/callback', false],
    [['http://127.0.0.1/callback'], 'http://127.0.0.1:80@evil.example/callback', false],
    [['http://127.0.0.1/callback'], 'http://127.0.0.1.evil.example:80/callback', false],
    [['https://127.0.0.1/callback'], 'https://127.0.0.1:8443/callback', false],
    [['http://app.example/cb'], 'http://app.example:8080/cb', false],
    [['cursor://anysphere.cursor-retrieval/oauth/cb'], 'cursor://anysphere.cursor-retrieval/oauth/cb', true],
    [['cursor://anysphere.cursor-retrieval/oauth/cb'], 'cursor://anysphere.cursor-retrieval:1/oauth/cb', false],
    [[], 'https://app.example/cb', false],
  ];
  it.each(table)('registered %j, presented %j → %s', (registered, presented, expected) => {
    expect(redirectUriMatches(registered, presented)).toBe(expected);
  });
});

/** A real server on 127.0.0.1 that records what it was asked. */
interface LocalServer {
  readonly port: number;
  /** Requests it received, with their Host header. */
  readonly hosts: string[];
  /** Connections closed by the other side (the fetcher stopping). */
  closed: number;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function listen(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function localServer(handle: (req: IncomingMessage, res: ServerResponse, port: number) => void): Promise<LocalServer> {
  const state = { port: 0, hosts: [] as string[], closed: 0 };
  const server = createServer((req, res) => {
    state.hosts.push(req.headers.host ?? '');
    req.socket.once('close', () => state.closed++);
    handle(req, res, state.port);
  });
  state.port = await listen(server);
  return state;
}

/** A server answering `document(url)` as JSON at /client.json, `url` being the address it is reached by. */
const documentServer = (document: (url: string) => unknown, host = '127.0.0.1'): Promise<LocalServer> =>
  localServer((req, res, port) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(document(`http://${host}:${port}${req.url ?? '/'}`)));
  });

const goodDocument = (url: string) => ({
  client_id: url,
  client_name: 'Test Client',
  redirect_uris: ['http://127.0.0.1/callback', 'https://app.example/cb'],
  token_endpoint_auth_method: 'none',
});

/** A lookup seam: fixed answers per name, counting the questions. */
function fixedResolve(answers: Record<string, readonly string[] | (() => readonly string[])>): ResolveHost & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string): Promise<readonly string[]> => {
    calls.push(hostname);
    const answer = answers[hostname];
    if (answer === undefined) throw Object.assign(new Error(`no such host ${hostname}`), { code: 'ENOTFOUND' });
    return typeof answer === 'function' ? answer() : answer;
  };
  return Object.assign(resolve, { calls });
}

describe('client metadata documents: fetched from allowed hosts only', () => {
  it('accepts a document on an allow-listed loopback host, over plain http', async () => {
    const server = await documentServer(goodDocument);
    const url = `http://127.0.0.1:${server.port}/client.json`;
    const result = await new ClientMetadataFetcher({ clientHosts: ['127.0.0.1'] }).fetch(url);
    expect(result).toEqual({
      ok: true,
      document: { clientId: url, clientName: 'Test Client', redirectUris: ['http://127.0.0.1/callback', 'https://app.example/cb'] },
    });
  });

  it('refuses the same loopback host when it is not listed, without connecting', async () => {
    const server = await documentServer(goodDocument);
    const url = `http://127.0.0.1:${server.port}/client.json`;
    const result = await new ClientMetadataFetcher({ clientHosts: [] }).fetch(url);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error).toMatch(/plain http.*--oauth-client-host 127\.0\.0\.1/);
    const overHttps = await new ClientMetadataFetcher({ clientHosts: [] }).fetch(`https://127.0.0.1:${server.port}/client.json`);
    expect(!overHttps.ok && overHttps.error).toMatch(/127\.0\.0\.1, a loopback address.*--oauth-client-host 127\.0\.0\.1/);
    expect(server.hosts).toEqual([]);
  });

  it('refuses "localhost" when it is not listed: the system resolver says loopback', async () => {
    const result = await new ClientMetadataFetcher({ clientHosts: ['127.0.0.1'] }).fetch('https://localhost/client.json');
    expect(!result.ok && result.error).toMatch(/its host localhost resolves to (127\.0\.0\.1|::1), a loopback address/);
  });

  it('refuses a host name resolving to a private address, and one with any private address among public ones', async () => {
    const resolve = fixedResolve({ 'intranet.example': ['10.0.0.7'], 'mixed.example': ['93.184.216.34', '169.254.169.254'] });
    const fetcher = new ClientMetadataFetcher({ clientHosts: [], resolve });
    const intranet = await fetcher.fetch('https://intranet.example/client.json');
    expect(!intranet.ok && intranet.error).toMatch(/resolves to 10\.0\.0\.7, a private address/);
    const mixed = await fetcher.fetch('https://mixed.example/client.json');
    expect(!mixed.ok && mixed.error).toMatch(/resolves to 169\.254\.169\.254, a link-local address/);
  });

  it('refuses an address literal in a private range', async () => {
    const fetcher = new ClientMetadataFetcher({ clientHosts: [] });
    for (const [url, kind] of [
      ['https://10.1.2.3/c.json', 'a private address'],
      ['https://[::ffff:7f00:1]/c.json', 'a loopback address'],
      ['https://[fd00::1]/c.json', 'a unique-local address'],
      ['https://100.64.0.1/c.json', 'carrier-grade NAT'],
    ] as const) {
      const result = await fetcher.fetch(url);
      expect(!result.ok && result.error).toContain(kind);
    }
  });

  it('connects to the address it checked: the name is resolved once and the connection pinned to it', async () => {
    const server = await documentServer(goodDocument, 'client.example');
    // A name that no real resolver knows; after the first answer it "rebinds" to a private address.
    let answers = 0;
    const resolve = fixedResolve({ 'client.example': () => (answers++ === 0 ? ['127.0.0.1'] : ['10.0.0.7']) });
    const url = `http://client.example:${server.port}/client.json`;
    const result = await new ClientMetadataFetcher({ clientHosts: ['client.example'], resolve }).fetch(url);
    expect(result.ok).toBe(true);
    expect(resolve.calls).toEqual(['client.example']);
    expect(server.hosts).toEqual([`client.example:${server.port}`]);
  });

  it('uses plain http only for a listed host that resolves to loopback alone', async () => {
    const resolve = fixedResolve({ 'lan.example': ['192.168.1.20'], 'mixed.example': ['127.0.0.1', '192.168.1.20'] });
    const fetcher = new ClientMetadataFetcher({ clientHosts: ['lan.example', 'mixed.example'], resolve });
    const lan = await fetcher.fetch('http://lan.example/client.json');
    expect(!lan.ok && lan.error).toMatch(
      /plain http is used only for a listed host on this machine's loopback, and lan\.example resolves to 192\.168\.1\.20/,
    );
    const mixed = await fetcher.fetch('http://mixed.example/client.json');
    expect(!mixed.ok && mixed.error).toMatch(/mixed\.example resolves to 192\.168\.1\.20/);
  });

  it('may connect to any of the checked addresses: a listed name on ::1 and 127.0.0.1 reaches a server on 127.0.0.1', async () => {
    const server = await documentServer(goodDocument, 'dual.example');
    const resolve = fixedResolve({ 'dual.example': ['::1', '127.0.0.1'] });
    const url = `http://dual.example:${server.port}/client.json`;
    const result = await new ClientMetadataFetcher({ clientHosts: ['dual.example'], resolve }).fetch(url);
    expect(result.ok).toBe(true);
    expect(server.hosts).toEqual([`dual.example:${server.port}`]);
  });

  it('never follows a redirect (here to a loopback address)', async () => {
    const target = await documentServer(goodDocument);
    const redirecting = await localServer((_req, res) => {
      res.writeHead(302, { location: `http://127.0.0.1:${target.port}/client.json` }).end();
    });
    const url = `http://127.0.0.1:${redirecting.port}/client.json`;
    const result = await new ClientMetadataFetcher({ clientHosts: ['127.0.0.1'] }).fetch(url);
    expect(!result.ok && result.error).toMatch(/answered 302, a redirect, which is never followed/);
    expect(redirecting.hosts).toHaveLength(1);
    expect(target.hosts).toEqual([]);
  });

  it('refuses a body over the bound, declared or streamed, and stops reading an endless one', async () => {
    const declared = await localServer((_req, res) => {
      res.writeHead(200, { 'content-length': String(70_000) }).end('x'.repeat(70_000));
    });
    let written = 0;
    const endless = await localServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(16_384, 0x20);
      const pump = (): void => {
        while (!res.destroyed && res.write(chunk)) written += chunk.length;
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    const fetcher = new ClientMetadataFetcher({ clientHosts: ['127.0.0.1'] });
    const first = await fetcher.fetch(`http://127.0.0.1:${declared.port}/client.json`);
    expect(!first.ok && first.error).toMatch(/it is 70000 bytes; at most 65536 are accepted/);
    const second = await fetcher.fetch(`http://127.0.0.1:${endless.port}/client.json`);
    expect(!second.ok && second.error).toMatch(/larger than 65536 bytes/);
    await expect.poll(() => endless.closed, { timeout: 10_000 }).toBe(1);
    // Socket buffers hold some more, but nothing near what an endless body would send.
    expect(written).toBeLessThan(16 * 1024 * 1024);
  });

  it('gives up on a server that does not answer, or stops half-way, within its bound', async () => {
    const silent = await localServer(() => undefined);
    const stalling = await localServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"client_id": ');
    });
    const fetcher = new ClientMetadataFetcher({ clientHosts: ['127.0.0.1'], timeoutMs: 300 });
    for (const server of [silent, stalling]) {
      const result = await fetcher.fetch(`http://127.0.0.1:${server.port}/client.json`);
      expect(!result.ok && result.error).toMatch(/could not be fetched within 0\.3 s/);
      await expect.poll(() => server.closed, { timeout: 10_000 }).toBe(1);
    }
  });

  it('bounds the time of a resolver that does not answer', async () => {
    const resolve: ResolveHost = () => new Promise(() => undefined);
    const result = await new ClientMetadataFetcher({ clientHosts: [], resolve, timeoutMs: 200 }).fetch('https://slow-dns.example/c.json');
    expect(!result.ok && result.error).toMatch(/within 0\.2 s/);
  });

  it("refuses a document whose client_id is not its URL's", async () => {
    const server = await documentServer((url) => ({ ...goodDocument(url), client_id: 'https://claude.ai/oauth/client.json' }));
    const result = await new ClientMetadataFetcher({ clientHosts: ['127.0.0.1'] }).fetch(`http://127.0.0.1:${server.port}/client.json`);
    expect(!result.ok && result.error).toMatch(/names another client_id \("https:\/\/claude\.ai\/oauth\/client\.json"\)/);
  });

  it('refuses an answer other than 200, and one that is not JSON', async () => {
    const missing = await localServer((_req, res) => res.writeHead(404).end('not found'));
    const html = await localServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>'));
    const fetcher = new ClientMetadataFetcher({ clientHosts: ['127.0.0.1'] });
    const notFound = await fetcher.fetch(`http://127.0.0.1:${missing.port}/client.json`);
    expect(!notFound.ok && notFound.error).toMatch(/answered 404 instead of 200/);
    const notJson = await fetcher.fetch(`http://127.0.0.1:${html.port}/client.json`);
    expect(!notJson.ok && notJson.error).toMatch(/is not JSON/);
  });

  it('leaves no stray error behind a refused answer (404, redirect, declared oversize) that would end the server', async () => {
    const missing = await localServer((_req, res) => res.writeHead(404).end('not found'));
    const moved = await localServer((_req, res) => res.writeHead(302, { location: '/elsewhere' }).end());
    const large = await localServer((_req, res) => res.writeHead(200, { 'content-length': '70000' }).end('x'.repeat(70_000)));
    const urls = [missing, moved, large].map((server) => `http://127.0.0.1:${server.port}/client.json`);
    // A process of its own, as `serve --http` is: an error emitted with no listener is an uncaught
    // exception there, and it ends the process with a non-zero code.
    const script = `
      const { ClientMetadataFetcher } = await import(${JSON.stringify(join(REPO_ROOT, 'src', 'http', 'oauth', 'client-metadata.ts'))});
      const fetcher = new ClientMetadataFetcher({ clientHosts: ['127.0.0.1'] });
      for (const url of ${JSON.stringify(urls)}) console.log(JSON.stringify(await fetcher.fetch(url)));
      await new Promise((resolve) => setTimeout(resolve, 300));
      console.log('alive');`;
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', script],
        { cwd: REPO_ROOT },
        (_e, out, err) => resolve({ code: child.exitCode, stdout: out, stderr: err }),
      );
    });
    expect(stderr).not.toMatch(/Request aborted|UND_ERR/);
    expect({ code, last: stdout.trim().split('\n').at(-1) }).toEqual({ code: 0, last: 'alive' });
    expect(stdout).toMatch(/answered 404/);
    expect(stdout).toMatch(/answered 302/);
    expect(stdout).toMatch(/70000 bytes/);
  });

  it('caches a document for 5 minutes and a failure for 30 seconds, and asks once for concurrent requests', async () => {
    let now = 1_000_000;
    const good = await documentServer(goodDocument);
    const failing = await localServer((_req, res) => res.writeHead(500).end());
    const fetcher = new ClientMetadataFetcher({ clientHosts: ['127.0.0.1'], now: () => now });
    const goodUrl = `http://127.0.0.1:${good.port}/client.json`;
    const failingUrl = `http://127.0.0.1:${failing.port}/client.json`;

    const [a, b] = await Promise.all([fetcher.fetch(goodUrl), fetcher.fetch(goodUrl)]);
    expect(a.ok && b.ok).toBe(true);
    await fetcher.fetch(failingUrl);
    await fetcher.fetch(failingUrl);
    expect([good.hosts.length, failing.hosts.length]).toEqual([1, 1]);

    now += 29_000;
    await fetcher.fetch(failingUrl);
    expect(failing.hosts).toHaveLength(1);
    now += 2_000;
    expect((await fetcher.fetch(failingUrl)).ok).toBe(false);
    expect(failing.hosts).toHaveLength(2);

    now += 268_000; // 4 min 59 s after the document was fetched
    await fetcher.fetch(goodUrl);
    expect(good.hosts).toHaveLength(1);
    now += 2_000;
    expect((await fetcher.fetch(goodUrl)).ok).toBe(true);
    expect(good.hosts).toHaveLength(2);
  });

  it('keeps at most maxEntries documents, dropping the oldest', async () => {
    const server = await documentServer(goodDocument);
    const fetcher = new ClientMetadataFetcher({ clientHosts: ['127.0.0.1'], maxEntries: 2 });
    const url = (n: number): string => `http://127.0.0.1:${server.port}/client-${n}.json`;
    for (const n of [1, 2, 3]) expect((await fetcher.fetch(url(n))).ok).toBe(true);
    expect(fetcher.cached).toBe(2);
    await fetcher.fetch(url(3));
    await fetcher.fetch(url(1));
    expect(server.hosts).toHaveLength(4);
  });

  it('refuses at once, without caching, past the number of fetches under way', async () => {
    const silent = await localServer(() => undefined);
    const good = await documentServer(goodDocument);
    const fetcher = new ClientMetadataFetcher({ clientHosts: ['127.0.0.1'], maxInFlight: 1, timeoutMs: 2_000 });
    const slow = fetcher.fetch(`http://127.0.0.1:${silent.port}/client.json`);
    const goodUrl = `http://127.0.0.1:${good.port}/client.json`;
    const busy = await fetcher.fetch(goodUrl);
    expect(!busy.ok && busy.error).toMatch(/Too many client metadata documents are being fetched at once/);
    expect((await slow).ok).toBe(false);
    expect((await fetcher.fetch(goodUrl)).ok).toBe(true);
  });
});

describe('client metadata documents over https, pinned', () => {
  let tls: { key: string; cert: string } | undefined;
  const openssl = (() => {
    try {
      execFileSync('openssl', ['version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();

  beforeAll(() => {
    if (!openssl) return;
    const { dir, cleanup } = tempDir('limbic-cimd-tls-');
    try {
      const key = join(dir, 'key.pem');
      const cert = join(dir, 'cert.pem');
      execFileSync(
        'openssl',
        [
          ...'req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=client.example'.split(' '),
          '-addext',
          'subjectAltName=DNS:client.example',
          '-keyout',
          key,
          '-out',
          cert,
        ],
        { stdio: 'ignore' },
      );
      tls = { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
    } finally {
      cleanup();
    }
  });

  // openssl makes the certificate; without it there is no https server to test against.
  it.skipIf(!openssl)('verifies the certificate against the host name while connecting to the pinned address', async () => {
    if (tls === undefined) throw new Error('openssl made no certificate');
    const hosts: string[] = [];
    const server = createHttpsServer(tls, (req, res) => {
      hosts.push(req.headers.host ?? '');
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(goodDocument(`https://client.example:${(server.address() as AddressInfo).port}${req.url ?? '/'}`)));
    });
    const port = await listen(server);
    const url = `https://client.example:${port}/client.json`;
    const resolve = fixedResolve({ 'client.example': ['127.0.0.1'] });

    const trusted = await new ClientMetadataFetcher({ clientHosts: ['client.example'], resolve, tls: { ca: tls.cert } }).fetch(url);
    expect(trusted).toMatchObject({ ok: true, document: { clientId: url } });
    expect(hosts).toEqual([`client.example:${port}`]);

    const untrusted = await new ClientMetadataFetcher({ clientHosts: ['client.example'], resolve }).fetch(url);
    expect(!untrusted.ok && untrusted.error).toMatch(/could not be fetched \((DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)\)/);

    // The same certificate presented for another name that resolves to the same address is refused.
    const other = fixedResolve({ 'other.example': ['127.0.0.1'] });
    const otherUrl = `https://other.example:${port}/client.json`;
    const mismatch = await new ClientMetadataFetcher({ clientHosts: ['other.example'], resolve: other, tls: { ca: tls.cert } }).fetch(
      otherUrl,
    );
    expect(!mismatch.ok && mismatch.error).toMatch(/ERR_TLS_CERT_ALTNAME_INVALID/);
  });
});

describe('client metadata documents: what a document and its URL must be', () => {
  const url = 'https://app.example/oauth/client.json';

  it('takes a minimal document as a public client', () => {
    expect(parseClientMetadata(url, { client_id: url, redirect_uris: ['https://app.example/cb'] })).toEqual({
      ok: true,
      document: { clientId: url, clientName: undefined, redirectUris: ['https://app.example/cb'] },
    });
  });

  const refused: [string, unknown, RegExp][] = [
    ['not an object', ['x'], /not valid: the document/],
    ['no redirect_uris', { client_id: url }, /redirect_uris/],
    ['empty redirect_uris', { client_id: url, redirect_uris: [] }, /redirect_uris/],
    [
      'too many redirect_uris',
      { client_id: url, redirect_uris: Array.from({ length: 21 }, (_, i) => `https://app.example/${i}`) },
      /redirect_uris/,
    ],
    [
      'a javascript: redirect',
      { client_id: url, redirect_uris: ['javascript:alert(1)'] },
      /lists a redirect URI that is not allowed.*javascript:/,
    ],
    ['an http redirect elsewhere', { client_id: url, redirect_uris: ['http://evil.example/cb'] }, /plain http/],
    [
      'a secret method',
      { client_id: url, redirect_uris: ['https://app.example/cb'], token_endpoint_auth_method: 'client_secret_basic' },
      /accepts only "none"/,
    ],
    ['a client_secret', { client_id: url, redirect_uris: ['https://app.example/cb'], client_secret: 'shh' }, /contains a client_secret/],
    ['another client_id', { client_id: `${url}?v=2`, redirect_uris: ['https://app.example/cb'] }, /names another client_id/],
    [
      'a client_id that differs in case',
      { client_id: url.toUpperCase(), redirect_uris: ['https://app.example/cb'] },
      /names another client_id/,
    ],
  ];
  it.each(refused)('refuses %s', (_what, json, reason) => {
    const result = parseClientMetadata(url, json);
    expect(!result.ok && result.error).toMatch(reason);
  });

  it('never echoes a client_secret it refuses', () => {
    const result = parseClientMetadata(url, { client_id: url, redirect_uris: ['https://app.example/cb'], client_secret: 'hunter2-secret' });
    expect(!result.ok && result.error).not.toContain('hunter2-secret');
  });

  it('cleans the client name: control and direction characters out, spaces collapsed, length bounded', () => {
    expect(cleanClientName('Claude\u0000 Code\u202e\n\tbeta')).toBe('Claude Code beta');
    expect(cleanClientName('\u200b\u0007')).toBeUndefined();
    expect(cleanClientName(undefined)).toBeUndefined();
    const long = cleanClientName('é'.repeat(500)) ?? '';
    expect([...long]).toHaveLength(100);
    expect(long.endsWith('…')).toBe(true);
  });

  const urls: [string, readonly string[], RegExp | undefined][] = [
    ['https://app.example/oauth/client.json', [], undefined],
    ['https://app.example:8443/client.json?v=1', [], undefined],
    ['http://127.0.0.1:8080/client.json', ['127.0.0.1'], undefined],
    ['http://app.example/client.json', [], /plain http/],
    ['ftp://app.example/client.json', [], /not an https URL/],
    ['https://app.example/client.json#x', [], /fragment/],
    ['https://user:pw@app.example/client.json', [], /user name or password/],
    ['https://@app.example/client.json', [], /normal form/],
    ['https://App.example/client.json', [], /normal form/],
    ['https://app.example:443/client.json', [], /normal form/],
    ['https://app.example/a/../client.json', [], /normal form/],
    ['https://app.example/a/%2e%2e/client.json', [], /normal form/],
    ['https://app.example', [], /normal form/],
    ['https://app.example/', [], /has no path/],
    ['not a url', [], /is not a URL/],
  ];
  it.each(urls)('client_id %s (listed %j)', (clientId, hosts, problem) => {
    const found = clientIdUrlProblem(clientId, hosts);
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toMatch(problem);
  });

  const addresses: [string, string | undefined][] = [
    ['93.184.216.34', undefined],
    ['2606:4700:4700::1111', undefined],
    ['::ffff:93.184.216.34', undefined],
    ['127.0.0.1', 'a loopback address'],
    ['127.255.0.9', 'a loopback address'],
    ['::1', 'a loopback address'],
    ['::ffff:127.0.0.1', 'a loopback address'],
    ['10.0.0.1', 'a private address'],
    ['172.16.5.4', 'a private address'],
    ['172.31.255.255', 'a private address'],
    ['192.168.0.1', 'a private address'],
    ['::ffff:192.168.0.1', 'a private address'],
    ['169.254.169.254', 'a link-local address'],
    ['fe80::1', 'a link-local address'],
    ['fc00::1', 'a unique-local address'],
    ['fd12:3456::1', 'a unique-local address'],
    ['100.64.0.1', 'a shared (carrier-grade NAT) address'],
    ['100.127.255.254', 'a shared (carrier-grade NAT) address'],
    ['224.0.0.1', 'a multicast address'],
    ['ff02::1', 'a multicast address'],
    ['0.0.0.0', 'the unspecified address'],
    ['::', 'the unspecified address'],
    ['255.255.255.255', 'the broadcast address'],
    ['64:ff9b::a00:1', 'a special-purpose address (rfc6052)'],
    ['2002:a00:1::', 'a special-purpose address (6to4)'],
    ['2001::1', 'a special-purpose address (teredo)'],
    ['not-an-address', 'not an IP address'],
  ];
  it.each(addresses)('address %s → %s', (address, refusal) => {
    expect(addressRefusal(address)).toBe(refusal);
  });
  it('lets 172.32/12 and 100.128/10 through (outside the private and CGNAT ranges)', () => {
    expect(addressRefusal('172.32.0.1')).toBeUndefined();
    expect(addressRefusal('100.128.0.1')).toBeUndefined();
  });
});

describe('resolveClient', () => {
  // A fake: never called on these paths (a metadata document is fetched, a bad id refused before any
  // lookup); it only stands for the store the cache of documents is kept beside.
  const fakeStore = (): OAuthStore => ({}) as OAuthStore;

  it('resolves a metadata document URL as a public client', async () => {
    const server = await documentServer(goodDocument);
    const url = `http://127.0.0.1:${server.port}/client.json`;
    const result = await resolveClient(url, { store: fakeStore(), clientHosts: ['127.0.0.1'] });
    expect(result).toEqual({
      ok: true,
      client: {
        clientId: url,
        clientName: 'Test Client',
        redirectUris: ['http://127.0.0.1/callback', 'https://app.example/cb'],
        tokenEndpointAuthMethod: 'none',
        secretHash: undefined,
        kind: 'metadata-document',
      },
    });
  });

  it('shares one cache per store and allow-list: a second resolve does not fetch again', async () => {
    const server = await documentServer(goodDocument);
    const url = `http://127.0.0.1:${server.port}/client.json`;
    const store = fakeStore();
    await resolveClient(url, { store, clientHosts: ['127.0.0.1'] });
    await resolveClient(url, { store, clientHosts: ['127.0.0.1'] });
    expect(server.hosts).toHaveLength(1);
    const refused = await resolveClient(url, { store, clientHosts: [] });
    expect(refused.ok).toBe(false);
  });

  it('resolves a registered client from the real store, and says what to do about an unknown one', async () => {
    const { dir, cleanup } = tempDir('limbic-oauth-clients-');
    const tokens = openSqliteTokenStore(join(dir, 'tokens.db'));
    try {
      const registered: RegisteredClient = {
        clientId: newId('c_'),
        clientName: 'Registered <b>Client</b>',
        clientUri: undefined,
        redirectUris: ['http://127.0.0.1/callback', 'https://claude.ai/api/mcp/auth_callback'],
        tokenEndpointAuthMethod: 'client_secret_post',
        secretHash: hashSecret('limbic_test_client_secret'),
        registeredBy: hashSecret('127.0.0.1'),
        createdAt: Date.now(),
      };
      await tokens.oauth.addClient(registered);
      const found = await resolveClient(registered.clientId, { store: tokens.oauth, clientHosts: [] });
      expect(found).toEqual({
        ok: true,
        client: {
          clientId: registered.clientId,
          clientName: 'Registered <b>Client</b>',
          redirectUris: registered.redirectUris,
          tokenEndpointAuthMethod: 'client_secret_post',
          secretHash: registered.secretHash,
          kind: 'registered',
        },
      });
      const unknown = await resolveClient('c_000000000000', { store: tokens.oauth, clientHosts: [] });
      expect(!unknown.ok && unknown.error).toMatch(/No client with the id "c_000000000000" is registered.*add it again/);
    } finally {
      await tokens.close();
      cleanup();
    }
  });

  it('refuses an empty or huge client_id before looking anything up', async () => {
    const empty = await resolveClient('', { store: fakeStore(), clientHosts: [] });
    expect(!empty.ok && empty.error).toMatch(/client_id is missing/);
    const huge = await resolveClient('c'.repeat(5000), { store: fakeStore(), clientHosts: [] });
    expect(!huge.ok && huge.error).toMatch(/at most 2000/);
  });
});
