/**
 * Issue 36, clients: which redirect URIs a client may have and how a presented one is matched
 * (src/http/oauth/redirects.ts), who a client_id names (src/http/oauth/clients.ts), and the client
 * metadata document fetcher with its guard against reaching private addresses
 * (src/http/oauth/client-metadata.ts), against real servers on 127.0.0.1.
 */
import { describe, expect, it } from 'vitest';
import { redirectUriMatches, redirectUriProblem } from '../../src/http/oauth/redirects.js';

describe('redirectUriProblem: what a client may register', () => {
  const accepted = [
    'https://claude.ai/api/mcp/auth_callback',
    'https://chatgpt.com/connector_platform_oauth_redirect',
    'https://app.example/cb?x=1',
    'https://app.example:8443/cb',
    'http://127.0.0.1/callback',
    'http://127.0.0.1:33418/callback',
    'http://[::1]:8080/cb',
    'http://localhost:6274/oauth/callback',
    'http://localhost/',
    'cursor://anysphere.cursor-retrieval/oauth/user-limbic/callback',
    'vscode://vscode.github-authentication/did-authenticate',
    'com.example.app:/oauth2redirect',
  ];
  it.each(accepted)('accepts %s', (uri) => {
    expect(redirectUriProblem(uri)).toBeUndefined();
  });

  const refused: [string, RegExp][] = [
    ['', /empty/],
    ['/callback', /not an absolute URL/],
    ['claude.ai/callback', /not an absolute URL/],
    ['http://example.com/cb', /plain http is allowed only to 127\.0\.0\.1/],
    ['http://192.168.1.10/cb', /plain http/],
    ['http://127.0.0.2/cb', /plain http/],
    ['http://localhost.evil.example/cb', /plain http/],
    ['https://app.example/cb#frag', /fragment/],
    ['https://app.example/cb#', /fragment/],
    ['http://127.0.0.1:8080/cb#x', /fragment/],
    ['https://user:pass@app.example/cb', /user name or password/],
    ['https://@app.example/cb', /user name or password/],
    ['http://localhost@evil.example/cb', /user name or password/],
    ['javascript:alert(1)', /scheme javascript:/],
    ['JavaScript:alert(1)', /scheme javascript:/],
    ['data:text/html,<script>alert(1)</script>', /scheme data:/],
    ['file:///etc/passwd', /scheme file:/],
    ['vbscript:msgbox(1)', /scheme vbscript:/],
    ['blob:https://app.example/1234', /scheme blob:/],
    ['about:blank', /scheme about:/],
    ['https://app.example/c b', /space, control character or backslash/],
    ['https://app.example/cb\n', /space, control character or backslash/],
    ['https://good.example\\@evil.example/cb', /user name or password|backslash/],
    ['https://good.example\\evil.example/cb', /space, control character or backslash/],
    ['https:app.example/cb', /not written as https:\/\/host\/path/],
    ['myapp:', /nothing after its scheme/],
    [`https://app.example/${'a'.repeat(2000)}`, /at most 2000/],
  ];
  it.each(refused)('refuses %j', (uri, reason) => {
    expect(redirectUriProblem(uri)).toMatch(reason);
  });

  it('quotes a long refused URI only in part', () => {
    const problem = redirectUriProblem(`javascript:${'x'.repeat(1500)}`) ?? '';
    expect(problem).toMatch(/scheme javascript:/);
    expect(problem.length).toBeLessThan(400);
  });
});

describe('redirectUriMatches: exact, except a loopback port (RFC 8252 §7.3)', () => {
  const table: [readonly string[], string, boolean][] = [
    [['https://app.example/cb'], 'https://app.example/cb', true],
    [['https://app.example/cb'], 'https://app.example/cb/', false],
    [['https://app.example/cb'], 'https://app.example/CB', false],
    [['https://app.example/cb'], 'https://APP.example/cb', false],
    [['https://app.example/cb'], 'https://app.example/cb?x=1', false],
    [['https://app.example/cb'], 'https://app.example:443/cb', false],
    [['https://app.example/cb'], 'https://app.example:8443/cb', false],
    [['https://app.example/cb'], 'https://app.example/cb#x', false],
    [['https://app.example/cb'], 'https://app.example.evil.example/cb', false],
    [['https://a.example/cb', 'https://b.example/cb'], 'https://b.example/cb', true],
    [['http://127.0.0.1/callback'], 'http://127.0.0.1:53012/callback', true],
    [['http://127.0.0.1:1234/callback'], 'http://127.0.0.1:53012/callback', true],
    [['http://127.0.0.1:1234/callback'], 'http://127.0.0.1/callback', true],
    [['http://[::1]/cb'], 'http://[::1]:9000/cb', true],
    [['http://localhost:3000/oauth/callback'], 'http://localhost:6274/oauth/callback', true],
    [['http://127.0.0.1/callback'], 'http://127.0.0.1:53012/other', false],
    [['http://127.0.0.1/callback'], 'http://127.0.0.1:53012/callback?x=1', false],
    [['http://127.0.0.1/callback'], 'http://127.0.0.1:53012/callback#x', false],
    [['http://127.0.0.1/callback'], 'http://localhost:53012/callback', false],
    [['http://localhost/callback'], 'http://127.0.0.1:53012/callback', false],
    [['http://127.0.0.1/callback'], 'https://127.0.0.1:53012/callback', false],
    [['http://127.0.0.1/callback'], 'http://127.0.0.1:99999/callback', false],
    [['http://127.0.0.1/callback'], 'http://127.0.0.1:/callback', false],
    [['http://127.0.0.1/callback'], 'http://127.0.0.1:80@evil.example/callback', false],
    [['http://127.0.0.1/callback'], 'http://127.0.0.1.evil.example:80/callback', false],
    [['https://127.0.0.1/callback'], 'https://127.0.0.1:8443/callback', false],
    [['http://app.example/cb'], 'http://app.example:8080/cb', false],
    [['cursor://anysphere.cursor-retrieval/oauth/cb'], 'cursor://anysphere.cursor-retrieval/oauth/cb', true],
    [['cursor://anysphere.cursor-retrieval/oauth/cb'], 'cursor://anysphere.cursor-retrieval:1/oauth/cb', false],
    [[], 'https://app.example/cb', false],
  ];
  it.each(table)('registered %j, presented %j → %s', (registered, presented, expected) => {
    expect(redirectUriMatches(registered, presented)).toBe(expected);
  });
});
