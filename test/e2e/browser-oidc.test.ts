// The browser demo's "Sign in with <provider>" (issue 41) in a real Chromium against a real OpenID
// Provider (oidc-provider on loopback, with its own login and consent pages): the page lists the
// configured providers as buttons, the click runs the web flow through the demo's proxy (start,
// the provider's pages, the service's callback), and the page ends signed in, the code gone from
// its address, the new account's linked identity on its profile.
import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../examples/browser-demo/start.js';
import { requireChromium } from '../support/browser.js';
import { useDemoInChromium } from '../support/demo.js';
import { startTestProvider, type TestProvider } from '../support/oidc-provider.js';

interface PageState {
  phase: string;
  error?: string;
  user?: { id: number; username: string };
  providers: { name: string; label: string }[];
  identities: { provider: string; email: string | null }[];
}

const readState = (page: Page) => page.evaluate(() => (globalThis as unknown as { demo: PageState }).demo);

describe('browser demo: sign in with a provider', () => {
  const session = useDemoInChromium();
  let google: TestProvider | undefined;
  afterAll(() => google?.close());

  it('shows a button per provider; the click goes through the provider\'s login and consent pages and ends signed in, with the identity on the profile', { timeout: 120_000 }, async (ctx) => {
    requireChromium(ctx);
    // The callback registered at the provider is on the demo's origin: its port is chosen first.
    const demoPort = await freePort();
    google = await startTestProvider({ clientId: 'demo-google', callbackUrl: `http://127.0.0.1:${demoPort}/api/v1/auth/oidc/google/callback`, pages: true });
    const email = `ada_${randomBytes(4).toString('hex')}@gmail.example`;
    google.account = { sub: `g-${randomBytes(6).toString('hex')}`, email, email_verified: true, name: 'Ada Lovelace' };
    const demo = await session.start({
      demoPort,
      // The service starts in a child process (tsx): slow on a loaded machine, as in browser-passkeys.
      readyTimeoutMs: 60_000,
      serviceEnv: {
        OIDC_PROVIDERS: 'google,acme',
        OIDC_GOOGLE_ISSUER: google.issuer,
        OIDC_GOOGLE_CLIENT_ID: google.clientId,
        OIDC_GOOGLE_CLIENT_SECRET: google.clientSecret,
        // A second provider, never reached: its button is shown all the same.
        OIDC_ACME_ISSUER: 'http://127.0.0.1:9',
        OIDC_ACME_CLIENT_ID: 'demo-acme',
        OIDC_ACME_LABEL: 'Acme SSO',
      },
    });
    const browser = await session.launch();
    const page = browser.context.pages()[0] ?? (await browser.context.newPage());
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    try {
      await page.goto(demo.url);
      const button = page.locator('#oidc-providers button[data-provider=google]');
      await button.waitFor({ timeout: 10_000 });
      expect(await page.locator('#oidc-providers button').allTextContents()).toEqual(['Sign in with Google', 'Sign in with Acme SSO']);
      await button.click();

      // The provider's own pages: its login form, then its consent.
      await page.waitForURL((url) => url.href.startsWith(`${google!.issuer}/interaction/`), { timeout: 15_000 });
      await page.fill('#provider-login', email);
      await page.click('#provider-submit');
      await page.waitForSelector('h1:has-text("Allow")', { timeout: 15_000 });
      await page.click('#provider-submit');

      // Back on the demo page, signed in: the one-time code exchanged and gone from the address.
      // The predicate also runs on the provider's pages and during the redirects, where the demo's state is not defined yet.
      await page.waitForFunction(() => (globalThis as unknown as { demo?: PageState }).demo?.phase === 'ready', null, { timeout: 15_000 });
      expect(page.url()).toBe(demo.url);
      const state = await readState(page);
      expect(state.error).toBeUndefined();
      expect(state.user?.username).toBe('Ada_Lovelace');
      expect(await page.textContent('#status')).toMatch(/Signed in with a provider as Ada_Lovelace/);
      // The profile: the linked identity, and the address the provider verified.
      await page.waitForFunction(() => ((globalThis as unknown as { demo?: PageState }).demo?.identities.length ?? 0) > 0, null, { timeout: 10_000 });
      expect((await readState(page)).identities.map((i) => [i.provider, i.email])).toEqual([['google', email]]);
      expect(await page.isVisible('#identities')).toBe(true);
      expect(await page.locator('#identities-list tr[data-provider=google] td').first().textContent()).toBe('Google');
      expect(await page.textContent('#email-status')).toBe(`${email}: verified`);
      expect(errors).toEqual([]);
    } catch (error) {
      console.error(errors.join('\n'), (await readState(page).catch(() => undefined))?.error, demo.serviceLog().slice(-4000));
      throw error;
    }
  });
});
