// The controls of issue 13 with real media: werift peers over loopback UDP, the relay driven through
// the typed client. Producer pause stops the packets at the receiver and resume brings them back;
// a key-frame request reaches the sender as a PLI and a keyframe reaches the receiver; stats fill
// once media flows; ICE restart hands out new credentials.
import { describe, expect, it } from 'vitest';
import { useCallApp } from '../support/webrtc/call-app.js';
import { openCall } from '../support/webrtc/call.js';
import { sleep, waitFor } from '../support/webrtc/wait.js';

describe('controls with real media', () => {
  const env = useCallApp();

  it('pause/resume, key frames, stats and ICE restart', { timeout: 60_000 }, async () => {
    const { relay } = env;
    const { router, sendTransport, recvTransport, sender, receiver, producers, consumers } = await openCall(relay, { peers: env.peers });
    const { audio, video } = consumers;
    const { audio: audioProducer } = producers;
    await relay.resumeConsumer(audio.id);
    await relay.resumeConsumer(video.id);
    await waitFor(() => receiver.count(audio.id) > 25 && receiver.count(video.id) > 15, { timeoutMs: 10_000, what: 'media flowing' });

    // Stats: non-empty once media flows, the engine's own figures.
    const producerStats = await relay.producerStats(audioProducer.id);
    expect(producerStats.length).toBeGreaterThan(0);
    expect(producerStats[0]).toMatchObject({ type: 'inbound-rtp', kind: 'audio' });
    expect(Number(producerStats[0]!.packetCount)).toBeGreaterThan(0);
    const consumerStats = await relay.consumerStats(video.id);
    expect(consumerStats.find((s) => s.type === 'outbound-rtp')).toMatchObject({ kind: 'video' });
    expect(Number(consumerStats.find((s) => s.type === 'outbound-rtp')!.packetCount)).toBeGreaterThan(0);
    const transportStats = await relay.transportStats(recvTransport.id);
    expect(transportStats[0]).toMatchObject({ type: 'webrtc-transport', transportId: recvTransport.id, iceState: 'completed', dtlsState: 'connected' });
    expect(Number(transportStats[0]!.bytesSent)).toBeGreaterThan(0);

    // Key frame: a PLI reaches the sender, a keyframe the receiver after it.
    const plisBefore = sender.pliCount;
    const videoBefore = receiver.count(video.id);
    await relay.requestKeyFrame(video.id);
    await waitFor(() => sender.pliCount > plisBefore, { timeoutMs: 5000, what: 'a PLI at the sender' });
    await waitFor(() => (receiver.received.get(video.id) ?? []).slice(videoBefore).some((p) => p.keyframe), { timeoutMs: 5000, what: 'a keyframe at the receiver' });

    // Producer pause: the sender keeps sending, the receiver gets nothing; the consumer reports producerPaused.
    expect(await relay.pauseProducer(audioProducer.id)).toEqual({ id: audioProducer.id, paused: true });
    await waitFor(async () => (await relay.resumeConsumer(audio.id)).producerPaused, { timeoutMs: 3000, what: 'producerPaused at the consumer' });
    await sleep(200); // packets already on the wire
    const atPause = receiver.count(audio.id);
    const sentAtPause = sender.sent.audio;
    await sleep(1000);
    expect(sender.sent.audio - sentAtPause).toBeGreaterThan(25);
    expect(receiver.count(audio.id)).toBe(atPause);
    // Video, not paused, kept flowing meanwhile.
    expect(receiver.count(video.id)).toBeGreaterThan(videoBefore);

    // Resume: packets again, producerPaused false.
    expect(await relay.resumeProducer(audioProducer.id)).toEqual({ id: audioProducer.id, paused: false });
    await waitFor(() => receiver.count(audio.id) > atPause + 25, { timeoutMs: 5000, what: 'audio flowing after resume' });
    expect((await relay.resumeConsumer(audio.id)).producerPaused).toBe(false);

    // Consumer pause: this receiver only.
    expect(await relay.pauseConsumer(video.id)).toEqual({ id: video.id, paused: true, producerPaused: false });
    await sleep(200);
    const videoAtPause = receiver.count(video.id);
    await sleep(800);
    expect(receiver.count(video.id)).toBe(videoAtPause);

    // ICE restart: new local credentials (the peer applying them is not covered here).
    const restarted = await relay.restartIce(sendTransport.id);
    expect(restarted.iceParameters.usernameFragment).not.toBe(sendTransport.iceParameters.usernameFragment);
    expect(restarted.iceParameters.password).not.toBe(sendTransport.iceParameters.password);

    sender.stop();
    expect(sender.sendErrors).toEqual([]);
    await relay.closeRouter(router.id);
  });
});
