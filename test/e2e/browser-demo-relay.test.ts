// Issue 28: the browser demo's relayed call. `npm run demo` with TURN_URLS and TURN_SECRET (a private
// coturn here) and the page opened with ?relay=1: the page asks GET /api/v1/auth/ice-servers, makes
// its transports with iceTransportPolicy 'relay', and the call goes live through coturn: the relay's
// transports see their client at coturn's relayed ports (61000-61099 here, above Linux's ephemeral
// range, where Chromium's own host candidates never are).
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { startDemo, type RunningDemo } from '../../examples/browser-demo/start.js';
import { createRelayClient } from '../../src/client/relay-client.js';
import { allocateRtcPorts } from '../support/app.js';
import { launchChromium, requireChromium, type LaunchedChromium } from '../support/browser.js';
import { startCoturn, type Coturn } from '../support/coturn.js';
import { skipWithout, TURN_SERVER } from '../support/system-programs.js';

const SECRET = 'demo-relay-test-secret-0123456789';
const RELAY_PORTS = { min: 61_000, max: 61_099 };

interface PageState {
  phase: string;
  error?: string;
  stats: { audio?: { packetsReceived: number }; video?: { packetsReceived: number; framesDecoded?: number } };
}
const readState = (page: Page) => page.evaluate(() => (globalThis as unknown as { demo: PageState }).demo);

describe.skipIf(skipWithout(TURN_SERVER))('browser demo, ?relay=1: the call through TURN', () => {
  let coturn: Coturn | undefined;
  let demo: RunningDemo | undefined;
  let browser: LaunchedChromium | undefined;

  afterAll(async () => {
    await browser?.close();
    await demo?.close();
    await coturn?.stop();
  }, 30_000);

  it('asks /ice-servers, forces relay candidates, and goes live through coturn', { timeout: 180_000 }, async (ctx) => {
    requireChromium(ctx);
    coturn = await startCoturn({ ip: '127.0.0.1', secret: SECRET, mediaIp: '127.0.0.1', relayPorts: RELAY_PORTS });
    demo = await startDemo({
      demoPort: 0,
      servicePort: 0,
      rtcPort: allocateRtcPorts(1).min,
      serviceOutput: 'capture',
      serviceEnv: { TURN_URLS: `${coturn.urls.udp},${coturn.urls.tcp}`, TURN_SECRET: SECRET },
      // The service's start-up (migrations, a worker) took 56 s here beside four other suites.
      readyTimeoutMs: 90_000,
    });
    browser = await launchChromium();
    const page = browser.context.pages()[0] ?? (await browser.context.newPage());
    const consoleLines: string[] = [];
    page.on('console', (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => consoleLines.push(`pageerror: ${e.message}`));
    try {
      const iceRequests: string[] = [];
      page.on('request', (request) => {
        if (request.url().includes('/api/v1/auth/ice-servers')) iceRequests.push(request.url());
      });
      await page.goto(new URL('?relay=1', demo.url).toString());
      const username = `relay_${Date.now().toString(36)}`;
      await page.fill('input[name=username]', username);
      await page.fill('input[name=email]', `${username}@example.com`);
      await page.fill('input[name=password]', 'correct horse');
      await page.click('#register');
      await page.waitForFunction(() => (globalThis as unknown as { demo: PageState }).demo.phase !== 'logged-out', null, { timeout: 15_000 });
      await page.click('#join');
      await page.waitForFunction(
        () => {
          const d = (globalThis as unknown as { demo: PageState }).demo;
          return d.phase === 'error' || (d.stats.video?.framesDecoded ?? 0) > 0;
        },
        null,
        { timeout: 45_000 },
      );
      const live = await readState(page);
      expect(live.phase, live.error).toBe('live');
      expect(iceRequests).toHaveLength(1);
      await page.waitForTimeout(1500);
      const later = await readState(page);
      expect(later.stats.audio?.packetsReceived ?? 0).toBeGreaterThan(live.stats.audio?.packetsReceived ?? 0);

      // Behind the demo's back: every transport of the room sees its client at a coturn relayed port.
      const relay = createRelayClient({ baseUrl: demo.serviceUrl, token: demo.internalToken });
      const { routers } = await relay.listRouters();
      const transports = (await Promise.all(routers.map((r) => relay.getRouter(r.id)))).flatMap((r) => r.transports.map((t) => t.id));
      expect(transports.length).toBeGreaterThanOrEqual(2);
      for (const id of transports) {
        const [stats] = (await relay.transportStats(id)) as Array<{ iceSelectedTuple?: { remoteIp: string; remotePort: number } }>;
        expect(stats?.iceSelectedTuple?.remotePort, id).toBeGreaterThanOrEqual(RELAY_PORTS.min);
        expect(stats?.iceSelectedTuple?.remotePort, id).toBeLessThanOrEqual(RELAY_PORTS.max);
      }
    } catch (error) {
      console.error(`browser console:\n${consoleLines.join('\n')}\nservice log:\n${demo.serviceLog()}\ncoturn log:\n${coturn.log().split('\n').slice(-60).join('\n')}`);
      throw error;
    }
  });
});
