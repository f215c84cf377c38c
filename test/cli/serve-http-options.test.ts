/**
 * `serve --http`'s OAuth options (issue 36): --public-url / LIMBIC_PUBLIC_URL must be an origin,
 * --oauth-client-host / LIMBIC_OAUTH_CLIENT_HOSTS host names; the public URL's host is answered to;
 * the start says where OAuth discovery is and how to approve a client.
 */
import { spawn, spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clientHostNames, publicOrigin } from '../../src/cli/serve-http.js';
import { CLI, tempDir } from '../helpers/fixtures.js';

/** The status of a GET sent with this Host header (fetch sets Host itself). */
function statusWithHost(url: string, host: string): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/api/stats`, { headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('publicOrigin and clientHostNames', () => {
  it('takes an http(s) origin, lower-cased, a trailing slash dropped', () => {
    expect(publicOrigin('https://Memory.Example.com')).toBe('https://memory.example.com');
    expect(publicOrigin('https://memory.example.com/')).toBe('https://memory.example.com');
    expect(publicOrigin(' http://192.168.1.5:7411 ')).toBe('http://192.168.1.5:7411');
    expect(publicOrigin('https://[::1]:8443')).toBe('https://[::1]:8443');
    expect(publicOrigin('https://memory.example.com:443')).toBe('https://memory.example.com');
  });

  it('refuses a path, a query, a fragment, a user, another scheme, or no URL, saying what to give', () => {
    const cases: [string, RegExp][] = [
      ['https://memory.example.com/mcp', /has a path \(\/mcp\); the MCP endpoint is always \/mcp under it/],
      ['https://memory.example.com/limbic/', /has a path/],
      ['https://memory.example.com?x=1', /has a query or a fragment/],
      ['https://memory.example.com/?', /has a query or a fragment/],
      ['https://memory.example.com#top', /has a query or a fragment/],
      ['ftp://memory.example.com', /has the scheme ftp, not http or https/],
      ['memory.example.com', /is not a URL/],
      ['', /is not a URL/],
    ];
    for (const [value, why] of cases) {
      expect(() => publicOrigin(value), value).toThrow(why);
      expect(() => publicOrigin(value), value).toThrow(/scheme, host and port only, e\.g\. https:\/\/memory\.example\.com/);
    }
    // A password in the URL is a secret: refused, and not repeated.
    expect(() => publicOrigin('https://me:s3cret@memory.example.com')).toThrow(/carries a user name or password/);
    try {
      publicOrigin('https://me:s3cret@memory.example.com');
    } catch (error) {
      expect((error as Error).message).not.toContain('s3cret');
    }
  });

  it('takes host names and addresses, refuses URLs and ports', () => {
    expect(clientHostNames(['Docs.Example.com', 'localhost', '[::1]', '127.0.0.1'])).toEqual([
      'docs.example.com',
      'localhost',
      '::1',
      '127.0.0.1',
    ]);
    for (const bad of ['https://docs.example.com', 'localhost:8080', 'docs.example.com/x', '', 'a b'])
      expect(() => clientHostNames([bad]), bad).toThrow(/not a host name or address: give the host alone/);
  });
});

describe('limbic serve --http --public-url', () => {
  let dir: string;
  let cleanup: () => void;
  let db: string;
  beforeEach(() => {
    ({ dir, cleanup } = tempDir('limbic-public-url-'));
    db = join(dir, 'memory.db');
  });
  afterEach(() => cleanup());

  const run = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [CLI, '--db', db, '--no-model', 'serve', '--http', '--port', '0', ...args], {
      encoding: 'utf8',
      env: { ...process.env, LIMBIC_NAMESPACE: '', LIMBIC_PUBLIC_URL: '', LIMBIC_OAUTH_CLIENT_HOSTS: '', ...env },
      timeout: 30_000,
    });

  it('refuses a public URL with a path, from the flag or the environment, before listening', () => {
    const flag = run(['--public-url', 'https://memory.example.com/mcp']);
    expect(flag.status).toBe(1);
    expect(flag.stderr).toMatch(/--public-url \(LIMBIC_PUBLIC_URL\) "https:\/\/memory\.example\.com\/mcp" has a path/);
    expect(flag.stderr).not.toMatch(/serving MCP over HTTP/);
    const env = run([], { LIMBIC_PUBLIC_URL: 'https://memory.example.com/limbic' });
    expect(env.status).toBe(1);
    expect(env.stderr).toMatch(/has a path \(\/limbic\)/);
    const host = run(['--oauth-client-host', 'https://docs.example.com']);
    expect(host.status).toBe(1);
    expect(host.stderr).toMatch(/--oauth-client-host \(LIMBIC_OAUTH_CLIENT_HOSTS\) "https:\/\/docs\.example\.com" is not a host name/);
    const hostEnv = run([], { LIMBIC_OAUTH_CLIENT_HOSTS: 'localhost, docs.example.com:8443' });
    expect(hostEnv.status).toBe(1);
    expect(hostEnv.stderr).toMatch(/"docs\.example\.com:8443" is not a host name/);
  });

  it('the refusal to listen beyond loopback with no bearer token names tunnels and auth code', () => {
    const refused = run(['--host', '0.0.0.0']);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/Refusing to listen on 0\.0\.0\.0 with no token configured.*limbic token create --namespace default/);
    expect(refused.stderr).toMatch(/a tunnel or a reverse proxy on this machine reaches it there.*limbic auth code/);
  });

  it("answers to the public URL's host and says where OAuth discovery is and how to get a code", async () => {
    const child = spawn(
      process.execPath,
      [CLI, '--db', db, '--no-model', 'serve', '--http', '--port', '0', '--public-url', 'https://Memory.Example.com/'],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LIMBIC_NAMESPACE: '', LIMBIC_OAUTH_CLIENT_HOSTS: 'docs.internal' } },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      await expect.poll(() => stderr, { timeout: 20_000 }).toMatch(/OAuth: [^\n]*\n/);
      expect(stderr).toMatch(
        /OAuth: clients discover it at https:\/\/memory\.example\.com\/\.well-known\/oauth-protected-resource\/mcp \(issuer https:\/\/memory\.example\.com\); approve one by typing a code from "limbic auth code/,
      );
      expect(stderr).toMatch(/client metadata documents may be fetched from private addresses of: docs\.internal/);
      expect(stderr).toMatch(/answers requests whose Host is one of: [^\n]*memory\.example\.com/);
      expect(stderr).toMatch(/no bearer token exists yet[^\n]*"limbic auth code"/);
      const url = /at (http:\/\/[^ ]+)\/mcp/.exec(stderr)![1]!;
      // The public host passes the DNS-rebinding check; a name nobody allowed still does not.
      // The OAuth server was told the public URL: it is the issuer whatever address the request used.
      const metadata = (await (await fetch(`${url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
      expect(metadata.issuer).toBe('https://memory.example.com');
      expect(metadata.authorization_endpoint).toBe('https://memory.example.com/authorize');
      expect(await statusWithHost(url, 'elsewhere.example')).toBe(403);
      expect(await statusWithHost(url, 'memory.example.com')).not.toBe(403);
    } finally {
      const exited = new Promise((resolve) => child.on('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  });
});
