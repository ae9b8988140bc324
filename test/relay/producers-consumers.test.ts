import * as mediasoup from 'mediasoup';
import { describe, expect, it, vi } from 'vitest';
import { allowSlowTests, dtlsParameters, opusParameters, UNKNOWN_ID, useRelayApp, vp8Parameters, waitFor } from './support.js';

allowSlowTests();

// The engine's transports, reached through mediasoup's public observer, to close one from the engine side.
const engineTransports = new Map<string, mediasoup.types.Transport>();
const engineConsumers = new Map<string, mediasoup.types.Consumer>();
mediasoup.observer.on('newworker', (worker) =>
  worker.observer.on('newrouter', (router) =>
    router.observer.on('newtransport', (transport) => {
      engineTransports.set(transport.id, transport);
      transport.observer.on('newconsumer', (consumer) => engineConsumers.set(consumer.id, consumer));
    }),
  ),
);

const { api } = useRelayApp();

async function room() {
  const router = await api.router();
  const send = await api.transport(router.id, 'send');
  const recv = await api.transport(router.id, 'recv');
  return { router, send, recv, caps: router.rtpCapabilities };
}

const notFound = (resource: string, id: string) => ({ code: 'NOT_FOUND', message: `${resource} not found: ${id}`, details: { resource, id } });

describe('POST /internal/v1/producers', () => {
  it('creates audio and video producers, paused or not', async () => {
    const { send } = await room();
    const audio = await api.post('/internal/v1/producers', { transportId: send.id, kind: 'audio', rtpParameters: opusParameters(), appData: { track: 'mic' } });
    expect(audio.status).toBe(201);
    expect(audio.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), transportId: send.id, kind: 'audio', type: 'simple', paused: false });
    const video = await api.post('/internal/v1/producers', { transportId: send.id, kind: 'video', rtpParameters: vp8Parameters(), paused: true });
    expect(video.status).toBe(201);
    expect(video.body).toMatchObject({ kind: 'video', type: 'simple', paused: true });
  });

  it('refuses to produce on a recv transport', async () => {
    const { recv } = await room();
    const res = await api.post('/internal/v1/producers', { transportId: recv.id, kind: 'audio', rtpParameters: opusParameters() });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ code: 'CONFLICT', message: expect.any(String), details: { transportId: recv.id, direction: 'recv' } });
  });

  it('answers NOT_FOUND for an unknown transport', async () => {
    const res = await api.post('/internal/v1/producers', { transportId: UNKNOWN_ID, kind: 'audio', rtpParameters: opusParameters() });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(notFound('transport', UNKNOWN_ID));
  });

  it('applies the shallow rtpParameters rule', async () => {
    const { send } = await room();
    const cases: [unknown, string][] = [
      [{}, 'rtpParameters.codecs'],
      [{ codecs: [] }, 'rtpParameters.codecs'],
      [{ codecs: [{ clockRate: 48000, payloadType: 100 }] }, 'rtpParameters.codecs.0.mimeType'],
      [{ codecs: [{ mimeType: 'audio/opus', payloadType: 100 }] }, 'rtpParameters.codecs.0.clockRate'],
      [{ codecs: [{ mimeType: 'audio/opus', clockRate: 48000 }] }, 'rtpParameters.codecs.0.payloadType'],
    ];
    for (const [rtpParameters, path] of cases) {
      const res = await api.post('/internal/v1/producers', { transportId: send.id, kind: 'audio', rtpParameters });
      expect(res.status, path).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      expect(res.body.details.issues.map((i: { path: string }) => i.path)).toContain(path);
    }
    const badKind = await api.post('/internal/v1/producers', { transportId: send.id, kind: 'data', rtpParameters: opusParameters() });
    expect(badKind.body.details.issues.map((i: { path: string }) => i.path)).toEqual(['kind']);
  });

  it('passes the other members through: the engine judges them (TypeError → VALIDATION_ERROR)', async () => {
    const { send } = await room();
    const rtpParameters = { ...opusParameters(), encodings: [{ ssrc: 'not-a-number' }] };
    const res = await api.post('/internal/v1/producers', { transportId: send.id, kind: 'audio', rtpParameters });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    // A codec the router does not offer is refused by the engine too.
    const h265 = { codecs: [{ mimeType: 'video/H265', clockRate: 90000, payloadType: 102 }], encodings: [{ ssrc: 4242 }] };
    const unsupported = await api.post('/internal/v1/producers', { transportId: send.id, kind: 'video', rtpParameters: h265 });
    expect(unsupported.status).toBe(400);
    expect(unsupported.body.code).toBe('VALIDATION_ERROR');
  });
});

describe('POST /internal/v1/consumers and resume', () => {
  it('creates the consumer paused and resumes it', async () => {
    const { send, recv, caps } = await room();
    const producer = await api.producer(send.id, 'audio');
    const created = await api.post('/internal/v1/consumers', { transportId: recv.id, producerId: producer.id, rtpCapabilities: caps });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      transportId: recv.id,
      producerId: producer.id,
      kind: 'audio',
      type: 'simple',
      rtpParameters: expect.objectContaining({ codecs: [expect.objectContaining({ mimeType: 'audio/opus' })] }),
      paused: true,
      producerPaused: false,
    });
    const resumed = await api.post(`/internal/v1/consumers/${created.body.id}/resume`);
    expect(resumed.status).toBe(200);
    expect(resumed.body).toEqual({ id: created.body.id, paused: false, producerPaused: false });
  });

  it('reports producerPaused from the engine', async () => {
    const { send, recv, caps } = await room();
    const producer = await api.producer(send.id, 'video', { paused: true });
    const consumer = await api.consumer(recv.id, producer.id, caps);
    expect(consumer).toMatchObject({ kind: 'video', paused: true, producerPaused: true });
    const resumed = await api.post(`/internal/v1/consumers/${consumer.id}/resume`);
    expect(resumed.body).toEqual({ id: consumer.id, paused: false, producerPaused: true });
  });

  it('accepts capabilities as mediasoup-client sends them (preferredPayloadType) and with payloadType', async () => {
    const { send, recv } = await room();
    const producer = await api.producer(send.id, 'audio');
    const clientStyle = { codecs: [{ kind: 'audio', mimeType: 'audio/opus', clockRate: 48000, channels: 2, preferredPayloadType: 111, rtcpFeedback: [] }], headerExtensions: [] };
    expect((await api.post('/internal/v1/consumers', { transportId: recv.id, producerId: producer.id, rtpCapabilities: clientStyle })).status).toBe(201);
    const plain = { codecs: [{ mimeType: 'audio/opus', clockRate: 48000, channels: 2, payloadType: 111 }] };
    expect((await api.post('/internal/v1/consumers', { transportId: recv.id, producerId: producer.id, rtpCapabilities: plain })).status).toBe(201);
    const neither = { codecs: [{ mimeType: 'audio/opus', clockRate: 48000, channels: 2 }] };
    const refused = await api.post('/internal/v1/consumers', { transportId: recv.id, producerId: producer.id, rtpCapabilities: neither });
    expect(refused.status).toBe(400);
    expect(refused.body.details.issues).toEqual([{ path: 'rtpCapabilities.codecs.0.payloadType', message: expect.any(String) }]);
    const empty = await api.post('/internal/v1/consumers', { transportId: recv.id, producerId: producer.id, rtpCapabilities: { codecs: [] } });
    expect(empty.body.code).toBe('VALIDATION_ERROR');
  });

  it('answers CAN_NOT_CONSUME when the capabilities do not fit the producer', async () => {
    const { send, recv } = await room();
    const producer = await api.producer(send.id, 'audio');
    const videoOnly = { codecs: [{ kind: 'video', mimeType: 'video/VP8', clockRate: 90000, preferredPayloadType: 96 }] };
    const res = await api.post('/internal/v1/consumers', { transportId: recv.id, producerId: producer.id, rtpCapabilities: videoOnly });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'CAN_NOT_CONSUME', message: expect.any(String) });
  });

  it('answers CAN_NOT_CONSUME for a producer of another router', async () => {
    const a = await room();
    const b = await room();
    const producer = await api.producer(a.send.id, 'audio');
    const res = await api.post('/internal/v1/consumers', { transportId: b.recv.id, producerId: producer.id, rtpCapabilities: b.caps });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('CAN_NOT_CONSUME');
  });

  it('refuses to consume on a send transport', async () => {
    const { send, caps } = await room();
    const producer = await api.producer(send.id, 'audio');
    const res = await api.post('/internal/v1/consumers', { transportId: send.id, producerId: producer.id, rtpCapabilities: caps });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ code: 'CONFLICT', message: expect.any(String), details: { transportId: send.id, direction: 'send' } });
  });

  it('answers NOT_FOUND for an unknown transport or producer', async () => {
    const { send, recv, caps } = await room();
    const producer = await api.producer(send.id, 'audio');
    const noTransport = await api.post('/internal/v1/consumers', { transportId: UNKNOWN_ID, producerId: producer.id, rtpCapabilities: caps });
    expect(noTransport.status).toBe(404);
    expect(noTransport.body).toEqual(notFound('transport', UNKNOWN_ID));
    const noProducer = await api.post('/internal/v1/consumers', { transportId: recv.id, producerId: UNKNOWN_ID, rtpCapabilities: caps });
    expect(noProducer.status).toBe(404);
    expect(noProducer.body).toEqual(notFound('producer', UNKNOWN_ID));
    const resume = await api.post(`/internal/v1/consumers/${UNKNOWN_ID}/resume`);
    expect(resume.status).toBe(404);
    expect(resume.body).toEqual(notFound('consumer', UNKNOWN_ID));
    const junk = await api.post('/internal/v1/consumers/..%2F..%2Finfo/resume');
    expect(junk.status).toBe(404);
  });
});

describe('closing and cascades', () => {
  it('DELETE consumer: 204, then 404', async () => {
    const { send, recv, caps } = await room();
    const producer = await api.producer(send.id, 'audio');
    const consumer = await api.consumer(recv.id, producer.id, caps);
    expect((await api.del(`/internal/v1/consumers/${consumer.id}`)).status).toBe(204);
    expect((await api.del(`/internal/v1/consumers/${consumer.id}`)).body).toEqual(notFound('consumer', consumer.id));
    expect((await api.post(`/internal/v1/consumers/${consumer.id}/resume`)).status).toBe(404);
    // The producer is untouched.
    expect((await api.consumer(recv.id, producer.id, caps)).producerId).toBe(producer.id);
  });

  it('a consumer closed while its resume is in the engine answers NOT_FOUND, not an engine error', async () => {
    const { send, recv, caps } = await room();
    const producer = await api.producer(send.id, 'audio');
    const consumer = await api.consumer(recv.id, producer.id, caps);
    const engineConsumer = engineConsumers.get(consumer.id)!;
    const realResume = engineConsumer.resume.bind(engineConsumer);
    let entered = false;
    vi.spyOn(engineConsumer, 'resume').mockImplementation(async () => {
      entered = true;
      await new Promise((resolve) => setTimeout(resolve, 100));
      return realResume();
    });
    const pending = api.post(`/internal/v1/consumers/${consumer.id}/resume`);
    await waitFor('the engine call', () => entered);
    expect((await api.del(`/internal/v1/consumers/${consumer.id}`)).status).toBe(204);
    expect((await pending).body).toEqual(notFound('consumer', consumer.id));
  });

  it('DELETE producer: its consumers answer 404 at once', async () => {
    const { send, recv, caps } = await room();
    const producer = await api.producer(send.id, 'audio');
    const other = await api.producer(send.id, 'video');
    const consumers = [await api.consumer(recv.id, producer.id, caps), await api.consumer(recv.id, producer.id, caps)];
    const survivor = await api.consumer(recv.id, other.id, caps);
    expect((await api.del(`/internal/v1/producers/${producer.id}`)).status).toBe(204);
    for (const consumer of consumers) {
      expect((await api.post(`/internal/v1/consumers/${consumer.id}/resume`)).body).toEqual(notFound('consumer', consumer.id));
      expect((await api.del(`/internal/v1/consumers/${consumer.id}`)).status).toBe(404);
    }
    expect((await api.del(`/internal/v1/producers/${producer.id}`)).body).toEqual(notFound('producer', producer.id));
    expect((await api.post(`/internal/v1/consumers/${survivor.id}/resume`)).status).toBe(200);
  });

  it('DELETE router: its transports, producers and consumers answer 404', async () => {
    const { router, send, recv, caps } = await room();
    const producer = await api.producer(send.id, 'audio');
    const consumer = await api.consumer(recv.id, producer.id, caps);
    const before = (await api.get('/internal/info')).body.counts;
    expect((await api.del(`/internal/v1/routers/${router.id}`)).status).toBe(204);
    expect((await api.post(`/internal/v1/transports/${recv.id}/connect`, { dtlsParameters: dtlsParameters() })).body).toEqual(
      notFound('transport', recv.id),
    );
    expect((await api.post('/internal/v1/producers', { transportId: send.id, kind: 'audio', rtpParameters: opusParameters() })).body).toEqual(
      notFound('transport', send.id),
    );
    expect((await api.del(`/internal/v1/producers/${producer.id}`)).body).toEqual(notFound('producer', producer.id));
    expect((await api.del(`/internal/v1/consumers/${consumer.id}`)).body).toEqual(notFound('consumer', consumer.id));
    const after = (await api.get('/internal/info')).body.counts;
    expect(after).toEqual({
      routers: before.routers - 1,
      transports: before.transports - 2,
      producers: before.producers - 1,
      consumers: before.consumers - 1,
      dataProducers: 0,
      dataConsumers: 0,
      pipeTransports: 0,
      plainTransports: 0,
      whipEndpoints: 0,
      whepEndpoints: 0,
    });
  });

  it('DELETE transport: its producers, their consumers on other transports and its own consumers answer 404; the room lives on', async () => {
    const { router, send, recv, caps } = await room();
    const otherSend = await api.transport(router.id, 'send');
    const otherRecv = await api.transport(router.id, 'recv');
    const leaving = await api.producer(send.id, 'audio');
    const staying = await api.producer(otherSend.id, 'video');
    const ofLeavingHere = await api.consumer(recv.id, leaving.id, caps);
    const ofStayingHere = await api.consumer(recv.id, staying.id, caps);
    const ofLeavingThere = await api.consumer(otherRecv.id, leaving.id, caps);
    const before = (await api.get('/internal/info')).body.counts;

    expect((await api.del(`/internal/v1/transports/${send.id}`)).status).toBe(204);
    expect((await api.del(`/internal/v1/producers/${leaving.id}`)).body).toEqual(notFound('producer', leaving.id));
    for (const consumer of [ofLeavingHere, ofLeavingThere]) {
      expect((await api.post(`/internal/v1/consumers/${consumer.id}/resume`)).body).toEqual(notFound('consumer', consumer.id));
    }
    expect((await api.post(`/internal/v1/consumers/${ofStayingHere.id}/resume`)).status).toBe(200);
    expect((await api.del(`/internal/v1/transports/${send.id}`)).body).toEqual(notFound('transport', send.id));
    expect((await api.get('/internal/info')).body.counts).toEqual({
      routers: before.routers,
      transports: before.transports - 1,
      producers: before.producers - 1,
      consumers: before.consumers - 2,
      dataProducers: 0,
      dataConsumers: 0,
      pipeTransports: 0,
      plainTransports: 0,
      whipEndpoints: 0,
      whepEndpoints: 0,
    });

    // Closing a recv transport takes only its consumers; their producer keeps serving others.
    expect((await api.del(`/internal/v1/transports/${recv.id}`)).status).toBe(204);
    expect((await api.del(`/internal/v1/consumers/${ofStayingHere.id}`)).body).toEqual(notFound('consumer', ofStayingHere.id));
    expect((await api.consumer(otherRecv.id, staying.id, caps)).producerId).toBe(staying.id);
    expect((await api.transport(router.id, 'send')).routerId).toBe(router.id);
  });

  it('a transport closed by the engine takes its producers and their consumers out of the registry', async () => {
    const { send, recv, caps } = await room();
    const producer = await api.producer(send.id, 'audio');
    const consumer = await api.consumer(recv.id, producer.id, caps);
    engineTransports.get(send.id)!.close();
    expect((await api.post(`/internal/v1/transports/${send.id}/connect`, { dtlsParameters: dtlsParameters() })).body).toEqual(notFound('transport', send.id));
    expect((await api.del(`/internal/v1/producers/${producer.id}`)).body).toEqual(notFound('producer', producer.id));
    expect((await api.post(`/internal/v1/consumers/${consumer.id}/resume`)).body).toEqual(notFound('consumer', consumer.id));
    // The recv transport lives on; closing it from the engine side removes its consumers too.
    const otherSend = await api.transport(send.routerId, 'send');
    const other = await api.consumer(recv.id, (await api.producer(otherSend.id, 'audio')).id, caps);
    engineTransports.get(recv.id)!.close();
    expect((await api.del(`/internal/v1/consumers/${other.id}`)).body).toEqual(notFound('consumer', other.id));
  });
});
