// Real media through the relay, driven only through its HTTP API (the typed client, with app.request as
// its fetch) the way a signaling server drives it; RTP and RTCP go over UDP on loopback between werift
// peers and the test app's WebRtcServer. See test/support/webrtc/sdp.ts for how the SDP is written.
import { describe, expect, it } from 'vitest';
import { useCallApp } from '../support/webrtc/call-app.js';
import { openCall } from '../support/webrtc/call.js';
import type { ReadPacket } from '../support/webrtc/rtp.js';
import { sleep, waitFor } from '../support/webrtc/wait.js';

/** How long the consumers stay paused while the sender sends. */
const PAUSED_WINDOW_MS = 1000;
/** Packets to receive after resume: 3 s of audio (20 ms) and of video (30 frames/s). */
const FLOWING = { audio: 150, video: 90 };

describe('real media end to end', () => {
  const env = useCallApp();

  it('forwards opus and VP8 to consumers only once resumed, in order and without loss, until the producers close', { timeout: 40_000 }, async () => {
    const { relay } = env;
    const { router, sender, receiver, producers, consumers } = await openCall(relay, { peers: env.peers });
    const { audio, video } = consumers;
    const { audio: audioProducer, video: videoProducer } = producers;
    expect([audio.paused, video.paused]).toEqual([true, true]);

    // Paused: the sender keeps sending, nothing reaches the receiver.
    const sentBeforePause = { ...sender.sent };
    await sleep(PAUSED_WINDOW_MS);
    expect(sender.sent.audio - sentBeforePause.audio).toBeGreaterThan(25);
    expect(sender.sent.video - sentBeforePause.video).toBeGreaterThan(15);
    expect([receiver.count(audio.id), receiver.count(video.id)]).toEqual([0, 0]);

    // Resumed: packets flow; video starts with the keyframe that answered the relay's PLI.
    expect(await relay.resumeConsumer(audio.id)).toMatchObject({ paused: false, producerPaused: false });
    expect(await relay.resumeConsumer(video.id)).toMatchObject({ paused: false, producerPaused: false });
    await waitFor(() => receiver.count(audio.id) >= FLOWING.audio && receiver.count(video.id) >= FLOWING.video, {
      timeoutMs: 10_000,
      what: `${FLOWING.audio} audio and ${FLOWING.video} video packets after resume`,
    });
    sender.stop();
    const last = { audio: sender.sent.audio - 1, video: sender.sent.video - 1 };
    const lastIndex = (id: string) => receiver.received.get(id)?.at(-1)?.index;
    await waitFor(() => lastIndex(audio.id) === last.audio && lastIndex(video.id) === last.video, {
      timeoutMs: 3000,
      what: 'the last packets sent to arrive',
    });
    expectContiguous(receiver.received.get(audio.id)!, last.audio);
    expectContiguous(receiver.received.get(video.id)!, last.video);
    expect(receiver.received.get(video.id)![0]!.keyframe).toBe(true);
    expect(sender.pliCount).toBeGreaterThan(0);

    // Producers closed: their consumers are gone (404) and packets stop although the peer still sends.
    const flowingAgainFrom = receiver.count(audio.id);
    sender.start();
    await waitFor(() => receiver.count(audio.id) > flowingAgainFrom + 5, { timeoutMs: 3000, what: 'audio flowing again' });
    await relay.closeProducer(audioProducer.id);
    await relay.closeProducer(videoProducer.id);
    for (const consumer of [audio, video]) {
      await expect(relay.resumeConsumer(consumer.id)).rejects.toMatchObject({
        status: 404,
        code: 'NOT_FOUND',
        details: { resource: 'consumer', id: consumer.id },
      });
    }
    await sleep(200); // packets already on the wire when the producers closed
    const countsAtClose = [receiver.count(audio.id), receiver.count(video.id)];
    const sentAtClose = { ...sender.sent };
    await sleep(800);
    expect(sender.sent.audio - sentAtClose.audio).toBeGreaterThan(25);
    expect([receiver.count(audio.id), receiver.count(video.id)]).toEqual(countsAtClose);
    sender.stop();
    expect(sender.sendErrors).toEqual([]);

    await relay.closeRouter(router.id);
  });
});

/** Every index from the first received up to `lastSent`, once each and in order; RTP sequence numbers likewise. */
function expectContiguous(packets: ReadPacket[], lastSent: number): void {
  const first = packets[0]!.index;
  expect(packets.map((p) => p.index)).toEqual(Array.from({ length: lastSent - first + 1 }, (_, i) => first + i));
  const seq0 = packets[0]!.sequenceNumber;
  expect(packets.map((p) => p.sequenceNumber)).toEqual(packets.map((_, i) => (seq0 + i) & 0xffff));
}
