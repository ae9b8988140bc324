// Real media through a room spread over two workers: a werift sender on worker 1, werift
// receivers on worker 2, the producer piped between them by the relay. Driven only through the HTTP
// API (the typed client, with app.request as its fetch), as a signaling server drives it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayClient, type RelayClient } from '../../src/client/relay-client.js';
import type { RelayEvent } from '../../src/relay/contract/events.js';
import { allocateRtcPorts, buildTestApp, TEST_INTERNAL_TOKEN, type TestApp } from '../support/app.js';
import { OPUS, RecvPeer, SendPeer, VP8 } from '../support/webrtc/peer.js';
import type { ReadPacket } from '../support/webrtc/rtp.js';
import { receiverRtpCapabilities } from '../support/webrtc/sdp.js';
import { sleep, waitFor } from '../support/webrtc/wait.js';

/** Video packets each receiver must get after resume: 3 s at 30 frames/s. */
const FLOWING = 90;

describe('real media through a room over two workers', () => {
  let t: TestApp;
  let relay: RelayClient;
  const peers: { close(): Promise<void> }[] = [];
  const events: RelayEvent[] = [];

  beforeAll(async () => {
    const ports = allocateRtcPorts(8);
    t = await buildTestApp({ MEDIASOUP_WORKERS: '2', MEDIASOUP_WORKER_MAX_CONSUMERS: '1', RTC_MIN_PORT: String(ports.min), RTC_MAX_PORT: String(ports.max) });
    relay = createRelayClient({ baseUrl: 'http://relay.test', token: TEST_INTERNAL_TOKEN, fetch: t.app.request });
    t.events.bus.listen((event) => events.push(event));
  });
  afterAll(async () => {
    for (const peer of peers) await peer.close().catch(() => {});
    await t?.close();
  });

  it('receivers on worker 2 get contiguous media from a producer on worker 1; pause stops it; close closes them and the pipe', { timeout: 60_000 }, async () => {
    const router = await relay.createRouter();
    const sendTransport = await relay.createTransport({ routerId: router.id, direction: 'send' });
    const sender = await SendPeer.create(sendTransport);
    peers.push(sender);
    await relay.connectTransport(sendTransport.id, sender.dtlsParameters);
    await sender.connected();
    const producer = await relay.createProducer({ transportId: sendTransport.id, kind: 'video', rtpParameters: sender.rtpParameters.video });
    sender.start();
    const rtpCapabilities = receiverRtpCapabilities(router.rtpCapabilities, [OPUS, VP8]);

    // One consumer on the producer's own worker fills it (MEDIASOUP_WORKER_MAX_CONSUMERS=1).
    const local = await relay.createTransport({ routerId: router.id, direction: 'recv' });
    await relay.createConsumer({ transportId: local.id, producerId: producer.id, rtpCapabilities });
    const far = [await relay.createTransport({ routerId: router.id, direction: 'recv' }), await relay.createTransport({ routerId: router.id, direction: 'recv' })];
    const pidOf = async (transportId: string) => (await relay.getRouter(router.id)).transports.find((tr) => tr.id === transportId)!.workerPid;
    const home = await pidOf(sendTransport.id);
    for (const transport of far) expect(await pidOf(transport.id)).not.toBe(home);

    const receivers: RecvPeer[] = [];
    const consumers: Awaited<ReturnType<RelayClient['createConsumer']>>[] = [];
    for (const transport of far) {
      const consumer = await relay.createConsumer({ transportId: transport.id, producerId: producer.id, rtpCapabilities });
      const receiver = await RecvPeer.create(transport, [consumer]);
      peers.push(receiver);
      await relay.connectTransport(transport.id, receiver.dtlsParameters);
      await receiver.connected();
      consumers.push(consumer);
      receivers.push(receiver);
    }
    // One pipe to worker 2, shared by both consumers there.
    expect(t.roomOf(router.id)!.pipes.get(producer.id)?.size).toBe(1);

    for (const consumer of consumers) await relay.resumeConsumer(consumer.id);
    await waitFor(() => receivers.every((r, i) => r.count(consumers[i]!.id) >= FLOWING), { timeoutMs: 15_000, what: `${FLOWING} video packets on each receiver` });
    sender.stop();
    const last = sender.sent.video - 1;
    await waitFor(() => receivers.every((r, i) => r.received.get(consumers[i]!.id)!.at(-1)?.index === last), { timeoutMs: 3000, what: 'the last packet sent to arrive' });
    for (const [i, receiver] of receivers.entries()) {
      const packets = receiver.received.get(consumers[i]!.id)!;
      expectContiguous(packets, last);
      expect(packets[0]!.keyframe).toBe(true);
    }

    // Producer paused: the sender keeps sending, nothing more reaches worker 2's receivers.
    sender.start();
    await waitFor(() => receivers.every((r, i) => r.count(consumers[i]!.id) > FLOWING + 10), { timeoutMs: 5000, what: 'video flowing again' });
    const seen = events.length;
    await relay.pauseProducer(producer.id);
    const pausedEvent = (id: string) => events.slice(seen).find((e) => e.type === 'consumer.paused' && e.consumerId === id);
    await waitFor(() => consumers.every((c) => pausedEvent(c.id) !== undefined), { timeoutMs: 3000, what: 'consumer.paused on worker 2' });
    for (const consumer of consumers) expect(pausedEvent(consumer.id)).toMatchObject({ by: 'producer' });
    await sleep(200); // packets already on the wire
    const atPause = receivers.map((r, i) => r.count(consumers[i]!.id));
    const sentAtPause = sender.sent.video;
    await sleep(1000);
    expect(sender.sent.video - sentAtPause).toBeGreaterThan(15);
    expect(receivers.map((r, i) => r.count(consumers[i]!.id))).toEqual(atPause);

    // Producer closed: the consumers on worker 2 close (events say producer_closed), and so does the pipe.
    const copy = [...t.roomOf(router.id)!.pipes.get(producer.id)!.values()][0]!;
    const beforeClose = events.length;
    await relay.closeProducer(producer.id);
    for (const consumer of consumers) {
      // The registry closes them with the producer, before the API answers.
      expect(events.slice(beforeClose).find((e) => e.type === 'consumer.closed' && e.consumerId === consumer.id)).toMatchObject({ reason: 'producer_closed' });
      await expect(relay.resumeConsumer(consumer.id)).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });
    }
    await waitFor(() => copy.pipeConsumer!.closed, { timeoutMs: 3000, what: 'the pipe to close' });
    expect(t.roomOf(router.id)!.pipes.has(producer.id)).toBe(false);
    sender.stop();
    expect(sender.sendErrors).toEqual([]);
    await relay.closeRouter(router.id);
    for (const slot of t.media.pool.slots) expect(((await slot.worker!.dump()) as { routerIds: string[] }).routerIds).toEqual([]);
  });
});

/** Every index from the first received up to `lastSent`, once each and in order; RTP sequence numbers likewise. */
function expectContiguous(packets: ReadPacket[], lastSent: number): void {
  const first = packets[0]!.index;
  expect(packets.map((p) => p.index)).toEqual(Array.from({ length: lastSent - first + 1 }, (_, i) => first + i));
  const seq0 = packets[0]!.sequenceNumber;
  expect(packets.map((p) => p.sequenceNumber)).toEqual(packets.map((_, i) => (seq0 + i) & 0xffff));
}
