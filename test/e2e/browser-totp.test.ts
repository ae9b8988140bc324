// The browser demo's two-factor sign-in (issue 31) in a real Chromium: "Enable two-factor" draws the
// otpauth URL as a QR code, a code computed from the secret the page shows enables it, the recovery
// codes appear once; a login then asks for the second step, and a recovery code completes it.
import type { Page } from 'playwright-core';
import { Secret, TOTP } from 'otpauth';
import { describe, expect, it } from 'vitest';
import { requireChromium } from '../support/browser.js';
import { useDemoInChromium, verifyDemoEmail } from '../support/demo.js';

interface PageState {
  phase: string;
  error?: string;
  user?: { id: number; username: string };
  twoFactor: { otpauthUrl?: string; secret?: string; recoveryCodes?: string[]; mfaPending: boolean };
}

const readState = (page: Page) => page.evaluate(() => (globalThis as unknown as { demo: PageState }).demo);

describe('browser demo: enable two-factor, then sign in with the second step', () => {
  const session = useDemoInChromium();

  it('shows a QR code of the otpauth URL, enables TOTP, and asks for the second step at login', { timeout: 60_000 }, async (ctx) => {
    requireChromium(ctx);
    const demo = await session.start();
    const browser = await session.launch();
    const page = browser.context.pages()[0] ?? (await browser.context.newPage());
    const consoleLines: string[] = [];
    page.on('pageerror', (e) => consoleLines.push(`pageerror: ${e.message}`));
    try {
      await page.goto(demo.url);
      const username = `totp_${Date.now().toString(36)}`;
      await page.fill('input[name=username]', username);
      await page.fill('input[name=password]', 'correct horse');
      await page.click('#register');
      await page.waitForFunction(() => (globalThis as unknown as { demo: PageState }).demo.phase === 'ready', null, { timeout: 15_000 });

      // Turning TOTP on needs a verified address.
      await verifyDemoEmail(page, demo, username);

      await page.click('#totp-setup');
      await page.waitForFunction(() => (globalThis as unknown as { demo: PageState }).demo.twoFactor.otpauthUrl !== undefined, null, { timeout: 10_000 });
      const { twoFactor } = await readState(page);
      expect(twoFactor.otpauthUrl).toMatch(/^otpauth:\/\/totp\/chat-backend:totp_[0-9a-z]+\?/);
      expect(await page.textContent('#totp-secret')).toBe(twoFactor.secret);
      // The QR code was drawn: a canvas of 200 px with dark and light pixels.
      const drawn = await page.evaluate(() => {
        // The test's types have no DOM: the little of it used here.
        type Canvas = { width: number; height: number; getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } } };
        const canvas = (globalThis as unknown as { document: { getElementById(id: string): Canvas } }).document.getElementById('totp-qr');
        const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
        let dark = 0;
        for (let i = 0; i < pixels.length; i += 4) if (pixels[i]! < 128) dark += 1;
        return { width: canvas.width, dark, total: pixels.length / 4 };
      });
      expect(drawn.width).toBe(200);
      expect(drawn.dark).toBeGreaterThan(drawn.total / 5);
      expect(drawn.dark).toBeLessThan(drawn.total * 0.8);

      const totp = new TOTP({ secret: Secret.fromBase32(twoFactor.secret!) });
      await page.fill('#totp-code', totp.generate());
      await page.click('#totp-enable button[type=submit]');
      await page.waitForFunction(() => (globalThis as unknown as { demo: PageState }).demo.twoFactor.recoveryCodes !== undefined, null, { timeout: 10_000 });
      const codes = (await readState(page)).twoFactor.recoveryCodes!;
      expect(codes).toHaveLength(10);
      expect(await page.locator('#totp-recovery li').count()).toBe(10);

      // A fresh page logs in: the password is right, the second step is asked for.
      await page.reload();
      await page.fill('input[name=username]', username);
      await page.fill('input[name=password]', 'correct horse');
      await page.click('#login');
      await page.waitForFunction(() => (globalThis as unknown as { demo: PageState }).demo.twoFactor.mfaPending, null, { timeout: 10_000 });
      expect(await page.isVisible('#mfa')).toBe(true);
      expect((await readState(page)).phase).toBe('logged-out');
      // The code used to enable is spent for its step; a recovery code signs in.
      await page.fill('#mfa-code', codes[0]!);
      await page.click('#mfa-submit');
      await page.waitForFunction(() => (globalThis as unknown as { demo: PageState }).demo.phase === 'ready', null, { timeout: 10_000 });
      const after = await readState(page);
      expect(after.user?.username).toBe(username);
      expect(after.twoFactor.mfaPending).toBe(false);
      expect(await page.isVisible('#mfa')).toBe(false);
    } catch (error) {
      console.error(consoleLines.join('\n'), (await readState(page).catch(() => undefined))?.error);
      throw error;
    }
  });
});
