/**
 * The consent page and the error page of /authorize: plain HTML, no script, nothing fetched from
 * elsewhere, every value that came from a request or a client escaped. The page is a form whose one
 * visible field takes the approval code (or a bearer token); every other parameter rides in hidden
 * fields, so any browser or script can complete it.
 */
import type { ServerResponse } from 'node:http';

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text safe inside an element or a double-quoted attribute. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);

/** The look of the web page (web/app.css), inlined: the page loads nothing else. */
const STYLE = `
body{margin:0;font:16px/1.45 system-ui,sans-serif;color:#1d2330;background:#fafbfc}
header{padding:.6rem 1rem;border-bottom:1px solid #d9dde5;background:#fff}
h1{font-size:1.2rem;margin:0}
main{padding:1rem;max-width:40rem;margin:0 auto}
h2{font-size:1.1rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem;margin:1rem 0}
dt{color:#5b6475}
dd{margin:0;overflow-wrap:anywhere}
.host{font-weight:600}
form{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
label{flex-basis:100%}
input[type=text]{flex:1 1 16rem;min-width:0;padding:.55rem .7rem;font-size:1rem;border:1px solid #d9dde5;border-radius:6px;font-family:ui-monospace,monospace}
button{padding:.5rem .9rem;font-size:1rem;border:1px solid #2c5fb8;background:#2c5fb8;color:#fff;border-radius:6px;cursor:pointer}
button.deny{background:transparent;color:#2c5fb8}
button:focus-visible,input:focus-visible{outline:3px solid #2c5fb8;outline-offset:2px}
.hint{color:#5b6475;font-size:.9rem;flex-basis:100%}
.error{color:#a32020}
code{font-family:ui-monospace,monospace}
`;

const document = (title: string, body: string): string =>
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header><h1>Limbic</h1></header>
<main>
${body}
</main>
</body>
</html>
`;

/**
 * The headers of both pages: no framing (clickjacking), no script, forms posting only here and to
 * `formTarget` (the redirect after the form, which form-action governs too), no caching. The
 * referrer stays on this origin: "no-referrer" would make browsers send "Origin: null" with the
 * form (Fetch §"append a request Origin header"), leaving the Origin checks nothing to check.
 */
function pageHeaders(formTarget: string | undefined): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': `default-src 'none'; style-src 'self' 'unsafe-inline'; form-action 'self'${formTarget === undefined ? '' : ` ${formTarget}`}; frame-ancestors 'none'; base-uri 'none'`,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'same-origin',
    'cache-control': 'no-store',
  };
}

/** The CSP source of where a redirect URI sends the browser: its origin, or its private-use scheme. */
export function cspSourceOf(redirectUri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(redirectUri);
  } catch {
    return undefined;
  }
  const source = url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol;
  // Only characters a CSP source may hold: a value that could end the directive is left out.
  return /^[a-z][a-z0-9+.-]*:(?:\/\/[a-z0-9.\-[\]:]+)?$/i.test(source) ? source : undefined;
}

/** Where a redirect URI sends the browser, as the page names it: its host (and port), or its scheme for an app. */
export function redirectHostOf(redirectUri: string): string {
  const url = new URL(redirectUri);
  if (url.protocol === 'http:' || url.protocol === 'https:') return url.host;
  return `the app that handles ${url.protocol} links`;
}

export interface ConsentView {
  readonly clientName: string | undefined;
  readonly clientId: string;
  readonly redirectUri: string;
  readonly scopes: readonly string[];
  /** Every parameter the POST needs back, the CSRF token included. */
  readonly hidden: Readonly<Record<string, string>>;
  /** Why the last try failed, shown above the form. */
  readonly problem?: string | undefined;
}

const SCOPE_TEXT: Readonly<Record<string, string>> = {
  'memory:read': 'read the memory (search, open entities, statistics)',
  'memory:write': 'change the memory (add, edit and delete entities, observations and relations)',
};

export function sendConsentPage(res: ServerResponse, view: ConsentView, status = 200): void {
  const name = view.clientName ?? view.clientId;
  const hidden = Object.entries(view.hidden)
    .map(([key, value]) => `<input type="hidden" name="${escapeHtml(key)}" value="${escapeHtml(value)}">`)
    .join('\n');
  const scopes = view.scopes.map((s) => `<li>${escapeHtml(SCOPE_TEXT[s] ?? s)} (<code>${escapeHtml(s)}</code>)</li>`).join('');
  const body = `<h2>Connect ${escapeHtml(name)} to this memory?</h2>
${view.problem === undefined ? '' : `<p class="error" role="alert">${escapeHtml(view.problem)}</p>`}
<dl>
<dt>Client</dt><dd>${escapeHtml(name)}</dd>
<dt>Client id</dt><dd><code>${escapeHtml(view.clientId)}</code></dd>
<dt>Sends you back to</dt><dd class="host">${escapeHtml(redirectHostOf(view.redirectUri))}</dd>
<dt>It may</dt><dd><ul>${scopes}</ul></dd>
</dl>
<p>Allow only if you started this connection yourself and know the host above.</p>
<form method="post" action="/authorize">
${hidden}
<label for="code">One-time code</label>
<input id="code" name="code" type="text" autocomplete="off" autocapitalize="characters" spellcheck="false" required placeholder="XXXX-XXXX-XXXX" autofocus>
<button type="submit" name="action" value="allow">Allow</button>
<button type="submit" name="action" value="deny" class="deny" formnovalidate>Deny</button>
<p class="hint">Run <code>limbic auth code --namespace NAME</code> where Limbic runs and type the code it prints (add <code>--read-only</code> to allow reading only). A bearer token of that namespace is accepted instead.</p>
</form>`;
  const headers = pageHeaders(cspSourceOf(view.redirectUri));
  res.writeHead(status, headers);
  res.end(document(`Limbic — connect ${name}?`, body));
}

/** A page that says why the sign-in cannot go on, sending the browser nowhere. */
export function sendErrorPage(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...pageHeaders(undefined), ...headers });
  res.end(
    document(
      'Limbic — sign-in stopped',
      `<h2>This sign-in cannot go on</h2>\n<p class="error" role="alert">${escapeHtml(message)}</p>\n<p>Nothing was granted. Close this page and start the connection again from the app.</p>`,
    ),
  );
}
