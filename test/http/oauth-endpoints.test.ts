/**
 * Issue 36: `serve --http` as its own OAuth 2.1 authorization server, driven with plain fetch over a
 * real server on SQLite: discovery, the 401 challenge, registration, /authorize's error paths (which
 * redirect and which never do), the consent POST (CSRF, wrong codes, approval codes, bearer tokens,
 * read-only), /token (PKCE, redirect URI, resource), refresh rotation and reuse, the audience check
 * at /mcp, revocation, and the whole flow to a tool call in the granted namespace.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, INITIALIZE, rawRequest } from './http-helpers.js';
import {
  REDIRECT,
  authorizationCode,
  authorizeQuery,
  getConsent,
  oauthTokens,
  pkce,
  postConsent,
  register,
  startOAuthServer,
  tokenRequest,
  type OAuthTestServer,
} from './oauth-helpers.js';

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** What /mcp answers an initialize with this bearer (and Host, when given). */
async function mcpStatus(url: string, bearer: string, host?: string): Promise<{ status: number; challenge: unknown; body: string }> {
  const headers: Record<string, string> = { ...JSON_HEADERS, authorization: `Bearer ${bearer}` };
  if (host !== undefined) headers.host = host;
  const answer = await rawRequest(url, { headers, body: INITIALIZE });
  return { status: answer.status, challenge: answer.headers['www-authenticate'], body: answer.body };
}

describe('OAuth: discovery and the 401 challenge', () => {
  let s: OAuthTestServer;
  beforeAll(async () => {
    s = await startOAuthServer();
  });
  afterAll(async () => {
    await s.close();
  });

  it('serves RFC 9728 and RFC 8414 documents whose issuer is exactly the URL they were fetched from', async () => {
    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const response = await fetch(`${s.url}${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(await response.json()).toEqual({
        resource: `${s.url}/mcp`,
        authorization_servers: [s.url],
        scopes_supported: ['memory:read', 'memory:write'],
        bearer_methods_supported: ['header'],
        resource_name: 'Limbic',
      });
    }
    const response = await fetch(`${s.url}/.well-known/oauth-authorization-server`);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    const metadata = (await response.json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({
      issuer: s.url,
      authorization_endpoint: `${s.url}/authorize`,
      token_endpoint: `${s.url}/token`,
      registration_endpoint: `${s.url}/register`,
      revocation_endpoint: `${s.url}/revoke`,
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      scopes_supported: ['memory:read', 'memory:write'],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    });
    expect(metadata.token_endpoint_auth_methods_supported).toContain('none');
    // Reached by another name, the documents name that one.
    const port = new URL(s.url).port;
    const byName = await rawRequest(s.url, {
      method: 'GET',
      path: '/.well-known/oauth-authorization-server',
      headers: { host: `localhost:${port}` },
    });
    expect(JSON.parse(byName.body).issuer).toBe(`http://localhost:${port}`);
    expect((await fetch(`${s.url}/.well-known/openid-configuration`)).status).toBe(404);
  });

  it('answers CORS preflights of the cookie-less endpoints, and lets any Origin call them, but not /mcp or /authorize', async () => {
    const preflight = await fetch(`${s.url}/token`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    const foreign = { origin: 'https://app.example' };
    expect((await rawRequest(s.url, { method: 'GET', path: '/.well-known/oauth-authorization-server', headers: foreign })).status).toBe(
      200,
    );
    const token = await rawRequest(s.url, {
      path: '/token',
      headers: { ...foreign, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=refresh_token',
    });
    expect(token.status).toBe(401); // no client: refused by OAuth, not by the rebinding guard
    expect((await rawRequest(s.url, { path: '/mcp', headers: { ...foreign, ...JSON_HEADERS }, body: INITIALIZE })).status).toBe(403);
    expect((await rawRequest(s.url, { method: 'GET', path: '/authorize', headers: foreign })).status).toBe(403);
    // The Host check stays everywhere.
    expect(
      (await rawRequest(s.url, { method: 'GET', path: '/.well-known/oauth-authorization-server', headers: { host: 'evil.example' } }))
        .status,
    ).toBe(403);
  });

  it('401 at /mcp names the resource metadata and the scopes; a shown token adds invalid_token', async () => {
    const none = await rawRequest(s.url, { headers: JSON_HEADERS, body: INITIALIZE });
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toBe(
      `Bearer realm="limbic", resource_metadata="${s.url}/.well-known/oauth-protected-resource/mcp", scope="memory:read memory:write"`,
    );
    expect(JSON.parse(none.body).error.message).toMatch(/limbic auth code/);
    const wrong = await mcpStatus(s.url, 'limbic_at_not-a-real-token');
    expect(wrong.status).toBe(401);
    expect(wrong.challenge).toBe(
      `Bearer realm="limbic", error="invalid_token", resource_metadata="${s.url}/.well-known/oauth-protected-resource/mcp", scope="memory:read memory:write"`,
    );
    expect(wrong.body).not.toContain('not-a-real-token');
  });
});

describe('OAuth: --public-url', () => {
  let s: OAuthTestServer;
  beforeAll(async () => {
    s = await startOAuthServer({ publicUrl: 'https://memory.example.com' });
  });
  afterAll(async () => {
    await s.close();
  });

  it('names the public origin as issuer and resource, and answers requests that name its host', async () => {
    const metadata = await rawRequest(s.url, {
      method: 'GET',
      path: '/.well-known/oauth-protected-resource/mcp',
      headers: { host: 'memory.example.com' },
    });
    expect(metadata.status).toBe(200);
    expect(JSON.parse(metadata.body)).toMatchObject({
      resource: 'https://memory.example.com/mcp',
      authorization_servers: ['https://memory.example.com'],
    });
    const server = JSON.parse((await rawRequest(s.url, { method: 'GET', path: '/.well-known/oauth-authorization-server' })).body);
    expect(server.issuer).toBe('https://memory.example.com');
    expect(server.token_endpoint).toBe('https://memory.example.com/token');
    const none = await rawRequest(s.url, { headers: { ...JSON_HEADERS, host: 'memory.example.com' }, body: INITIALIZE });
    expect(none.headers['www-authenticate']).toContain(
      'resource_metadata="https://memory.example.com/.well-known/oauth-protected-resource/mcp"',
    );
  });
});

describe('OAuth: registration', () => {
  let s: OAuthTestServer;
  beforeAll(async () => {
    s = await startOAuthServer();
  });
  afterAll(async () => {
    await s.close();
  });

  it('registers public and confidential clients, refuses bad redirect URIs, and bounds registrations per address', async () => {
    const open = await register(s.url);
    expect(open.status).toBe(201);
    expect(open.body).toMatchObject({ redirect_uris: [REDIRECT], client_name: 'Test client', token_endpoint_auth_method: 'none' });
    expect(open.body.client_id).toMatch(/^c_[0-9a-f]{12}$/);
    expect(open.body.client_secret).toBeUndefined();
    const confidential = await register(s.url, { token_endpoint_auth_method: 'client_secret_post' });
    expect(confidential.status).toBe(201);
    expect(confidential.body.client_secret).toEqual(expect.any(String));
    expect(confidential.body.client_secret_expires_at).toBe(0);
    for (const bad of ['javascript:alert(1)', 'http://example.com/cb', 'https://example.com/cb#frag']) {
      const refused = await register(s.url, { redirect_uris: [bad] });
      expect(refused.status, bad).toBe(400);
      expect(refused.body.error).toBe('invalid_redirect_uri');
    }
    expect((await register(s.url, { redirect_uris: [] })).body.error).toBe('invalid_client_metadata');
    expect((await register(s.url, { grant_types: ['client_credentials'] })).status).toBe(400);
    // Two made above; the bound is 20 an hour per address.
    for (let i = 2; i < 20; i++) expect((await register(s.url)).status).toBe(201);
    const over = await register(s.url);
    expect(over.status).toBe(429);
    expect(String(over.body.error_description)).toMatch(/20 clients in the last hour/);
  });
});

describe('OAuth: authorize, consent, tokens', () => {
  let s: OAuthTestServer;
  let client: string;
  beforeAll(async () => {
    s = await startOAuthServer();
    client = String((await register(s.url, { client_name: '<script>alert("x")</script> & Co' })).body.client_id);
  });
  afterAll(async () => {
    await s.close();
  });

  it('never redirects for an unknown client, a missing or unregistered redirect URI', async () => {
    const { challenge } = pkce();
    for (const overrides of [
      { client_id: 'c_000000000000' },
      { client_id: undefined },
      { redirect_uri: 'https://attacker.example/cb' },
      { redirect_uri: undefined },
      { redirect_uri: `${REDIRECT}/more` },
    ]) {
      const page = await getConsent(s.url, authorizeQuery(s.url, client, challenge, overrides));
      expect(page.status, JSON.stringify(overrides)).toBe(400);
      expect(page.headers.get('location')).toBeNull();
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.html).not.toContain('attacker.example');
      expect(page.cookie).toBeUndefined();
    }
  });

  it('redirects the other errors to the registered URI with error, state and iss, never a code', async () => {
    const { challenge } = pkce();
    const cases: [Record<string, string | undefined>, string][] = [
      [{ code_challenge: undefined }, 'invalid_request'],
      [{ code_challenge_method: 'plain' }, 'invalid_request'],
      [{ code_challenge_method: undefined }, 'invalid_request'],
      [{ code_challenge: 'short' }, 'invalid_request'],
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ resource: undefined }, 'invalid_target'],
      [{ resource: 'https://other.example/mcp' }, 'invalid_target'],
      [{ scope: 'memory:read admin' }, 'invalid_scope'],
    ];
    for (const [overrides, error] of cases) {
      const response = await fetch(`${s.url}/authorize?${authorizeQuery(s.url, client, challenge, overrides).toString()}`, {
        redirect: 'manual',
      });
      expect(response.status, JSON.stringify(overrides)).toBe(303);
      const target = new URL(response.headers.get('location') ?? '');
      expect(`${target.origin}${target.pathname}`).toBe(REDIRECT);
      expect(target.searchParams.get('error')).toBe(error);
      expect(target.searchParams.get('state')).toBe('st-123');
      expect(target.searchParams.get('iss')).toBe(s.url);
      expect(target.searchParams.get('code')).toBeNull();
    }
  });

  it('shows a consent page that escapes what the client said, runs no script, and may not be framed', async () => {
    const { challenge } = pkce();
    const page = await getConsent(s.url, authorizeQuery(s.url, client, challenge, { state: '"><script>alert(1)</script>' }));
    expect(page.status).toBe(200);
    expect(page.html).not.toMatch(/<script/i);
    expect(page.html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; Co');
    expect(page.html).toContain('127.0.0.1:9'); // the host it will redirect to
    expect(page.html).toContain(client);
    expect(page.hidden.state).toBe('"><script>alert(1)</script>');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('cache-control')).toBe('no-store');
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("form-action 'self' http://127.0.0.1:9");
    expect(page.cookie).toMatch(/^limbic_csrf=/);
    expect(page.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict/);
    expect(page.hidden.csrf).toBe(page.cookie?.split('=')[1]);
  });

  it('refuses a consent POST without the CSRF cookie, with another one, or from another origin', async () => {
    const { challenge } = pkce();
    const page = await getConsent(s.url, authorizeQuery(s.url, client, challenge));
    const code = await s.approvalCode('team');
    const fields = { ...page.hidden, code, action: 'allow' };
    for (const [cookie, headers] of [
      [undefined, {}],
      ['limbic_csrf=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', {}],
      [page.cookie, { origin: `http://localhost:${new URL(s.url).port}` }],
    ] as const) {
      const posted = await postConsent(s.url, fields, cookie, headers);
      expect(posted.status).toBe(403);
      expect(posted.headers.get('location')).toBeNull();
    }
    // The code was not spent by the refused posts.
    const ok = await postConsent(s.url, fields, page.cookie, { origin: s.url });
    expect(ok.status).toBe(303);
    expect(new URL(ok.headers.get('location') ?? '').searchParams.get('code')).toMatch(/^limbic_ac_/);
  });

  it('an approval code is single use; a wrong code re-shows the page; Deny redirects with access_denied', async () => {
    const code = await s.approvalCode('team');
    const first = await authorizationCode(s.url, client, code.toLowerCase().replace(/-/g, ' '));
    expect(first.location.searchParams.get('state')).toBe('st-123');
    expect(first.location.searchParams.get('iss')).toBe(s.url);
    const { challenge } = pkce();
    const page = await getConsent(s.url, authorizeQuery(s.url, client, challenge));
    const again = await postConsent(s.url, { ...page.hidden, code, action: 'allow' }, page.cookie);
    expect(again.status).toBe(400);
    expect(again.headers.get('location')).toBeNull();
    expect(await again.text()).toMatch(/not valid here/);
    const denied = await postConsent(s.url, { ...page.hidden, code: '', action: 'deny' }, page.cookie);
    expect(denied.status).toBe(303);
    const target = new URL(denied.headers.get('location') ?? '');
    expect(target.searchParams.get('error')).toBe('access_denied');
    expect(target.searchParams.get('code')).toBeNull();
    expect(target.searchParams.get('iss')).toBe(s.url);
  });

  it('accepts a bearer token of the namespace instead of a code, and a read-only code grants memory:read only', async () => {
    const bearer = await s.bearer('notes');
    const viaToken = await oauthTokens(s.url, client, bearer);
    expect(viaToken.scope).toBe('memory:read memory:write');
    const writer = await connect(s.url, viaToken.access_token);
    await writer.ok('create_entities', { entities: [{ name: 'ViaToken', entityType: 't', observations: [] }] });
    await writer.close();
    const reader = await connect(s.url, bearer);
    expect((await reader.ok<{ entities: { name: string }[] }>('open_nodes', { names: ['ViaToken'] })).entities).toHaveLength(1);
    await reader.close();

    const readOnly = await oauthTokens(s.url, client, await s.approvalCode('notes', true));
    expect(readOnly.scope).toBe('memory:read');
    const limited = await connect(s.url, readOnly.access_token);
    const refused = await limited.call('create_entities', { entities: [{ name: 'Nope', entityType: 't', observations: [] }] });
    expect(refused.isError).toBe(true);
    expect((await limited.ok<{ entities: { name: string }[] }>('open_nodes', { names: ['ViaToken'] })).entities).toHaveLength(1);
    await limited.close();
  });

  it('checks the verifier, the redirect URI and the resource at /token; a code used twice revokes its grant', async () => {
    const exchange = (code: string, verifier: string, extra: Record<string, string> = {}) =>
      tokenRequest(s.url, {
        grant_type: 'authorization_code',
        client_id: client,
        code,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
        ...extra,
      });
    const wrongVerifier = await authorizationCode(s.url, client, await s.approvalCode('team'));
    const refused = await exchange(wrongVerifier.code, pkce().verifier);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_grant');
    expect(refused.headers.get('cache-control')).toBe('no-store');
    const wrongRedirect = await authorizationCode(s.url, client, await s.approvalCode('team'));
    expect((await exchange(wrongRedirect.code, wrongRedirect.verifier, { redirect_uri: 'http://127.0.0.1:10/callback' })).body.error).toBe(
      'invalid_grant',
    );
    const wrongResource = await authorizationCode(s.url, client, await s.approvalCode('team'));
    expect((await exchange(wrongResource.code, wrongResource.verifier, { resource: 'https://other.example/mcp' })).body.error).toBe(
      'invalid_target',
    );
    const other = String((await register(s.url)).body.client_id);
    const otherClient = await authorizationCode(s.url, client, await s.approvalCode('team'));
    expect((await exchange(otherClient.code, otherClient.verifier, { client_id: other })).body.error).toBe('invalid_grant');

    const good = await authorizationCode(s.url, client, await s.approvalCode('team'));
    const tokens = await exchange(good.code, good.verifier, { resource: `${s.url}/mcp` });
    expect(tokens.status).toBe(200);
    expect(tokens.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'memory:read memory:write' });
    const access = String(tokens.body.access_token);
    expect(access).toMatch(/^limbic_at_/);
    expect(String(tokens.body.refresh_token)).toMatch(/^limbic_rt_/);
    expect((await mcpStatus(s.url, access)).status).toBe(200);
    const reused = await exchange(good.code, good.verifier);
    expect(reused.body.error).toBe('invalid_grant');
    expect((await mcpStatus(s.url, access)).status).toBe(401);
  });

  it('rotates refresh tokens; a used one coming back revokes the whole grant', async () => {
    const first = await oauthTokens(s.url, client, await s.approvalCode('team'));
    const refresh = (token: string, extra: Record<string, string> = {}) =>
      tokenRequest(s.url, { grant_type: 'refresh_token', client_id: client, refresh_token: token, ...extra });
    const second = await refresh(first.refresh_token);
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    expect((await mcpStatus(s.url, String(second.body.access_token))).status).toBe(200);
    const narrowed = await refresh(String(second.body.refresh_token), { scope: 'memory:read' });
    expect(narrowed.body.scope).toBe('memory:read');
    expect((await refresh(String(narrowed.body.refresh_token), { resource: 'https://other.example/mcp' })).body.error).toBe(
      'invalid_target',
    );
    // Reached by another name, naming that name's resource: refused, and the refresh token is not spent.
    const port = new URL(s.url).port;
    const elsewhere = await rawRequest(s.url, {
      path: '/token',
      headers: { host: `localhost:${port}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        client_id: client,
        refresh_token: String(narrowed.body.refresh_token),
        resource: `http://localhost:${port}/mcp`,
      }).toString(),
    });
    expect(elsewhere.status).toBe(400);
    expect(JSON.parse(elsewhere.body).error).toBe('invalid_target');
    const stillGood = await refresh(String(narrowed.body.refresh_token), { resource: `${s.url}/mcp` });
    expect(stillGood.status).toBe(200);
    expect(stillGood.body.scope).toBe('memory:read');
    const reused = await refresh(first.refresh_token);
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe('invalid_grant');
    expect((await mcpStatus(s.url, String(stillGood.body.access_token))).status).toBe(401);
    expect((await refresh(String(stillGood.body.refresh_token))).body.error).toBe('invalid_grant');
  });

  it('refuses at /mcp an access token issued for another resource (the audience check)', async () => {
    const tokens = await oauthTokens(s.url, client, await s.approvalCode('team'));
    const port = new URL(s.url).port;
    const elsewhere = await mcpStatus(s.url, tokens.access_token, `localhost:${port}`);
    expect(elsewhere.status).toBe(401);
    expect(JSON.parse(elsewhere.body).error.message).toMatch(/another resource/);
    expect(elsewhere.challenge).toContain(`resource_metadata="http://localhost:${port}/.well-known/oauth-protected-resource/mcp"`);
    expect((await mcpStatus(s.url, tokens.access_token)).status).toBe(200);
  });

  it('revokes a grant by its access or refresh token (RFC 7009), answering 200 for unknown tokens', async () => {
    const revoke = (token: string) =>
      fetch(`${s.url}/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, client_id: client }).toString(),
      });
    const byAccess = await oauthTokens(s.url, client, await s.approvalCode('team'));
    expect((await revoke(byAccess.access_token)).status).toBe(200);
    expect((await mcpStatus(s.url, byAccess.access_token)).status).toBe(401);
    const byRefresh = await oauthTokens(s.url, client, await s.approvalCode('team'));
    expect((await revoke(byRefresh.refresh_token)).status).toBe(200);
    expect((await mcpStatus(s.url, byRefresh.access_token)).status).toBe(401);
    expect((await revoke('limbic_at_unknown')).status).toBe(200);
  });

  it('authenticates confidential clients at /token, by post or basic', async () => {
    const registered = (await register(s.url, { token_endpoint_auth_method: 'client_secret_basic' })).body;
    const id = String(registered.client_id);
    const secret = String(registered.client_secret);
    const { code, verifier } = await authorizationCode(s.url, id, await s.approvalCode('team'));
    const fields = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier };
    const noSecret = await tokenRequest(s.url, { ...fields, client_id: id });
    expect(noSecret.status).toBe(401);
    expect(noSecret.body.error).toBe('invalid_client');
    const basic = `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
    const wrong = await tokenRequest(s.url, fields, { authorization: `Basic ${Buffer.from(`${id}:nope`).toString('base64')}` });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Basic/);
    const ok = await tokenRequest(s.url, fields, { authorization: basic });
    expect(ok.status).toBe(200);
  });
});

describe('OAuth: wrong codes are rate limited', () => {
  let s: OAuthTestServer;
  beforeAll(async () => {
    s = await startOAuthServer();
  });
  afterAll(async () => {
    await s.close();
  });

  it('after 5 wrong codes from one address, even a right one is refused with 429 for a while', async () => {
    const client = String((await register(s.url)).body.client_id);
    const { challenge } = pkce();
    const page = await getConsent(s.url, authorizeQuery(s.url, client, challenge));
    for (let i = 0; i < 5; i++) {
      const wrong = await postConsent(s.url, { ...page.hidden, code: 'AAAA-BBBB-CCCC', action: 'allow' }, page.cookie);
      expect(wrong.status).toBe(400);
    }
    const limited = await postConsent(s.url, { ...page.hidden, code: await s.approvalCode('team'), action: 'allow' }, page.cookie);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('location')).toBeNull();
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('OAuth: the whole flow', () => {
  let s: OAuthTestServer;
  beforeAll(async () => {
    s = await startOAuthServer();
  });
  afterAll(async () => {
    await s.close();
  });

  it('/register → /authorize → /token → /mcp writes into the namespace of the approval code only', async () => {
    const client = String((await register(s.url)).body.client_id);
    const tokens = await oauthTokens(s.url, client, await s.approvalCode('team'));
    const c = await connect(s.url, tokens.access_token);
    expect((await c.client.listTools()).tools.length).toBeGreaterThan(5);
    await c.ok('create_entities', { entities: [{ name: 'Granted', entityType: 'note', observations: ['written over OAuth'] }] });
    await c.close();
    const team = await connect(s.url, await s.bearer('team'));
    expect((await team.ok<{ entities: { name: string }[] }>('open_nodes', { names: ['Granted'] })).entities).toHaveLength(1);
    await team.close();
    const other = await connect(s.url, await s.bearer('default'));
    expect((await other.ok<{ entities: { name: string }[] }>('open_nodes', { names: ['Granted'] })).entities).toHaveLength(0);
    await other.close();
    const grants = await s.tokens.oauth.listGrants();
    expect(grants).toHaveLength(1);
    expect(grants[0]).toMatchObject({ clientId: client, namespace: 'team', readOnly: false, resource: `${s.url}/mcp` });
    expect(grants[0]?.lastUsedAt).toEqual(expect.any(Number));
  });
});

describe('OAuth: lifetimes and malformed requests', () => {
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('an expired authorization code is refused; an expired access token gets 401 and its refresh token still works', async () => {
    const shortCodes = await startOAuthServer({ codeTtlMs: 1 });
    try {
      const client = String((await register(shortCodes.url)).body.client_id);
      const { code, verifier } = await authorizationCode(shortCodes.url, client, await shortCodes.approvalCode('team'));
      await pause(20);
      const refused = await tokenRequest(shortCodes.url, {
        grant_type: 'authorization_code',
        client_id: client,
        code,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      });
      expect(refused.body).toMatchObject({ error: 'invalid_grant', error_description: 'the code is expired' });
    } finally {
      await shortCodes.close();
    }
    const shortAccess = await startOAuthServer({ accessTtlMs: 1 });
    try {
      const client = String((await register(shortAccess.url)).body.client_id);
      const tokens = await oauthTokens(shortAccess.url, client, await shortAccess.approvalCode('team'));
      expect(tokens.expires_in).toBe(0);
      await pause(20);
      const expired = await mcpStatus(shortAccess.url, tokens.access_token);
      expect(expired.status).toBe(401);
      expect(expired.challenge).toMatch(/error="invalid_token"/);
      const refreshed = await tokenRequest(shortAccess.url, {
        grant_type: 'refresh_token',
        client_id: client,
        refresh_token: tokens.refresh_token,
      });
      expect(refreshed.status).toBe(200);
    } finally {
      await shortAccess.close();
    }
  });

  it('a parameter sent twice is refused: on a page for the client and redirect URI, by redirect for the rest', async () => {
    const s = await startOAuthServer();
    try {
      const client = String((await register(s.url, { client_name: 'Bell\u0007 and\nnewline' })).body.client_id);
      const { challenge } = pkce();
      const twiceClient = authorizeQuery(s.url, client, challenge);
      twiceClient.append('client_id', 'c_000000000000');
      const page = await getConsent(s.url, twiceClient);
      expect(page.status).toBe(400);
      expect(page.headers.get('location')).toBeNull();
      const twiceChallenge = authorizeQuery(s.url, client, challenge);
      twiceChallenge.append('code_challenge', challenge);
      const response = await fetch(`${s.url}/authorize?${twiceChallenge.toString()}`, { redirect: 'manual' });
      expect(response.status).toBe(303);
      expect(new URL(response.headers.get('location') ?? '').searchParams.get('error')).toBe('invalid_request');
      const consent = await getConsent(s.url, authorizeQuery(s.url, client, challenge));
      expect(consent.html).toContain('Bell and newline');
      const twiceGrant = await fetch(`${s.url}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `grant_type=refresh_token&grant_type=refresh_token&client_id=${client}&refresh_token=x`,
      });
      expect(twiceGrant.status).toBe(400);
      expect(((await twiceGrant.json()) as { error: string }).error).toBe('invalid_request');
      const json = await fetch(`${s.url}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(((await json.json()) as { error: string }).error).toBe('invalid_request');
    } finally {
      await s.close();
    }
  });
});

describe('OAuth: a client metadata document client', () => {
  it('walks the flow with an allow-listed loopback document as client_id, bound to its redirect URIs', async () => {
    const documents = createServer((req, res) => {
      const port = (documents.address() as AddressInfo).port;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          client_id: `http://localhost:${port}${req.url ?? ''}`,
          client_name: 'Document client',
          redirect_uris: [REDIRECT],
          token_endpoint_auth_method: 'none',
        }),
      );
    });
    await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
    const s = await startOAuthServer({ clientHosts: ['localhost'] });
    try {
      const clientId = `http://localhost:${(documents.address() as AddressInfo).port}/client.json`;
      const { challenge } = pkce();
      const page = await getConsent(s.url, authorizeQuery(s.url, clientId, challenge));
      expect(page.status).toBe(200);
      expect(page.html).toContain('Document client');
      const foreign = await getConsent(s.url, authorizeQuery(s.url, clientId, challenge, { redirect_uri: 'https://attacker.example/cb' }));
      expect(foreign.status).toBe(400);
      expect(foreign.headers.get('location')).toBeNull();
      const tokens = await oauthTokens(s.url, clientId, await s.approvalCode('team'));
      expect((await mcpStatus(s.url, tokens.access_token)).status).toBe(200);
    } finally {
      await s.close();
      documents.close();
    }
  });
});
