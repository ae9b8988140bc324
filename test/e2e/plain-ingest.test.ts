// Ingest through plain RTP: Debian's ffmpeg sends a generated VP8 + Opus test source into two plain
// transports (comedia, RTCP on ports of their own, as ffmpeg sends it), the relay makes producers of
// them, and a werift receiver in the room gets both. Driven through the typed client like a signaling server.
import { describe, expect, it } from 'vitest';
import { createRelayClient } from '../../src/client/relay-client.js';
import { allocateRtcPorts, buildTestApp, type TestApp } from '../support/app.js';
import { ingestRtpParameters, testSource, type TestSource } from '../support/ffmpeg.js';
import { FFMPEG, skipWithout } from '../support/system-programs.js';
import { OPUS, RecvPeer, VP8 } from '../support/webrtc/peer.js';
import { receiverRtpCapabilities } from '../support/webrtc/sdp.js';
import { waitFor } from '../support/webrtc/wait.js';

describe.skipIf(skipWithout(FFMPEG))('plain RTP ingest (real ffmpeg)', () => {
  it('a VP8 + Opus RTP sender produces into a room and a WebRTC receiver gets both', { timeout: 60_000 }, async () => {
    // One WebRtcServer port and four for the two plain transports (RTP and RTCP each).
    const ports = allocateRtcPorts(5);
    const t: TestApp = await buildTestApp({ RTC_MIN_PORT: String(ports.min), RTC_MAX_PORT: String(ports.max) }, { areas: { accounts: false } });
    const relay = createRelayClient({ baseUrl: 'http://relay.test', token: t.internalToken, fetch: t.app.request });
    let source: TestSource | undefined;
    let receiver: RecvPeer | undefined;
    try {
      const router = await relay.createRouter({ appData: { room: 'ingest' } });
      const video = await relay.createPlainTransport({ routerId: router.id, comedia: true, rtcpMux: false, appData: { source: 'ffmpeg' } });
      const audio = await relay.createPlainTransport({ routerId: router.id, comedia: true, rtcpMux: false });
      expect(video).toMatchObject({ ip: '127.0.0.1', comedia: true, rtcpMux: false });
      expect(video.rtcpPort).toBeGreaterThanOrEqual(ports.min);
      await expect(relay.connectPlainTransport(video.id, { ip: '127.0.0.1', port: 5004 })).rejects.toMatchObject({ status: 409, code: 'CONFLICT' });

      const videoProducer = await relay.createProducer({ transportId: video.id, kind: 'video', rtpParameters: ingestRtpParameters.video });
      const audioProducer = await relay.createProducer({ transportId: audio.id, kind: 'audio', rtpParameters: ingestRtpParameters.audio });
      source = testSource({ video: { ip: video.ip, port: video.port, rtcpPort: video.rtcpPort! }, audio: { ip: audio.ip, port: audio.port, rtcpPort: audio.rtcpPort! } });

      const recvTransport = await relay.createTransport({ routerId: router.id, direction: 'recv' });
      const rtpCapabilities = receiverRtpCapabilities(router.rtpCapabilities, [OPUS, VP8]);
      const consumers = {
        audio: await relay.createConsumer({ transportId: recvTransport.id, producerId: audioProducer.id, rtpCapabilities }),
        video: await relay.createConsumer({ transportId: recvTransport.id, producerId: videoProducer.id, rtpCapabilities }),
      };
      receiver = await RecvPeer.create(recvTransport, [consumers.audio, consumers.video]);
      await relay.connectTransport(recvTransport.id, receiver.dtlsParameters);
      await receiver.connected();
      await relay.resumeConsumer(consumers.audio.id);
      await relay.resumeConsumer(consumers.video.id);
      const r = receiver;
      // 2 s of each: Opus every 20 ms, VP8 at 30 frames/s (a frame is one packet or more).
      await waitFor(() => r.count(consumers.audio.id) >= 100 && r.count(consumers.video.id) >= 60, {
        timeoutMs: 20_000,
        what: `ingested audio and video at the receiver (stderr: ${source.stderr()})`,
      });

      // Reconciliation shows the plain transports with their producers.
      const state = await relay.getRouter(router.id);
      expect(state.plainTransports.map((p) => p.id).sort()).toEqual([video.id, audio.id].sort());
      expect(state.plainTransports.find((p) => p.id === video.id)).toMatchObject({ comedia: true, rtcpMux: false, appData: { source: 'ffmpeg' } });
      expect(state.plainTransports.find((p) => p.id === video.id)!.producers.map((p) => p.id)).toEqual([videoProducer.id]);

      // Closing a plain transport closes its producer and that producer's consumer.
      const events: { type: string; reason?: string }[] = [];
      const off = t.events.bus.listen((event) => void events.push(event));
      await relay.closePlainTransport(video.id);
      await waitFor(() => events.some((e) => e.type === 'consumer.closed'), { timeoutMs: 5000, what: 'consumer.closed' });
      off();
      expect(events.map((e) => [e.type, e.reason])).toEqual(
        expect.arrayContaining([
          ['producer.closed', 'transport_closed'],
          ['consumer.closed', 'producer_closed'],
          ['plainTransport.closed', 'api'],
        ]),
      );
      await relay.closeRouter(router.id);
      expect(t.media.info().counts).toMatchObject({ plainTransports: 0, producers: 0, consumers: 0 });
    } finally {
      await receiver?.close();
      await source?.stop();
      await t.close();
    }
  });
});
