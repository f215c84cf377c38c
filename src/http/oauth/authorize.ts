/**
 * GET and POST /authorize: the consent step (OAuth 2.1 §4.1.1, RFC 9207, RFC 8707).
 *
 * The order of the checks decides who can be sent where. The client and its redirect URI are
 * checked first, and a failure there is a page in this browser, never a redirect: an unknown client
 * or an unregistered redirect URI could otherwise send an error — or a code — to an attacker. Only
 * then may an error go back to the redirect URI (with `state` and `iss`). A code is issued only
 * after the POST passes the CSRF check, every parameter passes again, and an approval code (single
 * use) or a bearer token is shown; wrong codes are rate limited.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../core/logger.js';
import type { OAuthStore } from '../../store/oauth-store.js';
import type { TokenStore } from '../../store/token-store.js';
import { BodyTooLarge } from '../guard.js';
import { TOKEN_PREFIX, verifyToken } from '../tokens.js';
import { resolveClient, type ResolvedClient } from './clients.js';
import { sendConsentPage, sendErrorPage } from './consent-page.js';
import { WRITE_SCOPE, grantedScope, issuerOf, requestedScopes, resourceOf, sameResource, type OAuthOptions } from './options.js';
import { WrongCodeLimiter, type WrongCodeBound } from './rate-limit.js';
import { redirectUriMatches } from './redirects.js';
import { BadRequest, constantTimeEqual, oneParam, readForm, remoteAddressOf } from './requests.js';
import {
  ACCESS_TOKEN_PREFIX,
  AUTHORIZATION_CODE_PREFIX,
  REFRESH_TOKEN_PREFIX,
  hashSecret,
  newId,
  newSecret,
  normalizeApprovalCode,
} from './secrets.js';

export interface AuthorizeDeps {
  readonly options: OAuthOptions;
  readonly tokens: TokenStore;
  readonly store: () => OAuthStore;
  readonly logger: Logger;
  readonly clock: () => number;
  readonly codeTtlMs: number;
  /** Where wrong approval codes are counted. @default this process's own WrongCodeLimiter */
  readonly wrongCodes?: WrongCodeBound | undefined;
}

/** A request that passed every check: what the consent page shows and the POST turns into a grant. */
interface ValidRequest {
  readonly client: ResolvedClient;
  readonly redirectUri: string;
  readonly codeChallenge: string;
  readonly resource: string;
  readonly scopes: readonly string[];
  readonly state: string | undefined;
}

type Checked =
  | { readonly kind: 'ok'; readonly request: ValidRequest }
  /** Shown in this browser; nobody is redirected. */
  | { readonly kind: 'page'; readonly status: number; readonly message: string }
  /** Sent back to the client's (verified) redirect URI. */
  | {
      readonly kind: 'redirect';
      readonly redirectUri: string;
      readonly error: string;
      readonly description: string;
      readonly state: string | undefined;
    };

/** The parameters the consent form carries back in hidden fields. */
const CARRIED = ['client_id', 'redirect_uri', 'response_type', 'code_challenge', 'code_challenge_method', 'resource', 'scope', 'state'];

/** Upper bounds on a parameter's length, so the form that carries them back stays within the POST's bound. */
const MAX_PARAM = 2048;

/** PKCE's code challenge: S256's base64url of 32 bytes is 43 characters; RFC 7636 allows 43 to 128 unreserved ones. */
const CODE_CHALLENGE = /^[A-Za-z0-9\-._~]{43,128}$/;

const CSRF_FIELD = 'csrf';
const CSRF_VALUE = /^[A-Za-z0-9_-]{43}$/;

export class AuthorizeEndpoint {
  private readonly limiter: WrongCodeBound;

  constructor(private readonly d: AuthorizeDeps) {
    this.limiter = d.wrongCodes ?? new WrongCodeLimiter();
  }

  async get(req: IncomingMessage, res: ServerResponse, query: URLSearchParams): Promise<void> {
    const issuer = issuerOf(req, this.d.options);
    const checked = await this.check(query, issuer);
    if (checked.kind !== 'ok') {
      this.refuse(res, checked, issuer);
      return;
    }
    const csrf = randomBytes(32).toString('base64url');
    res.setHeader('set-cookie', csrfCookie(issuer, csrf));
    sendConsentPage(res, this.view(query, checked.request, csrf));
  }

  async post(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const issuer = issuerOf(req, this.d.options);
    let form: URLSearchParams;
    try {
      form = await readForm(req);
    } catch (error) {
      if (error instanceof BodyTooLarge || error instanceof BadRequest) {
        if (error instanceof BodyTooLarge) res.setHeader('connection', 'close');
        sendErrorPage(res, error instanceof BodyTooLarge ? 413 : 400, `The form could not be read: ${error.message}.`);
        req.resume();
        return;
      }
      throw error;
    }
    // CSRF (double submit): the cookie set with the page must equal the form's field, and a browser's
    // Origin must be this server's. A page elsewhere can neither read the cookie nor send it (SameSite).
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== issuer) {
      sendErrorPage(res, 403, `This form was sent from ${origin}, not from ${issuer}: refused (cross-site request).`);
      return;
    }
    const cookie = cookieOf(req, csrfCookieName(issuer));
    const field = form.getAll(CSRF_FIELD);
    if (cookie === undefined || field.length !== 1 || !CSRF_VALUE.test(cookie) || !constantTimeEqual(cookie, field[0] ?? '')) {
      sendErrorPage(
        res,
        403,
        'This form is not the one this server showed (its anti-forgery check failed, or cookies are blocked for this site). Start the connection again from the app.',
      );
      return;
    }
    const checked = await this.check(form, issuer);
    if (checked.kind !== 'ok') {
      this.refuse(res, checked, issuer);
      return;
    }
    const request = checked.request;
    if (form.get('action') === 'deny') {
      redirect(
        res,
        request.redirectUri,
        { error: 'access_denied', error_description: 'The person at the consent page denied the request.' },
        request.state,
        issuer,
      );
      return;
    }
    const address = remoteAddressOf(req);
    const now = this.d.clock();
    const wait = await this.limiter.refusal(address, now);
    if (wait !== undefined) {
      res.setHeader('retry-after', String(wait));
      sendErrorPage(
        res,
        429,
        `Too many wrong codes were typed here: try again in ${wait} seconds, with a fresh code from "limbic auth code".`,
      );
      return;
    }
    const typed = (form.get('code') ?? '').trim();
    const approval = typed === '' ? undefined : await this.approve(typed, now);
    if (approval === undefined) {
      if (typed !== '') this.limiter.wrong(address, now);
      sendConsentPage(
        res,
        {
          ...this.view(form, request, form.get(CSRF_FIELD) ?? ''),
          problem:
            typed === ''
              ? 'Type the one-time code from "limbic auth code".'
              : 'That code is not valid here (wrong, already used, or expired). Make a fresh one with "limbic auth code" and type it again.',
        },
        400,
      );
      return;
    }
    const scope = grantedScope(request.scopes, approval.readOnly);
    const grantId = newId('g_');
    const code = newSecret(AUTHORIZATION_CODE_PREFIX);
    await this.d.store().addGrantWithCode(
      {
        id: grantId,
        clientId: request.client.clientId,
        clientName: request.client.clientName,
        namespace: approval.namespace,
        readOnly: !scope.split(' ').includes(WRITE_SCOPE),
        resource: request.resource,
        createdAt: now,
        lastUsedAt: undefined,
      },
      hashSecret(code),
      {
        grantId,
        clientId: request.client.clientId,
        redirectUri: request.redirectUri,
        codeChallenge: request.codeChallenge,
        resource: request.resource,
        scope,
        expiresAt: now + this.d.codeTtlMs,
      },
    );
    this.d.logger.info(
      `OAuth: granted ${scope} on namespace "${approval.namespace}" to client ${JSON.stringify(request.client.clientName ?? request.client.clientId)} (grant ${grantId})`,
    );
    redirect(res, request.redirectUri, { code }, request.state, issuer);
  }

  /** The namespace and read-only flag a typed approval code (consumed) or bearer token (not consumed) allows. */
  private async approve(typed: string, now: number): Promise<{ namespace: string; readOnly: boolean } | undefined> {
    if (typed.startsWith(TOKEN_PREFIX)) {
      // Only a bearer token: an OAuth token or code never approves another client.
      if ([ACCESS_TOKEN_PREFIX, REFRESH_TOKEN_PREFIX, AUTHORIZATION_CODE_PREFIX].some((p) => typed.startsWith(p))) return undefined;
      const token = await verifyToken(this.d.tokens, typed);
      return token === undefined ? undefined : { namespace: token.namespace, readOnly: token.readOnly };
    }
    const normalized = normalizeApprovalCode(typed);
    if (normalized === undefined) return undefined;
    const code = await this.d.store().consumeApprovalCode(hashSecret(normalized), now);
    return code === undefined ? undefined : { namespace: code.namespace, readOnly: code.readOnly };
  }

  private view(params: URLSearchParams, request: ValidRequest, csrf: string) {
    const hidden: Record<string, string> = {};
    for (const name of CARRIED) {
      const value = params.get(name);
      if (value !== null && value !== '') hidden[name] = value;
    }
    hidden[CSRF_FIELD] = csrf;
    return {
      clientName: request.client.clientName,
      clientId: request.client.clientId,
      redirectUri: request.redirectUri,
      scopes: request.scopes,
      hidden,
    };
  }

  private refuse(res: ServerResponse, checked: Exclude<Checked, { kind: 'ok' }>, issuer: string): void {
    if (checked.kind === 'page') sendErrorPage(res, checked.status, checked.message);
    else redirect(res, checked.redirectUri, { error: checked.error, error_description: checked.description }, checked.state, issuer);
  }

  /** Every check of an authorization request, in the order that keeps errors from reaching an unverified redirect URI. */
  private async check(params: URLSearchParams, issuer: string): Promise<Checked> {
    let clientId: string | undefined;
    let redirectUri: string | undefined;
    try {
      clientId = oneParam(params, 'client_id');
      redirectUri = oneParam(params, 'redirect_uri');
    } catch (error) {
      return { kind: 'page', status: 400, message: `The request is malformed: ${(error as Error).message}.` };
    }
    if (clientId === undefined) return { kind: 'page', status: 400, message: 'The request names no client (client_id is missing).' };
    if (clientId.length > MAX_PARAM) return { kind: 'page', status: 400, message: 'The client_id is too long.' };
    const resolved = await resolveClient(clientId, { store: this.d.store(), clientHosts: this.d.options.clientHosts });
    if (!resolved.ok) return { kind: 'page', status: 400, message: `The client could not be verified: ${resolved.error}` };
    const client = resolved.client;
    if (redirectUri === undefined)
      return { kind: 'page', status: 400, message: 'The request names no redirect_uri: this server needs one with every request.' };
    if (redirectUri.length > MAX_PARAM || !redirectUriMatches(client.redirectUris, redirectUri)) {
      return {
        kind: 'page',
        status: 400,
        message: 'The redirect_uri is not one this client registered, so this server will not send anything there.',
      };
    }
    // From here on the redirect URI is the client's own: errors may go back to it.
    let state: string | undefined;
    const fail = (error: string, description: string): Checked => ({ kind: 'redirect', redirectUri, error, description, state });
    try {
      state = oneParam(params, 'state');
      if (state !== undefined && state.length > MAX_PARAM) {
        state = undefined;
        return fail('invalid_request', 'state is too long');
      }
      const responseType = oneParam(params, 'response_type');
      const challenge = oneParam(params, 'code_challenge');
      const method = oneParam(params, 'code_challenge_method');
      const resource = oneParam(params, 'resource');
      const scope = oneParam(params, 'scope');
      if (responseType !== 'code') return fail('unsupported_response_type', 'response_type must be "code"');
      if (challenge === undefined) return fail('invalid_request', 'code_challenge is required (PKCE with S256)');
      if (method !== 'S256') return fail('invalid_request', 'code_challenge_method must be "S256"');
      if (!CODE_CHALLENGE.test(challenge)) return fail('invalid_request', 'code_challenge is not a valid S256 challenge');
      const ours = resourceOf(issuer);
      if (resource === undefined) return fail('invalid_target', `resource is required: this server is ${ours}`);
      if (resource.length > MAX_PARAM || !sameResource(resource, ours))
        return fail('invalid_target', `resource must be this server, ${ours}`);
      if (scope !== undefined && scope.length > MAX_PARAM) return fail('invalid_scope', 'scope is too long');
      const scopes = requestedScopes(scope);
      if (scopes === undefined) return fail('invalid_scope', 'the scopes here are memory:read and memory:write');
      return { kind: 'ok', request: { client, redirectUri, codeChallenge: challenge, resource: ours, scopes, state } };
    } catch (error) {
      if (error instanceof BadRequest) return fail('invalid_request', error.message);
      throw error;
    }
  }
}

/** 303 to the client's redirect URI with `params`, `state` and `iss` (RFC 9207) added to its query. */
function redirect(
  res: ServerResponse,
  redirectUri: string,
  params: Record<string, string>,
  state: string | undefined,
  issuer: string,
): void {
  const target = new URL(redirectUri);
  for (const [key, value] of Object.entries(params)) target.searchParams.set(key, value);
  if (state !== undefined) target.searchParams.set('state', state);
  target.searchParams.set('iss', issuer);
  res.writeHead(303, { location: target.href, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
  res.end();
}

/** `__Host-` (bound to this origin, Secure) where the issuer is https; a plain name on http, where Secure cookies are not kept. */
const csrfCookieName = (issuer: string): string => (issuer.startsWith('https:') ? '__Host-limbic_csrf' : 'limbic_csrf');

function csrfCookie(issuer: string, value: string): string {
  const secure = issuer.startsWith('https:') ? '; Secure' : '';
  return `${csrfCookieName(issuer)}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=3600${secure}`;
}

function cookieOf(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
