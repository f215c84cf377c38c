/**
 * Issue 36, how it is checked: two `limbic serve --http` processes on one PostgreSQL database
 * accept each other's grants and see each other's revocations. Both are started with one
 * `--public-url`, the address of a round-robin balancer in front of them (a node:http proxy on
 * 127.0.0.1 that keeps the Host header), so issuer and resource are the same wherever a request
 * lands. The steps by hand talk to each process directly (register on one, authorize on the other,
 * redeem on the first, use on both, refresh on one and replay on the other, revoke from the CLI or
 * /revoke); the v2 SDK client then runs its whole flow through the balancer.
 */
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { StreamableHTTPClientTransport, UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectIn, eraClient } from '../helpers/mcp-eras.js';
import { startPgServer, type PgServer } from '../helpers/pg-server.js';
import {
  approvalCode,
  authorizeUrl,
  callbackServer,
  grantsOf,
  limbic,
  localServer,
  mcpStatus,
  MemoryProvider,
  openConsent,
  pkce,
  register,
  serveHttp,
  submitConsent,
  tokenRequest,
  type Served,
} from './oauth-e2e-helpers.js';

const pgStarted = await startPgServer();
const pgServer: PgServer | undefined = 'url' in pgStarted ? pgStarted : undefined;
afterAll(async () => {
  await pgServer?.stop();
});
if (pgServer === undefined)
  describe('OAuth on two serve --http processes on one PostgreSQL', () => {
    it.skip(`skipped: ${'unavailable' in pgStarted ? pgStarted.unavailable : ''}`, () => undefined);
  });

// Each test runs the CLI several times (seconds each on a busy 2-core machine).
describe.runIf(pgServer !== undefined)('OAuth on two serve --http processes on one PostgreSQL', { timeout: 180_000 }, () => {
  let url: string;
  let processes: Served[] = [];
  let balancer: Awaited<ReturnType<typeof localServer>>;
  let publicUrl: string;
  let callback: Awaited<ReturnType<typeof callbackServer>>;
  const served = [0, 0];

  beforeAll(async () => {
    url = await (pgServer as PgServer).createDatabase();
    callback = await callbackServer();
    let next = 0;
    balancer = await localServer((req, res) => {
      const target = next;
      next = (next + 1) % 2;
      served[target] = (served[target] ?? 0) + 1;
      const to = new URL(processes[target]!.base);
      const forward = httpRequest(
        { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on('error', () => {
        res.writeHead(502);
        res.end();
      });
      req.pipe(forward);
    });
    publicUrl = balancer.url;
    processes = await Promise.all([serveHttp(url, ['--public-url', publicUrl]), serveHttp(url, ['--public-url', publicUrl])]);
  }, 90_000);

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await balancer?.close();
    await callback?.close();
    await pgServer?.dropDatabase(url);
  });

  const A = () => processes[0]!.base;
  const B = () => processes[1]!.base;
  const resource = () => `${publicUrl}/mcp`;

  /** Register on `registerOn`, show the consent page of `pageOn`, post the form where it points: the code and its verifier. */
  async function authorizeAcross(registerOn: string, pageOn: string, namespace = 'team') {
    const made = await register(registerOn, {
      client_name: 'Across processes',
      redirect_uris: [callback.redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const clientId = made.body.client_id as string;
    const { verifier, challenge } = pkce();
    const state = randomBytes(8).toString('hex');
    // The request names the public resource; the page is served by `pageOn` directly.
    const page = await openConsent(
      authorizeUrl(pageOn, {
        client_id: clientId,
        redirect_uri: callback.redirectUri,
        code_challenge: challenge,
        state,
        resource: resource(),
      }),
    );
    expect(page.status, page.html.slice(0, 300)).toBe(200);
    const answer = await submitConsent(page, approvalCode(url, namespace), { origin: publicUrl });
    expect(answer.status, answer.body.slice(0, 300)).toBe(303);
    const to = new URL(answer.location ?? '');
    expect(to.searchParams.get('state')).toBe(state);
    expect(to.searchParams.get('iss')).toBe(publicUrl);
    return { clientId, verifier, code: to.searchParams.get('code') ?? '' };
  }

  const redeemOn = (on: string, a: { clientId: string; verifier: string; code: string }) =>
    tokenRequest(on, {
      grant_type: 'authorization_code',
      code: a.code,
      code_verifier: a.verifier,
      redirect_uri: callback.redirectUri,
      client_id: a.clientId,
      resource: resource(),
    });

  const refreshOn = (on: string, clientId: string, refreshToken: string) =>
    tokenRequest(on, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });

  it('the metadata of both processes names the public URL as issuer and resource', async () => {
    for (const base of [A(), B()]) {
      const as = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as {
        issuer: string;
        token_endpoint: string;
      };
      expect(as.issuer).toBe(publicUrl);
      expect(as.token_endpoint).toBe(`${publicUrl}/token`);
      const pr = (await (await fetch(`${base}/.well-known/oauth-protected-resource/mcp`)).json()) as { resource: string };
      expect(pr.resource).toBe(resource());
    }
  });

  it('a grant made on one is redeemed and used on the other; a refresh rotated on one and replayed on the other revokes the family on both', async () => {
    const a = await authorizeAcross(A(), B());
    const redeemed = await redeemOn(A(), a);
    expect(redeemed.status, JSON.stringify(redeemed.body)).toBe(200);
    const access = redeemed.body.access_token as string;
    expect((await mcpStatus(`${A()}/mcp`, access)).status).toBe(200);
    expect((await mcpStatus(`${B()}/mcp`, access)).status).toBe(200);
    // The code is spent for both.
    expect((await redeemOn(B(), a)).body.error).toBe('invalid_grant');
    expect((await mcpStatus(`${B()}/mcp`, access)).status).toBe(401);

    const b = await authorizeAcross(B(), A());
    const first = await redeemOn(B(), b);
    expect(first.status).toBe(200);
    const rotated = await refreshOn(A(), b.clientId, first.body.refresh_token as string);
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    const newest = rotated.body.access_token as string;
    expect((await mcpStatus(`${B()}/mcp`, newest)).status).toBe(200);
    const replayed = await refreshOn(B(), b.clientId, first.body.refresh_token as string);
    expect(replayed.body.error).toBe('invalid_grant');
    expect((await mcpStatus(`${A()}/mcp`, newest)).status).toBe(401);
    expect((await mcpStatus(`${B()}/mcp`, newest)).status).toBe(401);
  });

  it('an approval code is single use across processes', async () => {
    const made = await register(A(), { client_name: 'Once', redirect_uris: [callback.redirectUri], token_endpoint_auth_method: 'none' });
    const clientId = made.body.client_id as string;
    const code = approvalCode(url, 'team');
    const pageOf = async (on: string) =>
      openConsent(
        authorizeUrl(on, {
          client_id: clientId,
          redirect_uri: callback.redirectUri,
          code_challenge: pkce().challenge,
          state: 's',
          resource: resource(),
        }),
      );
    expect((await submitConsent(await pageOf(A()), code, { origin: publicUrl })).status).toBe(303);
    const again = await submitConsent(await pageOf(B()), code, { origin: publicUrl });
    expect(again.status).not.toBe(303);
    expect(again.location).toBeNull();
  });

  it('`limbic token revoke g_…` (a third process) and /revoke on one are seen by both at the next request', async () => {
    const before = new Set(grantsOf(url).map((g) => g.id));
    const a = await authorizeAcross(A(), A());
    const t = await redeemOn(B(), a);
    const access = t.body.access_token as string;
    expect((await mcpStatus(`${A()}/mcp`, access)).status).toBe(200);
    expect((await mcpStatus(`${B()}/mcp`, access)).status).toBe(200);
    const grant = grantsOf(url).find((g) => !before.has(g.id));
    expect(grant?.namespace).toBe('team');
    const revoked = limbic(url, 'token', 'revoke', grant!.id);
    expect(revoked.status, revoked.stderr).toBe(0);
    expect((await mcpStatus(`${A()}/mcp`, access)).status).toBe(401);
    expect((await mcpStatus(`${B()}/mcp`, access)).status).toBe(401);

    const c = await authorizeAcross(B(), B());
    const u = await redeemOn(A(), c);
    const other = u.body.access_token as string;
    expect((await mcpStatus(`${A()}/mcp`, other)).status).toBe(200);
    const answer = await fetch(`${A()}/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: other, client_id: c.clientId }).toString(),
    });
    expect(answer.status).toBe(200);
    expect((await mcpStatus(`${B()}/mcp`, other)).status).toBe(401);
  });

  it('the v2 SDK client (2026-07-28) runs its whole flow through the balancer, and writes into team', async () => {
    const mcpUrl = new URL(resource());
    const provider = new MemoryProvider(callback.redirectUri, {
      client_name: 'Balanced SDK client',
      redirect_uris: [callback.redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider as OAuthClientProvider });
    const refused = await eraClient('modern')
      .connect(first)
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refused).toBeInstanceOf(UnauthorizedError);
    const page = await openConsent(provider.sentTo[0]!);
    expect(page.status).toBe(200);
    const answer = await submitConsent(page, approvalCode(url, 'team'));
    expect(answer.status, answer.body.slice(0, 300)).toBe(303);
    const params = new URL(answer.location ?? '').searchParams;
    expect(params.get('iss')).toBe(publicUrl);
    expect(params.get('state')).toBe(provider.stateValue);
    await first.finishAuth(params);
    const servedBefore = [...served];
    const client = await connectIn(
      'modern',
      eraClient('modern'),
      new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider as OAuthClientProvider }),
    );
    const name = `Balanced ${randomBytes(3).toString('hex')}`;
    try {
      for (let i = 0; i < 3; i++) {
        const wrote = await client.callTool({
          name: 'create_entities',
          arguments: { entities: [{ name: `${name} ${i}`, entityType: 'test', observations: ['through the balancer'] }] },
        });
        expect(wrote.isError, JSON.stringify(wrote.content)).toBeFalsy();
      }
    } finally {
      await client.close();
    }
    // Both processes served the authorized client.
    expect(served[0]! - servedBefore[0]!).toBeGreaterThan(0);
    expect(served[1]! - servedBefore[1]!).toBeGreaterThan(0);
    const team = limbic(url, '--namespace', 'team', 'export');
    expect(team.stdout).toContain(`${name} 2`);
    expect(limbic(url, 'export').stdout).not.toContain(name);
  });
});
