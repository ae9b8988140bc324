// The demo's WHIP and WHEP pages (examples/browser-demo/whip.html, whep.html: plain fetch and
// RTCPeerConnection) in Chromium: a user publishes the fake camera through the WHIP page, a second
// page plays the room through the WHEP page and decodes it; stopping the publisher revokes its WHIP
// endpoint on the relay, which ends its session and closes its producers.
import { describe, expect, it } from 'vitest';
import { allocateRtcPorts } from '../support/app.js';
import { requireChromium } from '../support/browser.js';
import { useDemoInChromium } from '../support/demo.js';
import { waitFor } from '../support/webrtc/wait.js';

type RoomState = { id: string; appData: Record<string, unknown>; transports: { producers: { id: string }[] }[]; whipEndpoints: unknown[]; whepEndpoints: unknown[] };

describe('the demo\'s WHIP and WHEP pages', () => {
  const session = useDemoInChromium();

  it('publishes the camera from the WHIP page; the WHEP page plays it; Stop ends the WHIP session on the relay', { timeout: 150_000 }, async (ctx) => {
    requireChromium(ctx);
    // The worker's port and eight for the WHEP player's pipe transports, as `npm run demo` has.
    const demo = await session.start({ rtcPort: allocateRtcPorts(9).min, rtcPortCount: 9, readyTimeoutMs: 90_000 });
    const browser = await session.launch();
    const internal = async <T,>(path: string) => (await (await fetch(`${demo.serviceUrl}/internal/v1${path}`, { headers: { 'X-Internal-Token': demo.internalToken } })).json()) as T;

    const username = `whip_${Date.now().toString(36)}`;
    const registered = await fetch(new URL('/api/v1/auth/register', demo.url), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ username, email: `${username}@example.com`, password: 'correct horse' }) });
    expect(((await registered.json()) as { code: number }).code).toBe(0);
    const room = `whip-room-${Date.now().toString(36)}`;
    const fill = async (page: Awaited<ReturnType<typeof browser.context.newPage>>, path: string) => {
      await page.goto(new URL(path, demo.url).toString());
      await page.fill('input[name=username]', username);
      await page.fill('input[name=password]', 'correct horse');
      await page.fill('input[name=room]', room);
    };

    const publisher = await browser.context.newPage();
    await fill(publisher, '/whip');
    await publisher.click('#publish');
    await publisher.waitForFunction("document.getElementById('status').textContent.endsWith(': connected') || document.getElementById('status').className === 'error'", null, { timeout: 30_000 });
    expect(await publisher.textContent('#status')).toMatch(/^Publishing to room .*: connected$/);

    const rooms = await internal<{ routers: { id: string; appData: Record<string, unknown> }[] }>('/routers');
    const routerId = rooms.routers.find((r) => r.appData.room === room)!.id;
    const producers = async () => (await internal<RoomState>(`/routers/${routerId}`)).transports.flatMap((t) => t.producers);
    expect(await producers()).toHaveLength(2);

    const player = await browser.context.newPage();
    await fill(player, '/whep');
    await player.click('#play');
    await waitFor(
      async () => (await player.evaluate(() => (globalThis as unknown as { whepDemo: { received(): Promise<{ framesDecoded: number }> } }).whepDemo.received())).framesDecoded > 10,
      { timeoutMs: 30_000, intervalMs: 250, what: `frames decoded on the WHEP page (${await player.textContent('#status')})` },
    );
    expect((await internal<RoomState>(`/routers/${routerId}`)).whepEndpoints).toHaveLength(1);

    await publisher.click('#stop');
    await publisher.waitForFunction("document.getElementById('status').textContent === 'Stopped.'", null, { timeout: 10_000 });
    await waitFor(async () => (await producers()).length === 0, { timeoutMs: 10_000, intervalMs: 200, what: 'the WHIP producers closed on the relay' });
    const after = await internal<RoomState>(`/routers/${routerId}`);
    expect(after.whipEndpoints).toEqual([]);
    expect(after.whepEndpoints).toHaveLength(1);

    await player.click('#stop');
    await player.waitForFunction("document.getElementById('status').textContent === 'Stopped.'", null, { timeout: 10_000 });
    // The room's last session left: the demo closed its router.
    await waitFor(async () => !(await internal<{ routers: { id: string }[] }>('/routers')).routers.some((r) => r.id === routerId), { timeoutMs: 10_000, intervalMs: 200, what: 'the room closed' });
  });
});
