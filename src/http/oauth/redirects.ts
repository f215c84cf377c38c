/**
 * Redirect URIs of OAuth clients (issue 36): which ones a client may register or list in its
 * metadata document, and whether the one an /authorize request presents is one of them.
 *
 * The rules are OAuth 2.1's and RFC 8252's (OAuth for native apps): https anywhere; plain http only
 * back to this machine's loopback interface, where a native client listens for its callback; a
 * private-use scheme (`cursor://…`, `vscode://…`, `com.example.app:/cb`) that the operating system
 * hands to the app that claimed it. Never a scheme a browser runs or reads locally (javascript:,
 * data:, file:, …), never a fragment (the code would ride where the page's scripts read it), never
 * user:password@ (which hides the real host from a reader of the consent page). Matching is exact
 * string equality, except a loopback http URI may differ in port only: a native client picks a free
 * port each time it starts (RFC 8252 §7.3).
 */

/** Longest redirect URI accepted; registrations and consent pages stay small. */
export const MAX_REDIRECT_URI_LENGTH = 2000;

/** Hosts of a plain-http redirect: the loopback interface, by the names RFC 8252 §7.3 and MCP clients use. */
const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * Schemes never accepted: run or read by the browser itself, or not a place an app receives a
 * callback at (ftp, websockets). Everything else that is not http(s) is taken as a private-use scheme.
 */
const REFUSED_SCHEMES: ReadonlySet<string> = new Set([
  'javascript:',
  'data:',
  'file:',
  'vbscript:',
  'blob:',
  'about:',
  'filesystem:',
  'view-source:',
  'ftp:',
  'ws:',
  'wss:',
]);

/** The authority of a URI written scheme://authority/…: what precedes the host is checked for a user part. */
const AUTHORITY = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i;

/** A redirect URI quoted in a message: bounded, so a huge one does not fill the page. */
const quoted = (uri: string): string => JSON.stringify(uri.length > 120 ? `${uri.slice(0, 120)}…` : uri);

/**
 * Why `uri` may not be a client's redirect URI, as a sentence for the client's developer, or
 * undefined when it may.
 *
 * @example redirectUriProblem('http://127.0.0.1:33418/callback') // undefined
 * @example redirectUriProblem('http://example.com/cb') // "… plain http is allowed only …"
 */
export function redirectUriProblem(uri: string): string | undefined {
  if (uri.length === 0) return 'A redirect URI is empty. Give the full URL the authorization code should be sent to.';
  if (uri.length > MAX_REDIRECT_URI_LENGTH) {
    return `A redirect URI is ${uri.length} characters long; at most ${MAX_REDIRECT_URI_LENGTH} are accepted. Use a shorter callback URL.`;
  }
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `The redirect URI ${quoted(uri)} is not an absolute URL. Give the full URL, with its scheme (https://…, http://127.0.0.1:PORT/…, or your app's own scheme).`;
  }
  if (uri.includes('#')) {
    return `The redirect URI ${quoted(uri)} has a fragment (#…); OAuth forbids one. Remove it.`;
  }
  // An empty user part ("https://@host/") parses to no user name at all, so the string is checked too.
  if (url.username !== '' || url.password !== '' || (AUTHORITY.exec(uri)?.[1] ?? '').includes('@')) {
    return `The redirect URI ${quoted(uri)} carries a user name or password; it may not. Remove the part before @.`;
  }
  // Whitespace, control characters and backslashes are dropped, encoded or turned into "/" by a
  // browser, so the URI it follows would not be the one written and shown on the consent page.
  if (hasSpaceControlOrBackslash(uri)) {
    return `The redirect URI ${quoted(uri)} contains a space, control character or backslash. Percent-encode it or remove it.`;
  }
  const scheme = url.protocol.toLowerCase();
  if (REFUSED_SCHEMES.has(scheme)) {
    return `The redirect URI ${quoted(uri)} uses the scheme ${scheme}, which can never receive an authorization code. Use https://, a loopback http:// URL, or your app's own scheme.`;
  }
  if ((scheme === 'https:' || scheme === 'http:') && !uri.startsWith(`${scheme}//`)) {
    return `The redirect URI ${quoted(uri)} is not written as ${scheme}//host/path. Write it in that form, in lower case.`;
  }
  if (scheme === 'https:') return undefined;
  if (scheme === 'http:') {
    if (LOOPBACK_HOSTS.has(url.hostname.toLowerCase())) return undefined;
    return `The redirect URI ${quoted(uri)} uses plain http on a host other than this machine's loopback; plain http is allowed only to 127.0.0.1, [::1] or localhost. Use https:// for any other host.`;
  }
  // A private-use scheme (RFC 8252 §7.1): it needs somewhere to go after the colon.
  if (uri.length <= scheme.length) {
    return `The redirect URI ${quoted(uri)} has nothing after its scheme. Give the full callback, e.g. ${scheme}/oauth/callback.`;
  }
  return undefined;
}

function hasSpaceControlOrBackslash(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f || c === 0x5c) return true;
  }
  return false;
}

/**
 * A loopback http URI with its port taken out ("http://127.0.0.1:8080/cb" → "http://127.0.0.1/cb"),
 * or undefined for any other URI. Done on the string, so everything but the port still compares
 * exactly as written.
 */
function withoutLoopbackPort(uri: string): string | undefined {
  const match = /^http:\/\/(127\.0\.0\.1|\[::1\]|localhost)(?::\d{1,5})?(?=[/?]|$)/.exec(uri);
  if (match === null) return undefined;
  return `http://${match[1] ?? ''}${uri.slice(match[0].length)}`;
}

/**
 * Whether `presented` (the redirect_uri of an /authorize or /token request) is one of the client's
 * `registered` redirect URIs: exactly equal, or a loopback http URI differing from one only in its
 * port (RFC 8252 §7.3; OAuth 2.1 §8.4.2).
 *
 * @example redirectUriMatches(['http://127.0.0.1/callback'], 'http://127.0.0.1:53012/callback') // true
 * @example redirectUriMatches(['https://app.example/cb'], 'https://app.example/cb/') // false
 */
export function redirectUriMatches(registered: readonly string[], presented: string): boolean {
  if (registered.includes(presented)) return true;
  const bare = withoutLoopbackPort(presented);
  if (bare === undefined || redirectUriProblem(presented) !== undefined) return false;
  return registered.some((uri) => withoutLoopbackPort(uri) === bare);
}
