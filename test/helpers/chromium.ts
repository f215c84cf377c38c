/**
 * Debian's chromium, headless, driven by playwright-core: the browser the page's tests and the MCP
 * App view's tests run in. Tests skip, saying why, where it is absent; .ci/run installs it.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { REPO_ROOT } from './fixtures.js';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_PRESENT = existsSync(CHROMIUM);
/** Where screenshots go. */
export const ARTIFACTS = process.env.LIMBIC_TEST_ARTIFACTS ?? join(REPO_ROOT, 'test-artifacts', 'browser');

export interface Browser {
  readonly context: BrowserContext;
  readonly page: Page;
  /** Closes the browser and deletes its profile. */
  close(): Promise<void>;
}

/** A browser in a fresh profile, with nothing of its own on the network (no QUIC, sync, updates). */
export async function launchChromium(viewport: { readonly width: number; readonly height: number }): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'limbic-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
