// Issue 27 #7 in a real browser: the relay's docs page (GET /internal/docs) opens without the token,
// a wrong token shows the relay's 401 message, the right one loads the document with the relay's
// operations grouped by resource tag, and "Try it out" sends the token too. Debian's Chromium
// through playwright-core (skipped with the package to install when it is missing, outside CI).
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.js';
import { launchChromium, type LaunchedChromium } from '../support/browser.js';
import { CHROMIUM_BROWSER, skipWithout } from '../support/system-programs.js';

const TOKEN_KEY = 'chat-backend.internal-token';

/** The page's Web Storage, as the functions run in it see it (this file is type-checked without the DOM library). */
interface PageStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}
type PageGlobals = { sessionStorage: PageStorage; localStorage: PageStorage };

describe.skipIf(skipWithout(CHROMIUM_BROWSER))('GET /internal/docs in Chromium', () => {
  let t: TestApp;
  let server: ServerType;
  let browser: LaunchedChromium | undefined;
  let base: string;

  beforeAll(async () => {
    t = await buildTestApp({}, { areas: { accounts: false } });
    server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchChromium({ viewport: { width: 1280, height: 1400 } });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await t?.close();
  }, 60_000);

  it('asks for the token, refuses a wrong one with the 401 message, and shows the relay grouped by tag with the right one', { timeout: 90_000 }, async () => {
    const page = await browser!.context.newPage();
    const failed: string[] = [];
    page.on('requestfailed', (request) => failed.push(request.url()));
    const documentTokens: (string | undefined)[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/internal/v1/openapi.json') documentTokens.push(request.headers()['x-internal-token']);
    });

    await page.goto(`${base}/internal/docs`, { waitUntil: 'load', timeout: 30_000 });
    await page.locator('#token-input').waitFor({ timeout: 20_000 });
    // The shell alone: no document asked for, no operation shown.
    expect(documentTokens).toEqual([]);
    expect(await page.locator('.opblock').count()).toBe(0);

    await page.fill('#token-input', 'not-the-internal-token');
    await page.click('#token-form button[type=submit]');
    const status = page.locator('#token-status.error');
    await status.waitFor({ timeout: 20_000 });
    // The relay's own answer: its status, code and message.
    expect(await status.innerText()).toMatch(/^401 UNAUTHORIZED: \S/);
    expect(await page.evaluate((key) => (globalThis as unknown as PageGlobals).sessionStorage.getItem(key), TOKEN_KEY)).toBeNull();
    expect(await page.locator('.opblock').count()).toBe(0);

    await page.fill('#token-input', t.internalToken);
    await page.click('#token-form button[type=submit]');
    await page.locator('.opblock-summary-path').first().waitFor({ timeout: 30_000 });
    expect(documentTokens).toEqual(['not-the-internal-token', t.internalToken]);
    // Kept for this tab only.
    expect(
      await page.evaluate((key) => {
        const { sessionStorage, localStorage } = globalThis as unknown as PageGlobals;
        return [sessionStorage.getItem(key), localStorage.getItem(key)];
      }, TOKEN_KEY),
    ).toEqual([t.internalToken, null]);
    expect(await page.locator('#token-status').innerText()).toMatch(/Token accepted/);

    const tags = await page.locator('h3.opblock-tag').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-tag')));
    expect(tags).toEqual(expect.arrayContaining(['routers', 'transports', 'producers', 'consumers', 'data-producers', 'data-consumers', 'pipe-transports', 'events', 'service', 'docs']));
    expect(tags).not.toContain('default');
    const routerPaths = await page.locator('#operations-tag-routers').locator('xpath=..').locator('.opblock-summary-path').allInnerTexts();
    expect(routerPaths.map((p) => p.replace(/\u200b/g, '').trim())).toEqual(expect.arrayContaining(['/internal/v1/routers', '/internal/v1/routers/{id}']));
    expect(failed).toEqual([]);
    await page.close();
  });

  it('sends the token with "Try it out", and keeps it in the tab across a reload', { timeout: 90_000 }, async () => {
    const page = await browser!.context.newPage();
    await page.goto(`${base}/internal/docs`, { waitUntil: 'load', timeout: 30_000 });
    await page.evaluate(([key, token]) => (globalThis as unknown as PageGlobals).sessionStorage.setItem(key!, token!), [TOKEN_KEY, t.internalToken]);
    await page.reload({ waitUntil: 'load' });
    const info = page.locator('#operations-service-getInternalInfo');
    await info.waitFor({ timeout: 30_000 });

    const sent: (string | undefined)[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/internal/info') sent.push(request.headers()['x-internal-token']);
    });
    await info.locator('.opblock-summary').click();
    await info.locator('button.try-out__btn').click();
    await info.locator('button.execute').click();
    const code = info.locator('.live-responses-table .response .response-col_status');
    await code.first().waitFor({ timeout: 20_000 });
    expect((await code.first().innerText()).trim()).toBe('200');
    expect(sent).toEqual([t.internalToken]);
    expect(await info.locator('.live-responses-table').innerText()).toContain('"draining"');
    await page.close();
  });
});
