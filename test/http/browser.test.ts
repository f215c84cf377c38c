/**
 * The page in a real browser: Debian's chromium driven by playwright-core. Logs in (a wrong token is
 * refused first), searches, opens a result, waits for the graph drawing, visits statistics, works
 * by keyboard and on a phone-sized screen; a screenshot of each view goes to test-artifacts/browser/.
 * Skips, saying why, only where /usr/bin/chromium is absent; .ci/run installs it, so CI runs it.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS, CHROMIUM, CHROMIUM_PRESENT, launchChromium, type Browser } from '../helpers/chromium.js';
import { realEmbedder } from '../helpers/fixtures.js';
import { connect, startTestServer, type TestServer } from './http-helpers.js';

/** Evaluated in the page (this file is compiled without the DOM's types): no sideways scrolling. */
const FITS = 'document.documentElement.scrollWidth <= window.innerWidth';
if (!CHROMIUM_PRESENT)
  console.warn(`browser tests skipped: ${CHROMIUM} is absent (install Debian's chromium: apt-get install -y chromium)`);

describe.skipIf(!CHROMIUM_PRESENT)('the web page in chromium', () => {
  let s: TestServer;
  let token: string;
  let browser: Browser | undefined;
  let page: Page;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    s = await startTestServer({}, realEmbedder);
    token = (await s.token('garden')).token;
    const c = await connect(s.url, token);
    await c.ok('create_entities', {
      entities: [
        { name: 'Tomato', entityType: 'plant', observations: ['needs full sun', 'water at the roots in the morning'] },
        { name: 'Basil', entityType: 'plant', observations: ['grows well next to tomatoes', 'keeps aphids away'] },
        { name: 'Greenhouse', entityType: 'place', observations: ['south-facing, built in 2024'] },
        { name: 'Aphids', entityType: 'pest', observations: ['small green insects on young leaves'] },
      ],
    });
    await c.ok('create_relations', {
      relations: [
        { from: 'Basil', to: 'Tomato', relationType: 'companion of' },
        { from: 'Tomato', to: 'Greenhouse', relationType: 'grows in' },
        { from: 'Basil', to: 'Aphids', relationType: 'repels' },
      ],
    });
    await c.close();
    browser = await launchChromium({ width: 1200, height: 900 });
    page = browser.page;
    // Nothing may leave loopback: every request the page makes is checked.
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.protocol !== 'data:' && url.hostname !== '127.0.0.1') throw new Error(`the page fetched ${request.url()}`);
    });
  });

  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  it('refuses a wrong token on the login form', async () => {
    const fetched: string[] = [];
    page.on('response', (r) => fetched.push(`${r.status()} ${new URL(r.url()).pathname}`));
    await page.goto(s.url);
    await expect.poll(() => page.locator('#login').isVisible()).toBe(true);
    // Before login: no navigation, and nothing the page asked for is missing (no /favicon.ico 404).
    expect(await page.locator('#nav').isVisible()).toBe(false);
    expect(fetched.filter((f) => f.startsWith('404'))).toEqual([]);
    await page.fill('#token', 'limbic_this-is-not-a-token');
    await page.press('#token', 'Enter');
    await expect.poll(() => page.textContent('#login-error')).toMatch(/not valid/);
    expect(await page.locator('#search').isVisible()).toBe(false);
    await page.screenshot({ path: join(ARTIFACTS, 'login-refused.png'), fullPage: true });
  });

  it('logs in, searches, and shows each result with its score breakdown', async () => {
    await page.fill('#token', token);
    await page.click('#login button[type=submit]');
    await expect.poll(() => page.textContent('#who')).toBe('namespace garden');
    // The page after login is not empty: the memory's size and its newest entities, newest first.
    await expect.poll(() => page.textContent('#search-summary')).toMatch(/^4 entities in this memory/);
    expect(await page.locator('#results li.recent a').allTextContents()).toEqual(['Aphids', 'Greenhouse', 'Basil', 'Tomato']);
    await page.fill('#q', 'tomatoes sun');
    await page.press('#q', 'Enter');
    // The newest entities fill the same list until the answer replaces them: wait for a result that is not one of them.
    await expect.poll(() => page.locator('#results li:not(.recent)').count()).toBeGreaterThan(0);
    const first = await page.locator('#results li').first().textContent();
    expect(first).toMatch(/Tomato|Basil/);
    expect(first).toMatch(/found by (words|meaning)/);
    expect(first).toMatch(/final/);
    // Every card says what use did to its place (issue 24).
    for (const card of await page.locator('#results li .why').allTextContents())
      expect(card).toMatch(/moved (up|down) \d+ places?|used \(\+[\d.]+: .*\), its place unchanged|never used: its place is its relevance/);
    expect(await page.textContent('#search-summary')).toMatch(/legs: .*fts/);
    // A card shows the observation that matched, not merely the first ones (issue 25).
    await page.fill('#q', 'aphids');
    await page.press('#q', 'Enter');
    const basil = page.locator('#results li', { has: page.locator('a.result-link', { hasText: /^Basil$/ }) }).locator('.snippet');
    await expect.poll(() => basil.textContent()).toMatch(/^keeps aphids away/);
    await page.screenshot({ path: join(ARTIFACTS, 'search.png'), fullPage: true });
  });

  it('opens a result and draws its neighbourhood with cytoscape', async () => {
    await page
      .locator('#results a', { hasText: /^Basil$/ })
      .first()
      .click();
    await expect.poll(() => page.textContent('#entity-name')).toBe('Basil');
    await expect.poll(() => page.locator('#graph canvas').count()).toBeGreaterThan(0);
    expect(await page.getAttribute('#graph', 'data-nodes')).toBe('3');
    expect(await page.textContent('#entity-observations')).toContain('keeps aphids away');
    // No "generic" tag on every ordinary observation.
    expect(await page.locator('#entity-observations .kind').count()).toBe(0);
    expect(await page.textContent('#entity-relations')).toContain('companion of');
    // Related by create_relations (one call: one use); the page's own views are not use.
    expect(await page.textContent('#entity-usage')).toMatch(/used1 time on 1 day/);
    // An entity that does not exist shows no graph, not the previous one's (issue 26).
    await page.evaluate("location.hash = '#/entity/Nobody%20here'");
    await expect.poll(() => page.textContent('#entity-meta')).toMatch(/No entity of that name/);
    expect(await page.getAttribute('#graph', 'data-nodes')).toBe('0');
    expect(await page.locator('#graph canvas').count()).toBe(0);
    await page.evaluate("location.hash = '#/entity/Basil'");
    await expect.poll(() => page.getAttribute('#graph', 'data-nodes')).toBe('3');
    // No relation's label lies over an entity's name (issue 25): label boxes from cytoscape itself.
    const overlaps = await page.evaluate(`(() => {
      const cy = document.getElementById('graph')._cyreg.cy;
      const box = (e) => e.boundingBox({ includeNodes: false, includeEdges: false, includeLabels: true, includeOverlays: false });
      const meet = (a, b) => a.w > 0 && b.w > 0 && a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2;
      const found = [];
      cy.edges().forEach((e) => cy.nodes().forEach((n) => { if (meet(box(e), box(n))) found.push(e.data('label') + ' / ' + n.id()); }));
      return found;
    })()`);
    expect(overlaps).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, 'entity.png'), fullPage: true });
  });

  it('marks a relation end_relation ended, in the list of relations (issue 33)', async () => {
    const c = await connect(s.url, token);
    await c.ok('end_relation', { from: 'Basil', to: 'Aphids', relationType: 'repels' });
    await c.close();
    await page.evaluate("location.hash = '#/entity/Tomato'");
    await expect.poll(() => page.textContent('#entity-name')).toBe('Tomato');
    await page.evaluate("location.hash = '#/entity/Basil'");
    await expect.poll(() => page.locator('#entity-relations li.ended').count()).toBe(1);
    expect(await page.locator('#entity-relations li.ended').textContent()).toMatch(/repels.*ended/);
    // The others still hold, and say nothing of an end.
    expect(await page.locator('#entity-relations li:not(.ended)').allTextContents()).toEqual([expect.stringMatching(/companion of/)]);
    await page.screenshot({ path: join(ARTIFACTS, 'entity-ended-relation.png'), fullPage: true });
  });

  it('shows statistics: counts, embedding model and queue, database size', async () => {
    await page.click('#nav-stats');
    await expect.poll(() => page.textContent('#stats-list')).toMatch(/entities4/);
    const text = await page.textContent('#stats-list');
    expect(text).toMatch(/relations3/);
    expect(text).toMatch(/embedding model/);
    expect(text).toMatch(/database size\d+\.\d+ MB/);
    await page.screenshot({ path: join(ARTIFACTS, 'stats.png'), fullPage: true });
  });

  it('works by keyboard alone', async () => {
    await page.click('#nav-search');
    await page.locator('body').focus();
    await page.keyboard.press('/');
    expect(await page.evaluate('document.activeElement?.id')).toBe('q');
    await page.keyboard.type('aphids');
    await page.keyboard.press('Enter');
    // The search's own answer, not the newest entities the search view showed before it: once it is
    // drawn, the page moves focus to the main region, which must happen before the keys below.
    await expect.poll(() => page.textContent('#search-summary')).toMatch(/ of \d+ results? /);
    await expect.poll(() => page.locator('#results li').count()).toBeGreaterThan(0);
    // Tab from the search box reaches the first result; Enter opens it.
    await page.focus('#q');
    await page.keyboard.press('Tab'); // the Search button
    await page.keyboard.press('Tab'); // the first result
    const focused = await page.evaluate<string>('document.activeElement?.textContent');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.textContent('#entity-name')).toBe(focused);
  });

  it('fits a phone-sized screen without sideways scrolling', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${s.url}/#/search?q=${encodeURIComponent('basil')}`);
    await expect.poll(() => page.locator('#results li').count()).toBeGreaterThan(0);
    // Once laid out (cytoscape sizes its canvases a moment after the page draws).
    await expect.poll(() => page.evaluate(FITS)).toBe(true);
    await page.screenshot({ path: join(ARTIFACTS, 'search-phone.png'), fullPage: true });
    await page.locator('#results a').first().click();
    await expect.poll(() => page.locator('#graph canvas').count()).toBeGreaterThan(0);
    // Once laid out (cytoscape sizes its canvases a moment after the page draws).
    await expect.poll(() => page.evaluate(FITS)).toBe(true);
    await page.screenshot({ path: join(ARTIFACTS, 'entity-phone.png'), fullPage: true });
  });
});
