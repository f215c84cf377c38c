/**
 * Reading the authorization server's requests: bounded form bodies, single-valued parameters
 * (RFC 6749 §3.1: a parameter sent twice is an error), client credentials (none, post, basic),
 * and the OAuth JSON answers.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, sendJson } from '../guard.js';
import { hashSecret } from './secrets.js';

/** Bytes of a form or JSON body at the OAuth endpoints. */
export const MAX_FORM_BYTES = 16 * 1024;

export class BadRequest extends Error {}

/** A form body (application/x-www-form-urlencoded) of at most MAX_FORM_BYTES; BodyTooLarge or BadRequest otherwise. */
export async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    req.resume();
    throw new BadRequest('the body must be application/x-www-form-urlencoded');
  }
  return new URLSearchParams((await readBody(req, MAX_FORM_BYTES)).toString('utf8'));
}

/** The one value of `name` (undefined when absent or empty); BadRequest when it is sent twice. */
export function oneParam(params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name);
  if (values.length > 1) throw new BadRequest(`${name} is sent more than once`);
  const value = values[0];
  return value === undefined || value === '' ? undefined : value;
}

/** Equal strings, compared in time that does not depend on where they differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

export interface ClientCredentials {
  readonly clientId: string | undefined;
  readonly secret: string | undefined;
  /** Whether they came in an Authorization: Basic header (a failure then answers with a Basic challenge). */
  readonly basic: boolean;
}

/** RFC 6749 §2.3.1: client_secret_basic (form-urlencoded id and secret in Basic) or the body's client_id/client_secret. */
export function clientCredentials(req: IncomingMessage, params: URLSearchParams): ClientCredentials {
  const header = req.headers.authorization;
  if (header !== undefined && /^basic /i.test(header)) {
    const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon === -1) throw new BadRequest('the Basic credentials are not "client_id:client_secret"');
    const clientId = safeDecode(decoded.slice(0, colon));
    const secret = safeDecode(decoded.slice(colon + 1));
    const bodyId = oneParam(params, 'client_id');
    if (bodyId !== undefined && bodyId !== clientId) throw new BadRequest('client_id differs between the body and the Basic credentials');
    if (oneParam(params, 'client_secret') !== undefined) throw new BadRequest('client credentials are sent in two ways at once');
    return { clientId, secret: secret === '' ? undefined : secret, basic: true };
  }
  return { clientId: oneParam(params, 'client_id'), secret: oneParam(params, 'client_secret'), basic: false };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    throw new BadRequest('the Basic credentials are not form-urlencoded');
  }
}

/** Whether a presented secret is the one whose hash is stored. */
export const secretMatches = (presented: string, storedHash: string): boolean => constantTimeEqual(hashSecret(presented), storedHash);

/** An OAuth error answer (RFC 6749 §5.2): JSON {error, error_description}, never cached. */
export function sendOAuthError(
  res: ServerResponse,
  status: number,
  error: string,
  description: string,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, { error, error_description: description }, { pragma: 'no-cache', ...headers });
}

/** The address a request came from, as the per-address bounds count it (behind a proxy, the proxy's). */
export const remoteAddressOf = (req: IncomingMessage): string => req.socket.remoteAddress ?? 'unknown';
