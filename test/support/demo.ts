// The browser demo (examples/browser-demo, started as `npm run demo` starts it) and a Chromium for one
// describe block of the end-to-end tests: each started when a test asks for it, both closed after the
// block (the browser first).
import type { Page } from 'playwright-core';
import { afterAll } from 'vitest';
import { startDemo, type DemoOptions, type RunningDemo } from '../../examples/browser-demo/start.js';
import { allocateRtcPorts } from './app.js';
import { launchChromium, type LaunchedChromium } from './browser.js';

export interface DemoInChromium {
  /** What start() and launch() made, for a later test of the block (unset if they did not run). */
  demo?: RunningDemo;
  browser?: LaunchedChromium;
  /** The demo on free ports, its service's log captured, one RTC port of this worker's. */
  start(options?: Partial<DemoOptions>): Promise<RunningDemo>;
  /** A headless Chromium with a fresh profile. */
  launch(): Promise<LaunchedChromium>;
}

/** @example const session = useDemoInChromium(); it('…', async () => { const demo = await session.start(); const browser = await session.launch(); … }) */
export function useDemoInChromium(closeTimeoutMs = 20_000): DemoInChromium {
  const session: DemoInChromium = {
    async start(options = {}) {
      return (session.demo = await startDemo({ demoPort: 0, servicePort: 0, rtcPort: allocateRtcPorts(1).min, serviceOutput: 'capture', ...options }));
    },
    async launch() {
      return (session.browser = await launchChromium());
    },
  };
  afterAll(async () => {
    await session.browser?.close();
    await session.demo?.close();
  }, closeTimeoutMs);
  return session;
}

/**
 * Verifies the e-mail address of the demo's signed-in user through its form, with the code the
 * registration mailed (in the service's log: the demo runs without SMTP_URL). Adding a passkey or
 * turning two-factor sign-in on needs a verified address.
 */
export async function verifyDemoEmail(page: Page, demo: RunningDemo, username: string): Promise<void> {
  await page.waitForFunction(() => (globalThis as unknown as { demo: { email?: { verified: boolean } } }).demo.email?.verified === false, null, { timeout: 10_000 });
  const mailed = () => {
    const line = demo.serviceLog().split('\n').find((l) => l.includes(`${username}@example.com`) && l.includes('Your code: '));
    return line ? /Your code: ([0-9]{6})/.exec(line)?.[1] : undefined;
  };
  let code = mailed();
  for (let i = 0; i < 50 && code === undefined; i++) code = await new Promise((r) => setTimeout(r, 100)).then(mailed);
  if (code === undefined) throw new Error('no verification code in the service log');
  await page.fill('#email-code', code);
  await page.click('#email-verify');
  await page.waitForFunction(() => (globalThis as unknown as { demo: { email?: { verified: boolean } } }).demo.email?.verified === true, null, { timeout: 10_000 });
}
