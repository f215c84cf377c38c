/**
 * Client ID metadata documents (CIMD, issue 36): a client whose `client_id` is an https URL
 * publishes its name and redirect URIs at that URL, and the authorization server fetches them. That
 * makes this server fetch a URL anyone on the internet chose, so the fetch is guarded against being
 * turned on the network it sits in (SSRF):
 *
 * - https only; plain http only for a host on the allow-list (`--oauth-client-host`) that resolves
 *   to a loopback address (local development and the tests);
 * - the host name is resolved once, every address checked, and the connection made only to the
 *   checked addresses (undici's `connect.lookup`), so a name cannot point elsewhere between the
 *   check and the connection (DNS rebinding);
 * - loopback, private, link-local, unique-local, CGNAT, multicast, unspecified and other
 *   special-purpose addresses (IPv4-mapped ones included) are refused unless the host is listed;
 * - 5 seconds in all, 64 KiB at most (reading stops past it), redirects never followed;
 * - results cached (5 minutes; failures 30 seconds, so a slow host cannot be hammered through us),
 *   and only a few fetches at a time.
 *
 * The document must name itself: its `client_id` equals the URL exactly. Its redirect URIs follow
 * the rules of redirects.ts, and it is a public client (`token_endpoint_auth_method` "none").
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { createRequire } from 'node:module';
import { isIP, type LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import type * as IpAddr from 'ipaddr.js';
import type * as Undici from 'undici';
import { z } from 'zod';
import { redirectUriProblem } from './redirects.js';

// ipaddr.js is CommonJS with `export =`: Node's ESM loader exposes it only as a default export,
// which this project's compiler settings (no esModuleInterop) do not type; require() gives it as is.
const ipaddr = createRequire(import.meta.url)('ipaddr.js') as typeof IpAddr;

/** What a metadata document says about its client, once checked. */
export interface ClientMetadataDocument {
  /** The URL it was fetched from, equal to the document's own client_id. */
  readonly clientId: string;
  readonly clientName: string | undefined;
  readonly redirectUris: readonly string[];
}

export type MetadataResult =
  { readonly ok: true; readonly document: ClientMetadataDocument } | { readonly ok: false; readonly error: string };

/** Resolves a host name to its addresses (IPv4 and IPv6), as dns.lookup does. A test seam. */
export type ResolveHost = (hostname: string) => Promise<readonly string[]>;

export interface ClientMetadataOptions {
  /** Host names whose documents may live on loopback or private addresses (and, when loopback, plain http). */
  readonly clientHosts: readonly string[];
  /** @default dns.lookup of the system, all addresses */
  readonly resolve?: ResolveHost;
  /** @default 5_000 */
  readonly timeoutMs?: number;
  /** @default 65_536 */
  readonly maxBytes?: number;
  /** @default 300_000 */
  readonly cacheTtlMs?: number;
  /** @default 30_000 */
  readonly failureTtlMs?: number;
  /** @default 1_000 */
  readonly maxEntries?: number;
  /** Fetches under way at once; past it a request is refused at once (not cached). @default 16 */
  readonly maxInFlight?: number;
  /** Extra TLS options of the connection (tests: a certificate authority of their own). */
  readonly tls?: { readonly ca?: string | Buffer };
  /** @default Date.now */
  readonly now?: () => number;
}

/** Longest client name kept, in characters; a longer one is cut (it is shown on the consent page). */
export const MAX_CLIENT_NAME_LENGTH = 100;
const MAX_REDIRECT_URIS = 20;
const MAX_CLIENT_ID_URL_LENGTH = 2_000;

const quoted = (text: string): string => JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}…` : text);

/** Lower case, without IPv6 brackets: how host names are compared with the allow-list. */
const bareHost = (host: string): string => host.replace(/^\[|\]$/g, '').toLowerCase();

/**
 * Why `address` may not be fetched from (a short description of its kind), or undefined when it is a
 * public unicast address. IPv4-mapped IPv6 addresses are judged as the IPv4 address they carry;
 * NAT64, 6to4 and Teredo addresses, which can lead to any IPv4 address, are refused too.
 */
export function addressRefusal(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  const range = ipaddr.process(address).range();
  switch (range) {
    case 'unicast':
      return undefined;
    case 'loopback':
      return 'a loopback address';
    case 'private':
      return 'a private address';
    case 'linkLocal':
      return 'a link-local address';
    case 'uniqueLocal':
      return 'a unique-local address';
    case 'carrierGradeNat':
      return 'a shared (carrier-grade NAT) address';
    case 'multicast':
      return 'a multicast address';
    case 'unspecified':
      return 'the unspecified address';
    case 'broadcast':
      return 'the broadcast address';
    default:
      return `a special-purpose address (${range})`;
  }
}

const isLoopbackAddress = (address: string): boolean => ipaddr.isValid(address) && ipaddr.process(address).range() === 'loopback';

/**
 * Why `clientId` cannot be a metadata document URL, or undefined. The CIMD draft's rules: https,
 * a path, no dot segments, no fragment, no user name or password; and written in its normal form
 * (as the URL parser writes it back), since the document must repeat it exactly.
 */
export function clientIdUrlProblem(clientId: string, clientHosts: readonly string[]): string | undefined {
  if (clientId.length > MAX_CLIENT_ID_URL_LENGTH) {
    return `The client_id is ${clientId.length} characters long; a client metadata document URL may have at most ${MAX_CLIENT_ID_URL_LENGTH}.`;
  }
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return `The client_id ${quoted(clientId)} is not a URL.`;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `The client_id ${quoted(clientId)} is not an https URL.`;
  if (clientId.includes('#')) return `The client_id ${quoted(clientId)} has a fragment (#…); a client metadata document URL may not.`;
  if (url.username !== '' || url.password !== '') {
    return `The client_id ${quoted(clientId)} carries a user name or password; a client metadata document URL may not.`;
  }
  if (url.href !== clientId) {
    return `The client_id ${quoted(clientId)} is not written in its normal form (${quoted(url.href)}: lower-case host, no default port, no "." or ".." segments). The client's developer must use that form.`;
  }
  if (url.pathname === '/')
    return `The client_id ${quoted(clientId)} has no path; a client metadata document URL needs one (e.g. /oauth/client.json).`;
  if (url.protocol === 'http:' && !isListed(url.hostname, clientHosts)) {
    return `The client_id ${quoted(clientId)} uses plain http; a client metadata document must be served over https. (For local development, a loopback host may use http once allowed with --oauth-client-host ${bareHost(url.hostname)}.)`;
  }
  return undefined;
}

const isListed = (hostname: string, clientHosts: readonly string[]): boolean =>
  clientHosts.some((listed) => bareHost(listed) === bareHost(hostname));

/**
 * The document's client name as shown: control, format (bidirectional overrides, zero-width) and
 * line-separator characters removed, spaces collapsed, cut to MAX_CLIENT_NAME_LENGTH characters;
 * undefined when nothing is left.
 */
export function cleanClientName(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  const clean = name
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (clean === '') return undefined;
  const characters = [...clean];
  return characters.length > MAX_CLIENT_NAME_LENGTH ? `${characters.slice(0, MAX_CLIENT_NAME_LENGTH - 1).join('')}…` : clean;
}

const documentSchema = z.object({
  client_id: z.string(),
  redirect_uris: z.array(z.string()).min(1).max(MAX_REDIRECT_URIS),
  token_endpoint_auth_method: z.string().optional(),
  client_name: z.string().max(1_000).optional(),
  client_secret: z.unknown().optional(),
});

/** The checked document, or why the JSON at `clientId` is not a usable one. */
export function parseClientMetadata(clientId: string, json: unknown): MetadataResult {
  const where = `The client metadata document at ${quoted(clientId)}`;
  const parsed = documentSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue === undefined || issue.path.length === 0 ? 'the document' : issue.path.join('.');
    return {
      ok: false,
      error: `${where} is not valid: ${field}: ${issue?.message ?? 'invalid'}. It needs at least client_id (equal to its URL) and redirect_uris (1 to ${MAX_REDIRECT_URIS}).`,
    };
  }
  const doc = parsed.data;
  if (doc.client_id !== clientId) {
    return {
      ok: false,
      error: `${where} names another client_id (${quoted(doc.client_id)}); it must equal the URL it is served from exactly, so it is not used.`,
    };
  }
  if (doc.client_secret !== undefined) {
    return { ok: false, error: `${where} contains a client_secret, which a public document must never hold; it is not used.` };
  }
  if (doc.token_endpoint_auth_method !== undefined && doc.token_endpoint_auth_method !== 'none') {
    return {
      ok: false,
      error: `${where} asks for token_endpoint_auth_method ${quoted(doc.token_endpoint_auth_method)}; this server accepts only "none" (PKCE) for such clients. Register the client instead, or use "none".`,
    };
  }
  for (const uri of doc.redirect_uris) {
    const problem = redirectUriProblem(uri);
    if (problem !== undefined) return { ok: false, error: `${where} lists a redirect URI that is not allowed. ${problem}` };
  }
  return { ok: true, document: { clientId, clientName: cleanClientName(doc.client_name), redirectUris: doc.redirect_uris } };
}

const systemResolve: ResolveHost = async (hostname) => (await dnsLookup(hostname, { all: true })).map((a) => a.address);

/** undici's own timeouts (set to the same bound), which may fire a moment before the deadline's signal. */
const UNDICI_TIMEOUTS: ReadonlySet<string> = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Thrown inside a fetch to end it with a message for the page; anything else is reported by kind. */
class Refusal extends Error {}

interface Entry {
  expiresAt: number;
  readonly result: Promise<MetadataResult>;
}

/**
 * Fetches and checks client metadata documents, with a cache. One per server (the allow-list is
 * fixed for its life).
 *
 * @example const docs = new ClientMetadataFetcher({ clientHosts: [] }); await docs.fetch('https://app.example/client.json')
 */
export class ClientMetadataFetcher {
  readonly #clientHosts: readonly string[];
  readonly #resolve: ResolveHost;
  readonly #timeoutMs: number;
  readonly #maxBytes: number;
  readonly #cacheTtlMs: number;
  readonly #failureTtlMs: number;
  readonly #maxEntries: number;
  readonly #maxInFlight: number;
  readonly #tls: { readonly ca?: string | Buffer };
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry>();
  #inFlight = 0;

  constructor(options: ClientMetadataOptions) {
    this.#clientHosts = options.clientHosts;
    this.#resolve = options.resolve ?? systemResolve;
    this.#timeoutMs = options.timeoutMs ?? 5_000;
    this.#maxBytes = options.maxBytes ?? 65_536;
    this.#cacheTtlMs = options.cacheTtlMs ?? 300_000;
    this.#failureTtlMs = options.failureTtlMs ?? 30_000;
    this.#maxEntries = options.maxEntries ?? 1_000;
    this.#maxInFlight = options.maxInFlight ?? 16;
    this.#tls = options.tls ?? {};
    this.#now = options.now ?? Date.now;
  }

  /** How many documents (and recent failures) the cache holds. */
  get cached(): number {
    return this.#entries.size;
  }

  /** The checked document at `clientId`, from the cache when fetched recently; never throws. */
  async fetch(clientId: string): Promise<MetadataResult> {
    const now = this.#now();
    const entry = this.#entries.get(clientId);
    if (entry !== undefined && entry.expiresAt > now) return entry.result;
    if (entry !== undefined) this.#entries.delete(clientId);
    if (this.#inFlight >= this.#maxInFlight) {
      return {
        ok: false,
        error: `Too many client metadata documents are being fetched at once, so ${quoted(clientId)} was not. Try again in a few seconds.`,
      };
    }
    this.#inFlight++;
    const fresh: Entry = { expiresAt: Number.POSITIVE_INFINITY, result: this.#fetchAndCheck(clientId) };
    this.#remember(clientId, fresh);
    const result = await fresh.result.finally(() => this.#inFlight--);
    fresh.expiresAt = this.#now() + (result.ok ? this.#cacheTtlMs : this.#failureTtlMs);
    return result;
  }

  #remember(clientId: string, entry: Entry): void {
    if (this.#entries.size >= this.#maxEntries) {
      const now = this.#now();
      for (const [key, old] of this.#entries) if (old.expiresAt <= now) this.#entries.delete(key);
      // Still full: drop the oldest (a Map keeps insertion order).
      const oldest = this.#entries.keys().next();
      if (this.#entries.size >= this.#maxEntries && oldest.done !== true) this.#entries.delete(oldest.value);
    }
    this.#entries.set(clientId, entry);
  }

  async #fetchAndCheck(clientId: string): Promise<MetadataResult> {
    const problem = clientIdUrlProblem(clientId, this.#clientHosts);
    if (problem !== undefined) return { ok: false, error: problem };
    const where = `The client metadata document at ${quoted(clientId)}`;
    const deadline = AbortSignal.timeout(this.#timeoutMs);
    try {
      const body = await this.#download(new URL(clientId), deadline);
      let json: unknown;
      try {
        json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
      } catch {
        return { ok: false, error: `${where} is not JSON (UTF-8). The client's developer must serve it as a JSON object.` };
      }
      return parseClientMetadata(clientId, json);
    } catch (error) {
      if (error instanceof Refusal) return { ok: false, error: `${where} was not fetched: ${error.message}` };
      const code = (error as { code?: unknown }).code;
      if (deadline.aborted || (typeof code === 'string' && UNDICI_TIMEOUTS.has(code))) {
        return {
          ok: false,
          error: `${where} could not be fetched within ${this.#timeoutMs / 1000} s. Try again later; if it keeps failing, the client's host is down or too slow.`,
        };
      }
      const kind = typeof code === 'string' ? code : error instanceof Error ? error.name : 'error';
      return {
        ok: false,
        error: `${where} could not be fetched (${kind}). Check that the client's host is up and serves it over https with a valid certificate, then try again.`,
      };
    }
  }

  /** The body at `url`: resolved once, checked, connected only to the checked addresses, bounded. */
  async #download(url: URL, deadline: AbortSignal): Promise<Uint8Array> {
    const host = bareHost(url.hostname);
    const listed = isListed(host, this.#clientHosts);
    const addresses = isIP(host) !== 0 ? [host] : await withDeadline(this.#resolve(host), deadline);
    const first = addresses[0];
    if (first === undefined) throw new Refusal(`its host ${host} has no address.`);
    if (!listed) {
      for (const address of addresses) {
        const refusal = addressRefusal(address);
        if (refusal !== undefined) {
          throw new Refusal(
            `its host ${host} resolves to ${address}, ${refusal}; documents are fetched only from public addresses. If this client is yours and runs on your own network, allow its host with --oauth-client-host ${host}.`,
          );
        }
      }
    }
    if (url.protocol === 'http:') {
      const elsewhere = addresses.find((address) => !isLoopbackAddress(address));
      if (elsewhere !== undefined) {
        throw new Refusal(
          `plain http is used only for a listed host on this machine's loopback, and ${host} resolves to ${elsewhere}. Serve it over https.`,
        );
      }
    }

    // Loaded here: only a client metadata document needs it, never the server's start-up.
    const { Agent, request } = await import('undici');
    // The connection may go only to the addresses just checked: Node asks for all of them when it
    // races IPv4 and IPv6 (autoSelectFamily), for one otherwise.
    const checked = addresses.map((address) => ({ address, family: isIP(address) }));
    const lookup: LookupFunction = (_hostname, options, callback) => {
      if (options.all === true) callback(null, checked);
      else callback(null, first, isIP(first));
    };
    const agent: Undici.Dispatcher = new Agent({
      connect: { lookup, timeout: this.#timeoutMs, ...this.#tls },
      headersTimeout: this.#timeoutMs,
      bodyTimeout: this.#timeoutMs,
      pipelining: 0,
    });
    try {
      const response = await request(url, {
        dispatcher: agent,
        method: 'GET',
        headers: { accept: 'application/json', 'user-agent': 'limbic-oauth (client metadata document)' },
        signal: deadline,
      });
      if (response.statusCode !== 200) {
        discard(response.body);
        const redirect = response.statusCode >= 300 && response.statusCode < 400;
        throw new Refusal(
          redirect
            ? `its host answered ${response.statusCode}, a redirect, which is never followed. The document must be served at its client_id URL itself.`
            : `its host answered ${response.statusCode} instead of 200. Check the URL with the client's developer.`,
        );
      }
      const declared = Number(response.headers['content-length']);
      if (Number.isFinite(declared) && declared > this.#maxBytes) {
        discard(response.body);
        throw new Refusal(`it is ${declared} bytes; at most ${this.#maxBytes} are accepted.`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body) {
        const bytes = chunk as Buffer;
        size += bytes.length;
        if (size > this.#maxBytes) {
          discard(response.body);
          throw new Refusal(`it is larger than ${this.#maxBytes} bytes, the most accepted.`);
        }
        chunks.push(bytes);
      }
      return Buffer.concat(chunks);
    } finally {
      await agent.destroy().catch(() => undefined);
    }
  }
}

/**
 * Stops reading a body and closes its connection. undici's body emits an "aborted" error when
 * destroyed unread; with no listener that error would be an uncaught exception and end the server.
 */
function discard(body: Readable): void {
  body.on('error', () => undefined);
  body.destroy();
}

/** `work`, or a rejection as soon as `deadline` fires (the lookup itself cannot be cancelled). */
async function withDeadline<T>(work: Promise<T>, deadline: AbortSignal): Promise<T> {
  deadline.throwIfAborted();
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(deadline.reason as Error);
    deadline.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    if (onAbort !== undefined) deadline.removeEventListener('abort', onAbort);
  }
}
