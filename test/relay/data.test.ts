// Data producers and data consumers against a real worker: success, every error, the cascades,
// and the registry equal to what mediasoup holds.
import { describe, expect, it } from 'vitest';
import { createRelayClient } from '../../src/client/relay-client.js';
import { EngineWatch } from '../reliability/support/engine.js';
import { allowSlowTests, UNKNOWN_ID, useRelayApp } from './support.js';

allowSlowTests();

const engine = EngineWatch.start();
const { t, api } = useRelayApp({ MEDIASOUP_MAX_DATA_CHANNELS_PER_TRANSPORT: '4' });

const notFound = (resource: string, id: string) => ({ code: 'NOT_FOUND', message: `${resource} not found: ${id}`, details: { resource, id } });

async function room() {
  const router = await api.router();
  const send = await api.transport(router.id, 'send', { enableSctp: true });
  const recv = await api.transport(router.id, 'recv', { enableSctp: true });
  return { router, send, recv };
}

const dataProducer = async (transportId: string, extra: object = {}) => {
  const res = await api.post('/internal/v1/data-producers', { transportId, ...extra });
  if (res.status !== 201) throw new Error(`data producer: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};
const dataConsumer = async (transportId: string, dataProducerId: string) => {
  const res = await api.post('/internal/v1/data-consumers', { transportId, dataProducerId });
  if (res.status !== 201) throw new Error(`data consumer: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};

/** The relay's counts of data resources equal those mediasoup has open. */
async function expectRegistryMatchesEngine() {
  const { counts } = (await api.get('/internal/info')).body;
  const open = engine.open();
  expect({ dataProducers: counts.dataProducers, dataConsumers: counts.dataConsumers }).toEqual({ dataProducers: open.dataProducers, dataConsumers: open.dataConsumers });
}

describe('POST /internal/v1/data-producers', () => {
  it('creates data producers with given or chosen stream parameters', async () => {
    const { send } = await room();
    const chat = await api.post('/internal/v1/data-producers', {
      transportId: send.id,
      sctpStreamParameters: { streamId: 5, ordered: true },
      label: 'chat',
      protocol: 'json',
      appData: { peer: 'a' },
    });
    expect(chat).toEqual({
      status: 201,
      body: { id: expect.stringMatching(/^[0-9a-f-]{36}$/), transportId: send.id, sctpStreamParameters: { streamId: 5, ordered: true }, label: 'chat', protocol: 'json' },
    });
    const lossy = await dataProducer(send.id, { sctpStreamParameters: { streamId: 6, ordered: false, maxRetransmits: 1 } });
    expect(lossy.sctpStreamParameters).toEqual({ streamId: 6, ordered: false, maxRetransmits: 1 });
    // Without parameters: the lowest stream id free on the transport, reliable and ordered.
    const chosen = await dataProducer(send.id);
    expect(chosen).toMatchObject({ sctpStreamParameters: { streamId: 0, ordered: true }, label: '', protocol: '' });
    expect(engine.dataProducers.find((p) => p.id === chat.body.id)?.appData).toEqual({ peer: 'a' });
    await expectRegistryMatchesEngine();
  });

  it('refuses a recv transport, a transport without SCTP, a taken stream id and unknown transports', async () => {
    const { router, send, recv } = await room();
    const noSctp = await api.transport(router.id, 'send');
    const wrong = await api.post('/internal/v1/data-producers', { transportId: recv.id });
    expect(wrong).toEqual({ status: 409, body: { code: 'CONFLICT', message: expect.any(String), details: { transportId: recv.id, direction: 'recv' } } });
    const plain = await api.post('/internal/v1/data-producers', { transportId: noSctp.id });
    expect(plain).toEqual({ status: 409, body: { code: 'CONFLICT', message: expect.any(String), details: { transportId: noSctp.id, direction: 'send', enableSctp: false } } });
    await dataProducer(send.id, { sctpStreamParameters: { streamId: 3 } });
    const taken = await api.post('/internal/v1/data-producers', { transportId: send.id, sctpStreamParameters: { streamId: 3 } });
    expect(taken.status).toBe(409);
    expect(taken.body.details).toEqual({ transportId: send.id, direction: 'send', streamId: 3 });
    expect((await api.post('/internal/v1/data-producers', { transportId: UNKNOWN_ID })).body).toEqual(notFound('transport', UNKNOWN_ID));
    await expectRegistryMatchesEngine();
  });

  it('answers CONFLICT, not a 5xx, when two requests race for one stream id', async () => {
    const { send } = await room();
    const answers = await Promise.all([
      api.post('/internal/v1/data-producers', { transportId: send.id, sctpStreamParameters: { streamId: 11 } }),
      api.post('/internal/v1/data-producers', { transportId: send.id, sctpStreamParameters: { streamId: 11 } }),
      api.post('/internal/v1/data-producers', { transportId: send.id }),
      api.post('/internal/v1/data-producers', { transportId: send.id }),
    ]);
    // The two on stream 11: one wins. The two without parameters may pick the same free id: each
    // is created or refused, never a 5xx, and those created hold distinct streams.
    expect(answers.slice(0, 2).map((a) => a.status).sort()).toEqual([201, 409]);
    expect(answers.every((a) => a.status === 201 || a.status === 409)).toBe(true);
    const streams = answers.filter((a) => a.status === 201).map((a) => a.body.sctpStreamParameters.streamId);
    expect(new Set(streams).size).toBe(streams.length);
    for (const a of answers.filter((x) => x.status === 409)) {
      expect(a.body).toMatchObject({ code: 'CONFLICT', details: { transportId: send.id, direction: 'send', streamId: expect.any(Number) } });
    }
    await expectRegistryMatchesEngine();
  });

  it('bounds every field', async () => {
    const { send } = await room();
    const cases: [object, string][] = [
      [{ sctpStreamParameters: { streamId: 1024 } }, 'sctpStreamParameters.streamId'],
      [{ sctpStreamParameters: { streamId: -1 } }, 'sctpStreamParameters.streamId'],
      [{ sctpStreamParameters: {} }, 'sctpStreamParameters.streamId'],
      [{ sctpStreamParameters: { streamId: 1, ordered: false, maxPacketLifeTime: 100, maxRetransmits: 1 } }, 'sctpStreamParameters'],
      [{ sctpStreamParameters: { streamId: 1, ordered: true, maxRetransmits: 1 } }, 'sctpStreamParameters'],
      [{ sctpStreamParameters: { streamId: 1, ordered: false, maxRetransmits: 65_536 } }, 'sctpStreamParameters.maxRetransmits'],
      // maxRetransmits: 0 is accepted since issue 27 #10 (what browsers send): test/relay/data-client-values.test.ts.
      [{ label: 'x'.repeat(1025) }, 'label'],
      [{ protocol: 'x'.repeat(1025) }, 'protocol'],
      [{ appData: { a: 'x'.repeat(5000) } }, 'appData'],
      [{ transportId: '' }, 'transportId'],
    ];
    for (const [extra, path] of cases) {
      const res = await api.post('/internal/v1/data-producers', { transportId: send.id, ...extra });
      expect(res.status, path).toBe(400);
      expect(res.body.details.issues.map((i: { path: string }) => i.path), path).toContain(path);
    }
    expect((await api.post('/internal/v1/data-producers', { transportId: send.id, label: 'x'.repeat(1024) })).status).toBe(201);
  });

  it('caps data producers and consumers per transport (MEDIASOUP_MAX_DATA_CHANNELS_PER_TRANSPORT)', async () => {
    const { send, recv } = await room();
    const producers = [];
    for (let i = 0; i < 4; i++) producers.push(await dataProducer(send.id));
    const over = await api.post('/internal/v1/data-producers', { transportId: send.id });
    expect(over.status).toBe(409);
    expect(over.body.details).toEqual({ transportId: send.id, maxDataChannelsPerTransport: 4 });
    for (let i = 0; i < 4; i++) await dataConsumer(recv.id, producers[0].id);
    const overConsumers = await api.post('/internal/v1/data-consumers', { transportId: recv.id, dataProducerId: producers[1].id });
    expect(overConsumers.body.details).toEqual({ transportId: recv.id, maxDataChannelsPerTransport: 4 });
    // Closing one frees a place.
    expect((await api.del(`/internal/v1/data-producers/${producers[3].id}`)).status).toBe(204);
    expect((await dataProducer(send.id)).sctpStreamParameters.streamId).toBe(3);
    await expectRegistryMatchesEngine();
  });
});

describe('POST /internal/v1/data-consumers', () => {
  it("consumes a data producer with its label, protocol and reliability", async () => {
    const { send, recv } = await room();
    const producer = await dataProducer(send.id, { sctpStreamParameters: { streamId: 9, ordered: false, maxPacketLifeTime: 500 }, label: 'reactions', protocol: 'v1' });
    const res = await api.post('/internal/v1/data-consumers', { transportId: recv.id, dataProducerId: producer.id, appData: { peer: 'b' } });
    expect(res).toEqual({
      status: 201,
      body: {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        transportId: recv.id,
        dataProducerId: producer.id,
        sctpStreamParameters: { streamId: expect.any(Number), ordered: false, maxPacketLifeTime: 500 },
        label: 'reactions',
        protocol: 'v1',
      },
    });
    const second = await dataConsumer(recv.id, producer.id);
    expect(second.sctpStreamParameters.streamId).not.toBe(res.body.sctpStreamParameters.streamId);
    await expectRegistryMatchesEngine();
  });

  it('refuses a send transport, a transport without SCTP, another router, unknown ids', async () => {
    const { router, send, recv } = await room();
    const producer = await dataProducer(send.id);
    const noSctp = await api.transport(router.id, 'recv');
    const wrong = await api.post('/internal/v1/data-consumers', { transportId: send.id, dataProducerId: producer.id });
    expect(wrong).toEqual({ status: 409, body: { code: 'CONFLICT', message: expect.any(String), details: { transportId: send.id, direction: 'send' } } });
    const plain = await api.post('/internal/v1/data-consumers', { transportId: noSctp.id, dataProducerId: producer.id });
    expect(plain.body.details).toEqual({ transportId: noSctp.id, direction: 'recv', enableSctp: false });
    const other = await room();
    const elsewhere = await api.post('/internal/v1/data-consumers', { transportId: other.recv.id, dataProducerId: producer.id });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body).toMatchObject({ code: 'CAN_NOT_CONSUME', details: { dataProducerId: producer.id, transportId: other.recv.id } });
    expect((await api.post('/internal/v1/data-consumers', { transportId: recv.id, dataProducerId: UNKNOWN_ID })).body).toEqual(notFound('dataProducer', UNKNOWN_ID));
    expect((await api.post('/internal/v1/data-consumers', { transportId: UNKNOWN_ID, dataProducerId: producer.id })).body).toEqual(notFound('transport', UNKNOWN_ID));
    expect((await api.post('/internal/v1/data-consumers', { transportId: recv.id })).status).toBe(400);
    await expectRegistryMatchesEngine();
  });
});

describe('closing and cascades', () => {
  it('DELETE answers 204 then 404 with the data kinds', async () => {
    const { send, recv } = await room();
    const producer = await dataProducer(send.id);
    const consumer = await dataConsumer(recv.id, producer.id);
    expect((await api.del(`/internal/v1/data-consumers/${consumer.id}`)).status).toBe(204);
    expect((await api.del(`/internal/v1/data-consumers/${consumer.id}`)).body).toEqual(notFound('dataConsumer', consumer.id));
    expect((await api.del(`/internal/v1/data-producers/${producer.id}`)).status).toBe(204);
    expect((await api.del(`/internal/v1/data-producers/${producer.id}`)).body).toEqual(notFound('dataProducer', producer.id));
    await expectRegistryMatchesEngine();
  });

  it("a data producer's consumers close with it, at once in the registry", async () => {
    const { router, send, recv } = await room();
    const otherRecv = await api.transport(router.id, 'recv', { enableSctp: true });
    const producer = await dataProducer(send.id);
    const here = await dataConsumer(recv.id, producer.id);
    const there = await dataConsumer(otherRecv.id, producer.id);
    expect((await api.del(`/internal/v1/data-producers/${producer.id}`)).status).toBe(204);
    for (const consumer of [here, there]) expect((await api.del(`/internal/v1/data-consumers/${consumer.id}`)).body).toEqual(notFound('dataConsumer', consumer.id));
    await expectRegistryMatchesEngine();
  });

  it('data producers and consumers close with their transport and their router', async () => {
    const { router, send, recv } = await room();
    const producer = await dataProducer(send.id);
    const consumer = await dataConsumer(recv.id, producer.id);
    const keeps = await dataProducer((await api.transport(router.id, 'send', { enableSctp: true })).id);
    const keepsConsumer = await dataConsumer(recv.id, keeps.id);
    // The send transport takes its data producer and, through it, the consumer on the recv transport.
    expect((await api.del(`/internal/v1/transports/${send.id}`)).status).toBe(204);
    expect((await api.del(`/internal/v1/data-producers/${producer.id}`)).body).toEqual(notFound('dataProducer', producer.id));
    expect((await api.del(`/internal/v1/data-consumers/${consumer.id}`)).body).toEqual(notFound('dataConsumer', consumer.id));
    await expectRegistryMatchesEngine();
    // The router takes everything else.
    expect((await api.del(`/internal/v1/routers/${router.id}`)).status).toBe(204);
    expect((await api.del(`/internal/v1/data-consumers/${keepsConsumer.id}`)).body).toEqual(notFound('dataConsumer', keepsConsumer.id));
    expect((await api.del(`/internal/v1/data-producers/${keeps.id}`)).body).toEqual(notFound('dataProducer', keeps.id));
    await expectRegistryMatchesEngine();
  });

  it('the typed client creates and closes them', async () => {
    const client = createRelayClient({ baseUrl: 'http://relay.test', token: t.internalToken, fetch: (input, init) => t.app.request(input, init) });
    const { send, recv } = await room();
    const producer = await client.createDataProducer({ transportId: send.id, label: 'chat' });
    const consumer = await client.createDataConsumer({ transportId: recv.id, dataProducerId: producer.id });
    expect(consumer).toMatchObject({ dataProducerId: producer.id, label: 'chat' });
    await client.closeDataConsumer(consumer.id);
    await client.closeDataProducer(producer.id);
    await expect(client.closeDataProducer(producer.id)).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });
  });
});
