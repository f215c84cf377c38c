/**
 * Where `limbic serve --http` keeps what its OAuth 2.1 authorization server hands out (issue 36):
 * registered clients, the one-time approval codes `limbic auth code` prints, grants, authorization
 * codes, access and refresh tokens. Every secret is kept as its SHA-256 hash only (like the bearer
 * tokens of token-store.ts), so a copied file or backup lets nobody in. It lives beside the bearer
 * tokens (the token file on SQLite, tables of the database on PostgreSQL), so several processes on
 * one database accept each other's grants and see each other's revocations at the next request.
 *
 * Every "consume" and "rotate" is atomic across processes: two requests racing with one code or
 * one refresh token never both succeed. Times are epoch ms.
 */

/** What a client registered by RFC 7591 dynamic registration said about itself (CIMD clients are fetched, not stored). */
export interface RegisteredClient {
  /** Random, issued by us; not a secret. */
  readonly clientId: string;
  readonly clientName: string | undefined;
  readonly clientUri: string | undefined;
  /** Exact strings, matched exactly (loopback ones with any port, src/http/oauth/redirects.ts). */
  readonly redirectUris: readonly string[];
  /** 'none' (public client, PKCE alone), 'client_secret_post' or 'client_secret_basic'. */
  readonly tokenEndpointAuthMethod: string;
  /** SHA-256 of the client secret, for the two client_secret methods; undefined for 'none'. */
  readonly secretHash: string | undefined;
  /** Who registered it, for the per-address bound: a SHA-256 of the remote address (never the address). */
  readonly registeredBy: string;
  readonly createdAt: number;
}

/** A one-time approval code from `limbic auth code`: what a grant made with it may do. */
export interface ApprovalCode {
  readonly namespace: string;
  readonly readOnly: boolean;
  readonly createdAt: number;
  readonly expiresAt: number;
}

/** A client's standing permission on one namespace: what `token list` shows and `token revoke` ends. */
export interface Grant {
  /** Short public id, shown by `token list`, taken by `token revoke`; never equal to a bearer token's id. */
  readonly id: string;
  /** A registered client's id, or a client metadata document's URL. */
  readonly clientId: string;
  /** The client's name as it gave it (shown escaped on pages, as plain text in `token list`). */
  readonly clientName: string | undefined;
  readonly namespace: string;
  /** True when the grant holds only the read scope. */
  readonly readOnly: boolean;
  /** The resource (RFC 8707) its tokens are for: this server's MCP URL when it was granted. */
  readonly resource: string;
  readonly createdAt: number;
  /** When one of its access tokens was last accepted (updated at most about once a minute). */
  readonly lastUsedAt: number | undefined;
}

/** An authorization code between the consent page and /token. */
export interface AuthorizationCode {
  readonly grantId: string;
  readonly clientId: string;
  readonly redirectUri: string;
  /** The PKCE S256 challenge (base64url of SHA-256 of the verifier). */
  readonly codeChallenge: string;
  readonly resource: string;
  /** Space-separated scopes granted ("memory:read" or "memory:read memory:write"). */
  readonly scope: string;
  readonly expiresAt: number;
}

/** The hashes and lifetimes of a freshly issued access token and refresh token. */
export interface IssuedTokens {
  readonly accessHash: string;
  readonly accessExpiresAt: number;
  readonly refreshHash: string;
  readonly refreshExpiresAt: number;
  readonly scope: string;
}

export type CodeExchange =
  | { readonly ok: true; readonly code: AuthorizationCode }
  /** The code was used before: the caller revokes its grant (OAuth 2.1 §4.1.3). */
  | { readonly ok: false; readonly reason: 'reused'; readonly grantId: string }
  | { readonly ok: false; readonly reason: 'unknown' | 'expired' };

export type Rotation =
  | { readonly ok: true; readonly grant: Grant; readonly scope: string }
  /**
   * 'reused': a used refresh token came back: its whole grant (the token family) has been revoked.
   * 'other-resource': the refresh named another resource than the grant's (RFC 8707 invalid_target); nothing was spent.
   */
  | { readonly ok: false; readonly reason: 'reused' | 'unknown' | 'expired' | 'other-client' | 'other-resource' };

export interface AccessTokenInfo {
  readonly grant: Grant;
  readonly scope: string;
  readonly resource: string;
  readonly expiresAt: number;
}

export interface OAuthStore {
  addClient(client: RegisteredClient): Promise<void>;
  client(clientId: string): Promise<RegisteredClient | undefined>;
  /** Clients registered by this address hash since `since`: the per-address bound. */
  clientsRegisteredSince(registeredBy: string, since: number): Promise<number>;
  clientCount(): Promise<number>;

  addApprovalCode(hash: string, code: ApprovalCode): Promise<void>;
  /** Takes the code (single use, atomic); undefined when unknown, used or expired. */
  consumeApprovalCode(hash: string, now: number): Promise<ApprovalCode | undefined>;

  /** A new grant and its first authorization code, in one step. */
  addGrantWithCode(grant: Grant, codeHash: string, code: AuthorizationCode): Promise<void>;
  /** Marks the code used (atomic) and returns it; a second exchange says 'reused'. */
  exchangeCode(codeHash: string, now: number): Promise<CodeExchange>;
  /** Stores the tokens of a grant (after a code exchange); false when the grant is gone (revoked meanwhile). */
  issueTokens(grantId: string, tokens: IssuedTokens): Promise<boolean>;
  /**
   * Exchanges a refresh token for `next` (atomic): refused when unknown, expired, of another
   * client, or already used — and in that last case the whole grant is revoked first. `resource`,
   * when the request named one, must equal the grant's exactly (the caller passes it in the form
   * this server issues it), else 'other-resource' and the token stays unused. `next.scope` is the
   * scope asked for ('' for none): the new tokens get what of it the used token held (asking only
   * for what was never granted keeps the old scope), and `scope` of the answer says what they got.
   */
  rotateRefreshToken(refreshHash: string, clientId: string, now: number, next: IssuedTokens, resource?: string): Promise<Rotation>;
  /** The live access token with this hash and its grant; undefined when unknown, expired or revoked. */
  accessToken(hash: string, now: number): Promise<AccessTokenInfo | undefined>;
  /** Records a use of the grant (the caller throttles). */
  touchGrant(grantId: string, now: number): Promise<void>;

  /** Grants that have had tokens issued, oldest first. */
  listGrants(): Promise<Grant[]>;
  /** Ends a grant and every code and token of it; false when there is none. */
  revokeGrant(grantId: string): Promise<boolean>;
  /** RFC 7009: the grant of this access or refresh token revoked, when the grant is `clientId`'s (else nothing). */
  revokeByTokenHash(hash: string, clientId: string): Promise<void>;
  /** Deletes what has expired (codes, tokens, grants left without a live token). */
  prune(now: number): Promise<void>;
}
