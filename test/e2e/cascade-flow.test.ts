// Two relay processes on two "machines" (network namespaces with their own addresses, made here with
// `ip netns` and veth pairs on a bridge; loopback with distinct ports where that is impossible), a
// werift sender on relay A and a werift receiver on relay B: media goes A -> SRTP pipe -> B, set up by
// the typed client's pipeProducer; closing the producer on A ends the consumer on B through the
// client following A's event stream.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPipes, createRelayClient, type RelayClient } from '../../src/client/relay-client.js';
import { makeTwoHosts, type TwoHosts } from '../support/netns.js';
import { childServerRtcPorts } from '../support/ports.js';
import { SERVER_TOKEN, startServer, type ServerProcess } from '../support/server-process.js';
import { OPUS, RecvPeer, SendPeer, VP8 } from '../support/webrtc/peer.js';
import { receiverRtpCapabilities } from '../support/webrtc/sdp.js';
import { sleep, waitFor } from '../support/webrtc/wait.js';

/** Packets the receiver on B must get through the pipe: 3 s of audio (20 ms) and of video. */
const FLOWING = { audio: 150, video: 90 };

describe('cascading relays: two processes on two hosts', () => {
  let hosts: TwoHosts;
  const servers: ServerProcess[] = [];
  const peers: { close(): Promise<void> }[] = [];
  const aborts: AbortController[] = [];

  async function relayOn(host: TwoHosts['a']): Promise<{ server: ServerProcess; client: RelayClient }> {
    // One WebRtcServer port, three for pipe transports.
    const rtc = childServerRtcPorts(4);
    const server = await startServer(
      {
        MEDIASOUP_WORKERS: '1',
        RTC_MIN_PORT: String(rtc.min),
        RTC_MAX_PORT: String(rtc.max),
        MEDIASOUP_LISTEN_IP: host.ip,
        MEDIASOUP_PIPE_LISTEN_IP: host.ip,
      },
      { host: host.ip, ...(host.netns ? { netns: host.netns } : {}) },
    );
    servers.push(server);
    return { server, client: createRelayClient({ baseUrl: server.url, token: SERVER_TOKEN }) };
  }

  async function cleanup(): Promise<void> {
    for (const abort of aborts) abort.abort();
    for (const peer of peers.splice(0)) await peer.close().catch(() => {});
    for (const server of servers.splice(0)) await server.stop();
    hosts?.cleanup();
  }

  beforeAll(() => {
    hosts = makeTwoHosts();
    console.log(`cascade e2e: ${hosts.note}`);
  });
  afterAll(cleanup, 30_000);

  it('carries opus and VP8 from a sender on A to a receiver on B through the SRTP pipe, and ends B\'s consumers when A\'s producer closes', { timeout: 90_000 }, async () => {
    try {
      const [a, b] = await Promise.all([relayOn(hosts.a), relayOn(hosts.b)]);
      const relayA = a.client;
      const relayB = b.client;
      if (hosts.mode === 'netns') {
        // Each relay listens on its own host's address only.
        expect(a.server.url).toContain(hosts.a.ip);
        expect(b.server.url).toContain(hosts.b.ip);
      }

      // Sender on A.
      const roomA = await relayA.createRouter();
      const sendTransport = await relayA.createTransport({ routerId: roomA.id, direction: 'send' });
      const sender = await SendPeer.create(sendTransport);
      peers.push(sender);
      await relayA.connectTransport(sendTransport.id, sender.dtlsParameters);
      await sender.connected();
      const audioProducer = await relayA.createProducer({ transportId: sendTransport.id, kind: 'audio', rtpParameters: sender.rtpParameters.audio });
      const videoProducer = await relayA.createProducer({ transportId: sendTransport.id, kind: 'video', rtpParameters: sender.rtpParameters.video });
      sender.start();

      // The signaling server pipes both producers into a room of B, and follows A's events.
      const roomB = await relayB.createRouter();
      const pipes = createPipes();
      const from = { relay: relayA, routerId: roomA.id };
      const to = { relay: relayB, routerId: roomB.id };
      const pipedAudio = await pipes.pipeProducer({ from, to, producerId: audioProducer.id });
      const pipedVideo = await pipes.pipeProducer({ from, to, producerId: videoProducer.id });
      expect(pipedVideo.to.pipeTransportId).toBe(pipedAudio.to.pipeTransportId);
      const abort = new AbortController();
      aborts.push(abort);
      const following = pipes.followPipes(relayA.events({ routerIds: [roomA.id], signal: abort.signal }), abort.signal).catch((error: unknown) => error);

      // Receiver on B consumes the piped producers like any producer of its room.
      const recvTransport = await relayB.createTransport({ routerId: roomB.id, direction: 'recv' });
      const rtpCapabilities = receiverRtpCapabilities(roomB.rtpCapabilities, [OPUS, VP8]);
      const audio = await relayB.createConsumer({ transportId: recvTransport.id, producerId: audioProducer.id, rtpCapabilities });
      const video = await relayB.createConsumer({ transportId: recvTransport.id, producerId: videoProducer.id, rtpCapabilities });
      const receiver = await RecvPeer.create(recvTransport, [audio, video]);
      peers.push(receiver);
      await relayB.connectTransport(recvTransport.id, receiver.dtlsParameters);
      await receiver.connected();
      await relayB.resumeConsumer(audio.id);
      await relayB.resumeConsumer(video.id);
      await waitFor(() => receiver.count(audio.id) >= FLOWING.audio && receiver.count(video.id) >= FLOWING.video, {
        timeoutMs: 15_000,
        what: `${FLOWING.audio} audio and ${FLOWING.video} video packets on B through the pipe (${hosts.mode})`,
      });
      // Video reached B starting with a keyframe: B's PLI went back through the pipe to the sender.
      expect(receiver.received.get(video.id)![0]!.keyframe).toBe(true);
      expect(sender.pliCount).toBeGreaterThan(0);
      // The pipe is SRTP (the default) on both sides.
      const stateA = await relayA.getRouter(roomA.id);
      expect(stateA.pipeTransports).toHaveLength(1);
      expect(stateA.pipeTransports[0]!.consumers.map((c) => c.producerId).sort()).toEqual([audioProducer.id, videoProducer.id].sort());

      // Closing the producer on A: the pipe consumer on A closes, the client closes the piped producer
      // on B, B's consumer of it closes (404) and its packets stop while the sender still sends.
      await relayA.closeProducer(audioProducer.id);
      await waitFor(async () => !(await relayB.getRouter(roomB.id)).pipeTransports[0]!.producers.some((p) => p.id === audioProducer.id), {
        timeoutMs: 10_000,
        what: "the piped producer closed on B after A's producer closed",
      });
      await expect(relayB.resumeConsumer(audio.id)).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });
      await sleep(300);
      const audioAtClose = receiver.count(audio.id);
      const videoAtClose = receiver.count(video.id);
      const sentAtClose = sender.sent.audio;
      await sleep(800);
      expect(sender.sent.audio - sentAtClose).toBeGreaterThan(25);
      expect(receiver.count(audio.id)).toBe(audioAtClose);
      expect(receiver.count(video.id)).toBeGreaterThan(videoAtClose + 10);
      expect(pipes.piped().map((p) => p.producerId)).toEqual([videoProducer.id]);

      sender.stop();
      abort.abort();
      expect(await following).toBeUndefined();
      await relayA.closeRouter(roomA.id);
      await relayB.closeRouter(roomB.id);
      for (const relay of [relayA, relayB]) {
        const { counts } = await relay.info();
        expect(Object.values(counts).every((n) => n === 0), JSON.stringify(counts)).toBe(true);
      }
    } finally {
      await cleanup();
    }
  });
});
