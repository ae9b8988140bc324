// Issue 27 #1 in a real browser: a page on another origin listed in CORS_ORIGINS registers, logs in
// and reads the profile (preflights included) and can read the exposed headers; a page on an origin
// that is not listed is refused by the browser itself. Debian's Chromium through playwright-core.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, type LaunchedChromium } from '../support/browser.js';
import { CHROMIUM_BROWSER, skipWithout } from '../support/system-programs.js';
import { startServer, type ServerProcess } from '../support/server-process.js';

/** A blank page served from its own origin (127.0.0.1 on a port of its own). */
async function pageServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>web client</title>'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** What the page does, as a web client would: register, log in, read the profile. */
async function webClient({ api, user }: { api: string; user: string }): Promise<unknown> {
  const json = { 'content-type': 'application/json' };
  try {
    const registered = await fetch(`${api}/api/v1/auth/register`, { method: 'POST', headers: json, body: JSON.stringify({ username: user, email: `${user}@example.com`, password: 'web-Client-pw-1' }) });
    const login = await fetch(`${api}/api/v1/auth/login`, { method: 'POST', headers: json, body: JSON.stringify({ account: user, password: 'web-Client-pw-1' }) });
    const { data } = (await login.json()) as { data: { token: string } };
    const profile = await fetch(`${api}/api/v1/auth/profile`, { headers: { Authorization: `Bearer ${data.token}`, 'X-Request-Id': 'web-client-1' } });
    return {
      registered: registered.status,
      login: login.status,
      profile: profile.status,
      username: ((await profile.json()) as { data: { username: string } }).data.username,
      requestId: profile.headers.get('X-Request-Id'),
      rateLimit: profile.headers.get('RateLimit'),
    };
  } catch (error) {
    return { refused: String(error) };
  }
}

describe.skipIf(skipWithout(CHROMIUM_BROWSER))('CORS in Chromium', () => {
  let api: ServerProcess | undefined;
  let browser: LaunchedChromium | undefined;
  let allowed: { server: Server; origin: string };
  let other: { server: Server; origin: string };

  beforeAll(async () => {
    [allowed, other] = await Promise.all([pageServer(), pageServer()]);
    api = await startServer({ CORS_ORIGINS: allowed.origin, RATE_LIMIT_API_PER_MIN: '100' }, { timeoutMs: 90_000 });
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await api?.stop();
    allowed?.server.close();
    other?.server.close();
  }, 60_000);

  it('a page on a listed origin registers, logs in and reads the profile', { timeout: 60_000 }, async () => {
    const page = await browser!.context.newPage();
    await page.goto(allowed.origin);
    const user = `web_${Date.now()}`;
    const result = await page.evaluate(webClient, { api: api!.url, user });
    expect(result).toEqual({ registered: 200, login: 200, profile: 200, username: user, requestId: 'web-client-1', rateLimit: expect.stringMatching(/remaining/) });
    await page.close();
  });

  it('a page on an origin that is not listed is refused by the browser', { timeout: 60_000 }, async () => {
    const page = await browser!.context.newPage();
    await page.goto(other.origin);
    const result = await page.evaluate(webClient, { api: api!.url, user: `refused_${Date.now()}` });
    expect(result).toEqual({ refused: expect.stringContaining('Failed to fetch') });
    await page.close();
  });
});
