// The interactive docs page in a real browser: Debian's Chromium through playwright-core.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.js';
import { screenshotPath } from '../support/screenshots.js';

const CHROMIUM = '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available && process.env.REQUIRE_BROWSER === '1') {
  throw new Error(`REQUIRE_BROWSER=1 but ${CHROMIUM} is missing: apt-get install -y chromium`);
}
if (!available) console.warn(`docs page test skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`);

describe.skipIf(!available)('GET /docs in Chromium', () => {
  let t: TestApp;
  let server: ServerType;
  let browser: BrowserContext;
  let profile: string;
  let base: string;

  beforeAll(async () => {
    t = await buildTestApp();
    server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    profile = mkdtempSync(join(tmpdir(), 'docs-chromium-'));
    // A fresh profile per run.
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1280, height: 1400 },
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await t?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it('lists every account endpoint', async () => {
    const page = await browser.newPage();
    const failed: string[] = [];
    page.on('requestfailed', (request) => failed.push(request.url()));
    await page.goto(`${base}/docs`, { waitUntil: 'load', timeout: 20_000 });
    await page.locator('.opblock-summary-path').first().waitFor({ timeout: 20_000 });
    const paths = await page.locator('.opblock-summary-path').allInnerTexts();
    const listed = paths.map((p) => p.replace(/\u200b/g, '').trim());
    for (const path of ['/api/v1/auth/register', '/api/v1/auth/login', '/api/v1/auth/logout', '/api/v1/auth/refresh-token', '/api/v1/auth/profile', '/api/v1/auth/password']) {
      expect(listed).toContain(path);
    }
    expect(failed).toEqual([]);
    // docs/api-docs.png, refreshed by `npm run docs:pictures`.
    await page.screenshot({ path: screenshotPath('api-docs.png'), fullPage: false });
    await page.close();
  }, 45_000);
});
