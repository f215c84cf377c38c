/**
 * The OAuth tables' rows as both backends name their columns (src/store/sqlite/sqlite-oauth.ts and
 * src/store/postgres/pg-oauth.ts keep the same names), mapped to the records of oauth-store.ts the
 * same way, and the rules both apply when a refresh token is rotated.
 */
import type { AuthorizationCode, Grant, RegisteredClient, Rotation } from './oauth-store.js';

/** SQLite gives 0/1 and numbers; PostgreSQL gives booleans and bigints as strings. */
type Flag = number | boolean;
type Millis = number | string;

export interface ClientRow {
  client_id: string;
  client_name: string | null;
  client_uri: string | null;
  redirect_uris: string[] | string;
  token_endpoint_auth_method: string;
  secret_hash: string | null;
  registered_by: string;
  created_at: Millis;
}

export interface GrantRow {
  id: string;
  client_id: string;
  client_name: string | null;
  namespace: string;
  read_only: Flag;
  resource: string;
  created_at: Millis;
  last_used_at: Millis | null;
}

export interface CodeRow {
  grant_id: string;
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
  resource: string;
  scope: string;
  expires_at: Millis;
}

export const GRANT_COLUMNS = 'id, client_id, client_name, namespace, read_only, resource, created_at, last_used_at';
export const CODE_COLUMNS = 'grant_id, client_id, redirect_uri, code_challenge, resource, scope, expires_at';
export const CLIENT_COLUMNS =
  'client_id, client_name, client_uri, redirect_uris, token_endpoint_auth_method, secret_hash, registered_by, created_at';

export const toClient = (row: ClientRow): RegisteredClient => ({
  clientId: row.client_id,
  clientName: row.client_name ?? undefined,
  clientUri: row.client_uri ?? undefined,
  // A JSON array on SQLite, a text[] on PostgreSQL.
  redirectUris: typeof row.redirect_uris === 'string' ? (JSON.parse(row.redirect_uris) as string[]) : row.redirect_uris,
  tokenEndpointAuthMethod: row.token_endpoint_auth_method,
  secretHash: row.secret_hash ?? undefined,
  registeredBy: row.registered_by,
  createdAt: Number(row.created_at),
});

export const toGrant = (row: GrantRow): Grant => ({
  id: row.id,
  clientId: row.client_id,
  clientName: row.client_name ?? undefined,
  namespace: row.namespace,
  readOnly: row.read_only === true || row.read_only === 1,
  resource: row.resource,
  createdAt: Number(row.created_at),
  lastUsedAt: row.last_used_at === null ? undefined : Number(row.last_used_at),
});

export const toCode = (row: CodeRow): AuthorizationCode => ({
  grantId: row.grant_id,
  clientId: row.client_id,
  redirectUri: row.redirect_uri,
  codeChallenge: row.code_challenge,
  resource: row.resource,
  scope: row.scope,
  expiresAt: Number(row.expires_at),
});

/**
 * The scope of the tokens a refresh gives: what was asked (`requested`, space-separated; empty
 * for "as before") within what the used refresh token held, in its order. A refresh may narrow the
 * scope, never widen it (RFC 6749 §6); asking only for what was never granted gets the scope as
 * before, as a server may give another scope than asked (§3.3, the response names it).
 * @example narrowScope('memory:read memory:write', 'memory:read') // 'memory:read'
 */
export function narrowScope(held: string, requested: string): string {
  const asked = new Set(requested.split(' ').filter((s) => s !== ''));
  const kept = held.split(' ').filter((s) => s !== '' && asked.has(s));
  return kept.length === 0 ? held : kept.join(' ');
}

/** What a rotation checks of the refresh token it was shown, read in one transaction. */
export interface RefreshCheck {
  /** The client of the token's grant. */
  readonly clientId: string;
  readonly used: boolean;
  /** The resource of the token's grant. */
  readonly resource: string;
  readonly expiresAt: number;
}

/**
 * Why a refresh token may not be rotated, or undefined when it may; the order is the rule. Another
 * client's token changes nothing (neither used up nor ending the grant), so that is checked before
 * reuse; on 'reused' the caller ends the grant. A foreign resource leaves the token unspent.
 */
export function rotationRefusal(
  token: RefreshCheck,
  clientId: string,
  resource: string | undefined,
  now: number,
): Exclude<Rotation, { ok: true }>['reason'] | undefined {
  if (token.clientId !== clientId) return 'other-client';
  if (token.used) return 'reused';
  if (resource !== undefined && resource !== token.resource) return 'other-resource';
  if (token.expiresAt <= now) return 'expired';
  return undefined;
}
