// What signaling servers already in production send and read (issue 12, "Existing signaling servers"):
// a Go server reads the router id as `routerId` and sends fields the relay ignores; ICE candidates carry
// `address` as well as `ip` whatever the engine; consumers take appData like every other resource.
import * as mediasoup from 'mediasoup';
import { describe, expect, it } from 'vitest';
import { allowSlowTests, useRelayApp } from './support.js';

allowSlowTests();

const engineConsumers = new Map<string, mediasoup.types.Consumer>();
mediasoup.observer.on('newworker', (worker) =>
  worker.observer.on('newrouter', (router) =>
    router.observer.on('newtransport', (transport) => transport.observer.on('newconsumer', (consumer) => engineConsumers.set(consumer.id, consumer))),
  ),
);

const { t, api } = useRelayApp();

describe('a Go signaling server', () => {
  it('creates a router with roomCode, transports with a numeric userId, a consumer with routerId: accepted and ignored', async () => {
    const router = await api.post('/internal/v1/routers', { roomCode: 'room-42' });
    expect(router.status).toBe(201);
    expect(router.body.routerId).toBe(router.body.id);
    expect(Object.keys(router.body).sort()).toEqual(['id', 'routerId', 'rtpCapabilities']);
    const routerId = router.body.routerId as string;

    const send = await api.post('/internal/v1/transports', { routerId, direction: 'send', userId: 1001 });
    const recv = await api.post('/internal/v1/transports', { routerId, direction: 'recv', userId: 1002 });
    expect([send.status, recv.status]).toEqual([201, 201]);
    const producer = await api.producer(send.body.id);
    const consumer = await api.post('/internal/v1/consumers', {
      routerId,
      transportId: recv.body.id,
      producerId: producer.id,
      rtpCapabilities: router.body.rtpCapabilities,
    });
    expect(consumer.status).toBe(201);
    expect(consumer.body).toMatchObject({ transportId: recv.body.id, producerId: producer.id, paused: true });
    // Ignored, not stored: nothing of the extra fields reached the engine's appData.
    expect(engineConsumers.get(consumer.body.id)!.appData).toEqual({});
  });
});

describe('ICE candidates', () => {
  it('carry the address as both `address` and `ip`', async () => {
    const router = await api.router();
    const transport = await api.transport(router.id, 'recv');
    expect(transport.iceCandidates.length).toBeGreaterThanOrEqual(2);
    for (const candidate of transport.iceCandidates as Record<string, unknown>[]) {
      expect(candidate.address).toBe('127.0.0.1');
      expect(candidate.ip).toBe(candidate.address);
      expect(candidate).toMatchObject({ foundation: expect.any(String), priority: expect.any(Number), port: t.config.media.rtcMinPort, type: 'host' });
      expect(['udp', 'tcp']).toContain(candidate.protocol);
      if (candidate.protocol === 'tcp') expect(candidate.tcpType).toBe('passive');
    }
  });
});

describe('consumer appData', () => {
  it('is stored on the engine consumer; a non-object appData is refused', async () => {
    const router = await api.router();
    const send = await api.transport(router.id, 'send');
    const recv = await api.transport(router.id, 'recv');
    const producer = await api.producer(send.id, 'audio');
    const body = { transportId: recv.id, producerId: producer.id, rtpCapabilities: router.rtpCapabilities };
    const created = await api.post('/internal/v1/consumers', { ...body, appData: { peerId: 'p-7', room: 'r-42' } });
    expect(created.status).toBe(201);
    expect(engineConsumers.get(created.body.id)!.appData).toEqual({ peerId: 'p-7', room: 'r-42' });
    const refused = await api.post('/internal/v1/consumers', { ...body, appData: 'peer' });
    expect(refused.status).toBe(400);
    expect(refused.body.details.issues[0].path).toBe('appData');
  });
});
