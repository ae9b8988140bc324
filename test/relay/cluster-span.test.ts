// One room over three machines (issue 40): the room is made on A, whose CLUSTER_NODE_MAX_CONSUMERS of 0
// sends every new transport of it to another node; a sender's plain transport lands on B, a receiver's on
// C, and the producer on B is piped to C once, under its own id. The same with werift peers (WebRTC
// audio and video, and a data channel). Three server processes with their own HTTP, RTC and pipe ports,
// one private redis-server; RTP counted at the receiver's socket or peer.
import dgram from 'node:dgram';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { answerOf, anyJson, expectRelayAnswer, fuzzParameters, mutated } from '../reliability/support/fuzz.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OwnRedis } from '../support/redis-server.js';
import { freePort, startServerAt, type ServerProcess } from '../support/server-process.js';
import { call, internalHeaders as headers, ok } from '../support/cluster-calls.js';
import { REDIS_SERVER, skipWithout } from '../support/system-programs.js';
import { opusPacket } from '../support/webrtc/rtp.js';
import { sleep, waitFor } from '../support/webrtc/wait.js';
import { followEvents } from '../support/event-stream.js';
import { DataPeer } from '../support/webrtc/data.js';
import { OPUS as OPUS_CODEC, RecvPeer, SendPeer, VP8 } from '../support/webrtc/peer.js';
import { receiverRtpCapabilities } from '../support/webrtc/sdp.js';

/** Every event of `server`'s stream from now on, as they come, until stop(). */
const follow = (server: ServerProcess) => followEvents(server.url, headers);

const SSRC = 22_222;
const OPUS = { kind: 'audio', rtpParameters: { codecs: [{ mimeType: 'audio/opus', payloadType: 111, clockRate: 48000, channels: 2 }], encodings: [{ ssrc: SSRC }] } };

describe.skipIf(skipWithout(REDIS_SERVER))('one room over three machines', () => {
  let redis: OwnRedis;
  const servers: ServerProcess[] = [];
  let a: ServerProcess;
  let b: ServerProcess;
  let c: ServerProcess;
  const start = async (id: string, maxConsumers: string) => {
    const server = await startServerAt(
      (port) => ({ REDIS_URL: redis.url, CLUSTER_NODE_ID: id, CLUSTER_NODE_URL: `http://127.0.0.1:${port}`, CLUSTER_NODE_MAX_CONSUMERS: maxConsumers, MEDIASOUP_PIPE_LISTEN_IP: '127.0.0.1' }),
      { rtcPorts: 6 },
    );
    servers.push(server);
    return server;
  };

  beforeAll(async () => {
    redis = new OwnRedis(await freePort());
    await redis.start();
    [a, b, c] = await Promise.all([start('node-a', '0'), start('node-b', '1'), start('node-c', '1000')]);
    for (const server of [a, b, c]) {
      await waitFor(async () => (await call(server, 'GET', '/cluster')).body.nodes.length >= 3, { timeoutMs: 10_000, intervalMs: 100, what: 'three nodes' });
    }
  }, 90_000);

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await redis?.kill();
  });

  /** Where `id` is held now (asked of each node itself), or undefined. */
  const where = async (id: string) => {
    for (const server of [a, b, c]) {
      if (server.child.exitCode !== null || server.child.signalCode !== null) continue;
      const found = await call(server, 'GET', `/cluster/resources/${id}`, undefined, { 'X-Cluster-Forwarded-By': 'test' });
      if (found.status === 200) return found.body.nodeId as string;
    }
    return undefined;
  };

  /** Placement reads heartbeats (1 s): wait until A sees no transport left on any node (an earlier test's room gone), so ties go by id. */
  const emptyAsASees = () =>
    waitFor(async () => (await call(a, 'GET', '/cluster')).body.nodes.every((n: { load: { consumers: number; transports: number } }) => n.load.consumers === 0 && n.load.transports === 0), {
      timeoutMs: 5_000,
      intervalMs: 100,
      what: 'no transport left on any node, as A sees them',
    });

  /**
   * A room made on A (past its limit of 0 consumers: its new transports go elsewhere); a sender's plain
   * transport asked of B lands on B with an opus producer; a second transport, and a consumer, on B (the
   * room's node under its limit of 1) fill B; then a receiver's transport asked of C lands on C, whose
   * consumer gets the producer piped from B. RTP flows to the receiver's socket; every node's stream read.
   */
  async function spanningCall({ dataSender = false } = {}) {
    // Placement reads heartbeats: start from B and C empty as A sees them (an earlier test's call gone).
    await emptyAsASees();
    const made = await call(a, 'POST', '/routers', {}, { 'X-Cluster-Forwarded-By': 'test' });
    expect(made.status).toBe(201);
    const routerId = made.body.id as string;
    const rtpCapabilities = made.body.rtpCapabilities;
    const sender = await call(b, 'POST', '/plain-transports', { routerId, comedia: true });
    expect(sender.status, JSON.stringify(sender.body)).toBe(201);
    expect(await where(sender.body.id)).toBe('node-b');
    // The room is still A's: only A answers for it, and the cluster lists it once.
    expect(await where(routerId)).toBe('node-a');
    expect((await call(c, 'GET', '/routers')).body.routers.filter((r: { id: string }) => r.id === routerId)).toHaveLength(1);
    // A data sender's WebRTC transport (SCTP) on B too, while B is under its limit.
    const dataSend = dataSender ? await call(b, 'POST', '/transports', { routerId, direction: 'send', enableSctp: true }) : undefined;
    if (dataSend) {
      expect(dataSend.status, JSON.stringify(dataSend.body)).toBe(201);
      expect(await where(dataSend.body.id)).toBe('node-b');
    }
    const producer = await call(c, 'POST', '/producers', { transportId: sender.body.id, ...OPUS });
    expect(producer.status, JSON.stringify(producer.body)).toBe(201);
    const producerId = producer.body.id as string;
    expect(await where(producerId)).toBe('node-b');
    // Asked of C, carried to A, placed by A on B: C remembers it on B, not on A (x-cluster-held-by).
    const local = await call(c, 'POST', '/plain-transports', { routerId, comedia: false });
    expect(local.status, JSON.stringify(local.body)).toBe(201);
    expect(await where(local.body.id)).toBe('node-b');
    const localConsumer = await call(c, 'POST', '/consumers', { transportId: local.body.id, producerId, rtpCapabilities });
    expect(localConsumer.status, JSON.stringify(localConsumer.body)).toBe(201);
    await waitFor(async () => (await call(a, 'GET', '/cluster')).body.nodes.find((n: { id: string }) => n.id === 'node-b').load.consumers >= 1, { timeoutMs: 5_000, intervalMs: 100, what: "B's load on A" });

    const socket = dgram.createSocket('udp4');
    const sending = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const counted = { received: 0 };
    socket.on('message', (message) => {
      if (message.length > 12 && (message[1]! & 0x7f) !== 72 && message.readUInt32BE(8) !== 0) counted.received++;
    });
    // Each node streams its own events (on a shared PostgreSQL every node's too): read all three, each event once.
    const streams = await Promise.all([a, b, c].map(follow));
    let timer: NodeJS.Timeout | undefined;
    const stop = () => {
      clearInterval(timer);
      for (const one of streams) one.stop();
      socket.close();
      sending.close();
    };
    try {
      const receiver = await call(c, 'POST', '/plain-transports', { routerId, comedia: false });
      expect(receiver.status, JSON.stringify(receiver.body)).toBe(201);
      expect(await where(receiver.body.id)).toBe('node-c');
      expect((await call(a, 'POST', `/plain-transports/${receiver.body.id}/connect`, { ip: '127.0.0.1', port: socket.address().port })).status).toBe(200);
      const consumer = await call(b, 'POST', '/consumers', { transportId: receiver.body.id, producerId, rtpCapabilities });
      expect(consumer.status, JSON.stringify(consumer.body)).toBe(201);
      expect(consumer.body).toMatchObject({ producerId, kind: 'audio' });
      const consumerId = consumer.body.id as string;
      expect(await where(consumerId)).toBe('node-c');
      expect((await call(a, 'POST', `/consumers/${consumerId}/resume`)).status).toBe(200);
      // Opus every 20 ms into B's plain transport.
      let seq = 0;
      timer = setInterval(() => {
        const packet = opusPacket(seq, seq, seq * 960);
        packet.header.ssrc = SSRC;
        packet.header.payloadType = 111;
        sending.send(packet.serialize(), sender.body.port as number, sender.body.ip as string);
        seq++;
      }, 20);
      await waitFor(() => counted.received >= 25, { timeoutMs: 5_000, intervalMs: 50, what: 'RTP at the receiver on C' });
      const seen = () => [...new Map(streams.flatMap((one) => one.events).map((event) => [`${event.nodeId}:${event.id}`, event])).values()];
      return { dataSend: dataSend?.body, rtpCapabilities, routerId, sender: sender.body.id as string, local: local.body.id as string, receiver: receiver.body.id as string, producerId, consumerId, counted, seen, stop };
    } catch (error) {
      stop();
      throw error;
    }
  }

  it('places the sender on B and the receiver on C, pipes the producer B→C once: RTP arrives, pause and resume reach it, any node lists the whole room, closing it through C closes every part', { timeout: 60_000 }, async () => {
    const { routerId, rtpCapabilities, sender, local, receiver, producerId, consumerId, counted, seen, stop } = await spanningCall();
    try {
      // Every node answers the whole room: both transports, wherever they are.
      for (const server of [a, b, c]) {
        const room = await call(server, 'GET', `/routers/${routerId}`);
        expect(room.status).toBe(200);
        const ids = room.body.plainTransports.map((t: { id: string }) => t.id).sort();
        expect(ids).toEqual([sender, local, receiver].sort());
        expect(room.body.counts).toMatchObject({ producers: 1, consumers: 2 });
      }

      // Pause through A reaches the copy on C before the answer: nothing more arrives; resume: it flows again.
      expect((await call(a, 'POST', `/producers/${producerId}/pause`)).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const paused = counted.received;
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect(counted.received - paused).toBeLessThanOrEqual(1);
      const state = await call(b, 'GET', `/routers/${routerId}`);
      const consumerState = state.body.plainTransports.flatMap((t: { consumers: unknown[] }) => t.consumers).find((x: { id: string }) => x.id === consumerId);
      expect(consumerState).toMatchObject({ producerPaused: true });
      expect((await call(c, 'POST', `/producers/${producerId}/resume`)).status).toBe(200);
      const resumed = counted.received;
      await waitFor(() => counted.received >= resumed + 20, { timeoutMs: 5_000, intervalMs: 50, what: 'RTP again after resume' });

      // The pipe's ends hold ports of RTC_MIN_PORT-RTC_MAX_PORT, counted with the plain transports': C (5
      // ports beyond its WebRtcServer) holds the receiver's and one copy's, a second consumer of the producer
      // on C reusing that copy, so a room of its own gets 3 more.
      const second = await call(a, 'POST', '/consumers', { transportId: receiver, producerId, rtpCapabilities });
      expect(second.status, JSON.stringify(second.body)).toBe(201);
      expect(await where(second.body.id)).toBe('node-c');
      /** Plain transports a room of C's own gets before the ports run out, and the refusal. */
      const plainLeftOnC = async () => {
        const own = await call(c, 'POST', '/routers', {}, { 'X-Cluster-Forwarded-By': 'test' });
        let made = 0;
        let refused: { status: number; body: any } | undefined;
        for (let i = 0; i < 6 && !refused; i++) {
          const plain = await call(c, 'POST', '/plain-transports', { routerId: own.body.id });
          if (plain.status === 201) made++;
          else refused = plain;
        }
        expect((await call(c, 'DELETE', `/routers/${own.body.id}`)).status).toBe(204);
        return { made, refused };
      };
      const before = await plainLeftOnC();
      expect(before.made).toBe(3);
      expect(before.refused).toMatchObject({ status: 500, body: { code: 'MEDIASOUP_ERROR', details: { ports: 5, used: 5 } } });
      // The copy goes with the last of its consumers on C (its pipe's port with it); one consumer left keeps it.
      expect((await call(b, 'DELETE', `/consumers/${second.body.id}`)).status).toBe(204);
      expect((await plainLeftOnC()).made).toBe(3);
      expect((await call(b, 'DELETE', `/consumers/${consumerId}`)).status).toBe(204);
      expect((await plainLeftOnC()).made).toBe(4);

      // Closing the room through C (carried to A) closes every part on every node, with the usual events.
      const ofRoom = () => seen().filter((event) => event.routerId === routerId);
      expect((await call(c, 'DELETE', `/routers/${routerId}`)).status).toBe(204);
      await waitFor(
        () => ofRoom().filter((event) => event.type === 'plainTransport.closed').length === 3 && ['router.closed', 'producer.closed', 'consumer.closed'].every((type) => ofRoom().some((event) => event.type === type)),
        { timeoutMs: 5_000, intervalMs: 50, what: 'the close events' },
      );
      const closed = ofRoom().filter((event) => event.type.endsWith('.closed'));
      expect(closed.find((event) => event.type === 'router.closed')).toMatchObject({ routerId, nodeId: 'node-a', reason: 'api' });
      expect(closed.filter((event) => event.type === 'router.closed')).toHaveLength(1);
      expect(closed.filter((event) => event.type === 'plainTransport.closed').map((event) => [event.plainTransportId, event.nodeId, event.reason]).sort()).toEqual(
        [
          [sender, 'node-b', 'router_closed'],
          [local, 'node-b', 'router_closed'],
          [receiver, 'node-c', 'router_closed'],
        ].sort(),
      );
      for (const id of [routerId, sender, local, receiver, producerId, consumerId]) expect(await where(id)).toBeUndefined();
      for (const server of [a, b, c]) expect((await call(server, 'GET', `/routers/${routerId}`)).status).toBe(404);
    } finally {
      stop();
    }
  });

  it('pipes a data producer B→C once: a werift data channel on B reaches a werift peer on C, in order; its close closes the consumer on C', { timeout: 60_000 }, async () => {
    const { routerId, dataSend, seen, stop } = await spanningCall({ dataSender: true });
    const peers: DataPeer[] = [];
    try {
      const sender = await DataPeer.create(dataSend);
      peers.push(sender);
      expect((await call(a, 'POST', `/transports/${dataSend.id}/connect`, { dtlsParameters: sender.dtlsParameters })).status).toBe(200);
      const dataProducer = await call(c, 'POST', '/data-producers', { transportId: dataSend.id, label: 'chat', protocol: 'text' });
      expect(dataProducer.status, JSON.stringify(dataProducer.body)).toBe(201);
      expect(await where(dataProducer.body.id)).toBe('node-b');

      // B is at its limit now: the receiver's transport goes to C, and its data consumer with it.
      const recv = await call(b, 'POST', '/transports', { routerId, direction: 'recv', enableSctp: true });
      expect(recv.status, JSON.stringify(recv.body)).toBe(201);
      expect(await where(recv.body.id)).toBe('node-c');
      const receiver = await DataPeer.create(recv.body);
      peers.push(receiver);
      expect((await call(a, 'POST', `/transports/${recv.body.id}/connect`, { dtlsParameters: receiver.dtlsParameters })).status).toBe(200);
      const dataConsumer = await call(a, 'POST', '/data-consumers', { transportId: recv.body.id, dataProducerId: dataProducer.body.id });
      expect(dataConsumer.status, JSON.stringify(dataConsumer.body)).toBe(201);
      expect(dataConsumer.body).toMatchObject({ dataProducerId: dataProducer.body.id, label: 'chat', protocol: 'text', sctpStreamParameters: { ordered: true } });
      expect(await where(dataConsumer.body.id)).toBe('node-c');
      // A second consumer on C reuses the copy: the data producer's id still names one thing on C.
      const second = await call(b, 'POST', '/data-consumers', { transportId: recv.body.id, dataProducerId: dataProducer.body.id });
      expect(second.status, JSON.stringify(second.body)).toBe(201);
      expect(await where(dataProducer.body.id)).toBe('node-b');

      await Promise.all([sender.connected(), receiver.connected()]);
      const received: string[] = [];
      const inbound = receiver.channel('chat', dataConsumer.body.sctpStreamParameters, 'text');
      inbound.onMessage.subscribe((message) => received.push(typeof message === 'string' ? message : message.toString('utf8')));
      const outbound = sender.channel('chat', dataProducer.body.sctpStreamParameters, 'text');
      await waitFor(() => outbound.readyState === 'open' && inbound.readyState === 'open', { timeoutMs: 10_000, what: 'both data channels open' });
      const sent = Array.from({ length: 50 }, (_, i) => `message ${i} ${'x'.repeat(i * 20)}`);
      for (const text of sent) outbound.send(text);
      await waitFor(() => received.length >= sent.length, { timeoutMs: 10_000, intervalMs: 50, what: `50 messages on C (got ${received.length})` });
      expect(received).toEqual(sent);

      // The data producer closed through A (carried to B): both consumers on C close with data_producer_closed.
      expect((await call(a, 'DELETE', `/data-producers/${dataProducer.body.id}`)).status).toBe(204);
      await waitFor(() => seen().filter((event) => event.type === 'dataConsumer.closed').length >= 2, { timeoutMs: 5_000, intervalMs: 50, what: 'the data consumers closed' });
      expect(
        seen()
          .filter((event) => event.type === 'dataConsumer.closed')
          .map((event) => [event.dataConsumerId, event.nodeId, event.reason])
          .sort(),
      ).toEqual(
        [
          [dataConsumer.body.id, 'node-c', 'data_producer_closed'],
          [second.body.id, 'node-c', 'data_producer_closed'],
        ].sort(),
      );
      for (const id of [dataProducer.body.id, dataConsumer.body.id, second.body.id]) expect(await where(id)).toBeUndefined();
      expect((await call(c, 'DELETE', `/routers/${routerId}`)).status).toBe(204);
    } finally {
      for (const peer of peers) await peer.close().catch(() => {});
      stop();
    }
  });

  it('a werift sender placed on B and a werift receiver on C of a room made on A: RTP arrives, pause and resume reach it, any node lists the whole room, closing it through B closes every part', { timeout: 60_000 }, async () => {
    const peers: { close(): Promise<void> }[] = [];
    // Placement reads heartbeats: start from every node empty as A sees them.
    await emptyAsASees();
    // 1. The room, made on A itself (a call marked as forwarded is answered where it lands).
    const made = await call(a, 'POST', '/routers', {}, { 'X-Cluster-Forwarded-By': 'test' });
    expect(made.status).toBe(201);
    const routerId = made.body.id as string;
    expect(await where(routerId)).toBe('node-a');
    const rtpCapabilities = receiverRtpCapabilities(made.body.rtpCapabilities, [OPUS_CODEC, VP8]);

    // Each node streams its own events: read all three, each event once.
    const streams = await Promise.all([a, b, c].map(follow));
    const seen = () => [...new Map(streams.flatMap((one) => one.events).map((event) => [`${event.nodeId}:${event.id}`, event])).values()];
    try {
      // 2. The sender: its transport asked of B lands on B (A is at its limit of 0; B and C are empty, B's id first).
      const sendTransport = await ok(b, 'POST', '/transports', { routerId, direction: 'send' });
      expect(await where(sendTransport.id)).toBe('node-b');
      const sender = await SendPeer.create(sendTransport);
      peers.push(sender);
      await ok(b, 'POST', `/transports/${sendTransport.id}/connect`, { dtlsParameters: sender.dtlsParameters });
      await sender.connected();
      // Its producers made through C: carried to B, where the transport is.
      const audioProducer = await ok(c, 'POST', '/producers', { transportId: sendTransport.id, kind: 'audio', rtpParameters: sender.rtpParameters.audio });
      const videoProducer = await ok(c, 'POST', '/producers', { transportId: sendTransport.id, kind: 'video', rtpParameters: sender.rtpParameters.video });
      expect(await where(audioProducer.id)).toBe('node-b');
      expect(await where(videoProducer.id)).toBe('node-b');
      sender.start();

      // 3. B filled to its limit of 1: a second transport, through A, goes to the room's node under its limit (B), with one consumer.
      const filler = await ok(a, 'POST', '/transports', { routerId, direction: 'recv' });
      expect(await where(filler.id)).toBe('node-b');
      const fillerConsumer = await ok(a, 'POST', '/consumers', { transportId: filler.id, producerId: audioProducer.id, rtpCapabilities });
      expect(await where(fillerConsumer.id)).toBe('node-b');
      await waitFor(async () => (await call(a, 'GET', '/cluster')).body.nodes.find((n: { id: string }) => n.id === 'node-b').load.consumers >= 1, { timeoutMs: 5_000, intervalMs: 100, what: "B's load on A" });

      // 4. The receiver: its transport asked of C lands on C (B is full), its consumers asked through B land there too.
      const recvTransport = await ok(c, 'POST', '/transports', { routerId, direction: 'recv' });
      expect(await where(recvTransport.id)).toBe('node-c');
      const audio = await ok(b, 'POST', '/consumers', { transportId: recvTransport.id, producerId: audioProducer.id, rtpCapabilities });
      const video = await ok(b, 'POST', '/consumers', { transportId: recvTransport.id, producerId: videoProducer.id, rtpCapabilities });
      expect(audio).toMatchObject({ producerId: audioProducer.id, kind: 'audio' });
      expect(video).toMatchObject({ producerId: videoProducer.id, kind: 'video' });
      expect(await where(audio.id)).toBe('node-c');
      expect(await where(video.id)).toBe('node-c');
      const receiver = await RecvPeer.create(recvTransport, [audio, video]);
      peers.push(receiver);
      await ok(c, 'POST', `/transports/${recvTransport.id}/connect`, { dtlsParameters: receiver.dtlsParameters });
      await receiver.connected();
      for (const consumer of [audio, video]) await ok(c, 'POST', `/consumers/${consumer.id}/resume`);
      const flowing = Date.now();
      await waitFor(() => receiver.count(audio.id) >= 50 && receiver.count(video.id) >= 30, { timeoutMs: 10_000, what: `audio and video at the receiver on C (audio ${receiver.count(audio.id)}, video ${receiver.count(video.id)})` });
      console.log(`RTP at the receiver on C ${Date.now() - flowing} ms after the resume: audio ${receiver.count(audio.id)}, video ${receiver.count(video.id)} (sent ${sender.sent.audio}/${sender.sent.video})`);

      // 5. Every node answers the whole room: the three transports, wherever they are, and its counts.
      const transportIds = [sendTransport.id, filler.id, recvTransport.id].sort();
      for (const server of [a, b, c]) {
        const room = await ok(server, 'GET', `/routers/${routerId}`);
        expect(room.transports.map((t: { id: string }) => t.id).sort(), `the room through ${server.url}`).toEqual(transportIds);
        expect(room.counts).toMatchObject({ transports: 3, producers: 2, consumers: 3 });
      }

      // 6. The video producer paused through A: the copy on C stops, the audio goes on; resumed through C: video again.
      const videoConsumer = async () => (await ok(b, 'GET', `/routers/${routerId}`)).transports.find((t: { id: string }) => t.id === recvTransport.id).consumers.find((x: { id: string }) => x.id === video.id);
      const audioBefore = receiver.count(audio.id);
      expect(await ok(a, 'POST', `/producers/${videoProducer.id}/pause`)).toMatchObject({ id: videoProducer.id, paused: true });
      expect(await videoConsumer()).toMatchObject({ paused: false, producerPaused: true });
      await sleep(300); // packets already on the wire
      const stopped = receiver.count(video.id);
      const audioStopped = receiver.count(audio.id);
      await sleep(1_000);
      const videoWhilePaused = receiver.count(video.id) - stopped;
      const audioWhilePaused = receiver.count(audio.id) - audioStopped;
      expect(videoWhilePaused).toBeLessThanOrEqual(1);
      expect(audioWhilePaused).toBeGreaterThanOrEqual(30); // 50 a second sent
      expect(await ok(c, 'POST', `/producers/${videoProducer.id}/resume`)).toMatchObject({ id: videoProducer.id, paused: false });
      expect(await videoConsumer()).toMatchObject({ paused: false, producerPaused: false });
      const resumedAt = Date.now();
      await waitFor(() => receiver.count(video.id) > stopped + videoWhilePaused + 10, { timeoutMs: 3_000, what: 'video again after the resume through C' });
      console.log(
        `paused through A: video +${videoWhilePaused} and audio +${audioWhilePaused} at the receiver in 1 s; resumed through C: 10 video packets in ${Date.now() - resumedAt} ms; audio +${receiver.count(audio.id) - audioBefore} over the pause and resume`,
      );

      // 7. The room closed through B (carried to A): every part on every node closes, with the usual events.
      const ids = { routerId, transports: transportIds, producers: [audioProducer.id, videoProducer.id], consumers: [fillerConsumer.id, audio.id, video.id] };
      expect((await call(b, 'DELETE', `/routers/${routerId}`)).status).toBe(204);
      const closedOf = (type: string, key: string) => seen().filter((event) => event.type === type && event.routerId === routerId).map((event) => event[key] as string);
      await waitFor(
        () =>
          closedOf('router.closed', 'routerId').length >= 1 &&
          ids.transports.every((id) => closedOf('transport.closed', 'transportId').includes(id)) &&
          ids.producers.every((id) => closedOf('producer.closed', 'producerId').includes(id)) &&
          ids.consumers.every((id) => closedOf('consumer.closed', 'consumerId').includes(id)),
        { timeoutMs: 5_000, intervalMs: 50, what: 'the close events' },
      );
      const closed = seen().filter((event) => event.type.endsWith('.closed'));
      console.log('close events:', closed.map((event) => `${event.type}@${event.nodeId}:${event.reason}`).join(', '));
      expect(closed.filter((event) => event.type === 'router.closed')).toHaveLength(1);
      expect(closed.find((event) => event.type === 'router.closed')).toMatchObject({ routerId, nodeId: 'node-a', reason: 'api' });
      expect(closed.filter((event) => event.type === 'transport.closed').map((event) => [event.transportId, event.nodeId, event.reason]).sort()).toEqual(
        [
          [sendTransport.id, 'node-b', 'router_closed'],
          [filler.id, 'node-b', 'router_closed'],
          [recvTransport.id, 'node-c', 'router_closed'],
        ].sort(),
      );
      for (const id of ids.producers) expect(closed.filter((event) => event.type === 'producer.closed' && event.producerId === id).map((event) => event.nodeId)).toEqual(['node-b']);
      expect(closed.filter((event) => event.type === 'consumer.closed').map((event) => [event.consumerId, event.nodeId]).sort()).toEqual(
        [
          [fillerConsumer.id, 'node-b'],
          [audio.id, 'node-c'],
          [video.id, 'node-c'],
        ].sort(),
      );
      for (const id of [routerId, ...ids.transports, ...ids.producers, ...ids.consumers]) expect(await where(id), id).toBeUndefined();
      for (const server of [a, b, c]) expect((await call(server, 'GET', `/routers/${routerId}`)).status).toBe(404);
      expect(sender.sendErrors).toEqual([]);
    } finally {
      for (const one of streams) one.stop();
      for (const peer of peers.splice(0)) await peer.close().catch(() => {});
    }
  });

  it("hears a speaker on B in the room's observers on A: router.audioLevels and router.activeSpeaker from A name B's producer with its appData", { timeout: 60_000 }, async () => {
    await emptyAsASees();
    const made = await call(a, 'POST', '/routers', { speakerDetection: { activeSpeaker: true, audioLevels: { intervalMs: 300, thresholdDb: -70 } } }, { 'X-Cluster-Forwarded-By': 'test' });
    expect(made.status).toBe(201);
    const routerId = made.body.id as string;
    const stream = await follow(a);
    const peers: { close(): Promise<void> }[] = [];
    let timer: NodeJS.Timeout | undefined;
    try {
      // A at its limit of 0: the speaker's transport lands on B.
      const transport = await ok(c, 'POST', '/transports', { routerId, direction: 'send' });
      expect(await where(transport.id)).toBe('node-b');
      const peer = await SendPeer.create(transport, { audioLevel: 20 });
      peers.push(peer);
      await ok(c, 'POST', `/transports/${transport.id}/connect`, { dtlsParameters: peer.dtlsParameters });
      await peer.connected();
      const producer = await ok(b, 'POST', '/producers', { transportId: transport.id, kind: 'audio', rtpParameters: peer.rtpParameters.audio, appData: { user: 'bob' } });
      expect(await where(producer.id)).toBe('node-b');
      timer = setInterval(() => peer.sendAudio(), 20);
      const ofType = (type: string) => stream.events.filter((event) => event.type === type && event.routerId === routerId);
      await waitFor(() => ofType('router.audioLevels').length >= 2 && ofType('router.activeSpeaker').length >= 1, { timeoutMs: 10_000, intervalMs: 50, what: "the room's speaker events on A" });
      for (const levels of ofType('router.audioLevels')) {
        expect(levels.nodeId).toBe('node-a');
        expect(levels.volumes).toEqual([{ producerId: producer.id, volume: expect.any(Number), appData: { user: 'bob' } }]);
      }
      expect(ofType('router.activeSpeaker')[0]).toMatchObject({ nodeId: 'node-a', producerId: producer.id, appData: { user: 'bob' } });
      // The producer closed on B: its copy on A leaves the observers, which fall silent.
      expect((await call(a, 'DELETE', `/producers/${producer.id}`)).status).toBe(204);
      await waitFor(() => ofType('router.silence').length >= 1, { timeoutMs: 5_000, intervalMs: 50, what: 'router.silence on A' });
      expect((await call(b, 'DELETE', `/routers/${routerId}`)).status).toBe(204);
    } finally {
      clearInterval(timer);
      stream.stop();
      for (const peer of peers) await peer.close().catch(() => {});
    }
  });

  it('answers hostile node-to-node calls on a cluster node with 4xx and makes nothing of them (fast-check)', { timeout: 60_000 }, async () => {
    const opus = [{ kind: 'audio', mimeType: 'audio/opus', clockRate: 48000, channels: 2 }];
    const srtp = { cryptoSuite: 'AES_CM_128_HMAC_SHA1_80', keyBase64: 'PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR' };
    const routes = [
      { method: 'POST', path: () => `/cluster/rooms/${randomUUID()}`, success: 204, valid: () => ({ nodeId: 'node-a', mediaCodecs: opus }) },
      { method: 'POST', path: () => `/cluster/rooms/${randomUUID()}/speakers`, success: 204, valid: () => ({ producerId: randomUUID() }) },
      { method: 'POST', path: () => '/cluster/pipes', success: 201, valid: () => ({ roomId: randomUUID(), producerId: randomUUID(), kind: 'dataProducer', nodeId: 'node-a', ip: '127.0.0.1', port: 40000, srtpParameters: { ...srtp } }) },
      { method: 'POST', path: () => `/cluster/pipes/${randomUUID()}/state`, success: 204, valid: () => ({ paused: true }) },
      { method: 'DELETE', path: () => `/cluster/pipes/${randomUUID()}`, success: 204, valid: () => ({}) },
    ];
    const ownRouters = async () => (await call(c, 'GET', '/cluster')).body.nodes.find((n: { self: boolean }) => n.self).load.routers as number;
    await waitFor(async () => (await ownRouters()) === 0, { timeoutMs: 5_000, intervalMs: 100, what: 'C holding no router' });
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes).chain((route) => fc.oneof(anyJson, mutated(route.valid, { oversized: true })).map((body) => ({ route, body }))), async ({ route, body }) => {
        const path = route.path();
        const init = { method: route.method, headers: { ...headers, 'X-Cluster-Forwarded-By': 'node-a' }, body: JSON.stringify(body) };
        // Sent again once when the connection closed before any answer: the test's pool may reuse a
        // connection C closed as idle (its keep-alive) while fast-check built the next body. A C that
        // crashed, or closed connections for an input, fails the second try too.
        const res = await fetch(`${c.url}/internal/v1${path}`, init).catch((error: { cause?: { code?: string } }) => {
          if (error.cause?.code !== 'UND_ERR_SOCKET' && error.cause?.code !== 'ECONNRESET') throw error;
          return fetch(`${c.url}/internal/v1${path}`, init);
        });
        const answer = await answerOf(res);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        expectRelayAnswer(answer, route.success, ['VALIDATION_ERROR', 'NOT_FOUND', 'CONFLICT', 'CAN_NOT_CONSUME'], `${route.method} ${path} ${String(JSON.stringify(body)).slice(0, 200)}`);
        // A part made by a body that happens to be valid is closed again: nothing of the run is left.
        if (answer.status === 204 && route.method === 'POST' && /^\/cluster\/rooms\/[^/]+$/.test(path)) expect((await call(c, 'DELETE', path, undefined, { 'X-Cluster-Forwarded-By': 'node-a' })).status).toBe(204);
      }),
      fuzzParameters(150),
    );
    console.log('node-to-node fuzz on C:', Object.fromEntries([...statuses].sort(([x], [y]) => x - y)));
    // A part only for a live node's room: none for a node unknown, or for C's own id.
    for (const nodeId of ['node-x', 'node-c']) {
      expect(await call(c, 'POST', `/cluster/rooms/${randomUUID()}`, { nodeId, mediaCodecs: opus }, { 'X-Cluster-Forwarded-By': 'node-a' })).toMatchObject({ status: 409, body: { code: 'CONFLICT', details: { nodeId } } });
    }
    await waitFor(async () => (await ownRouters()) === 0, { timeoutMs: 3_000, intervalMs: 100, what: 'no part left on C' });
  });

  it('B killed mid-call: node.lost names the room and B\'s transports within 10 s, the consumer on C of B\'s producer closes with node_lost, calls for B\'s resources answer 404 NODE_LOST; the room goes on on A and C', { timeout: 60_000 }, async () => {
    const { routerId, sender, local, receiver, producerId, consumerId, dataSend, seen, stop } = await spanningCall({ dataSender: true });
    try {
      // A data producer on B, consumed on C (no peer needed: the copy is piped between the nodes anyway).
      const dataProducer = await call(a, 'POST', '/data-producers', { transportId: dataSend.id, label: 'chat' });
      expect(dataProducer.status, JSON.stringify(dataProducer.body)).toBe(201);
      const dataRecv = await call(b, 'POST', '/transports', { routerId, direction: 'recv', enableSctp: true });
      expect(await where(dataRecv.body.id)).toBe('node-c');
      const dataConsumer = await call(a, 'POST', '/data-consumers', { transportId: dataRecv.body.id, dataProducerId: dataProducer.body.id });
      expect(dataConsumer.status, JSON.stringify(dataConsumer.body)).toBe(201);
      const killedAt = Date.now();
      b.child.kill('SIGKILL');
      await b.exited;
      await waitFor(() => seen().some((event) => event.type === 'node.lost'), { timeoutMs: 10_000, intervalMs: 50, what: 'node.lost' });
      const lostAfter = Date.now() - killedAt;
      const lost = seen().filter((event) => event.type === 'node.lost');
      expect(lost).toHaveLength(1);
      expect(lost[0].nodeId).toBe('node-b');
      expect(lost[0].routerIds).toContain(routerId);
      expect(lost[0].transportIds).toEqual(expect.arrayContaining([sender, local]));
      expect(lost[0].producerIds).toContain(producerId);
      await waitFor(() => seen().some((event) => event.type === 'consumer.closed' && event.consumerId === consumerId), { timeoutMs: 5_000, intervalMs: 50, what: "the receiver's consumer closed" });
      expect(seen().find((event) => event.type === 'consumer.closed' && event.consumerId === consumerId)).toMatchObject({ nodeId: 'node-c', reason: 'node_lost', producerId });
      await waitFor(() => seen().some((event) => event.type === 'dataConsumer.closed' && event.dataConsumerId === dataConsumer.body.id), { timeoutMs: 5_000, intervalMs: 50, what: 'the data consumer closed' });
      expect(seen().find((event) => event.type === 'dataConsumer.closed' && event.dataConsumerId === dataConsumer.body.id)).toMatchObject({ nodeId: 'node-c', reason: 'node_lost', dataProducerId: dataProducer.body.id });
      console.log(`node.lost read ${lostAfter} ms after the kill`);
      // Each survivor learns of the loss at its own next heartbeat (one of them announced it): within 1 s.
      const announced = Date.now();
      for (const server of [a, c]) {
        await waitFor(async () => (await call(server, 'GET', `/transports/${sender}/stats`)).status === 404, { timeoutMs: 2_000, intervalMs: 50, what: 'NODE_LOST' });
        const answer = await call(server, 'GET', `/transports/${sender}/stats`);
        expect(answer).toMatchObject({ status: 404, body: { code: 'NODE_LOST', details: { nodeId: 'node-b' } } });
      }
      console.log(`NODE_LOST on A and C ${Date.now() - announced} ms after node.lost was read`);
      // The room goes on: A answers for it with C's part, and it closes through C.
      const room = await call(c, 'GET', `/routers/${routerId}`);
      expect(room.status, JSON.stringify(room.body)).toBe(200);
      expect(room.body.plainTransports.map((t: { id: string }) => t.id)).toEqual([receiver]);
      expect(room.body.transports.map((t: { id: string }) => t.id)).toEqual([dataRecv.body.id]);
      expect((await call(c, 'DELETE', `/routers/${routerId}`)).status).toBe(204);
      await waitFor(async () => (await where(receiver)) === undefined, { timeoutMs: 5_000, intervalMs: 50, what: "C's part closed" });
    } finally {
      stop();
    }
  });

  it("A (a room's origin) killed: C's part of its room keeps its transport, then closes with it", { timeout: 60_000 }, async () => {
    // After the test above, B is gone: A's new transports go to C.
    await waitFor(async () => (await call(a, 'GET', '/cluster')).body.nodes.length === 2, { timeoutMs: 10_000, intervalMs: 100, what: 'A seeing two nodes' });
    await emptyAsASees();
    const made = await call(a, 'POST', '/routers', {}, { 'X-Cluster-Forwarded-By': 'test' });
    expect(made.status).toBe(201);
    const routerId = made.body.id as string;
    const transport = await call(c, 'POST', '/plain-transports', { routerId, comedia: true });
    expect(transport.status, JSON.stringify(transport.body)).toBe(201);
    expect(await where(transport.body.id)).toBe('node-c');
    const ownLoad = async () => (await call(c, 'GET', '/cluster')).body.nodes.find((n: { self: boolean }) => n.self).load as { routers: number; transports: number };
    await waitFor(async () => (await ownLoad()).routers === 1, { timeoutMs: 3_000, intervalMs: 100, what: "C's part counted" });
    // Killed within a heartbeat of the room's making, A may not have listed the room yet: node.lost would
    // not name it. C's part still answers NODE_LOST for it (it knows its origin), as tested below.
    const stream = await follow(c);
    try {
      a.child.kill('SIGKILL');
      await a.exited;
      await waitFor(() => stream.events.some((event) => event.type === 'node.lost' && event.nodeId === 'node-a'), { timeoutMs: 10_000, intervalMs: 50, what: 'node.lost of A on C' });
      // The room is A's: it answers NODE_LOST. C's transport in it goes on, and C answers for it.
      expect(await call(c, 'GET', `/routers/${routerId}`)).toMatchObject({ status: 404, body: { code: 'NODE_LOST', details: { nodeId: 'node-a' } } });
      const producer = await call(c, 'POST', '/producers', { transportId: transport.body.id, ...OPUS });
      expect(producer.status, JSON.stringify(producer.body)).toBe(201);
      await sleep(1_500); // a sweep or more: the part holds a transport, it stays
      expect((await ownLoad()).routers).toBe(1);
      // Its last transport closed: the part goes too (nobody could close it through its room any more).
      expect((await call(c, 'DELETE', `/plain-transports/${transport.body.id}`)).status).toBe(204);
      await waitFor(async () => (await ownLoad()).routers === 0, { timeoutMs: 4_000, intervalMs: 100, what: "C's orphan part closed" });
      expect(stream.events.filter((event) => event.type === 'router.closed' && event.routerId === routerId)).toEqual([]);
    } finally {
      stream.stop();
    }
  });
});
