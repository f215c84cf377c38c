/**
 * Wiring for the end-to-end OAuth tests (issue 36): the real CLI (dist/cli/main.js) as child
 * processes — `serve --http`, `auth code`, `token list/revoke` —, the consent page read and
 * submitted the way a plain browser or script would (GET, read the form, fill the one visible
 * field, POST with the cookie), PKCE, and local servers for a redirect callback and a client
 * metadata document (HTTPS with a throwaway certificate authority the server is told to trust).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { OAuthDiscoveryState, StoredOAuthClientInformation, StoredOAuthTokens } from '@modelcontextprotocol/client';
import { CLI } from '../helpers/fixtures.js';

// PKCE and POST /token are the endpoint tests' (oauth-helpers.ts); the flows here use them too.
export { pkce, tokenRequest } from './oauth-helpers.js';

/** `limbic --db DB --no-model ARGS…`, as a user runs it. */
export function limbic(db: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [CLI, '--db', db, '--no-model', ...args], {
    encoding: 'utf8',
    env: { ...process.env, LIMBIC_NAMESPACE: '' },
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** A fresh approval code from `limbic auth code`: what it prints alone on stdout. */
export function approvalCode(db: string, namespace: string, ...more: string[]): string {
  const run = limbic(db, 'auth', 'code', '--namespace', namespace, ...more);
  if (run.status !== 0) throw new Error(`limbic auth code failed (${String(run.status)}): ${run.stderr}`);
  const code = run.stdout.trim();
  if (!/^[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}$/.test(code))
    throw new Error('limbic auth code printed something else than one code on stdout');
  return code;
}

/** The grants `limbic token list --json` shows (records of kind "oauth"). */
export function grantsOf(db: string): { id: string; kind: string; namespace: string; [k: string]: unknown }[] {
  const run = limbic(db, 'token', 'list', '--json');
  if (run.status !== 0) throw new Error(`limbic token list failed: ${run.stderr}`);
  return (JSON.parse(run.stdout) as { id: string; kind: string; namespace: string }[]).filter((r) => r.kind === 'oauth');
}

export interface Served {
  readonly child: ChildProcess;
  /** http://127.0.0.1:PORT (no /mcp). */
  readonly base: string;
  stderr(): string;
  stop(): Promise<void>;
}

/** `limbic serve --http` on 127.0.0.1, a free port, with `args` (e.g. --oauth-client-host) and `env`. */
export async function serveHttp(db: string, args: readonly string[] = [], env: Record<string, string> = {}): Promise<Served> {
  const child = spawn(process.execPath, [CLI, '--db', db, '--no-model', 'serve', '--http', '--host', '127.0.0.1', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LIMBIC_NAMESPACE: '', ...env },
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const started = Date.now();
  for (;;) {
    const found = /at (http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(stderr)?.[1];
    if (found !== undefined) {
      return {
        child,
        base: found,
        stderr: () => stderr,
        async stop() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          await exited;
        },
      };
    }
    if (child.exitCode !== null || Date.now() - started > 30_000) {
      child.kill('SIGKILL');
      throw new Error(`serve --http did not start: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** PKCE S256 pair (RFC 7636). */

/** Decodes the few entities an HTML attribute value may carry. */
function unescapeHtml(text: string): string {
  return text
    .replace(/&#x([0-9a-f]+);/gi, (_, hex: string) => String.fromCodePoint(parseInt(hex, 16)))
    .replace(/&#(\d+);/g, (_, dec: string) => String.fromCodePoint(parseInt(dec, 10)))
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

function attributesOf(tag: string): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const m of tag.matchAll(/([a-zA-Z_:][-a-zA-Z0-9_:.]*)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g)) {
    const name = m[1]!.toLowerCase();
    if (name in attributes) continue;
    attributes[name] = unescapeHtml(m[2] ?? m[3] ?? m[4] ?? '');
  }
  return attributes;
}

export interface ConsentForm {
  /** Absolute URL the form posts to. */
  readonly action: string;
  readonly method: string;
  /** Every hidden field, in order. */
  readonly hidden: readonly (readonly [string, string])[];
  /** The name of the one visible text field (the approval code). */
  readonly codeField: string;
  /** Submit buttons: name, value and label. */
  readonly buttons: readonly { readonly name: string; readonly value: string; readonly label: string }[];
}

/**
 * Reads the consent page's form as a plain script would: its action, its hidden fields, its one
 * visible text field and its buttons. Throws when the page does not have exactly one form with
 * exactly one visible text field.
 */
export function readConsentForm(html: string, pageUrl: string): ConsentForm {
  const forms = [...html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)];
  if (forms.length !== 1) throw new Error(`the consent page has ${forms.length} forms, not one`);
  const formAttributes = attributesOf(forms[0]![1]!);
  const body = forms[0]![2]!;
  const hidden: [string, string][] = [];
  const visible: string[] = [];
  for (const m of body.matchAll(/<input\b([^>]*)>/gi)) {
    const a = attributesOf(m[1]!);
    const type = (a.type ?? 'text').toLowerCase();
    if (type === 'hidden') hidden.push([a.name ?? '', a.value ?? '']);
    else if (type === 'text' || type === 'password') visible.push(a.name ?? '');
    // An <input type=submit> is read as a button below.
  }
  if (visible.length !== 1) throw new Error(`the consent form has ${visible.length} visible text fields, not one`);
  const buttons: { name: string; value: string; label: string }[] = [];
  for (const m of body.matchAll(/<button\b([^>]*)>([\s\S]*?)<\/button>/gi)) {
    const a = attributesOf(m[1]!);
    if ((a.type ?? 'submit').toLowerCase() !== 'submit') continue;
    buttons.push({ name: a.name ?? '', value: a.value ?? '', label: unescapeHtml(m[2]!.replace(/<[^>]*>/g, '')).trim() });
  }
  for (const m of body.matchAll(/<input\b([^>]*)>/gi)) {
    const a = attributesOf(m[1]!);
    if ((a.type ?? '').toLowerCase() === 'submit') buttons.push({ name: a.name ?? '', value: a.value ?? '', label: a.value ?? '' });
  }
  return {
    action: new URL(formAttributes.action ?? '', pageUrl).toString(),
    method: (formAttributes.method ?? 'get').toLowerCase(),
    hidden,
    codeField: visible[0]!,
    buttons,
  };
}

/** The button of `form` that allows (or denies): found by its value or label. */
export function buttonOf(form: ConsentForm, decision: 'allow' | 'deny') {
  const pattern = decision === 'allow' ? /allow|approve/i : /deny|refuse|cancel/i;
  const button = form.buttons.find((b) => pattern.test(b.value) || pattern.test(b.label));
  if (button === undefined) throw new Error(`the consent form has no ${decision} button: ${JSON.stringify(form.buttons)}`);
  return button;
}

export interface ConsentPage {
  readonly status: number;
  readonly headers: Headers;
  readonly html: string;
  /** "name=value" pairs of the cookies it set, for the Cookie header. */
  readonly cookie: string;
  readonly url: string;
}

/** GET the authorization URL as a browser would (no redirect followed). */
export async function openConsent(authorizationUrl: string | URL): Promise<ConsentPage> {
  const response = await fetch(authorizationUrl, { redirect: 'manual' });
  const cookie = response.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .join('; ');
  return { status: response.status, headers: response.headers, html: await response.text(), cookie, url: String(authorizationUrl) };
}

/**
 * Submits the consent form with `code` in its visible field, the page's cookie and an Origin as a
 * browser sends it (the page's own origin); `change` alters fields before sending (attacks).
 * Returns the response, not followed.
 */
export async function submitConsent(
  page: ConsentPage,
  code: string,
  options: {
    readonly decision?: 'allow' | 'deny';
    readonly change?: (fields: URLSearchParams) => void;
    readonly cookie?: string;
    readonly origin?: string | null;
  } = {},
): Promise<{ status: number; location: string | null; body: string; headers: Headers }> {
  const form = readConsentForm(page.html, page.url);
  const fields = new URLSearchParams();
  for (const [name, value] of form.hidden) fields.append(name, value);
  fields.set(form.codeField, code);
  const button = buttonOf(form, options.decision ?? 'allow');
  if (button.name !== '') fields.set(button.name, button.value);
  options.change?.(fields);
  const origin = options.origin === undefined ? new URL(page.url).origin : options.origin;
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  const cookie = options.cookie ?? page.cookie;
  if (cookie !== '') headers.cookie = cookie;
  if (origin !== null) headers.origin = origin;
  const response = await fetch(form.action, {
    method: form.method === 'post' ? 'POST' : 'GET',
    headers,
    body: fields.toString(),
    redirect: 'manual',
  });
  return { status: response.status, location: response.headers.get('location'), body: await response.text(), headers: response.headers };
}

/** GET /authorize, fill the approval code, POST: the callback URL the 303 names. */
export async function approve(authorizationUrl: string | URL, code: string): Promise<URL> {
  const page = await openConsent(authorizationUrl);
  if (page.status !== 200) throw new Error(`the consent page answered ${page.status}: ${page.html.slice(0, 300)}`);
  const answer = await submitConsent(page, code);
  if (answer.status !== 303 || answer.location === null)
    throw new Error(`the consent POST answered ${answer.status}: ${answer.body.slice(0, 300)}`);
  return new URL(answer.location, authorizationUrl);
}

/** Registers a client by RFC 7591 (POST /register); the JSON answer. */
export async function register(
  base: string,
  metadata: Record<string, unknown>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${base}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(metadata),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** An authorization request URL with the usual parameters, any overridden or removed (undefined). */
export function authorizeUrl(base: string, params: Record<string, string | undefined>): URL {
  const url = new URL(`${base}/authorize`);
  const all: Record<string, string | undefined> = {
    response_type: 'code',
    code_challenge_method: 'S256',
    resource: `${base}/mcp`,
    scope: 'memory:read memory:write',
    ...params,
  };
  for (const [k, v] of Object.entries(all)) if (v !== undefined) url.searchParams.set(k, v);
  return url;
}

export const INITIALIZE_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'oauth-e2e', version: '0' } },
});

/** The status /mcp gives an `initialize` with this bearer token (200 when accepted), and its WWW-Authenticate. */
export async function mcpStatus(mcpUrl: string, token: string | undefined): Promise<{ status: number; challenge: string | null }> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const response = await fetch(mcpUrl, { method: 'POST', headers, body: INITIALIZE_BODY });
  await response.arrayBuffer();
  return { status: response.status, challenge: response.headers.get('www-authenticate') };
}

/** A node:http server on 127.0.0.1 answering `handler`; closed by close(). */
export async function localServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createHttpServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A redirect target on loopback that records the query of every request to its /callback. */
export async function callbackServer(): Promise<{ url: string; redirectUri: string; received: URLSearchParams[]; close(): Promise<void> }> {
  const received: URLSearchParams[] = [];
  const server = await localServer((req, res) => {
    const at = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (at.pathname !== '/callback') {
      // A browser's /favicon.ico, say.
      res.writeHead(404);
      res.end();
      return;
    }
    received.push(at.searchParams);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>done</title><p>You may close this window.</p>');
  });
  return { ...server, redirectUri: `${server.url}/callback`, received };
}

/**
 * A throwaway certificate authority and a server certificate for 127.0.0.1 signed by it (openssl):
 * `caFile` is what `NODE_EXTRA_CA_CERTS` of the serve process names, so it fetches the metadata
 * document over real TLS without trusting anything else.
 */
export function testCertificates(dir: string): { caFile: string; key: string; cert: string } {
  const run = (...args: string[]) => {
    const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr}`);
  };
  run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=limbic test CA');
  run('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n');
  run(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    '2',
    '-extfile',
    'server.ext',
  );
  const read = (name: string) => readFileSync(join(dir, name), 'utf8');
  return { caFile: join(dir, 'ca.pem'), key: read('server.key'), cert: read('server.pem') };
}

/**
 * Serves client metadata documents over HTTPS on 127.0.0.1 (paths → documents, built when asked
 * so they can name their own URL; /clients/redirect.json is a 302, any other path a 404); counts the fetches.
 */
export async function metadataServer(
  tls: { key: string; cert: string },
  documents: (origin: string) => Record<string, unknown>,
): Promise<{ origin: string; fetched: string[]; close(): Promise<void> }> {
  const fetched: string[] = [];
  let origin = '';
  const server = createHttpsServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    fetched.push(req.url ?? '');
    if (req.url === '/clients/redirect.json') {
      res.writeHead(302, { location: `${origin}/clients/v2.json` });
      res.end();
      return;
    }
    const doc = documents(origin)[req.url ?? ''];
    if (doc === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(doc));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    fetched,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An in-memory OAuthClientProvider, the shape both SDK generations ask for; it records where it was sent. */
export class MemoryProvider {
  readonly sentTo: URL[] = [];
  readonly stateValue = randomBytes(16).toString('base64url');
  private info: StoredOAuthClientInformation | undefined;
  private saved: StoredOAuthTokens | undefined;
  private verifier = '';
  private discovery: OAuthDiscoveryState | undefined;
  constructor(
    readonly redirectUrl: string,
    readonly clientMetadata: { client_name: string; redirect_uris: string[]; token_endpoint_auth_method?: string; [k: string]: unknown },
    readonly clientMetadataUrl?: string,
  ) {}
  state(): string {
    return this.stateValue;
  }
  clientInformation(): StoredOAuthClientInformation | undefined {
    return this.info;
  }
  saveClientInformation(info: StoredOAuthClientInformation): void {
    this.info = info;
  }
  tokens(): StoredOAuthTokens | undefined {
    return this.saved;
  }
  saveTokens(tokens: StoredOAuthTokens): void {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL): void {
    this.sentTo.push(url);
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    return this.verifier;
  }
  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }
  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }
}
