/**
 * The secrets of the OAuth server (issue 36): access and refresh tokens, authorization codes and
 * the one-time approval codes a person types into the consent page. All random; the store keeps
 * only their SHA-256 (hashToken), as for bearer tokens. A hash without salt or slow KDF is enough
 * because every secret is random and long enough for its lifetime and its rate limit.
 */
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { TOKEN_PREFIX, hashToken } from '../tokens.js';

/** Prefixes under the bearer tokens' own, so a leaked one is recognised as Limbic's by scanners. */
export const ACCESS_TOKEN_PREFIX = `${TOKEN_PREFIX}at_`;
export const REFRESH_TOKEN_PREFIX = `${TOKEN_PREFIX}rt_`;
export const AUTHORIZATION_CODE_PREFIX = `${TOKEN_PREFIX}ac_`;

export const hashSecret = hashToken;

/** A fresh secret: `prefix` and 32 random bytes, base64url. */
export const newSecret = (prefix: string): string => `${prefix}${randomBytes(32).toString('base64url')}`;

/** A short random public id (grants, registered clients); `g_` for grants, so it never equals a bearer token's hex id. */
export const newId = (prefix: string): string => `${prefix}${randomBytes(6).toString('hex')}`;

/** Crockford base32: no I, L, O, U, so a code read aloud or typed is not mistaken. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const GROUPS = 3;
const GROUP_LENGTH = 4;

/** A fresh approval code, "XXXX-XXXX-XXXX": 60 random bits, typed once into the consent page. */
export function newApprovalCode(): string {
  const groups: string[] = [];
  for (let g = 0; g < GROUPS; g++) {
    let group = '';
    for (let i = 0; i < GROUP_LENGTH; i++) group += ALPHABET[randomInt(ALPHABET.length)];
    groups.push(group);
  }
  return groups.join('-');
}

/**
 * An approval code as typed, in the form it was issued ("xxxx xxxx-xxxx", o for 0, i/l for 1), or
 * undefined when it cannot be one: what is hashed and looked up.
 */
export function normalizeApprovalCode(typed: string): string | undefined {
  const plain = typed.toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');
  if (plain.length !== GROUPS * GROUP_LENGTH || [...plain].some((c) => !ALPHABET.includes(c))) return undefined;
  const groups: string[] = [];
  for (let g = 0; g < GROUPS; g++) groups.push(plain.slice(g * GROUP_LENGTH, (g + 1) * GROUP_LENGTH));
  return groups.join('-');
}

/** PKCE S256 (RFC 7636 §4.6): base64url(SHA-256(verifier)). */
export const s256 = (verifier: string): string => createHash('sha256').update(verifier, 'ascii').digest('base64url');
