/**
 * Issue 36, how it is checked (third item): the consent page in a real browser (Debian's chromium,
 * playwright-core). A person opens the authorization URL, types the code from `limbic auth code`
 * and presses Allow; the browser follows the 303 to the client's loopback callback (which the
 * page's CSP form-action must allow) with code, state and iss. The page asks for nothing but its
 * own origin; a client name, a redirect URI and a state carrying `<script>`, markup and quotes are
 * shown as text and never run; and a page of another origin cannot frame it. Screenshots go to
 * test-artifacts/browser/. Skips, saying why, only where /usr/bin/chromium is absent.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS, CHROMIUM, CHROMIUM_PRESENT, launchChromium, type Browser } from '../helpers/chromium.js';
import { tempDir } from '../helpers/fixtures.js';
import {
  approvalCode,
  authorizeUrl,
  callbackServer,
  localServer,
  mcpStatus,
  pkce,
  register,
  serveHttp,
  tokenRequest,
  type Served,
} from './oauth-e2e-helpers.js';

if (!CHROMIUM_PRESENT) console.warn(`OAuth consent browser tests skipped: ${CHROMIUM} is absent (apt-get install -y chromium)`);

/** What a hostile client calls itself: markup, a script, quotes of both kinds. */
const EVIL_NAME = `Evil "double" 'single' <script>window.__pwned = 'name'</script><img src=x onerror="window.__pwned = 'img'"> & co`;
const EVIL_STATE = `"><script>window.__pwned = 'state'</script>'`;

// Each test runs the CLI several times (seconds each on a busy 2-core machine).
describe.skipIf(!CHROMIUM_PRESENT)('the consent page in chromium', { timeout: 180_000 }, () => {
  const { dir, cleanup } = tempDir('limbic-oauth-browser-');
  const db = join(dir, 'memory.db');
  let served: Served;
  let callback: Awaited<ReturnType<typeof callbackServer>>;
  let browser: Browser | undefined;
  let clientId: string;
  let evilRedirect: string;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    callback = await callbackServer();
    served = await serveHttp(db);
    evilRedirect = `${callback.url}/callback?next="><script>window.__pwned='redirect'</script>'`;
    const made = await register(served.base, {
      client_name: EVIL_NAME,
      redirect_uris: [evilRedirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    clientId = made.body.client_id as string;
    browser = await launchChromium({ width: 900, height: 900 });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await served?.stop();
    await callback?.close();
    cleanup();
  });

  it('completes the consent in a browser: the code typed, Allow pressed, the callback gets code, state and iss; nothing else fetched, nothing run', async () => {
    const page = browser!.page;
    const requested: string[] = [];
    const record = (r: Request) => requested.push(r.url());
    page.on('request', record);
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    try {
      const { verifier, challenge } = pkce();
      const url = authorizeUrl(served.base, {
        client_id: clientId,
        redirect_uri: evilRedirect,
        code_challenge: challenge,
        state: EVIL_STATE,
      });
      const response = await page.goto(url.toString());
      expect(response?.status()).toBe(200);
      const headers = response!.headers();
      expect(headers['x-frame-options']?.toUpperCase()).toBe('DENY');
      expect(headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
      expect(headers['content-security-policy']).toMatch(/default-src 'none'/);
      // No referrer leaves the origin (same-origin: with no-referrer, Chromium posts the form with Origin: null).
      expect(headers['referrer-policy']).toMatch(/^(no-referrer|same-origin)$/);
      expect(headers['cache-control']).toMatch(/no-store/);

      // The name, the redirect URI and the state are text, not markup: no script or image came of them.
      const text = (await page.textContent('body')) ?? '';
      expect(text).toContain(EVIL_NAME);
      expect(text).toContain(new URL(callback.url).host);
      expect(await page.evaluate('document.querySelectorAll("script, img, iframe, object, embed").length')).toBe(0);
      expect(await page.evaluate('window.__pwned')).toBeUndefined();
      // The state rides in a hidden field unchanged.
      expect(await page.locator('input[type=hidden][name=state]').getAttribute('value')).toBe(EVIL_STATE);
      await page.screenshot({ path: join(ARTIFACTS, 'oauth-consent.png'), fullPage: true });

      // One visible field: the code from the terminal.
      const field = page.locator('form input:not([type=hidden]):not([type=submit]):not([type=button])');
      expect(await field.count()).toBe(1);
      await field.fill(approvalCode(db, 'team'));
      const allow = page.locator('form button, form input[type=submit]').filter({ hasText: /allow|approve/i });
      const allowButton = (await allow.count()) > 0 ? allow.first() : page.locator('form input[type=submit][value*="llow"]').first();
      const before = callback.received.length;
      await Promise.all([page.waitForURL((u) => u.origin === callback.url, { timeout: 20_000 }), allowButton.click()]);
      await expect.poll(() => callback.received.length).toBe(before + 1);
      const params = callback.received[before]!;
      expect(params.get('next')).toBe(`"><script>window.__pwned='redirect'</script>'`);
      expect(params.get('code')).toMatch(/^limbic_ac_/);
      expect(params.get('state')).toBe(EVIL_STATE);
      expect(params.get('iss')).toBe(served.base);
      expect(dialogs).toEqual([]);

      // Everything the browser asked for: the server's origin, then the client's callback. Nothing external.
      const origins = [...new Set(requested.map((u) => new URL(u).origin))];
      expect(origins.filter((o) => o !== served.base && o !== callback.url && o !== 'null')).toEqual([]);

      // The code works for the client that asked.
      const got = await tokenRequest(served.base, {
        grant_type: 'authorization_code',
        code: params.get('code') ?? '',
        code_verifier: verifier,
        redirect_uri: evilRedirect,
        client_id: clientId,
        resource: `${served.base}/mcp`,
      });
      expect(got.status, JSON.stringify(got.body)).toBe(200);
      expect((await mcpStatus(`${served.base}/mcp`, got.body.access_token as string)).status).toBe(200);
    } finally {
      page.off('request', record);
    }
  });

  it('a wrong code is refused in the page, which says so, and sends the browser nowhere', async () => {
    const page = browser!.page;
    const url = authorizeUrl(served.base, {
      client_id: clientId,
      redirect_uri: evilRedirect,
      code_challenge: pkce().challenge,
      state: 's',
    });
    await page.goto(url.toString());
    const before = callback.received.length;
    await page.locator('form input:not([type=hidden]):not([type=submit]):not([type=button])').fill('AAAA-BBBB-CCCC');
    const allow = page.locator('form button, form input[type=submit]').filter({ hasText: /allow|approve/i });
    const response = await Promise.all([page.waitForEvent('response', (r) => r.request().method() === 'POST'), allow.first().click()]).then(
      ([r]) => r,
    );
    expect(response.status()).toBeGreaterThanOrEqual(400);
    expect(new URL(page.url()).origin).toBe(served.base);
    expect(callback.received.length).toBe(before);
    expect(await page.textContent('body')).toMatch(/code is not valid/);
    // The form is shown again, for another try.
    expect(await page.locator('form input:not([type=hidden]):not([type=submit]):not([type=button])').count()).toBe(1);
    await page.screenshot({ path: join(ARTIFACTS, 'oauth-consent-wrong-code.png'), fullPage: true });
  });

  it('a page of another origin cannot frame the consent page', async () => {
    const page = browser!.page;
    const url = authorizeUrl(served.base, {
      client_id: clientId,
      redirect_uri: evilRedirect,
      code_challenge: pkce().challenge,
      state: randomBytes(4).toString('hex'),
    });
    const framer = await localServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        `<!doctype html><title>framer</title><iframe id="f" src="${url.toString().replace(/&/g, '&amp;').replace(/"/g, '&quot;')}" width="600" height="600"></iframe>`,
      );
    });
    try {
      // Another origin than the server's: localhost instead of 127.0.0.1.
      const framerUrl = framer.url.replace('127.0.0.1', 'localhost');
      await page.goto(framerUrl);
      await page.waitForLoadState('load');
      const child = page.frames().find((f) => f !== page.mainFrame());
      expect(child).toBeDefined();
      // Chromium shows its own error page in the frame: blocked by the response's X-Frame-Options / frame-ancestors.
      const framed = String(await child!.evaluate('document.documentElement.outerHTML'));
      expect(framed).toContain('ERR_BLOCKED_BY_RESPONSE');
      expect(framed).not.toMatch(/name="?state/);
      await page.screenshot({ path: join(ARTIFACTS, 'oauth-consent-framed.png'), fullPage: true });
    } finally {
      await framer.close();
    }
  });
});
