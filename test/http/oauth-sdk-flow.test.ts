/**
 * Issue 36, how it is checked (first item): the SDK clients' own OAuth flow against the real CLI.
 * `limbic serve --http` (dist/, a child process) on 127.0.0.1 and a temporary --db; a client with
 * an OAuthClientProvider — the v2 `@modelcontextprotocol/client` pinned to 2026-07-28, and the
 * 2025-era `@modelcontextprotocol/sdk` 1.x — connects, gets 401, discovers the server, registers
 * (dynamic registration, or a client metadata document), and is sent to /authorize. The consent
 * page is read and submitted as a script would, with a code from `limbic auth code --namespace
 * team`; the 303 goes to a loopback callback server and carries code, state and iss; finishAuth
 * exchanges the code; the client lists tools and writes, and what it wrote is in `team` only.
 *
 * The client metadata document: both SDKs refuse a `clientMetadataUrl` that is not https (their
 * isHttpsUrl check, before anything is sent), so the document is served over real TLS on
 * 127.0.0.1 by a certificate of a throwaway authority, which the serve process is told to trust
 * with NODE_EXTRA_CA_CERTS; 127.0.0.1 is on its allow-list (--oauth-client-host). Nothing is
 * patched in either SDK or in the server.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { StreamableHTTPClientTransport, UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/client';
import type { OAuthClientProvider as V1OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/fixtures.js';
import { connectIn, eraClient } from '../helpers/mcp-eras.js';
import { connect } from './http-helpers.js';
import {
  approvalCode,
  callbackServer,
  grantsOf,
  authorizeUrl,
  approve,
  limbic,
  localServer,
  MemoryProvider,
  metadataServer,
  pkce,
  tokenRequest,
  openConsent,
  readConsentForm,
  serveHttp,
  submitConsent,
  testCertificates,
  type Served,
} from './oauth-e2e-helpers.js';

type Sdk = 'v2' | 'v1';
type Registration = 'dynamic registration' | 'client metadata document';

const CASES: readonly { readonly sdk: Sdk; readonly registration: Registration; readonly title: string }[] = [
  { sdk: 'v2', registration: 'dynamic registration', title: 'v2 client pinned to 2026-07-28, dynamic registration' },
  { sdk: 'v2', registration: 'client metadata document', title: 'v2 client pinned to 2026-07-28, client metadata document' },
  { sdk: 'v1', registration: 'dynamic registration', title: '2025-era client (sdk 1.x), dynamic registration' },
  { sdk: 'v1', registration: 'client metadata document', title: '2025-era client (sdk 1.x), client metadata document' },
];

const CLIENT_NAMES: Record<Sdk, string> = { v2: 'Limbic e2e (v2 SDK)', v1: 'Limbic e2e (SDK 1.x)' };

// Each test runs the CLI several times (seconds each on a busy 2-core machine).
describe('the SDK clients complete the OAuth flow against `limbic serve --http`', { timeout: 180_000 }, () => {
  const { dir, cleanup } = tempDir('limbic-oauth-sdk-');
  const db = join(dir, 'memory.db');
  let served: Served;
  let callback: Awaited<ReturnType<typeof callbackServer>>;
  let documents: Awaited<ReturnType<typeof metadataServer>>;
  const written: string[] = [];

  beforeAll(async () => {
    const certificates = testCertificates(dir);
    callback = await callbackServer();
    documents = await metadataServer(certificates, (origin) => {
      const doc = (sdk: Sdk) => ({
        client_id: `${origin}/clients/${sdk}.json`,
        client_name: `${CLIENT_NAMES[sdk]} by document`,
        client_uri: origin,
        redirect_uris: [callback.redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      });
      return { '/clients/v2.json': doc('v2'), '/clients/v1.json': doc('v1') };
    });
    served = await serveHttp(db, ['--oauth-client-host', '127.0.0.1'], { NODE_EXTRA_CA_CERTS: certificates.caFile });
  }, 90_000);

  afterAll(async () => {
    await served?.stop();
    await callback?.close();
    await documents?.close();
    cleanup();
  });

  it.each(CASES)(
    '$title: 401, discovery, consent with `limbic auth code`, code+state+iss, finishAuth, tools, a write in team',
    async ({ sdk, registration }) => {
      const mcpUrl = new URL(`${served.base}/mcp`);
      const byDocument = registration === 'client metadata document';
      const name = byDocument ? `${CLIENT_NAMES[sdk]} by document` : CLIENT_NAMES[sdk];
      const provider = new MemoryProvider(
        callback.redirectUri,
        {
          client_name: name,
          redirect_uris: [callback.redirectUri],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          // The 1.x client registers as a confidential client (a secret, sent by Basic auth); the v2 one as a public client.
          token_endpoint_auth_method: sdk === 'v1' ? 'client_secret_basic' : 'none',
        },
        byDocument ? `${documents.origin}/clients/${sdk}.json` : undefined,
      );

      // 1. The first request is refused; the SDK discovers the server, registers, and sends the user to /authorize.
      let finish: (params: URLSearchParams) => Promise<void>;
      if (sdk === 'v2') {
        const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider as OAuthClientProvider });
        const refused = await eraClient('modern')
          .connect(first)
          .then(
            () => undefined,
            (error: unknown) => error,
          );
        expect(refused).toBeInstanceOf(UnauthorizedError);
        finish = (params) => first.finishAuth(params);
      } else {
        const first = new V1Transport(mcpUrl, { authProvider: provider as unknown as V1OAuthClientProvider });
        await expect(new V1Client({ name: 'limbic-oauth-e2e', version: '0' }).connect(first)).rejects.toThrow(/Unauthorized/i);
        finish = (params) => first.finishAuth(params.get('code') ?? '');
      }
      expect(provider.sentTo).toHaveLength(1);
      const authorizationUrl = provider.sentTo[0]!;
      expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${served.base}/authorize`);
      const asked = authorizationUrl.searchParams;
      expect(asked.get('response_type')).toBe('code');
      expect(asked.get('code_challenge_method')).toBe('S256');
      expect(asked.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(asked.get('resource')).toBe(`${served.base}/mcp`);
      expect(asked.get('state')).toBe(provider.stateValue);
      expect(asked.get('redirect_uri')).toBe(callback.redirectUri);
      const clientId = asked.get('client_id') ?? '';
      if (byDocument) {
        expect(clientId).toBe(`${documents.origin}/clients/${sdk}.json`);
      } else {
        expect(clientId).toMatch(/^c_[0-9a-f]{12}$/);
      }

      // 2. The consent page: a plain form naming the client, its id and the host it will redirect to.
      const page = await openConsent(authorizationUrl);
      expect(page.status, page.html.slice(0, 500)).toBe(200);
      // The server fetched the client's document itself, over TLS, to show this page.
      if (byDocument) expect(documents.fetched).toContain(`/clients/${sdk}.json`);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.html).toContain(name);
      expect(page.html).toContain(new URL(callback.redirectUri).host);
      expect(page.html).toContain(clientId);
      const form = readConsentForm(page.html, page.url);
      expect(form.method).toBe('post');
      expect(new URL(form.action).origin).toBe(served.base);
      expect(page.cookie).not.toBe('');

      // 3. A code from the terminal, typed into the one visible field; the 303 goes to the callback with code, state and iss.
      const code = approvalCode(db, 'team');
      const answer = await submitConsent(page, code);
      expect(answer.status, answer.body).toBe(303);
      const location = new URL(answer.location ?? '');
      expect(location.origin + location.pathname).toBe(callback.redirectUri);
      const before = callback.received.length;
      expect((await fetch(location)).status).toBe(200);
      expect(callback.received).toHaveLength(before + 1);
      const params = callback.received[before]!;
      expect(params.get('code')).toMatch(/^limbic_ac_/);
      expect(params.get('state')).toBe(provider.stateValue);
      expect(params.get('iss')).toBe(served.base);
      expect(params.get('error')).toBeNull();

      // 4. finishAuth exchanges the code (the v2 client checks iss first).
      await finish(params);
      const tokens = provider.tokens();
      expect(tokens?.access_token).toMatch(/^limbic_at_/);
      expect(tokens?.refresh_token).toMatch(/^limbic_rt_/);
      expect(tokens?.token_type.toLowerCase()).toBe('bearer');
      expect(tokens?.scope?.split(' ').sort()).toEqual(['memory:read', 'memory:write']);

      // 5. Connected: tools listed, one entity written.
      const entity = `OAuth ${sdk} ${registration} ${randomBytes(3).toString('hex')}`;
      written.push(entity);
      if (sdk === 'v2') {
        const client = await connectIn(
          'modern',
          eraClient('modern'),
          new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider as OAuthClientProvider }),
        );
        try {
          const tools = (await client.listTools()).tools.map((t) => t.name);
          expect(tools).toEqual(expect.arrayContaining(['create_entities', 'search_nodes', 'read_graph']));
          const wrote = await client.callTool({
            name: 'create_entities',
            arguments: { entities: [{ name: entity, entityType: 'test', observations: ['written through OAuth'] }] },
          });
          expect(wrote.isError, JSON.stringify(wrote.content)).toBeFalsy();
        } finally {
          await client.close();
        }
      } else {
        const client = new V1Client({ name: 'limbic-oauth-e2e', version: '0' });
        await client.connect(new V1Transport(mcpUrl, { authProvider: provider as unknown as V1OAuthClientProvider }));
        try {
          const tools = (await client.listTools()).tools.map((t) => t.name);
          expect(tools).toEqual(expect.arrayContaining(['create_entities', 'search_nodes', 'read_graph']));
          const wrote = await client.callTool({
            name: 'create_entities',
            arguments: { entities: [{ name: entity, entityType: 'test', observations: ['written through OAuth'] }] },
          });
          expect(wrote.isError, JSON.stringify(wrote.content)).toBeFalsy();
        } finally {
          await client.close();
        }
      }

      // 6. `limbic token list` shows the grant: namespace team, both scopes, the client.
      const grant = grantsOf(db).find((g) => g.clientId === clientId);
      expect(grant, JSON.stringify(grantsOf(db))).toBeDefined();
      expect(grant!.id).toMatch(/^g_[0-9a-f]{12}$/);
      expect(grant).toMatchObject({ namespace: 'team', scope: 'memory:read memory:write', clientName: name });
      // Its last use is recorded (once a minute at most, after the request that used it).
      await expect.poll(() => grantsOf(db).find((g) => g.id === grant!.id)?.lastUsedAt, { timeout: 10_000 }).toEqual(expect.any(Number));
      // No secret in the listing.
      const listing = limbic(db, 'token', 'list', '--json').stdout + limbic(db, 'token', 'list').stdout;
      for (const secret of [tokens!.access_token, tokens!.refresh_token!, params.get('code')!, code]) expect(listing).not.toContain(secret);
    },
  );

  it('a metadata document over plain http is taken from an allow-listed loopback host only (by hand: both SDKs send only https ones)', async () => {
    // The document names the URL it was fetched by, so only the allow-list can refuse it.
    const hosts: string[] = [];
    const plain = await localServer((req, res) => {
      hosts.push(req.headers.host ?? '');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          client_id: `http://${req.headers.host ?? ''}${req.url ?? ''}`,
          client_name: 'Plain http document',
          redirect_uris: [callback.redirectUri],
          token_endpoint_auth_method: 'none',
        }),
      );
    });
    try {
      const clientId = `${plain.url}/client.json`;
      const { verifier, challenge } = pkce();
      const cb = await approve(
        authorizeUrl(served.base, { client_id: clientId, redirect_uri: callback.redirectUri, code_challenge: challenge, state: 'plain' }),
        approvalCode(db, 'team'),
      );
      expect(cb.searchParams.get('iss')).toBe(served.base);
      const got = await tokenRequest(served.base, {
        grant_type: 'authorization_code',
        code: cb.searchParams.get('code') ?? '',
        code_verifier: verifier,
        redirect_uri: callback.redirectUri,
        client_id: clientId,
        resource: `${served.base}/mcp`,
      });
      expect(got.status, JSON.stringify(got.body)).toBe(200);
      expect(hosts.length).toBeGreaterThan(0);

      // localhost is loopback too, but not on the list: an error page, no redirect, nothing fetched.
      const fetchedBefore = hosts.length;
      const refused = await openConsent(
        authorizeUrl(served.base, {
          client_id: clientId.replace('127.0.0.1', 'localhost'),
          redirect_uri: callback.redirectUri,
          code_challenge: pkce().challenge,
          state: 'plain',
        }),
      );
      expect(refused.status).toBe(400);
      expect(refused.headers.get('location')).toBeNull();
      expect(hosts.length).toBe(fetchedBefore);
    } finally {
      await plain.close();
    }
  });

  it('a client_id whose document is missing (404) or redirects gets an error page, and the server goes on', async () => {
    for (const missing of [`${documents.origin}/clients/missing.json`, `${documents.origin}/clients/redirect.json`]) {
      const page = await openConsent(
        authorizeUrl(served.base, { client_id: missing, redirect_uri: callback.redirectUri, code_challenge: pkce().challenge, state: 'x' }),
      );
      expect(page.status).toBe(400);
      expect(page.headers.get('location')).toBeNull();
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(served.child.exitCode).toBeNull();
    expect((await fetch(`${served.base}/.well-known/oauth-authorization-server`)).status).toBe(200);
  });

  it('without --oauth-client-host, the same document on 127.0.0.1 (same CA) is refused and never fetched', async () => {
    const other = await serveHttp(db, [], { NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem') });
    try {
      const fetchedBefore = documents.fetched.length;
      const page = await openConsent(
        authorizeUrl(other.base, {
          client_id: `${documents.origin}/clients/v2.json`,
          redirect_uri: callback.redirectUri,
          code_challenge: pkce().challenge,
          state: 'x',
        }),
      );
      expect(page.status).toBe(400);
      expect(page.headers.get('location')).toBeNull();
      expect(page.html).not.toMatch(/<form/i);
      expect(documents.fetched.length).toBe(fetchedBefore);
    } finally {
      await other.stop();
    }
  });

  it('what the clients wrote is in namespace team and nowhere else (the CLI, and bearer tokens of each namespace)', async () => {
    expect(written).toHaveLength(CASES.length);
    // Nothing was ever written to the default memory: the CLI finds none there.
    const other = limbic(db, 'export');
    expect(other.status).toBe(1);
    expect(other.stderr).toMatch(/There is no memory at/);
    const team = limbic(db, '--namespace', 'team', 'export');
    expect(team.status, team.stderr).toBe(0);
    for (const entity of written) expect(team.stdout).toContain(entity);
    const names = async (namespace: string) => {
      const token = limbic(db, 'token', 'create', '--namespace', namespace).stdout.trim();
      const c = await connect(served.base, token);
      try {
        return (await c.ok<{ entities: { name: string }[] }>('read_graph')).entities.map((e) => e.name);
      } finally {
        await c.close();
      }
    };
    expect(await names('team')).toEqual(expect.arrayContaining(written));
    const inDefault = await names('default');
    for (const entity of written) expect(inDefault).not.toContain(entity);
    // Nothing the flows handled was logged.
    expect(served.stderr()).not.toMatch(/limbic_(at|rt|ac)_/);
  });
});
