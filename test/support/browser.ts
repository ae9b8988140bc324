// Debian's Chromium for the real-browser tests: where it is, the flags (fake camera and microphone,
// loopback ICE), and a launch that skips the test when it is missing, unless REQUIRE_BROWSER=1 (CI).
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
const INSTALL = 'apt-get install -y chromium';

export const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--use-fake-device-for-media-stream',
  '--use-fake-ui-for-media-stream',
  '--allow-loopback-in-peer-connection',
];

/** Skips the calling test (or fails it under REQUIRE_BROWSER=1) when Chromium is not installed. */
export function requireChromium(ctx: { skip(note: string): void }): void {
  if (existsSync(CHROMIUM)) return;
  if (process.env.REQUIRE_BROWSER === '1') throw new Error(`REQUIRE_BROWSER=1 but ${CHROMIUM} is missing: ${INSTALL}`);
  const note = `${CHROMIUM} is missing, so the real-browser test is skipped: ${INSTALL} (REQUIRE_BROWSER=1 makes this a failure)`;
  console.warn(note);
  ctx.skip(note);
}

export interface LaunchedChromium {
  context: BrowserContext;
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

/** A headless Chromium with a fresh profile (removed by close()). */
export async function launchChromium(options: { viewport?: { width: number; height: number }; executablePath?: string } = {}): Promise<LaunchedChromium> {
  const profile = await mkdtemp(path.join(tmpdir(), 'chromium-profile-'));
  try {
    const context = await chromium.launchPersistentContext(profile, {
      // Another path: a wrapper that starts Chromium elsewhere (test/e2e/turn-relay.test.ts: inside a network namespace).
      executablePath: options.executablePath ?? CHROMIUM,
      headless: true,
      args: CHROMIUM_FLAGS,
      viewport: options.viewport ?? { width: 1100, height: 800 },
    });
    return {
      context,
      async close() {
        await context.close().catch(() => {});
        await rm(profile, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(profile, { recursive: true, force: true });
    throw error;
  }
}
