/**
 * Bearer tokens: 32 random bytes, shown once; the store keeps their SHA-256. A hash is enough here
 * (no salt, no slow KDF) because the token is random and long, not a password a person chose.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { TokenRecord, TokenStore } from '../store/token-store.js';
import { parseNamespace } from './namespaces.js';

/** Every token starts with this, so a leaked one is recognisable (secret scanners, logs). */
export const TOKEN_PREFIX = 'limbic_';

export const hashToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

export interface NewToken {
  readonly token: string;
  readonly record: TokenRecord;
}

export async function createToken(
  store: TokenStore,
  options: { namespace: string; readOnly: boolean; label?: string | undefined },
  now = Date.now(),
): Promise<NewToken> {
  const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  const record: TokenRecord = {
    id: randomBytes(6).toString('hex'),
    namespace: parseNamespace(options.namespace),
    readOnly: options.readOnly,
    label: options.label,
    createdAt: now,
  };
  await store.add(record, hashToken(token));
  return { token, record };
}

/** The record of a presented token, or undefined. Looked up each time, so a revoke takes effect at once. */
export async function verifyToken(store: TokenStore, token: string): Promise<TokenRecord | undefined> {
  if (!token.startsWith(TOKEN_PREFIX) || token.length > 200) return undefined;
  return store.byHash(hashToken(token));
}

/** The token of an `Authorization: Bearer …` header, or undefined. */
export function bearerOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}
