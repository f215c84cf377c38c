/**
 * What `serve --http` tells its OAuth 2.1 authorization server (issue 36), and the names both halves
 * share: the scopes, the lifetimes, and the issuer and resource of a request.
 */
import type { IncomingMessage } from 'node:http';

export interface OAuthOptions {
  /** An origin (scheme://host[:port]) clients reach this server by, or undefined: derive from Host. */
  readonly publicUrl: string | undefined;
  /** Host names whose client metadata documents may live on loopback/private addresses (and, if loopback, plain http). */
  readonly clientHosts: readonly string[];
  /** Lifetimes, ms (defaults: access 1 h, refresh 30 d, code 120 s). Tests shorten them. */
  readonly accessTtlMs?: number;
  readonly refreshTtlMs?: number;
  readonly codeTtlMs?: number;
}

export const READ_SCOPE = 'memory:read';
export const WRITE_SCOPE = 'memory:write';
export const SCOPES_SUPPORTED: readonly string[] = [READ_SCOPE, WRITE_SCOPE];

export const DEFAULT_ACCESS_TTL_MS = 60 * 60 * 1000;
export const DEFAULT_REFRESH_TTL_MS = 30 * 24 * 60 * 60 * 1000;
export const DEFAULT_CODE_TTL_MS = 120 * 1000;

/**
 * The issuer of a request: the public URL when one is set, else `http://` and the request's Host
 * (which has passed the DNS-rebinding check), as a URL origin. So the metadata's issuer is exactly
 * the URL it was fetched from (RFC 8414 §3.3).
 */
export function issuerOf(req: IncomingMessage, options: OAuthOptions): string {
  if (options.publicUrl !== undefined) return new URL(options.publicUrl).origin;
  return new URL(`http://${req.headers.host ?? 'localhost'}`).origin;
}

/** The resource (RFC 8707) this server is for a request: its MCP endpoint. */
export const resourceOf = (issuer: string): string => `${issuer}/mcp`;

/** A resource as compared: without one trailing slash. */
export const normalizeResource = (resource: string): string => (resource.endsWith('/') ? resource.slice(0, -1) : resource);

/** Whether `presented` names `resource` (exactly, but for a trailing slash). */
export const sameResource = (presented: string, resource: string): boolean => normalizeResource(presented) === normalizeResource(resource);

/**
 * The scopes a request asks for, normalised: none → both; write implies read (a write grant is
 * served with the reading tools too); undefined when one is unknown.
 */
export function requestedScopes(scope: string | undefined): readonly string[] | undefined {
  const asked = (scope ?? '').split(' ').filter((s) => s !== '');
  if (asked.some((s) => !SCOPES_SUPPORTED.includes(s))) return undefined;
  if (asked.length === 0 || asked.includes(WRITE_SCOPE)) return [READ_SCOPE, WRITE_SCOPE];
  return [READ_SCOPE];
}

/** What a grant's tokens carry: the scopes asked for, bounded by what the approval allows. */
export const grantedScope = (asked: readonly string[], readOnly: boolean): string =>
  readOnly || !asked.includes(WRITE_SCOPE) ? READ_SCOPE : `${READ_SCOPE} ${WRITE_SCOPE}`;
