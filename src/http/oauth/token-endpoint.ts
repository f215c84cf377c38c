/**
 * POST /token (authorization_code, refresh_token) and POST /revoke (RFC 7009). Errors are RFC 6749
 * §5.2 JSON. A code is single use (a second exchange revokes its grant, OAuth 2.1 §4.1.3), bound to
 * its client, redirect URI, PKCE verifier and resource; a refresh token is rotated on every use,
 * and a used one coming back revokes the whole grant (the store does that atomically).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../core/logger.js';
import type { IssuedTokens, OAuthStore } from '../../store/oauth-store.js';
import { BodyTooLarge, sendJson } from '../guard.js';
import { resolveClient, type ResolvedClient } from './clients.js';
import { READ_SCOPE, WRITE_SCOPE, issuerOf, requestedScopes, resourceOf, sameResource, type OAuthOptions } from './options.js';
import { BadRequest, clientCredentials, oneParam, readForm, secretMatches, sendOAuthError } from './requests.js';
import { ACCESS_TOKEN_PREFIX, REFRESH_TOKEN_PREFIX, hashSecret, newSecret, s256 } from './secrets.js';

export interface TokenDeps {
  readonly options: OAuthOptions;
  readonly store: () => OAuthStore;
  readonly logger: Logger;
  readonly clock: () => number;
  readonly accessTtlMs: number;
  readonly refreshTtlMs: number;
}

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const CODE_VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

class OAuthFailure extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    description: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
  }
}

export class TokenEndpoint {
  constructor(private readonly d: TokenDeps) {}

  async token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    await this.answer(req, res, async (form) => {
      const grantType = oneParam(form, 'grant_type');
      const client = await this.authenticate(req, form);
      switch (grantType) {
        case 'authorization_code':
          return this.exchangeCode(form, client);
        case 'refresh_token':
          return this.refresh(req, form, client);
        case undefined:
          throw new OAuthFailure(400, 'invalid_request', 'grant_type is required');
        default:
          throw new OAuthFailure(400, 'unsupported_grant_type', 'grant_type must be authorization_code or refresh_token');
      }
    });
  }

  /** RFC 7009: the grant of the token (access or refresh) ends, when it is this client's; always 200 otherwise. */
  async revoke(req: IncomingMessage, res: ServerResponse): Promise<void> {
    await this.answer(req, res, async (form) => {
      const client = await this.authenticate(req, form);
      const token = oneParam(form, 'token');
      if (token === undefined) throw new OAuthFailure(400, 'invalid_request', 'token is required');
      if ((token.startsWith(ACCESS_TOKEN_PREFIX) || token.startsWith(REFRESH_TOKEN_PREFIX)) && token.length <= 200) {
        await this.d.store().revokeByTokenHash(hashSecret(token), client.clientId);
      }
      return {};
    });
  }

  private async answer(
    req: IncomingMessage,
    res: ServerResponse,
    run: (form: URLSearchParams) => Promise<Record<string, unknown>>,
  ): Promise<void> {
    try {
      const form = await readForm(req);
      sendJson(res, 200, await run(form), { pragma: 'no-cache' });
    } catch (error) {
      if (error instanceof OAuthFailure) sendOAuthError(res, error.status, error.error, error.message, error.headers);
      else if (error instanceof BadRequest) sendOAuthError(res, 400, 'invalid_request', error.message);
      else if (error instanceof BodyTooLarge) {
        sendOAuthError(res, 413, 'invalid_request', error.message, { connection: 'close' });
        req.resume();
      } else throw error;
    }
  }

  /** The client of a request, its secret checked when it has one (RFC 6749 §2.3). */
  private async authenticate(req: IncomingMessage, form: URLSearchParams): Promise<ResolvedClient> {
    const credentials = clientCredentials(req, form);
    const challenge: Record<string, string> = credentials.basic ? { 'www-authenticate': 'Basic realm="limbic"' } : {};
    if (credentials.clientId === undefined) throw new OAuthFailure(401, 'invalid_client', 'client_id is required', challenge);
    const resolved = await resolveClient(credentials.clientId, { store: this.d.store(), clientHosts: this.d.options.clientHosts });
    if (!resolved.ok) throw new OAuthFailure(401, 'invalid_client', resolved.error, challenge);
    const client = resolved.client;
    if (client.secretHash !== undefined) {
      if (credentials.secret === undefined || !secretMatches(credentials.secret, client.secretHash)) {
        throw new OAuthFailure(401, 'invalid_client', 'the client secret is missing or wrong', challenge);
      }
    } else if (credentials.secret !== undefined) {
      throw new OAuthFailure(401, 'invalid_client', 'this client was registered without a secret: send none', challenge);
    }
    return client;
  }

  private async exchangeCode(form: URLSearchParams, client: ResolvedClient): Promise<Record<string, unknown>> {
    const code = oneParam(form, 'code');
    const redirectUri = oneParam(form, 'redirect_uri');
    const verifier = oneParam(form, 'code_verifier');
    const resource = oneParam(form, 'resource');
    if (code === undefined) throw new OAuthFailure(400, 'invalid_request', 'code is required');
    if (verifier === undefined) throw new OAuthFailure(400, 'invalid_request', 'code_verifier is required (PKCE)');
    const store = this.d.store();
    const now = this.d.clock();
    const exchange = code.length <= 200 ? await store.exchangeCode(hashSecret(code), now) : ({ ok: false, reason: 'unknown' } as const);
    if (!exchange.ok) {
      if (exchange.reason === 'reused') {
        // A code shown twice may have been stolen: what it granted ends (OAuth 2.1 §4.1.3).
        await store.revokeGrant(exchange.grantId);
        this.d.logger.warn(`OAuth: an authorization code was used twice; its grant ${exchange.grantId} is revoked`);
        throw new OAuthFailure(400, 'invalid_grant', 'this code was used before; the access it granted is revoked');
      }
      throw new OAuthFailure(400, 'invalid_grant', `the code is ${exchange.reason === 'expired' ? 'expired' : 'not valid'}`);
    }
    const granted = exchange.code;
    const why =
      granted.clientId !== client.clientId
        ? 'the code was issued to another client'
        : redirectUri !== granted.redirectUri
          ? 'redirect_uri differs from the one of the authorization request'
          : !CODE_VERIFIER.test(verifier) || s256(verifier) !== granted.codeChallenge
            ? 'the code_verifier does not match the code_challenge'
            : resource !== undefined && !sameResource(resource, granted.resource)
              ? 'resource differs from the one the code was issued for'
              : undefined;
    if (why !== undefined) {
      // The code is spent; the grant made for it would never have a token.
      await store.revokeGrant(granted.grantId);
      throw new OAuthFailure(400, resource !== undefined && why.startsWith('resource') ? 'invalid_target' : 'invalid_grant', why);
    }
    const issued = this.newTokens(granted.scope, now);
    if (!(await store.issueTokens(granted.grantId, issued.stored))) {
      throw new OAuthFailure(400, 'invalid_grant', 'the grant was revoked');
    }
    return issued.answer;
  }

  private async refresh(req: IncomingMessage, form: URLSearchParams, client: ResolvedClient): Promise<Record<string, unknown>> {
    const refreshToken = oneParam(form, 'refresh_token');
    const resource = oneParam(form, 'resource');
    const asked = oneParam(form, 'scope');
    if (refreshToken === undefined) throw new OAuthFailure(400, 'invalid_request', 'refresh_token is required');
    const ours = resourceOf(issuerOf(req, this.d.options));
    if (resource !== undefined && !sameResource(resource, ours))
      throw new OAuthFailure(400, 'invalid_target', `resource must be this server, ${ours}`);
    const scopes = asked === undefined ? [READ_SCOPE, WRITE_SCOPE] : requestedScopes(asked);
    if (scopes === undefined) throw new OAuthFailure(400, 'invalid_scope', 'the scopes here are memory:read and memory:write');
    // The store narrows: it keeps, of the used token's scopes, those asked for ('' asks for all of them).
    const wanted = asked === undefined ? '' : scopes.join(' ');
    const now = this.d.clock();
    const issued = this.newTokens(wanted, now);
    const rotation =
      refreshToken.length <= 200 && refreshToken.startsWith(REFRESH_TOKEN_PREFIX)
        ? await this.d
            .store()
            .rotateRefreshToken(hashSecret(refreshToken), client.clientId, now, issued.stored, resource === undefined ? undefined : ours)
        : ({ ok: false, reason: 'unknown' } as const);
    if (!rotation.ok) {
      if (rotation.reason === 'reused') this.d.logger.warn('OAuth: a used refresh token came back; its grant is revoked');
      if (rotation.reason === 'other-resource') {
        // The grant is for this server under another name (or before --public-url changed); the token is not spent.
        throw new OAuthFailure(400, 'invalid_target', `this grant is not for ${ours}: connect again to get one for it`);
      }
      const why = {
        reused: 'this refresh token was used before; the access it granted is revoked',
        unknown: 'the refresh token is not valid',
        expired: 'the refresh token is expired',
        'other-client': 'the refresh token was issued to another client',
      }[rotation.reason];
      throw new OAuthFailure(400, 'invalid_grant', why);
    }
    // What the new tokens may do is bounded by the grant too (verify.ts reads its read-only flag).
    const scope = rotation.grant.readOnly || !rotation.scope.split(' ').includes(WRITE_SCOPE) ? READ_SCOPE : rotation.scope;
    return { ...issued.answer, scope };
  }

  private newTokens(scope: string, now: number): { stored: IssuedTokens; answer: Record<string, unknown> } {
    const access = newSecret(ACCESS_TOKEN_PREFIX);
    const refresh = newSecret(REFRESH_TOKEN_PREFIX);
    return {
      stored: {
        accessHash: hashSecret(access),
        accessExpiresAt: now + this.d.accessTtlMs,
        refreshHash: hashSecret(refresh),
        refreshExpiresAt: now + this.d.refreshTtlMs,
        scope,
      },
      answer: {
        access_token: access,
        token_type: 'Bearer',
        expires_in: Math.floor(this.d.accessTtlMs / 1000),
        refresh_token: refresh,
        scope,
      },
    };
  }
}
