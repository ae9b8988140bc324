// A recording of a real Chromium sender with simulcast (issue 30): the tab of test/browser/calls-page.ts
// sends the fake camera at 1280x720 in three VP8 encodings; once Chromium sends the top one, the relay
// records the producer. The file must hold one VP8 stream at the highest layer's size (a simulcast
// producer is recorded at its highest layer) that decodes with no error.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRelayClient } from '../../src/client/relay-client.js';
import { allocateRtcPorts, buildTestApp, type TestApp } from '../support/app.js';
import { requireChromium } from '../support/browser.js';
import { openCallsPage, until, type CallsPage, type PageWindow } from '../support/calls-page.js';
import { decodeErrors, ffprobe } from '../support/ffmpeg.js';
import { FFMPEG, skipWithout } from '../support/system-programs.js';
import { sleep } from '../support/webrtc/wait.js';

describe.skipIf(skipWithout(FFMPEG))('recording a real Chromium simulcast sender', () => {
  it('records the highest of three VP8 layers: one 1280x720 VP8 stream that decodes clean', { timeout: 120_000 }, async (ctx) => {
    requireChromium(ctx);
    const dir = mkdtempSync(path.join(tmpdir(), 'recordings-'));
    // One WebRtcServer port and two for the recording's plain transport (RTP and RTCP).
    const ports = allocateRtcPorts(3);
    let t: TestApp | undefined;
    let tab: CallsPage | undefined;
    try {
      t = await buildTestApp(
        { RTC_MIN_PORT: String(ports.min), RTC_MAX_PORT: String(ports.max), RECORDINGS_DIR: dir, RECORDINGS_MIN_FREE_MB: '1' },
        { areas: { accounts: false } },
      );
      const relay = createRelayClient({ baseUrl: 'http://relay.test', token: t.internalToken, fetch: t.app.request });
      tab = await openCallsPage(relay, { appData: { test: 'browser-recording' } });
      const { page } = tab;
      const opened = await page.evaluate(() => (globalThis as unknown as PageWindow).calls.open());
      expect(opened.encodings).toBe(3);

      // Chromium sends its top layer only once its bandwidth estimate allows it: the tab's own consumer,
      // asked for that layer, decodes 1280 px frames then.
      await relay.setConsumerPreferredLayers(opened.consumerId, { spatialLayer: 2 });
      const inbound = () => page.evaluate(() => (globalThis as unknown as PageWindow).calls.inbound());
      await until(inbound, (s) => s.frameWidth === 1280 && s.framesDecoded > 0, 45_000, 'frames of 1280 px at the tab');
      const highSsrc = await until(
        async () => (await relay.consumerStats(opened.consumerId)).find((s) => s.type === 'inbound-rtp')?.ssrc,
        (ssrc) => ssrc !== undefined,
        5000,
        'the top layer forwarded to the tab',
      );

      const recording = await relay.createRecording({ routerId: tab.routerId()!, producerIds: [opened.producerId] });
      expect(recording).toMatchObject({ state: 'recording', format: 'webm' });
      // The recording's consumer gets the top layer too (its preferred layers are the highest by default).
      const state = await relay.getRouter(tab.routerId()!);
      const recorded = state.plainTransports.flatMap((p) => p.consumers);
      expect(recorded).toHaveLength(1);
      await until(
        async () => (await relay.consumerStats(recorded[0]!.id)).find((s) => s.type === 'inbound-rtp')?.ssrc,
        (ssrc) => ssrc === highSsrc,
        10_000,
        "the top layer forwarded to the recording's consumer",
      );
      await sleep(5000);
      const stopped = await relay.stopRecording(recording.id);
      expect(stopped).toMatchObject({ state: 'stopped', reason: 'api' });

      const file = path.join(dir, stopped.file);
      const probe = await ffprobe(file);
      console.log(`browser recording: ${JSON.stringify(probe)}, ${stopped.bytes} bytes`);
      expect(probe.streams).toEqual([{ codec_type: 'video', codec_name: 'vp8', width: 1280, height: 720 }]);
      expect(probe.durationS).toBeGreaterThan(3);
      expect(await decodeErrors(file)).toBe('');
    } catch (error) {
      console.error(`browser console:\n${tab?.consoleLines.join('\n')}`);
      throw error;
    } finally {
      await tab?.close();
      await t?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
