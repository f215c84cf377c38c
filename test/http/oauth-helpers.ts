/**
 * Wiring for the OAuth endpoint tests: a real `serve --http` server (startHttpServer) on SQLite
 * files in a temporary folder, with its authorization server, and a client that walks the flow with
 * plain fetch: register, the consent page (its cookie and hidden fields), the POST, /token.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { DEFAULT_LIMITS } from '../../src/cli/http-limits.js';
import { noopLogger } from '../../src/core/logger.js';
import { LazyEmbedder } from '../../src/embed/embedder.js';
import { startHttpServer, type RunningHttpServer } from '../../src/http/http-server.js';
import { NamespaceRegistry, tokenFilePath } from '../../src/http/namespaces.js';
import type { OAuthOptions } from '../../src/http/oauth/options.js';
import { hashSecret, newApprovalCode, s256 } from '../../src/http/oauth/secrets.js';
import { createToken } from '../../src/http/tokens.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { openSqliteTokenStore } from '../../src/store/sqlite/sqlite-tokens.js';
import type { TokenStore } from '../../src/store/token-store.js';
import { tempDir } from '../helpers/fixtures.js';

export interface OAuthTestServer {
  readonly url: string;
  readonly server: RunningHttpServer;
  readonly tokens: TokenStore;
  /** A fresh approval code, as `limbic auth code` makes one. */
  approvalCode(namespace: string, readOnly?: boolean, ttlMs?: number): Promise<string>;
  /** A bearer token, as `limbic token create` makes one. */
  bearer(namespace: string, readOnly?: boolean): Promise<string>;
  close(): Promise<void>;
}

export async function startOAuthServer(oauth: Partial<OAuthOptions> = {}): Promise<OAuthTestServer> {
  const { dir, cleanup } = tempDir('limbic-oauth-');
  const dbPath = join(dir, 'memory.db');
  const tokens = openSqliteTokenStore(tokenFilePath(dbPath));
  const registry = new NamespaceRegistry({
    dbPath,
    openStore: (path) => openSqliteStore({ path }),
    embedder: new LazyEmbedder(() => Promise.reject(new Error('no model in this test (keyword search only)'))),
    logger: noopLogger,
  });
  const server = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    allowedHosts: [],
    registry,
    tokens,
    info: { name: 'limbic', version: 'test' },
    logger: noopLogger,
    limits: DEFAULT_LIMITS,
    oauth: { publicUrl: undefined, clientHosts: [], ...oauth },
  });
  return {
    url: server.url,
    server,
    tokens,
    async approvalCode(namespace, readOnly = false, ttlMs = 600_000) {
      const code = newApprovalCode();
      const now = Date.now();
      await tokens.oauth.addApprovalCode(hashSecret(code), { namespace, readOnly, createdAt: now, expiresAt: now + ttlMs });
      return code;
    },
    async bearer(namespace, readOnly = false) {
      return (await createToken(tokens, { namespace, readOnly })).token;
    },
    async close() {
      await server.close();
      await tokens.close();
      cleanup();
    },
  };
}

export const REDIRECT = 'http://127.0.0.1:9/callback';

export interface Pkce {
  readonly verifier: string;
  readonly challenge: string;
}

export const pkce = (): Pkce => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: s256(verifier) };
};

export async function register(
  url: string,
  metadata: Record<string, unknown> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: [REDIRECT], client_name: 'Test client', token_endpoint_auth_method: 'none', ...metadata }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The query of an authorization request: everything right, then `overrides` (undefined removes one). */
export function authorizeQuery(
  url: string,
  clientId: string,
  challenge: string,
  overrides: Record<string, string | undefined> = {},
): URLSearchParams {
  const params: Record<string, string | undefined> = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource: `${url}/mcp`,
    scope: 'memory:read memory:write',
    state: 'st-123',
    ...overrides,
  };
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined) query.set(key, value);
  return query;
}

const UNESCAPES: Readonly<Record<string, string>> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
const unescapeHtml = (text: string): string => text.replace(/&(?:amp|lt|gt|quot|#39);/g, (e) => UNESCAPES[e] ?? e);

export interface ConsentPage {
  readonly status: number;
  readonly headers: Headers;
  readonly html: string;
  /** The cookie to send back ("name=value"), when the page set one. */
  readonly cookie: string | undefined;
  /** The form's hidden fields. */
  readonly hidden: Record<string, string>;
}

export async function getConsent(url: string, query: URLSearchParams): Promise<ConsentPage> {
  const response = await fetch(`${url}/authorize?${query.toString()}`, { redirect: 'manual' });
  const html = await response.text();
  const hidden: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g))
    hidden[unescapeHtml(m[1] ?? '')] = unescapeHtml(m[2] ?? '');
  const setCookie = response.headers.get('set-cookie');
  return { status: response.status, headers: response.headers, html, cookie: setCookie?.split(';')[0], hidden };
}

export async function postConsent(
  url: string,
  fields: Record<string, string>,
  cookie: string | undefined,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${url}/authorize`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie === undefined ? {} : { cookie }), ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

/** POST /token with form fields; the status and JSON body. */
export async function tokenRequest(
  url: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const response = await fetch(`${url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
  // A body that is not JSON (a proxy's error page) is kept as `raw`, so the assertion shows it.
  const text = await response.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { raw: text };
  }
  return { status: response.status, body, headers: response.headers };
}

/** The whole flow for a registered public client: an authorization code for `typed` (a code or bearer token), with its verifier. */
export async function authorizationCode(
  url: string,
  clientId: string,
  typed: string,
  overrides: Record<string, string | undefined> = {},
): Promise<{ code: string; verifier: string; location: URL }> {
  const { verifier, challenge } = pkce();
  const page = await getConsent(url, authorizeQuery(url, clientId, challenge, overrides));
  if (page.status !== 200) throw new Error(`the consent page answered ${page.status}`);
  const posted = await postConsent(url, { ...page.hidden, code: typed, action: 'allow' }, page.cookie);
  const location = posted.headers.get('location');
  if (posted.status !== 303 || location === null) throw new Error(`the consent POST answered ${posted.status}`);
  const target = new URL(location);
  const code = target.searchParams.get('code');
  if (code === null) throw new Error(`no code in the redirect: ${target.searchParams.get('error') ?? ''}`);
  return { code, verifier, location: target };
}

/** Tokens for a registered public client, through the consent page and /token. */
export async function oauthTokens(
  url: string,
  clientId: string,
  typed: string,
  overrides: Record<string, string | undefined> = {},
): Promise<{ access_token: string; refresh_token: string; scope: string; expires_in: number }> {
  const { code, verifier } = await authorizationCode(url, clientId, typed, overrides);
  const answer = await tokenRequest(url, {
    grant_type: 'authorization_code',
    client_id: clientId,
    code,
    redirect_uri: REDIRECT,
    code_verifier: verifier,
    resource: `${url}/mcp`,
  });
  if (answer.status !== 200) throw new Error(`/token answered ${answer.status}: ${String(answer.body.error)}`);
  return answer.body as { access_token: string; refresh_token: string; scope: string; expires_in: number };
}
