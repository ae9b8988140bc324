// Calls in a real Chromium through the relay (issue 13's end-to-end tests that werift cannot do):
// mediasoup-client sends the fake camera at 1280x720 in three simulcast encodings and receives it
// back in the same tab (test/browser/calls-page.ts); this test plays the signaling server, calling the
// relay with the typed client. Checked: the consumer is `simulcast`, preferred-layers changes the layer
// the relay forwards (the relay's consumer stats and the frame size Chromium decodes), and an ICE
// restart hands out new credentials that Chromium then uses while media keeps flowing; a tab that
// closes its transport (DTLS close_notify) gives transport.dtls closed.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayClient, type RelayClient } from '../../src/client/relay-client.js';
import type { RelayEvent } from '../../src/relay/contract/events.js';
import { buildTestApp, type TestApp } from '../support/app.js';
import { requireChromium } from '../support/browser.js';
import { openCallsPage, until, type CallsPage, type PageWindow } from '../support/calls-page.js';

describe('calls in a real Chromium', () => {
  let t: TestApp;
  let relay: RelayClient;
  let tab: CallsPage | undefined;
  let page: Page;
  /** Every event the app's bus published. */
  const published: RelayEvent[] = [];
  /** Each transport's usernameFragment at creation. */
  const createdUfrag = new Map<string, string>();

  beforeAll(async () => {
    t = await buildTestApp();
    relay = createRelayClient({ baseUrl: 'http://relay.test', token: t.internalToken, fetch: t.app.request });
    t.events.bus.listen((e) => published.push(e));
  });
  afterAll(async () => {
    await tab?.close();
    await t?.close();
  }, 20_000);

  /** Chromium with the page loaded and window.signal wired to the relay; one router for the tab. */
  async function openPage(): Promise<void> {
    tab = await openCallsPage(relay, {
      appData: { test: 'browser-calls' },
      transport: (tr) => createdUfrag.set(tr.id, tr.iceParameters.usernameFragment),
      consumer: (c) => expect(c.type).toBe('simulcast'),
    });
    page = tab.page;
  }

  const inbound = () => page.evaluate(() => (globalThis as unknown as PageWindow).calls.inbound());
  const selectedPair = (which: 'send' | 'recv') => page.evaluate((w) => (globalThis as unknown as PageWindow).calls.selectedPair(w), which);

  /** The producer stream the relay forwards to the consumer now: the second entry of its stats (mediasoup's layout). */
  async function forwardedStream(consumerId: string): Promise<{ ssrc: number; rid?: string } | undefined> {
    const stats = (await relay.consumerStats(consumerId)) as Array<Record<string, any>>;
    const producerSide = stats.find((s) => s.type === 'inbound-rtp');
    return producerSide ? { ssrc: Number(producerSide.ssrc), ...(producerSide.rid ? { rid: String(producerSide.rid) } : {}) } : undefined;
  }

  it('simulcast: three encodings give a simulcast consumer, preferred-layers changes the forwarded layer; ICE restart: new credentials used, media goes on', { timeout: 90_000 }, async (ctx) => {
    requireChromium(ctx);
    const started = performance.now();
    const timings: Record<string, number> = {};
    const mark = (name: string) => (timings[name] = Math.round(performance.now() - started));
    try {
      await openPage();
      mark('page');
      const opened = await page.evaluate(() => (globalThis as unknown as PageWindow).calls.open());
      expect(opened.encodings).toBe(3);
      mark('open');
      await until(() => relay.producerStats(opened.producerId) as Promise<Array<Record<string, any>>>, (s) => s.length === 3, 15_000, 'three RTP streams at the producer');
      const streams = (await relay.producerStats(opened.producerId)) as Array<Record<string, any>>;
      const ssrcByWidth = new Map<number, number>();

      // Highest layer: the full 1280x720 reaches the receiver.
      const high = await relay.setConsumerPreferredLayers(opened.consumerId, { spatialLayer: 2 });
      expect(high.preferredLayers).toMatchObject({ spatialLayer: 2 });
      await until(inbound, (s) => s.frameWidth === 1280 && s.framesDecoded > 0, 30_000, 'frames of 1280 px at the receiver');
      const highStream = await until(() => forwardedStream(opened.consumerId), (s) => s !== undefined, 5000, 'the forwarded stream in consumer stats');
      ssrcByWidth.set(1280, highStream!.ssrc);
      mark('layer 2');

      // Lowest layer: the relay switches to the 320x180 stream; the receiver decodes that size.
      const low = await relay.setConsumerPreferredLayers(opened.consumerId, { spatialLayer: 0 });
      expect(low.preferredLayers).toMatchObject({ spatialLayer: 0 });
      await until(inbound, (s) => s.frameWidth === 320, 15_000, 'frames of 320 px at the receiver');
      const lowStream = await until(() => forwardedStream(opened.consumerId), (s) => s !== undefined && s.ssrc !== highStream!.ssrc, 5000, 'another forwarded stream');
      ssrcByWidth.set(320, lowStream!.ssrc);
      // Both are the producer's own streams, and not the same one.
      const producerSsrcs = streams.map((s) => Number(s.ssrc));
      expect(producerSsrcs).toEqual(expect.arrayContaining([...ssrcByWidth.values()]));
      expect(new Set(ssrcByWidth.values()).size).toBe(2);
      mark('layer 0');

      // ICE restart on both transports: new credentials from the relay, handed to mediasoup-client.
      const ice: Record<string, { before: string | null; after: string | null }> = {};
      for (const which of ['send', 'recv'] as const) {
        const transportId = which === 'send' ? opened.sendTransportId : opened.recvTransportId;
        const before = await selectedPair(which);
        const restarted = await relay.restartIce(transportId);
        expect(restarted.iceParameters.usernameFragment).not.toBe(before.remoteUsernameFragment);
        await page.evaluate(([w, p]) => (globalThis as unknown as PageWindow).calls.restartIce(w, p), [which, restarted.iceParameters] as const);
        // Chromium now checks against the new username fragment, and that pair works.
        const after = await until(
          () => selectedPair(which),
          (p) => p.remoteUsernameFragment === restarted.iceParameters.usernameFragment && p.pairState === 'succeeded' && p.responsesReceived > 0,
          15_000,
          `the ${which} transport's ICE pair on the new credentials`,
        );
        expect(after.remoteUsernameFragment).not.toBe(before.remoteUsernameFragment);
        // Before: the credentials the transport was created with.
        expect(before.remoteUsernameFragment).toBe(createdUfrag.get(transportId));
        ice[which] = { before: before.remoteUsernameFragment, after: after.remoteUsernameFragment };
      }
      mark('ice restart');

      // Media goes on after the restarts: the relay and the receiver keep counting.
      const relayBefore = Number(((await relay.transportStats(opened.recvTransportId))[0] as Record<string, any>).bytesSent);
      const receiverBefore = await inbound();
      // Until the counts have moved on (polled, at most 20 s) rather than a fixed 2 s window.
      const { relayAfter, receiverAfter } = await until(
        async () => ({ relayAfter: (await relay.transportStats(opened.recvTransportId))[0] as Record<string, any>, receiverAfter: await inbound() }),
        (c) => Number(c.relayAfter.bytesSent) > relayBefore && c.receiverAfter.packetsReceived > receiverBefore.packetsReceived + 20 && c.receiverAfter.framesDecoded > receiverBefore.framesDecoded,
        20_000,
        'more media after the restarts',
      );
      expect(Number(relayAfter.bytesSent)).toBeGreaterThan(relayBefore);
      expect(relayAfter).toMatchObject({ iceState: 'completed', dtlsState: 'connected' });
      expect(receiverAfter.packetsReceived).toBeGreaterThan(receiverBefore.packetsReceived + 20);
      expect(receiverAfter.framesDecoded).toBeGreaterThan(receiverBefore.framesDecoded);
      mark('media after restart');

      // The tab hangs up its sending side: Chromium closes DTLS with a close_notify, which the relay
      // reports as transport.dtls closed (a werift peer, which sends none, gives nothing: transport-events).
      await page.evaluate(() => (globalThis as unknown as PageWindow).calls.closeTransport('send'));
      await until(
        () => published.filter((e) => e.type === 'transport.dtls' && e.transportId === opened.sendTransportId).map((e) => (e as { state: string }).state),
        (states) => states.includes('closed'),
        10_000,
        'transport.dtls closed for the send transport',
      );
      expect(((await relay.transportStats(opened.sendTransportId))[0] as Record<string, any>).dtlsState).toBe('closed');
      mark('done');
      console.info('browser calls e2e', JSON.stringify({ timings, ssrcByWidth: [...ssrcByWidth], ice }));
    } catch (error) {
      console.error(`browser console:\n${tab?.consoleLines.join('\n')}`);
      throw error;
    }
  });
});
