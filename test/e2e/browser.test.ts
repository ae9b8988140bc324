// A real browser through the relay: Debian's Chromium (fake camera and microphone) opens the
// browser demo, registers, ends a second device from the devices list, verifies the e-mail address
// with the code from the service's log, joins, and its consumers'
// getStats() must show audio packets and decoded video frames growing. The service and the demo
// server start as `npm run demo` starts them.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { requireChromium } from '../support/browser.js';
import { useDemoInChromium } from '../support/demo.js';
import { screenshotPath } from '../support/screenshots.js';

/** How long the counters are watched after the first frame. */
const WATCH_MS = 3000;

interface Counters {
  packetsReceived: number;
  bytesReceived: number;
  packetsLost: number;
  framesDecoded?: number;
}
interface PageState {
  devices: Array<{ id: string; device: string | null; current: boolean }>;
  email?: { address: string; verified: boolean };
  phase: string;
  error?: string;
  handlerName?: string;
  firstFrameMs?: number;
  stats: { audio?: Counters; video?: Counters };
  producers: { audio?: string; video?: string };
  removedTiles: string[];
  muted: { audio: boolean; video: boolean };
  chat: string[];
  room?: string;
  peers: Record<string, string[]>;
  activeSpeaker?: { producerId: string; username: string; tile: string | null };
}

const readState = (page: Page) => page.evaluate(() => (globalThis as unknown as { demo: PageState }).demo);

describe('browser demo in a real Chromium', () => {
  const session = useDemoInChromium();

  it('sends the fake camera and microphone through the relay and receives them back', { timeout: 50_000 }, async (ctx) => {
    requireChromium(ctx);
    const timings: Record<string, number> = {};
    const started = performance.now();
    const mark = (name: string) => (timings[name] = Math.round(performance.now() - started));

    const demo = await session.start();
    mark('demo started');
    // Only holders of an access token the account API accepts may signal.
    const signalingUrl = new URL('signaling/sessions', demo.url);
    expect((await fetch(signalingUrl, { method: 'POST' })).status).toBe(401);
    expect((await fetch(signalingUrl, { method: 'POST', headers: { Authorization: 'Bearer not.a-token' } })).status).toBe(401);
    const browser = await session.launch();
    mark('browser started');
    const page = browser.context.pages()[0] ?? (await browser.context.newPage());
    const consoleLines: string[] = [];
    page.on('console', (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => consoleLines.push(`pageerror: ${e.message}`));

    try {
      await page.goto(demo.url);
      const username = `e2e_${Date.now().toString(36)}`;
      await page.fill('input[name=username]', username);
      await page.fill('input[name=email]', `${username}@example.com`);
      await page.fill('input[name=password]', 'correct horse');
      await page.click('#register');
      await page.waitForFunction(() => (globalThis as unknown as { demo: PageState }).demo.phase !== 'logged-out', null, { timeout: 10_000 });
      expect((await readState(page)).phase, (await readState(page)).error).toBe('ready');
      mark('registered');

      // Devices: the page lists this session; a second device (a login from here, through the demo's
      // /api proxy) shows up after Refresh, and its End button kills both of its tokens at once.
      await page.waitForFunction(() => (globalThis as unknown as { demo: PageState }).demo.devices.length === 1, null, { timeout: 10_000 });
      expect(await page.locator('#devices-list tr').count()).toBe(1);
      const api = (path: string, init: RequestInit = {}) => fetch(new URL(`api/v1/auth${path}`, demo.url), init).then((r) => r.json() as Promise<{ code: number; data: any }>);
      const second = await api('/login', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'e2e-second-device/1.0' },
        body: JSON.stringify({ account: username, password: 'correct horse' }),
      });
      expect(second.code).toBe(0);
      await page.click('#devices-refresh');
      await page.waitForFunction(() => (globalThis as unknown as { demo: PageState }).demo.devices.length === 2, null, { timeout: 10_000 });
      const row = page.locator('#devices-list tr', { hasText: 'e2e-second-device/1.0' });
      expect(await row.count()).toBe(1);
      expect(await page.locator('#devices-list td.current').count()).toBe(1);
      await row.locator('button.end-session').click();
      await page.waitForFunction(() => (globalThis as unknown as { demo: PageState }).demo.devices.length === 1, null, { timeout: 10_000 });
      expect((await readState(page)).devices[0]!.current).toBe(true);
      expect((await api('/profile', { headers: { authorization: `Bearer ${second.data.token}` } })).code).toBe(1002);
      expect(
        (await api('/refresh-token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refresh_token: second.data.refresh_token }) })).code,
      ).toBe(1002);
      expect((await readState(page)).phase).toBe('ready');
      mark('devices');

      // Verify e-mail (issue 31): the code registration mailed is in the service's log (no SMTP_URL).
      await page.waitForFunction(() => (globalThis as unknown as { demo: PageState }).demo.email?.verified === false, null, { timeout: 10_000 });
      const mailed = () => {
        const line = demo.serviceLog().split('\n').find((l) => l.includes(`${username}@example.com`) && l.includes('Your code: '));
        return line ? /Your code: ([0-9]{6})/.exec(line)?.[1] : undefined;
      };
      let code = mailed();
      for (let i = 0; i < 50 && code === undefined; i++) code = await new Promise((r) => setTimeout(r, 100)).then(mailed);
      expect(code, 'the verification code in the service log').toMatch(/^[0-9]{6}$/);
      await page.fill('#email-code', code!);
      await page.click('#email-verify');
      await page.waitForFunction(() => (globalThis as unknown as { demo: PageState }).demo.email?.verified === true, null, { timeout: 10_000 });
      expect(await page.locator('#email-status').textContent()).toContain('verified');
      expect((await readState(page)).phase).toBe('ready');
      mark('e-mail verified');

      await page.click('#join');
      await page.waitForFunction(
        () => {
          const d = (globalThis as unknown as { demo: PageState }).demo;
          return d.phase === 'error' || (d.firstFrameMs !== undefined && (d.stats.video?.framesDecoded ?? 0) > 0);
        },
        null,
        { timeout: 15_000 },
      );
      const first = await readState(page);
      expect(first.phase, first.error).toBe('live');
      mark('first frame');

      // Counters must keep growing: sample each second.
      const samples: { at: number; audioPackets: number; videoFrames: number; videoPackets: number; lost: number }[] = [];
      for (let i = 0; i <= WATCH_MS / 1000; i++) {
        if (i > 0) await page.waitForTimeout(1000);
        const { stats } = await readState(page);
        samples.push({
          at: performance.now(),
          audioPackets: stats.audio?.packetsReceived ?? 0,
          videoFrames: stats.video?.framesDecoded ?? 0,
          videoPackets: stats.video?.packetsReceived ?? 0,
          lost: (stats.audio?.packetsLost ?? 0) + (stats.video?.packetsLost ?? 0),
        });
      }
      for (let i = 1; i < samples.length; i++) {
        expect(samples[i]!.audioPackets, `audio packets received, second ${i}`).toBeGreaterThan(samples[i - 1]!.audioPackets);
        expect(samples[i]!.videoFrames, `video frames decoded, second ${i}`).toBeGreaterThan(samples[i - 1]!.videoFrames);
      }
      const a = samples[0]!;
      const b = samples.at(-1)!;
      const seconds = (b.at - a.at) / 1000;
      const rates = {
        audioPacketsPerS: Math.round((b.audioPackets - a.audioPackets) / seconds),
        videoFramesPerS: Math.round(((b.videoFrames - a.videoFrames) / seconds) * 10) / 10,
        videoPacketsPerS: Math.round((b.videoPackets - a.videoPackets) / seconds),
        packetsLost: b.lost,
      };
      // Opus sends a packet every 20 ms; the fake camera makes ~20-30 frames/s.
      expect(rates.audioPacketsPerS).toBeGreaterThan(30);
      expect(rates.videoFramesPerS).toBeGreaterThan(5);

      // Chat: typed messages go over a data channel to the relay and come back through its data consumer, in order.
      for (const text of ['hello through the relay', 'second message']) {
        await page.fill('#chat-text', text);
        await page.click('#chat-send');
      }
      await page.waitForFunction(() => (globalThis as unknown as { demo: PageState }).demo.chat.length >= 2, null, { timeout: 5000 });
      expect((await readState(page)).chat).toEqual(['hello through the relay', 'second message']);
      expect(await page.locator('#chat-log li').allTextContents()).toEqual(['hello through the relay', 'second message']);
      mark('chat');

      // Mute the microphone: the relay pauses its producer, the inbound audio count stops growing
      // (the page's counters refresh every 500 ms) and the remote tile says so; video keeps flowing.
      await page.click('#mute-audio');
      await page.waitForFunction(() => (globalThis as unknown as { demo: PageState }).demo.muted.audio, null, { timeout: 5000 });
      expect(await page.locator('#remote-audio-muted').isVisible()).toBe(true);
      await page.waitForTimeout(1500); // packets in flight and one stats refresh
      const mutedAt = await readState(page);
      await page.waitForTimeout(2000);
      const stillMuted = await readState(page);
      expect(stillMuted.stats.audio!.packetsReceived, 'audio packets while muted').toBe(mutedAt.stats.audio!.packetsReceived);
      expect(stillMuted.stats.video!.framesDecoded!, 'video frames while audio is muted').toBeGreaterThan(mutedAt.stats.video!.framesDecoded!);
      // Unmute: packets again, the tile cleared.
      await page.click('#mute-audio');
      await page.waitForFunction(() => !(globalThis as unknown as { demo: PageState }).demo.muted.audio, null, { timeout: 5000 });
      expect(await page.locator('#remote-audio-muted').isVisible()).toBe(false);
      await page.waitForFunction(
        (before) => ((globalThis as unknown as { demo: PageState }).demo.stats.audio?.packetsReceived ?? 0) > before + 25,
        stillMuted.stats.audio!.packetsReceived,
        { timeout: 10_000 },
      );
      mark('mute');

      // The demo's signaling server follows the relay's event stream: the video producer closed on the
      // relay directly (not through the demo) closes its consumer there, and the page loses that tile.
      const videoProducer = (await readState(page)).producers.video;
      expect(videoProducer).toEqual(expect.any(String));
      const closed = await fetch(new URL(`/internal/v1/producers/${videoProducer}`, demo.serviceUrl), {
        method: 'DELETE',
        headers: { 'X-Internal-Token': demo.internalToken },
      });
      expect(closed.status).toBe(204);
      await page.waitForFunction(() => (globalThis as unknown as { demo: PageState }).demo.removedTiles.includes('video'), null, { timeout: 10_000 });
      const after = await readState(page);
      expect(after.removedTiles).toEqual(['video']);
      expect(after.phase).toBe('live');
      expect(await page.$eval('#remote', (el) => (el as unknown as { srcObject: unknown }).srcObject === null)).toBe(true);
      mark('done');
      console.info('browser demo e2e', { handler: first.handlerName, firstFrameMsAfterResume: first.firstFrameMs, ...rates, timings });
    } catch (error) {
      console.error(`browser console:\n${consoleLines.join('\n')}\nservice output:\n${demo.serviceLog()}`);
      throw error;
    }
  });
  it("two peers in one room: each receives the other, and the active speaker's tile is highlighted", { timeout: 40_000 }, async (ctx) => {
    requireChromium(ctx);
    const { demo, browser } = session;
    if (!demo || !browser) return ctx.skip('the demo did not start in the first test');
    const context = browser.context;
    const running = demo;
    const room = `room-${Date.now().toString(36)}`;
    const join = async (username: string): Promise<Page> => {
      const page = await context.newPage();
      await page.goto(running.url);
      await page.fill('input[name=username]', username);
      await page.fill('input[name=email]', `${username}@example.com`);
      await page.fill('input[name=password]', 'correct horse');
      await page.click('#register');
      await page.waitForFunction(() => (globalThis as unknown as { demo: PageState }).demo.phase === 'ready', null, { timeout: 10_000 });
      await page.fill('#room', room);
      await page.click('#join');
      await page.waitForFunction(() => ['live', 'error'].includes((globalThis as unknown as { demo: PageState }).demo.phase), null, { timeout: 15_000 });
      expect((await readState(page)).phase, (await readState(page)).error).toBe('live');
      return page;
    };
    const stamp = Date.now().toString(36);
    const names = [`alice_${stamp}`, `bob_${stamp}`] as const;
    const pages = [await join(names[0]), await join(names[1])];

    // Each page consumes the other's microphone and camera into a tile named after them.
    for (const [i, page] of pages.entries()) {
      const other = names[1 - i]!;
      await page.waitForFunction((o) => ((globalThis as unknown as { demo: PageState }).demo.peers[o] ?? []).length === 2, other, { timeout: 15_000 });
      await page.waitForFunction(
        (o) => {
          const doc = (globalThis as unknown as { document: { querySelector(selector: string): { videoWidth: number } | null } }).document;
          return (doc.querySelector(`figure.peer[data-user="${o}"] video`)?.videoWidth ?? 0) > 0;
        },
        other,
        { timeout: 15_000 },
      );
      expect(await page.locator('figure.peer figcaption').allTextContents()).toEqual([other]);
    }

    // The relay's router.activeSpeaker, followed by the demo's signaling server, highlights one tile:
    // a producing peer's, named by the producer the relay chose.
    const audioProducers = await Promise.all(pages.map(async (page) => (await readState(page)).producers.audio));
    for (const page of pages) {
      await page.waitForFunction(() => (globalThis as unknown as { demo: PageState }).demo.activeSpeaker?.tile != null, null, { timeout: 15_000 });
      const { activeSpeaker } = await readState(page);
      const speakerIndex = names.indexOf(activeSpeaker!.username as (typeof names)[number]);
      expect(speakerIndex, `active speaker ${activeSpeaker!.username}`).toBeGreaterThanOrEqual(0);
      expect(activeSpeaker!.producerId).toBe(audioProducers[speakerIndex]);
      const highlighted = page.locator('figure.speaking');
      expect(await highlighted.count()).toBe(1);
      expect(await highlighted.getAttribute('data-user')).toBe(activeSpeaker!.username);
      expect(await highlighted.locator('figcaption').textContent()).toContain(activeSpeaker!.username);
      expect(activeSpeaker!.tile).toBe(activeSpeaker!.username);
    }
    // The screenshot of docs/browser-demo.png (refreshed by `npm run docs:pictures`): the first page, in front (a background tab paints no video).
    await pages[0]!.bringToFront();
    await pages[0]!.waitForTimeout(1500);
    await pages[0]!.screenshot({ path: screenshotPath('browser-demo.png'), fullPage: true });
    for (const page of pages) await page.close();
  });
});
