/**
 * Issue 36, how it is checked (second item), by hand with fetch against the real CLI's
 * `serve --http`: a reused authorization code (and its grant then revoked), a wrong verifier, a
 * missing challenge, a foreign redirect URI, a foreign `resource`, a used refresh token (the family
 * revoked), a grant revoked with `limbic token revoke g_…`, a token of another namespace or for
 * another resource, a forged consent POST — each refused, and none answered by a redirect that
 * carries a code to a host other than the client's registered one.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/fixtures.js';
import { httpClient } from '../helpers/mcp-eras.js';
import { connect, rawRequest, textOf } from './http-helpers.js';
import {
  approvalCode,
  approve,
  authorizeUrl,
  callbackServer,
  grantsOf,
  limbic,
  mcpStatus,
  openConsent,
  pkce,
  register,
  serveHttp,
  submitConsent,
  tokenRequest,
  type Served,
} from './oauth-e2e-helpers.js';

const ATTACKER = 'https://attacker.example';

/** A response is no way to a code for anyone but the client: no Location to a foreign host, no code in it or in the body. */
function expectNoCodeLeaves(answer: { status: number; location: string | null; body?: string }, client: string): void {
  if (answer.location !== null) {
    const to = new URL(answer.location, 'http://relative.invalid');
    expect(to.host, `redirected to ${to.host}`).not.toBe(new URL(ATTACKER).host);
    if (to.host !== 'relative.invalid') expect(to.origin).toBe(new URL(client).origin);
    expect(to.searchParams.get('code')).toBeNull();
  }
  expect(answer.body ?? '').not.toMatch(/limbic_ac_/);
}

// Each test runs the CLI several times (seconds each on a busy 2-core machine).
describe('attacks on the authorization server, by hand', { timeout: 180_000 }, () => {
  const { dir, cleanup } = tempDir('limbic-oauth-attacks-');
  const db = join(dir, 'memory.db');
  let served: Served;
  let base: string;
  let mcp: string;
  let callback: Awaited<ReturnType<typeof callbackServer>>;
  let clientId: string;

  beforeAll(async () => {
    callback = await callbackServer();
    served = await serveHttp(db);
    base = served.base;
    mcp = `${base}/mcp`;
    const made = await register(base, {
      client_name: 'By hand',
      redirect_uris: [callback.redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    clientId = made.body.client_id as string;
  }, 90_000);

  afterAll(async () => {
    await served?.stop();
    await callback?.close();
    cleanup();
  });

  /** The consent page of a well-formed request by the registered client; `params` override its query. */
  const request = (params: Record<string, string | undefined> = {}) => {
    const { verifier, challenge } = pkce();
    const state = randomBytes(8).toString('hex');
    return {
      verifier,
      state,
      url: authorizeUrl(base, { client_id: clientId, redirect_uri: callback.redirectUri, code_challenge: challenge, state, ...params }),
    };
  };

  /** A full approval for `namespace`: the code and what redeems it. */
  const authorizationCode = async (namespace = 'team', ...codeOptions: string[]) => {
    const r = request();
    const cb = await approve(r.url, approvalCode(db, namespace, ...codeOptions));
    expect(cb.searchParams.get('state')).toBe(r.state);
    expect(cb.searchParams.get('iss')).toBe(base);
    return { code: cb.searchParams.get('code') ?? '', verifier: r.verifier };
  };

  const redeem = (code: string, verifier: string, more: Record<string, string> = {}) =>
    tokenRequest(base, {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: callback.redirectUri,
      client_id: clientId,
      resource: mcp,
      ...more,
    });

  const refresh = (refreshToken: string) =>
    tokenRequest(base, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });

  const tokens = async (namespace = 'team', ...codeOptions: string[]) => {
    const { code, verifier } = await authorizationCode(namespace, ...codeOptions);
    const got = await redeem(code, verifier);
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect(got.headers.get('cache-control')).toMatch(/no-store/);
    return { access: got.body.access_token as string, refresh: got.body.refresh_token as string, scope: got.body.scope as string };
  };

  it('an unknown client and a foreign redirect URI get an error page, never a redirect', async () => {
    for (const url of [
      request({ client_id: 'c_000000000000' }).url,
      request({ client_id: `${ATTACKER}/client.json` }).url,
      request({ redirect_uri: `${ATTACKER}/callback` }).url,
      // Same host, another path; another loopback host name; a fragment.
      request({ redirect_uri: `${callback.url}/elsewhere` }).url,
      request({ redirect_uri: callback.redirectUri.replace('127.0.0.1', 'localhost') }).url,
      request({ redirect_uri: `${callback.redirectUri}#x` }).url,
    ]) {
      const page = await openConsent(url);
      expect(page.status, url.toString()).toBe(400);
      expect(page.headers.get('location')).toBeNull();
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.html).not.toMatch(/<form/i);
    }
  });

  it('a foreign redirect URI swapped into the consent form is refused, with no code to anyone', async () => {
    const r = request();
    const page = await openConsent(r.url);
    expect(page.status).toBe(200);
    const code = approvalCode(db, 'team');
    const answer = await submitConsent(page, code, { change: (f) => f.set('redirect_uri', `${ATTACKER}/callback`) });
    expect(answer.status).not.toBe(303);
    expectNoCodeLeaves(answer, callback.redirectUri);
  });

  it('a missing or plain PKCE challenge never yields a code', async () => {
    for (const params of [
      { code_challenge: undefined },
      { code_challenge_method: 'plain' },
      { code_challenge_method: undefined },
      { code_challenge: 'short' },
    ]) {
      const page = await openConsent(request(params).url);
      if (page.status === 303) {
        // An error that may redirect: to the registered client only, invalid_request, with iss.
        const to = new URL(page.headers.get('location') ?? '');
        expect(to.origin + to.pathname).toBe(callback.redirectUri);
        expect(to.searchParams.get('error')).toBe('invalid_request');
        expect(to.searchParams.get('iss')).toBe(base);
        expect(to.searchParams.get('code')).toBeNull();
      } else {
        expect(page.status, JSON.stringify(params)).toBe(400);
        expect(page.html).not.toMatch(/<form/i);
      }
    }
    // Removed from the consent form after the page was shown: no code either.
    const page = await openConsent(request().url);
    const answer = await submitConsent(page, approvalCode(db, 'team'), { change: (f) => f.delete('code_challenge') });
    expectNoCodeLeaves(answer, callback.redirectUri);
    if (answer.status === 303) expect(new URL(answer.location ?? '').searchParams.get('error')).toBe('invalid_request');
  });

  it('a foreign or missing resource is refused (invalid_target), at /authorize, in the form and at /token', async () => {
    for (const resource of [`${ATTACKER}/mcp`, `${base}/other`, undefined]) {
      const page = await openConsent(request({ resource }).url);
      expect(page.status).toBe(303);
      const to = new URL(page.headers.get('location') ?? '');
      expect(to.origin + to.pathname).toBe(callback.redirectUri);
      expect(to.searchParams.get('error')).toBe('invalid_target');
      expect(to.searchParams.get('code')).toBeNull();
    }
    const page = await openConsent(request().url);
    const answer = await submitConsent(page, approvalCode(db, 'team'), { change: (f) => f.set('resource', `${ATTACKER}/mcp`) });
    expectNoCodeLeaves(answer, callback.redirectUri);
    // The code was for this server's /mcp: asking /token for another resource is refused.
    const { code, verifier } = await authorizationCode();
    const got = await redeem(code, verifier, { resource: `${ATTACKER}/mcp` });
    expect(got.status).toBe(400);
    expect(got.body.error).toMatch(/^invalid_(target|grant)$/);
    expect(got.body.access_token).toBeUndefined();
  });

  it('a wrong verifier, another redirect URI or another client at /token gets no tokens', async () => {
    const changes: Record<string, string>[] = [
      { code_verifier: pkce().verifier },
      { redirect_uri: `${ATTACKER}/callback` },
      { redirect_uri: `${callback.url}/elsewhere` },
      { client_id: 'c_000000000000' },
    ];
    for (const change of changes) {
      const { code, verifier } = await authorizationCode();
      const got = await redeem(code, verifier, change);
      expect(got.status, JSON.stringify(change)).toBeGreaterThanOrEqual(400);
      expect(got.body.error).toMatch(/^invalid_(grant|client|request)$/);
      expect(got.body.access_token).toBeUndefined();
      expect(JSON.stringify(got.body)).not.toContain(code);
    }
  });

  it('a reused authorization code is refused, and the grant it made is revoked (its tokens stop working)', async () => {
    const { code, verifier } = await authorizationCode();
    const first = await redeem(code, verifier);
    expect(first.status).toBe(200);
    const access = first.body.access_token as string;
    expect((await mcpStatus(mcp, access)).status).toBe(200);
    const again = await redeem(code, verifier);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
    expect(again.body.access_token).toBeUndefined();
    expect((await mcpStatus(mcp, access)).status).toBe(401);
    expect((await refresh(first.body.refresh_token as string)).body.error).toBe('invalid_grant');
  });

  it('a used refresh token is refused and revokes the whole family', async () => {
    const t = await tokens();
    const rotated = await refresh(t.refresh);
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    const next = { access: rotated.body.access_token as string, refresh: rotated.body.refresh_token as string };
    expect(next.refresh).not.toBe(t.refresh);
    expect((await mcpStatus(mcp, next.access)).status).toBe(200);
    const replayed = await refresh(t.refresh);
    expect(replayed.status).toBe(400);
    expect(replayed.body.error).toBe('invalid_grant');
    expect(replayed.body.access_token).toBeUndefined();
    // The family is gone: the newest access and refresh tokens too.
    expect((await mcpStatus(mcp, next.access)).status).toBe(401);
    expect((await refresh(next.refresh)).status).toBe(400);
  });

  it('a refresh naming a foreign resource is refused (invalid_target) and gets no tokens', async () => {
    const t = await tokens();
    const foreign = await tokenRequest(base, {
      grant_type: 'refresh_token',
      refresh_token: t.refresh,
      client_id: clientId,
      resource: `${ATTACKER}/mcp`,
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error).toBe('invalid_target');
    expect(foreign.body.access_token).toBeUndefined();
    // Refused before the token was looked at: the client's own refresh still works.
    expect((await refresh(t.refresh)).status).toBe(200);
  });

  it('a grant revoked with `limbic token revoke g_…` is refused at the next request (401, invalid_token)', async () => {
    const before = new Set(grantsOf(db).map((g) => g.id));
    const t = await tokens();
    const grant = grantsOf(db).find((g) => !before.has(g.id));
    expect(grant?.id).toMatch(/^g_[0-9a-f]{12}$/);
    expect(grant?.namespace).toBe('team');
    expect((await mcpStatus(mcp, t.access)).status).toBe(200);
    const revoked = limbic(db, 'token', 'revoke', grant!.id);
    expect(revoked.status, revoked.stderr).toBe(0);
    const after = await mcpStatus(mcp, t.access);
    expect(after.status).toBe(401);
    expect(after.challenge).toMatch(/^Bearer /);
    expect(after.challenge).toContain('error="invalid_token"');
    expect(after.challenge).toContain(`resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`);
    expect((await refresh(t.refresh)).body.error).toBe('invalid_grant');
    expect(grantsOf(db).map((g) => g.id)).not.toContain(grant!.id);
  });

  it("a grant's listen stream (2026-07-28) hears its namespace's writes while the grant lives, and is closed when it is revoked", async () => {
    const before = new Set(grantsOf(db).map((g) => g.id));
    const t = await tokens();
    const grant = grantsOf(db).find((g) => !before.has(g.id));
    const listening = await httpClient('modern', mcp, { token: t.access });
    const heard: string[] = [];
    listening.setNotificationHandler('notifications/resources/updated', (n) => void heard.push(n.params.uri));
    try {
      const subscription = await listening.listen({ resourceSubscriptions: ['memory://knowledge-graph'] });
      const writer = await connect(base, limbic(db, 'token', 'create', '--namespace', 'team').stdout.trim());
      const write = (name: string) =>
        writer.ok('create_entities', {
          entities: [{ name: `${name} ${randomBytes(3).toString('hex')}`, entityType: 't', observations: [] }],
        });
      try {
        // While the grant lives, its stream hears a write in its namespace, and stays open.
        await write('Before revoke');
        await expect.poll(() => heard.length, { timeout: 10_000 }).toBe(1);
        expect(limbic(db, 'token', 'revoke', grant!.id).status).toBe(0);
        // A write after the revocation: the revoked grant's stream is closed before it could hear it.
        await write('After revoke');
        const closed = await Promise.race([subscription.closed, new Promise((r) => setTimeout(() => r('open'), 15_000).unref())]);
        expect(closed).toBe('remote');
        expect(heard).toHaveLength(1);
      } finally {
        await writer.close();
      }
    } finally {
      await listening.close().catch(() => undefined);
    }
  });

  it('/revoke (RFC 7009) ends the grant; it answers 200 whatever it is given', async () => {
    const t = await tokens();
    const answer = await fetch(`${base}/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: t.refresh, client_id: clientId }).toString(),
    });
    expect(answer.status).toBe(200);
    expect((await mcpStatus(mcp, t.access)).status).toBe(401);
    const junk = await fetch(`${base}/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: 'limbic_rt_not-a-token', client_id: clientId }).toString(),
    });
    expect(junk.status).toBe(200);
  });

  it('a token is held to its namespace and its scope: team sees none of default, a read-only code gives a read-only grant', async () => {
    const defaultToken = limbic(db, 'token', 'create', '--namespace', 'default').stdout.trim();
    const secret = `Only in default ${randomBytes(3).toString('hex')}`;
    const d = await connect(base, defaultToken);
    await d.ok('create_entities', { entities: [{ name: secret, entityType: 'test', observations: ['not for team'] }] });
    await d.close();
    const t = await tokens('team');
    const c = await connect(base, t.access);
    const team = await c.ok<{ entities: { name: string }[] }>('read_graph');
    expect(team.entities.map((e) => e.name)).not.toContain(secret);
    expect((await c.call('open_nodes', { names: [secret] })).structuredContent).toMatchObject({ entities: [] });
    await c.close();

    const ro = await tokens('team', '--read-only');
    expect(ro.scope).toBe('memory:read');
    // Served like a read-only bearer token: every writing tool answers isError saying so.
    const r = await connect(base, ro.access);
    const refused = await r.call('create_entities', { entities: [{ name: 'read-only write', entityType: 't', observations: [] }] });
    await r.close();
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('read-only: create_entities');
    expect(limbic(db, '--namespace', 'team', 'export').stdout).not.toContain('read-only write');
  });

  it('a bearer token typed into the consent page grants its own namespace; a wrong one grants nothing', async () => {
    const bearer = limbic(db, 'token', 'create', '--namespace', 'bearer-ns', '--read-only').stdout.trim();
    const r = request();
    const cb = await approve(r.url, bearer);
    const got = await redeem(cb.searchParams.get('code') ?? '', r.verifier);
    expect(got.status).toBe(200);
    expect(got.body.scope).toBe('memory:read');
    const before = grantsOf(db).filter((g) => g.namespace === 'bearer-ns');
    expect(before).toHaveLength(1);
    const page = await openConsent(request().url);
    const wrong = await submitConsent(page, 'limbic_not-a-token-of-this-server-000000000000000');
    expect(wrong.status).not.toBe(303);
    expectNoCodeLeaves(wrong, callback.redirectUri);
  });

  it('a token for another resource is refused at /mcp: another process on the same data, or this one under another host name', async () => {
    const t = await tokens();
    expect((await mcpStatus(mcp, t.access)).status).toBe(200);
    // Another `serve --http` on the same database: same grants, but its resource is its own URL.
    const other = await serveHttp(db);
    try {
      expect(other.base).not.toBe(base);
      expect((await mcpStatus(`${other.base}/mcp`, t.access)).status).toBe(401);
    } finally {
      await other.stop();
    }
    // This process reached as localhost: the resource is http://localhost:PORT/mcp, not the token's.
    const port = new URL(base).port;
    const viaLocalhost = await rawRequest(base, {
      headers: {
        host: `localhost:${port}`,
        authorization: `Bearer ${t.access}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '0' } },
      }),
    });
    expect(viaLocalhost.status).toBe(401);
  });

  it('a forged consent POST (no cookie, another cookie, a foreign Origin) is refused, and leaves the code usable', async () => {
    const r = request();
    const page = await openConsent(r.url);
    const code = approvalCode(db, 'team');
    const forgeries = [
      { cookie: '' },
      { cookie: page.cookie.replace(/=([^;]*)/, '=forged-value') },
      { origin: ATTACKER },
      // Another origin on this very host name (another local app's page): it passes the rebinding guard, not the issuer check.
      { origin: 'http://127.0.0.1:1' },
      { origin: base.replace('127.0.0.1', 'localhost') },
    ];
    for (const forged of forgeries) {
      const answer = await submitConsent(page, code, forged);
      expect(answer.status, JSON.stringify(forged)).toBeGreaterThanOrEqual(400);
      expectNoCodeLeaves(answer, callback.redirectUri);
    }
    const answer = await submitConsent(page, code);
    expect(answer.status).toBe(303);
    expect(new URL(answer.location ?? '').searchParams.get('code')).toMatch(/^limbic_ac_/);
  });

  it('Deny sends access_denied with state and iss, and no code; an approval code is single use', async () => {
    const r = request();
    const denied = await submitConsent(await openConsent(r.url), '', { decision: 'deny' });
    expect(denied.status).toBe(303);
    const to = new URL(denied.location ?? '');
    expect(to.origin + to.pathname).toBe(callback.redirectUri);
    expect(to.searchParams.get('error')).toBe('access_denied');
    expect(to.searchParams.get('state')).toBe(r.state);
    expect(to.searchParams.get('iss')).toBe(base);
    expect(to.searchParams.get('code')).toBeNull();

    const code = approvalCode(db, 'team');
    expect((await submitConsent(await openConsent(request().url), code)).status).toBe(303);
    const reused = await submitConsent(await openConsent(request().url), code);
    expect(reused.status).not.toBe(303);
    expectNoCodeLeaves(reused, callback.redirectUri);
  });

  // Last: it spends this process's allowance of wrong codes.
  it('wrong approval codes are rate-limited (429), after which even a right one is not taken', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7 && !statuses.includes(429); i++) {
      const answer = await submitConsent(await openConsent(request().url), 'AAAA-BBBB-CCCC');
      expectNoCodeLeaves(answer, callback.redirectUri);
      statuses.push(answer.status);
    }
    expect(statuses).toContain(429);
    expect(statuses.every((s) => s !== 303)).toBe(true);
    const right = await submitConsent(await openConsent(request().url), approvalCode(db, 'team'));
    expect(right.status).toBe(429);
    expectNoCodeLeaves(right, callback.redirectUri);
    expect(served.stderr()).not.toMatch(/limbic_(at|rt|ac)_|AAAA-BBBB-CCCC/);
  });
});
