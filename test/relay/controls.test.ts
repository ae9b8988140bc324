// The control endpoints of issue 13 against a real worker: success and every error of each.
import * as mediasoup from 'mediasoup';
import { describe, expect, it } from 'vitest';
import { createRelayClient, RelayClientError } from '../../src/client/relay-client.js';
import { allowSlowTests, UNKNOWN_ID, useRelayApp, vp8Parameters } from './support.js';

allowSlowTests();

// The engine's own objects, reached through mediasoup's public observer, to compare with the answers.
const engineProducers = new Map<string, mediasoup.types.Producer>();
const engineConsumers = new Map<string, mediasoup.types.Consumer>();
mediasoup.observer.on('newworker', (worker) =>
  worker.observer.on('newrouter', (router) =>
    router.observer.on('newtransport', (transport) => {
      transport.observer.on('newproducer', (producer) => engineProducers.set(producer.id, producer));
      transport.observer.on('newconsumer', (consumer) => engineConsumers.set(consumer.id, consumer));
    }),
  ),
);

const { t, api } = useRelayApp();

const notFound = (resource: string, id: string) => ({ code: 'NOT_FOUND', message: `${resource} not found: ${id}`, details: { resource, id } });

async function room() {
  const router = await api.router();
  const send = await api.transport(router.id, 'send');
  const recv = await api.transport(router.id, 'recv');
  return { router, send, recv, caps: router.rtpCapabilities };
}

let nextSsrc = 50_000;
function simulcastParameters() {
  return { ...vp8Parameters(), encodings: [{ ssrc: nextSsrc++ }, { ssrc: nextSsrc++ }, { ssrc: nextSsrc++ }] };
}

describe('producer pause and resume', () => {
  it('pauses and resumes, the engine and the consumers seeing it', async () => {
    const { send, recv, caps } = await room();
    const producer = await api.producer(send.id, 'video');
    const consumer = await api.consumer(recv.id, producer.id, caps);
    const paused = await api.post(`/internal/v1/producers/${producer.id}/pause`);
    expect(paused).toEqual({ status: 200, body: { id: producer.id, paused: true } });
    expect(engineProducers.get(producer.id)!.paused).toBe(true);
    // The consumer learns of it from the worker's notification.
    await expect.poll(() => engineConsumers.get(consumer.id)!.producerPaused).toBe(true);
    expect((await api.post(`/internal/v1/consumers/${consumer.id}/resume`)).body).toEqual({ id: consumer.id, paused: false, producerPaused: true });
    const resumed = await api.post(`/internal/v1/producers/${producer.id}/resume`);
    expect(resumed).toEqual({ status: 200, body: { id: producer.id, paused: false } });
    expect(engineProducers.get(producer.id)!.paused).toBe(false);
    await expect.poll(() => engineConsumers.get(consumer.id)!.producerPaused).toBe(false);
  });

  it('answers NOT_FOUND for an unknown or closed producer', async () => {
    for (const action of ['pause', 'resume']) {
      const res = await api.post(`/internal/v1/producers/${UNKNOWN_ID}/${action}`);
      expect(res).toEqual({ status: 404, body: notFound('producer', UNKNOWN_ID) });
    }
    const { send } = await room();
    const producer = await api.producer(send.id);
    await api.del(`/internal/v1/producers/${producer.id}`);
    expect((await api.post(`/internal/v1/producers/${producer.id}/pause`)).body).toEqual(notFound('producer', producer.id));
  });

  it('answers NOT_FOUND when the producer closes while the engine pauses it', async () => {
    const { send } = await room();
    const producer = await api.producer(send.id);
    const pausing = t.media.pauseProducer(producer.id);
    t.media.closeProducer(producer.id);
    await expect(pausing).rejects.toMatchObject({ code: 'NOT_FOUND', details: { resource: 'producer', id: producer.id } });
  });
});

describe('consumer pause', () => {
  it('pauses a resumed consumer and reports producerPaused', async () => {
    const { send, recv, caps } = await room();
    const producer = await api.producer(send.id, 'audio', { paused: true });
    const consumer = await api.consumer(recv.id, producer.id, caps);
    await api.post(`/internal/v1/consumers/${consumer.id}/resume`);
    const paused = await api.post(`/internal/v1/consumers/${consumer.id}/pause`);
    expect(paused).toEqual({ status: 200, body: { id: consumer.id, paused: true, producerPaused: true } });
    expect(engineConsumers.get(consumer.id)!.paused).toBe(true);
    expect((await api.post(`/internal/v1/consumers/${UNKNOWN_ID}/pause`)).body).toEqual(notFound('consumer', UNKNOWN_ID));
  });
});

describe('consumer preferred layers', () => {
  it('sets the layers of a simulcast consumer', async () => {
    const { send, recv, caps } = await room();
    const producer = await api.producer(send.id, 'video', { rtpParameters: simulcastParameters() });
    expect(producer.type).toBe('simulcast');
    const consumer = await api.consumer(recv.id, producer.id, caps);
    expect(consumer.type).toBe('simulcast');
    const res = await api.post(`/internal/v1/consumers/${consumer.id}/preferred-layers`, { spatialLayer: 1, temporalLayer: 0 });
    expect(res).toEqual({ status: 200, body: { id: consumer.id, preferredLayers: { spatialLayer: 1, temporalLayer: 0 }, currentLayers: null } });
    expect(engineConsumers.get(consumer.id)!.preferredLayers).toEqual({ spatialLayer: 1, temporalLayer: 0 });
    // The worker clamps to the layers the producer has: three streams, spatial 0-2.
    const high = await api.post(`/internal/v1/consumers/${consumer.id}/preferred-layers`, { spatialLayer: 15 });
    expect(high.status).toBe(200);
    expect(high.body.preferredLayers.spatialLayer).toBe(2);
  });

  it('refuses a simple consumer with CONFLICT, bad layers with VALIDATION_ERROR, unknown ids with NOT_FOUND', async () => {
    const { send, recv, caps } = await room();
    const producer = await api.producer(send.id, 'video');
    const consumer = await api.consumer(recv.id, producer.id, caps);
    const simple = await api.post(`/internal/v1/consumers/${consumer.id}/preferred-layers`, { spatialLayer: 0 });
    expect(simple.status).toBe(409);
    expect(simple.body).toEqual({ code: 'CONFLICT', message: expect.any(String), details: { consumerId: consumer.id, type: 'simple' } });
    for (const body of [{}, { spatialLayer: -1 }, { spatialLayer: 16 }, { spatialLayer: 1.5 }, { spatialLayer: 0, temporalLayer: 4 }, { spatialLayer: '1' }]) {
      const res = await api.post(`/internal/v1/consumers/${consumer.id}/preferred-layers`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
    }
    expect((await api.post(`/internal/v1/consumers/${UNKNOWN_ID}/preferred-layers`, { spatialLayer: 0 })).body).toEqual(notFound('consumer', UNKNOWN_ID));
  });
});

describe('consumer priority and key frames', () => {
  it('sets the priority within 1..255', async () => {
    const { send, recv, caps } = await room();
    const producer = await api.producer(send.id, 'video');
    const consumer = await api.consumer(recv.id, producer.id, caps);
    expect(await api.post(`/internal/v1/consumers/${consumer.id}/priority`, { priority: 200 })).toEqual({ status: 200, body: { id: consumer.id, priority: 200 } });
    expect(engineConsumers.get(consumer.id)!.priority).toBe(200);
    for (const priority of [0, 256, 1.5, '2', null]) {
      const res = await api.post(`/internal/v1/consumers/${consumer.id}/priority`, { priority });
      expect(res.status, String(priority)).toBe(400);
    }
    expect((await api.post(`/internal/v1/consumers/${UNKNOWN_ID}/priority`, { priority: 2 })).body).toEqual(notFound('consumer', UNKNOWN_ID));
  });

  it('requests a key frame', async () => {
    const { send, recv, caps } = await room();
    const producer = await api.producer(send.id, 'video');
    const consumer = await api.consumer(recv.id, producer.id, caps);
    expect(await api.post(`/internal/v1/consumers/${consumer.id}/key-frame`)).toEqual({ status: 204, body: undefined });
    expect((await api.post(`/internal/v1/consumers/${UNKNOWN_ID}/key-frame`)).body).toEqual(notFound('consumer', UNKNOWN_ID));
  });
});

describe('transport ICE restart and bitrate', () => {
  it('restarts ICE with new credentials', async () => {
    const { send } = await room();
    const res = await api.post(`/internal/v1/transports/${send.id}/restart-ice`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: send.id, iceParameters: { usernameFragment: expect.any(String), password: expect.any(String), iceLite: true } });
    expect(res.body.iceParameters.usernameFragment).not.toBe(send.iceParameters.usernameFragment);
    expect(res.body.iceParameters.password).not.toBe(send.iceParameters.password);
    expect((await api.post(`/internal/v1/transports/${UNKNOWN_ID}/restart-ice`)).body).toEqual(notFound('transport', UNKNOWN_ID));
  });

  it('sets the max incoming bitrate within its bounds', async () => {
    const { send } = await room();
    expect((await api.post(`/internal/v1/transports/${send.id}/max-incoming-bitrate`, { bitrate: 1_500_000 })).status).toBe(204);
    for (const bitrate of [9_999, 100_000_001, 1.5, '1000000', undefined]) {
      const res = await api.post(`/internal/v1/transports/${send.id}/max-incoming-bitrate`, { bitrate });
      expect(res.status, String(bitrate)).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
    }
    expect((await api.post(`/internal/v1/transports/${UNKNOWN_ID}/max-incoming-bitrate`, { bitrate: 20_000 })).body).toEqual(notFound('transport', UNKNOWN_ID));
  });
});

describe('stats', () => {
  it("answers the engine's stats arrays, NOT_FOUND for unknown ids", async () => {
    const { send, recv, caps } = await room();
    const producer = await api.producer(send.id, 'video');
    const consumer = await api.consumer(recv.id, producer.id, caps);
    const transport = await api.get(`/internal/v1/transports/${send.id}/stats`);
    expect(transport.status).toBe(200);
    expect(transport.body).toEqual([expect.objectContaining({ type: 'webrtc-transport', transportId: send.id })]);
    // No RTP has flowed: the producer has no stream yet; the consumer reports its own outbound stream.
    expect(await api.get(`/internal/v1/producers/${producer.id}/stats`)).toEqual({ status: 200, body: [] });
    const consumerStats = await api.get(`/internal/v1/consumers/${consumer.id}/stats`);
    expect(consumerStats.status).toBe(200);
    expect(consumerStats.body).toEqual([expect.objectContaining({ type: 'outbound-rtp', kind: 'video' })]);
    for (const kind of ['transport', 'producer', 'consumer']) {
      expect((await api.get(`/internal/v1/${kind}s/${UNKNOWN_ID}/stats`)).body).toEqual(notFound(kind, UNKNOWN_ID));
    }
  });
});

describe('typed client', () => {
  it('has a method for each control', async () => {
    const client = createRelayClient({ baseUrl: 'http://relay.test', token: t.internalToken, fetch: (input, init) => t.app.request(input, init) });
    const { send, recv, caps } = await room();
    const producer = await api.producer(send.id, 'video', { rtpParameters: simulcastParameters() });
    const consumer = await api.consumer(recv.id, producer.id, caps);
    expect(await client.pauseProducer(producer.id)).toEqual({ id: producer.id, paused: true });
    expect(await client.resumeProducer(producer.id)).toEqual({ id: producer.id, paused: false });
    expect(await client.producerStats(producer.id)).toEqual([]);
    expect(await client.pauseConsumer(consumer.id)).toMatchObject({ id: consumer.id, paused: true });
    expect((await client.setConsumerPreferredLayers(consumer.id, { spatialLayer: 0 })).preferredLayers).toMatchObject({ spatialLayer: 0 });
    expect(await client.setConsumerPriority(consumer.id, 3)).toEqual({ id: consumer.id, priority: 3 });
    await client.requestKeyFrame(consumer.id);
    expect((await client.consumerStats(consumer.id)).length).toBeGreaterThan(0);
    expect((await client.restartIce(send.id)).iceParameters.usernameFragment).toEqual(expect.any(String));
    await client.setMaxIncomingBitrate(send.id, 50_000);
    expect((await client.transportStats(send.id))[0]).toMatchObject({ transportId: send.id });
    const error = await client.setConsumerPriority(consumer.id, 0).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RelayClientError);
    expect(error).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
  });
});
