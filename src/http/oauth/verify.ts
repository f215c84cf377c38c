/**
 * Access tokens at /mcp (and the page's /api): looked up by hash on every request, so a grant
 * revoked by `limbic token revoke` in any process is refused from the next request on; accepted
 * only for the resource they were issued for (RFC 8707 audience); the grant's last use recorded at
 * most once a minute per process.
 */
import type { Logger } from '../../core/logger.js';
import type { OAuthStore } from '../../store/oauth-store.js';
import type { TokenRecord } from '../../store/token-store.js';
import { ACCESS_TOKEN_PREFIX, hashSecret } from './secrets.js';
import { WRITE_SCOPE, sameResource } from './options.js';

const TOUCH_EVERY_MS = 60_000;

export type AccessCheck =
  | { readonly ok: true; readonly token: TokenRecord; readonly scopes: readonly string[] }
  | { readonly ok: false; readonly why: 'unknown' | 'audience' };

export const isAccessToken = (presented: string): boolean => presented.startsWith(ACCESS_TOKEN_PREFIX);

export class AccessTokenVerifier {
  private readonly touched = new Map<string, number>();

  constructor(
    private readonly store: () => OAuthStore,
    private readonly logger: Logger,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * The grant of a presented access token, served like a bearer token: its id is the grant's
   * (the request gate and the listen streams count by it), its namespace and read-only flag the
   * grant's. `resource`: this server's resource for the request.
   */
  async verify(presented: string, resource: string): Promise<AccessCheck> {
    if (!isAccessToken(presented) || presented.length > 200) return { ok: false, why: 'unknown' };
    const now = this.clock();
    const info = await this.store().accessToken(hashSecret(presented), now);
    if (info === undefined) return { ok: false, why: 'unknown' };
    if (!sameResource(info.resource, resource)) return { ok: false, why: 'audience' };
    const { grant } = info;
    this.touch(grant.id, now);
    const scopes = info.scope.split(' ').filter((s) => s !== '');
    const readOnly = grant.readOnly || !scopes.includes(WRITE_SCOPE);
    return {
      ok: true,
      scopes,
      token: { id: grant.id, namespace: grant.namespace, readOnly, label: grant.clientName, createdAt: grant.createdAt },
    };
  }

  private touch(grantId: string, now: number): void {
    const last = this.touched.get(grantId);
    if (last !== undefined && now - last < TOUCH_EVERY_MS) return;
    this.touched.set(grantId, now);
    if (this.touched.size > 10_000) {
      for (const [id, at] of this.touched) if (now - at >= TOUCH_EVERY_MS) this.touched.delete(id);
    }
    this.store()
      .touchGrant(grantId, now)
      .catch((error: unknown) => this.logger.warn('could not record the last use of an OAuth grant', error));
  }
}
