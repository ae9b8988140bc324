// The relay-control baseline: the same routes and shapes as the relay over a bare Hono app with one
// in-process mediasoup worker; no validation, no token, no registry beyond the id lookups, no logger.
// Started by bench/relay-control.ts as a child process, exactly like the real server.
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import * as mediasoup from 'mediasoup';
import type { types as ms } from 'mediasoup';
import { BASELINE_RTC_PORTS } from '../test/support/ports.js';
import type { RouterMediaCodec } from '../src/relay/engine/codecs.js';

const port = Number(process.env.PORT ?? 3999);
const rtcPort = Number(process.env.RTC_MIN_PORT ?? BASELINE_RTC_PORTS.bare);
const ip = '127.0.0.1';

const worker = await mediasoup.createWorker({ logLevel: 'warn' });
const webRtcServer = await worker.createWebRtcServer({
  listenInfos: [
    { protocol: 'udp', ip, port: rtcPort },
    { protocol: 'tcp', ip, port: rtcPort },
  ],
});
// The relay's default codecs (src/relay/engine/codecs.ts), so both sides hand out the same capabilities.
const mediaCodecs: RouterMediaCodec[] = [
  { kind: 'audio', mimeType: 'audio/opus', clockRate: 48000, channels: 2 },
  { kind: 'video', mimeType: 'video/VP8', clockRate: 90000 },
  { kind: 'video', mimeType: 'video/VP9', clockRate: 90000 },
  { kind: 'video', mimeType: 'video/H264', clockRate: 90000, parameters: { 'packetization-mode': 1, 'profile-level-id': '42e01f', 'level-asymmetry-allowed': 1 } },
];

const routers = new Map<string, ms.Router>();
const transports = new Map<string, ms.WebRtcTransport>();
const producers = new Map<string, ms.Producer>();
const consumers = new Map<string, ms.Consumer>();

const app = new Hono()
  .get('/readyz', (c) => c.json({ status: 'ready' }))
  .post('/internal/v1/routers', async (c) => {
    const router = await worker.createRouter({ mediaCodecs });
    routers.set(router.id, router);
    router.observer.once('close', () => routers.delete(router.id));
    return c.json({ id: router.id, rtpCapabilities: router.rtpCapabilities }, 201);
  })
  .delete('/internal/v1/routers/:id', (c) => {
    routers.get(c.req.param('id'))?.close();
    return c.body(null, 204);
  })
  .post('/internal/v1/transports', async (c) => {
    const body = await c.req.json();
    const transport = await routers.get(body.routerId)!.createWebRtcTransport({ webRtcServer });
    transports.set(transport.id, transport);
    transport.observer.once('close', () => transports.delete(transport.id));
    const { id, iceParameters, iceCandidates, dtlsParameters } = transport;
    return c.json({ id, routerId: body.routerId, direction: body.direction, iceParameters, iceCandidates, dtlsParameters }, 201);
  })
  .post('/internal/v1/transports/:id/connect', async (c) => {
    const body = await c.req.json();
    await transports.get(c.req.param('id'))!.connect({ dtlsParameters: body.dtlsParameters });
    return c.json({ id: c.req.param('id'), connected: true }, 200);
  })
  .post('/internal/v1/producers', async (c) => {
    const body = await c.req.json();
    const producer = await transports.get(body.transportId)!.produce({ kind: body.kind, rtpParameters: body.rtpParameters });
    producers.set(producer.id, producer);
    producer.observer.once('close', () => producers.delete(producer.id));
    return c.json({ id: producer.id, transportId: body.transportId, kind: producer.kind, type: producer.type, paused: producer.paused }, 201);
  })
  .delete('/internal/v1/producers/:id', (c) => {
    producers.get(c.req.param('id'))?.close();
    return c.body(null, 204);
  })
  .post('/internal/v1/consumers', async (c) => {
    const body = await c.req.json();
    const consumer = await transports
      .get(body.transportId)!
      .consume({ producerId: body.producerId, rtpCapabilities: body.rtpCapabilities, paused: true });
    consumers.set(consumer.id, consumer);
    consumer.observer.once('close', () => consumers.delete(consumer.id));
    const { id, kind, type, rtpParameters, paused, producerPaused } = consumer;
    return c.json({ id, transportId: body.transportId, producerId: body.producerId, kind, type, rtpParameters, paused, producerPaused }, 201);
  })
  .post('/internal/v1/consumers/:id/resume', async (c) => {
    const consumer = consumers.get(c.req.param('id'))!;
    await consumer.resume();
    return c.json({ id: consumer.id, paused: consumer.paused, producerPaused: consumer.producerPaused }, 200);
  })
  .delete('/internal/v1/consumers/:id', (c) => {
    consumers.get(c.req.param('id'))?.close();
    return c.body(null, 204);
  });

const server = serve({ fetch: app.fetch, port, hostname: ip });
process.on('SIGTERM', () => {
  server.close();
  worker.close();
  process.exit(0);
});
