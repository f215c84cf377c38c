/**
 * Issue 36: the pure parts of the authorization server — scopes, resources, the consent page's
 * escaping and CSP sources, the wrong-code windows, and access-token checks (audience, last use) — at their edges.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { noopLogger } from '../../src/core/logger.js';
import { cspSourceOf, escapeHtml, redirectHostOf } from '../../src/http/oauth/consent-page.js';
import { grantedScope, requestedScopes, sameResource } from '../../src/http/oauth/options.js';
import { SlidingWindow, WrongCodeLimiter } from '../../src/http/oauth/rate-limit.js';
import { hashSecret } from '../../src/http/oauth/secrets.js';
import { AccessTokenVerifier } from '../../src/http/oauth/verify.js';
import type { OAuthStore } from '../../src/store/oauth-store.js';
import { openSqliteTokenStore } from '../../src/store/sqlite/sqlite-tokens.js';
import { tempDir } from '../helpers/fixtures.js';

describe('scopes and resources', () => {
  it('asks for both scopes without a scope; write implies read; an unknown scope is refused', () => {
    expect(requestedScopes(undefined)).toEqual(['memory:read', 'memory:write']);
    expect(requestedScopes('')).toEqual(['memory:read', 'memory:write']);
    expect(requestedScopes('memory:read')).toEqual(['memory:read']);
    expect(requestedScopes('memory:write')).toEqual(['memory:read', 'memory:write']);
    expect(requestedScopes('memory:read  memory:write')).toEqual(['memory:read', 'memory:write']);
    expect(requestedScopes('memory:read openid')).toBeUndefined();
  });

  it('grants what was asked, bounded by a read-only approval', () => {
    expect(grantedScope(['memory:read', 'memory:write'], false)).toBe('memory:read memory:write');
    expect(grantedScope(['memory:read', 'memory:write'], true)).toBe('memory:read');
    expect(grantedScope(['memory:read'], false)).toBe('memory:read');
  });

  it('compares resources exactly but for a trailing slash', () => {
    expect(sameResource('http://127.0.0.1:7411/mcp/', 'http://127.0.0.1:7411/mcp')).toBe(true);
    expect(sameResource('http://127.0.0.1:7411/mcp/x', 'http://127.0.0.1:7411/mcp')).toBe(false);
    expect(sameResource('http://localhost:7411/mcp', 'http://127.0.0.1:7411/mcp')).toBe(false);
  });
});

describe('the consent page', () => {
  it('escapes every character that could leave text or an attribute', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });

  it('allows the form to post to the redirect origin or app scheme, and nothing that could end the directive', () => {
    expect(cspSourceOf('https://claude.ai/api/mcp/auth_callback')).toBe('https://claude.ai');
    expect(cspSourceOf('http://127.0.0.1:33418/callback')).toBe('http://127.0.0.1:33418');
    expect(cspSourceOf('cursor://anysphere.cursor-mcp/oauth/callback')).toBe('cursor:');
    expect(cspSourceOf('com.example.app:/cb')).toBe('com.example.app:');
    expect(cspSourceOf('not a url')).toBeUndefined();
    expect(redirectHostOf('https://claude.ai/api/mcp/auth_callback')).toBe('claude.ai');
    expect(redirectHostOf('vscode://callback')).toMatch(/vscode:/);
  });
});

describe('wrong-code limits', () => {
  it('a window counts hits within its span only', () => {
    const w = new SlidingWindow(2, 1000);
    expect(w.full('a', 0)).toBe(false);
    w.hit('a', 0);
    w.hit('a', 500);
    expect(w.full('a', 600)).toBe(true);
    expect(w.retryAfterMs('a', 600)).toBe(400);
    expect(w.full('b', 600)).toBe(false);
    expect(w.full('a', 1000)).toBe(false);
  });

  it('5 wrong codes per address per 10 minutes, 30 per process per minute', () => {
    const limiter = new WrongCodeLimiter();
    for (let i = 0; i < 5; i++) {
      expect(limiter.refusal('one', i)).toBeUndefined();
      limiter.wrong('one', i);
    }
    expect(limiter.refusal('one', 10)).toBe(600);
    expect(limiter.refusal('two', 10)).toBeUndefined();
    expect(limiter.refusal('one', 10 * 60_000 + 5)).toBeUndefined();
    const busy = new WrongCodeLimiter();
    for (let i = 0; i < 30; i++) busy.wrong(`address-${i}`, 1000);
    expect(busy.refusal('fresh', 1000)).toBe(60);
    expect(busy.refusal('fresh', 61_001)).toBeUndefined();
  });
});

describe('access tokens', () => {
  it('record a grant’s use at most once a minute per process, and only for this resource', async () => {
    const { dir, cleanup } = tempDir('limbic-oauth-verify-');
    const tokens = openSqliteTokenStore(join(dir, 'tokens.db'));
    try {
      const touches: number[] = [];
      const counted: OAuthStore = new Proxy(tokens.oauth, {
        get(target, property, receiver) {
          if (property === 'touchGrant') {
            return (grantId: string, now: number) => {
              touches.push(now);
              return target.touchGrant(grantId, now);
            };
          }
          const value: unknown = Reflect.get(target, property, receiver);
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      const resource = 'http://127.0.0.1:7411/mcp';
      const start = Date.now();
      const grant = {
        id: 'g_000000000001',
        clientId: 'c_1',
        clientName: 'x',
        namespace: 'team',
        readOnly: true,
        resource,
        createdAt: start,
        lastUsedAt: undefined,
      };
      await counted.addGrantWithCode(grant, hashSecret('limbic_ac_x'), {
        grantId: grant.id,
        clientId: 'c_1',
        redirectUri: 'http://127.0.0.1:9/cb',
        codeChallenge: 'c'.repeat(43),
        resource,
        scope: 'memory:read',
        expiresAt: start + 120_000,
      });
      const access = 'limbic_at_test-token';
      await counted.issueTokens(grant.id, {
        accessHash: hashSecret(access),
        accessExpiresAt: start + 3_600_000,
        refreshHash: hashSecret('limbic_rt_test-token'),
        refreshExpiresAt: start + 86_400_000,
        scope: 'memory:read',
      });
      let now = start;
      const verifier = new AccessTokenVerifier(
        () => counted,
        noopLogger,
        () => now,
      );
      const first = await verifier.verify(access, resource);
      expect(first).toMatchObject({ ok: true, token: { id: grant.id, namespace: 'team', readOnly: true } });
      now = start + 59_999;
      await verifier.verify(access, `${resource}/`);
      expect(touches).toEqual([start]);
      now = start + 60_000;
      await verifier.verify(access, resource);
      expect(touches).toEqual([start, start + 60_000]);
      expect(await verifier.verify(access, 'http://localhost:7411/mcp')).toEqual({ ok: false, why: 'audience' });
      expect(await verifier.verify('limbic_at_other', resource)).toEqual({ ok: false, why: 'unknown' });
      expect(await verifier.verify('limbic_not-an-access-token', resource)).toEqual({ ok: false, why: 'unknown' });
      expect(touches).toHaveLength(2);
    } finally {
      await tokens.close();
      cleanup();
    }
  });
});
