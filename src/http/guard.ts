/**
 * What every request passes before it reaches a memory: the Host and Origin checks against DNS
 * rebinding, the bearer token (made by `limbic token create`, or an OAuth access token of
 * src/http/oauth/), and a bounded body. Plain node:http, no framework.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TokenRecord, TokenStore } from '../store/token-store.js';
import { bearerOf, verifyToken } from './tokens.js';

/** Names a loopback server always answers to. */
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];

export const isLoopback = (host: string): boolean => LOOPBACK_NAMES.includes(host.replace(/^\[|\]$/g, '').toLowerCase());

/**
 * The host names a browser may reach us by: loopback names, the host we bound (unless a wildcard)
 * and any the user allowed. A page on an attacker's domain that rebinds its name to 127.0.0.1
 * still sends its own name in Host, and its own origin in Origin: both are refused.
 */
export function allowedHostNames(boundHost: string, extra: readonly string[]): Set<string> {
  const names = new Set(LOOPBACK_NAMES);
  if (boundHost !== '0.0.0.0' && boundHost !== '::') names.add(boundHost.replace(/^\[|\]$/g, '').toLowerCase());
  for (const name of extra) names.add(name.replace(/^\[|\]$/g, '').toLowerCase());
  return names;
}

/** The host name of a Host header ("example.com:8080", "[::1]:80"), lower-cased. */
export function hostNameOf(header: string): string | undefined {
  const match = /^(\[[^\]]+\]|[^:]+)(?::\d+)?$/.exec(header.trim());
  return match?.[1]?.replace(/^\[|\]$/g, '').toLowerCase();
}

/**
 * Why this request's Host or Origin is refused, or undefined when both are allowed. `checkOrigin`
 * false: only the Host is checked, for endpoints that answer any origin and read no cookie (the
 * OAuth discovery documents, /register, /token, /revoke); the Host check still stops rebinding.
 */
export function rebindingRefusal(req: IncomingMessage, allowed: ReadonlySet<string>, checkOrigin = true): string | undefined {
  const host = req.headers.host === undefined ? undefined : hostNameOf(req.headers.host);
  if (host === undefined || !allowed.has(host)) {
    return `Host "${req.headers.host ?? ''}" is not one this server answers to (DNS-rebinding protection). Reach it by one of ${[...allowed].join(', ')}, or start it with --allowed-host NAME.`;
  }
  const origin = req.headers.origin;
  if (checkOrigin && origin !== undefined) {
    let originHost: string | undefined;
    try {
      originHost = new URL(origin).hostname.replace(/^\[|\]$/g, '').toLowerCase();
    } catch {
      originHost = undefined;
    }
    if (originHost === undefined || !allowed.has(originHost)) {
      return `Origin "${origin}" may not call this server (DNS-rebinding protection). Only pages served by an allowed host may; start it with --allowed-host NAME to allow another.`;
    }
  }
  return undefined;
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers });
  res.end(text);
}

/** A JSON-RPC error as an HTTP answer, so MCP clients show its message; `id`, the request's when it is known. */
export function sendRpcError(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
  id: string | number | null = null,
  code = -32000,
): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id }, headers);
}

export type Authorized =
  | { readonly ok: true; readonly token: TokenRecord }
  | { readonly ok: false; readonly status: 401; readonly message: string; readonly challenge: string };

/** The OAuth side of the bearer check (src/http/oauth/oauth-server.ts), when the server issues tokens itself. */
export interface OAuthBearers {
  /** Whether a presented bearer is an OAuth access token. */
  isAccessToken(presented: string): boolean;
  /** Its grant, served like a bearer token, or why it is refused (expired, revoked, another resource). */
  verifyAccessToken(presented: string, req: IncomingMessage): Promise<{ ok: true; token: TokenRecord } | { ok: false; message: string }>;
  /** The challenge's parameters naming the resource metadata and the scopes (RFC 9728 §5.1). */
  challengeParams(req: IncomingMessage): string;
}

/**
 * Checks the bearer token: a `limbic token create` one, or with `oauth` an OAuth access token
 * (issued for this server's resource). The token itself is never logged or echoed, whatever happens.
 */
export async function authorize(req: IncomingMessage, tokens: TokenStore, oauth?: OAuthBearers): Promise<Authorized> {
  const discovery = oauth === undefined ? '' : `, ${oauth.challengeParams(req)}`;
  const presented = bearerOf(req.headers.authorization);
  if (presented === undefined) {
    return {
      ok: false,
      status: 401,
      message:
        'This server needs a bearer token: send "Authorization: Bearer <token>". Make one with "limbic token create --namespace NAME"' +
        (oauth === undefined
          ? '.'
          : ', or connect with OAuth: an MCP client discovers it from this answer, and you approve it with a code from "limbic auth code".'),
      challenge: `Bearer realm="limbic"${discovery}`,
    };
  }
  if (oauth?.isAccessToken(presented) === true) {
    const checked = await oauth.verifyAccessToken(presented, req);
    if (checked.ok) return { ok: true, token: checked.token };
    return { ok: false, status: 401, message: checked.message, challenge: `Bearer realm="limbic", error="invalid_token"${discovery}` };
  }
  const token = await verifyToken(tokens, presented);
  if (token === undefined) {
    return {
      ok: false,
      status: 401,
      message:
        'The bearer token is not valid here (wrong, revoked, or made for another database). "limbic token list" shows the tokens; make a new one with "limbic token create".',
      challenge: `Bearer realm="limbic", error="invalid_token"${discovery}`,
    };
  }
  return { ok: true, token };
}

export class BodyTooLarge extends Error {
  constructor(readonly limit: number) {
    super(
      `The request body is over this server's limit of ${limit} bytes and was not read; nothing was changed. Split the call (read_graph and search_nodes page with limit/offset; write fewer items per call).`,
    );
  }
}

/** Reads a body of at most `limit` bytes; larger ones are refused as soon as that is known. */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw new BodyTooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new BodyTooLarge(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
