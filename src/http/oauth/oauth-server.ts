/**
 * The authorization server of `serve --http` (issue 36): its routes on the existing node:http
 * server, plain handlers, no framework. http-server.ts asks `route()` before its 404 and
 * `isCorsPath()` before its Origin check: the discovery documents, /register, /token and /revoke
 * take no cookie and answer any origin (browser-based MCP clients call them), so only the Host check
 * applies there; /authorize keeps the Origin check too.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../core/logger.js';
import type { OAuthStore } from '../../store/oauth-store.js';
import type { TokenRecord, TokenStore } from '../../store/token-store.js';
import { sendJson } from '../guard.js';
import { AuthorizeEndpoint } from './authorize.js';
import { authorizationServerMetadata, protectedResourceMetadata, resourceMetadataUrl } from './metadata.js';
import {
  DEFAULT_ACCESS_TTL_MS,
  DEFAULT_CODE_TTL_MS,
  DEFAULT_REFRESH_TTL_MS,
  SCOPES_SUPPORTED,
  issuerOf,
  resourceOf,
  type OAuthOptions,
} from './options.js';
import type { WrongCodeBound } from './rate-limit.js';
import { RegisterEndpoint } from './register.js';
import { TokenEndpoint } from './token-endpoint.js';
import { AccessTokenVerifier, isAccessToken } from './verify.js';

export interface OAuthServerDeps {
  readonly options: OAuthOptions;
  readonly tokens: TokenStore;
  readonly logger: Logger;
  /** @default Date.now */
  readonly clock?: () => number;
  /** Where wrong approval codes are counted (a worker of `serve --http --workers N`: the primary). @default this process */
  readonly wrongCodes?: WrongCodeBound | undefined;
}

const PROTECTED_RESOURCE = '/.well-known/oauth-protected-resource';
const PRUNE_EVERY_MS = 60 * 60 * 1000;
const AUTHORIZATION_SERVER = '/.well-known/oauth-authorization-server';

/** Paths answered to any origin, without cookies (CORS, and no Origin check). */
const CORS_PATHS = new Set([`${PROTECTED_RESOURCE}/mcp`, PROTECTED_RESOURCE, AUTHORIZATION_SERVER, '/register', '/token', '/revoke']);

/** Which methods each route takes. */
const METHODS: Readonly<Record<string, readonly string[]>> = {
  [`${PROTECTED_RESOURCE}/mcp`]: ['GET'],
  [PROTECTED_RESOURCE]: ['GET'],
  [AUTHORIZATION_SERVER]: ['GET'],
  '/register': ['POST'],
  '/token': ['POST'],
  '/revoke': ['POST'],
  '/authorize': ['GET', 'POST'],
};

export type AccessTokenResult = { readonly ok: true; readonly token: TokenRecord } | { readonly ok: false; readonly message: string };

export class OAuthServer {
  private readonly store: () => OAuthStore;
  private readonly verifier: AccessTokenVerifier;
  private readonly authorizeEndpoint: AuthorizeEndpoint;
  private readonly tokenEndpoint: TokenEndpoint;
  private readonly registerEndpoint: RegisterEndpoint;

  private readonly pruning: NodeJS.Timeout;

  constructor(private readonly d: OAuthServerDeps) {
    const clock = d.clock ?? Date.now;
    // Nothing else removes expired codes, tokens and the grants left without one (listGrants shows
    // a grant until then): at start and every hour, on every process (the deletes are idempotent).
    const prune = (): void =>
      void this.store()
        .prune(clock())
        .catch((error: unknown) => d.logger.warn('could not delete expired OAuth codes and tokens', error));
    this.pruning = setInterval(prune, PRUNE_EVERY_MS);
    this.pruning.unref();
    this.store = () => d.tokens.oauth;
    this.verifier = new AccessTokenVerifier(this.store, d.logger, clock);
    const o = d.options;
    this.authorizeEndpoint = new AuthorizeEndpoint({
      options: o,
      tokens: d.tokens,
      store: this.store,
      logger: d.logger,
      clock,
      codeTtlMs: o.codeTtlMs ?? DEFAULT_CODE_TTL_MS,
      wrongCodes: d.wrongCodes,
    });
    this.tokenEndpoint = new TokenEndpoint({
      options: o,
      store: this.store,
      logger: d.logger,
      clock,
      accessTtlMs: o.accessTtlMs ?? DEFAULT_ACCESS_TTL_MS,
      refreshTtlMs: o.refreshTtlMs ?? DEFAULT_REFRESH_TTL_MS,
    });
    this.registerEndpoint = new RegisterEndpoint({ store: this.store, clock });
    prune();
  }

  /** Stops the hourly pruning (the server is closing). */
  close(): void {
    clearInterval(this.pruning);
  }

  /** Whether `path` is one of the endpoints answered to any origin (the Origin check skips them). */
  isCorsPath(path: string): boolean {
    return CORS_PATHS.has(path);
  }

  /** Answers the request when `path` is the authorization server's; false when it is not. */
  async route(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
    const methods = METHODS[url.pathname];
    if (methods === undefined) return false;
    if (this.isCorsPath(url.pathname)) {
      res.setHeader('access-control-allow-origin', '*');
      if (req.method === 'OPTIONS') {
        res.writeHead(204, {
          'access-control-allow-methods': `${methods.join(', ')}, OPTIONS`,
          'access-control-allow-headers': 'Authorization, Content-Type, MCP-Protocol-Version',
          'access-control-max-age': '86400',
        });
        res.end();
        return true;
      }
    }
    if (!methods.includes(req.method ?? '')) {
      req.resume();
      sendJson(
        res,
        405,
        { error: 'invalid_request', error_description: `${url.pathname} takes ${methods.join(' or ')}` },
        { allow: methods.join(', ') },
      );
      return true;
    }
    const issuer = issuerOf(req, this.d.options);
    switch (url.pathname) {
      case `${PROTECTED_RESOURCE}/mcp`:
      case PROTECTED_RESOURCE:
        sendJson(res, 200, protectedResourceMetadata(issuer), { 'cache-control': 'no-cache' });
        return true;
      case AUTHORIZATION_SERVER:
        sendJson(res, 200, authorizationServerMetadata(issuer), { 'cache-control': 'no-cache' });
        return true;
      case '/register':
        await this.registerEndpoint.register(req, res);
        return true;
      case '/token':
        await this.tokenEndpoint.token(req, res);
        return true;
      case '/revoke':
        await this.tokenEndpoint.revoke(req, res);
        return true;
      case '/authorize':
        if (req.method === 'GET') await this.authorizeEndpoint.get(req, res, url.searchParams);
        else await this.authorizeEndpoint.post(req, res);
        return true;
      default:
        return false;
    }
  }

  /** Whether a presented bearer is an OAuth access token (rather than a `limbic token create` one). */
  isAccessToken(presented: string): boolean {
    return isAccessToken(presented);
  }

  /** The grant of an access token presented on `req`, served like a bearer token; or why it is refused. */
  async verifyAccessToken(presented: string, req: IncomingMessage): Promise<AccessTokenResult> {
    const resource = resourceOf(issuerOf(req, this.d.options));
    const checked = await this.verifier.verify(presented, resource);
    if (checked.ok) return { ok: true, token: checked.token };
    return {
      ok: false,
      message:
        checked.why === 'audience'
          ? `This access token was issued for another resource, not ${resource}: connect again so the app gets a token for this server.`
          : 'The access token is not valid here (wrong, expired or revoked): the app should refresh it or connect again.',
    };
  }

  /** The parameters a 401's challenge adds for this request: where to discover how to get a token (RFC 9728 §5.1). */
  challengeParams(req: IncomingMessage): string {
    return `resource_metadata="${resourceMetadataUrl(issuerOf(req, this.d.options))}", scope="${SCOPES_SUPPORTED.join(' ')}"`;
  }
}
