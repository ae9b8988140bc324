// State to reconcile from: GET /internal/v1/routers and GET /internal/v1/routers/:id tell a signaling
// server that restarted every room it created and everything in it, with the appData it gave.
import { describe, expect, it } from 'vitest';
import { createRelayClient, RelayClientError } from '../../src/client/relay-client.js';
import { FAMILIES } from '../../src/relay/kinds/index.js';
import { routerListSchema } from '../../src/relay/kinds/routers/contract.js';
import { allowSlowTests, dtlsParameters, UNKNOWN_ID, useRelayApp } from './support.js';

const { routerStateSchema } = FAMILIES.routers.contract;

allowSlowTests();

const { t, api } = useRelayApp({ MEDIASOUP_WORKERS: '2' });

const TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

describe('GET /internal/v1/routers and /internal/v1/routers/:id', () => {
  it('list every open router and give each one with its transports, producers and consumers', async () => {
    expect((await api.get('/internal/v1/routers')).body).toEqual({ routers: [] });
    const a = await api.router({ appData: { room: 'r-1' } });
    const b = await api.router();
    const send = await api.transport(a.id, 'send', { appData: { peer: 'alice' } });
    const recv = await api.transport(a.id, 'recv', { appData: { peer: 'bob' } });
    expect((await api.post(`/internal/v1/transports/${send.id}/connect`, { dtlsParameters: dtlsParameters() })).status).toBe(200);
    const mic = await api.producer(send.id, 'audio', { appData: { source: 'mic' } });
    const cam = await api.producer(send.id, 'video', { paused: true });
    const consumer = await api.post('/internal/v1/consumers', { transportId: recv.id, producerId: mic.id, rtpCapabilities: a.rtpCapabilities, appData: { for: 'bob' } });
    expect(consumer.status).toBe(201);

    const list = await api.get('/internal/v1/routers');
    expect(list.status).toBe(200);
    routerListSchema.strict().parse(list.body);
    const pids = (await api.get('/internal/info')).body.workers.map((w: { pid: number }) => w.pid);
    expect(list.body.routers).toEqual([
      { id: a.id, appData: { room: 'r-1' }, createdAt: expect.stringMatching(TIME), workerPid: pids[0], workerPids: [pids[0]], counts: { transports: 2, producers: 2, consumers: 1, dataProducers: 0, dataConsumers: 0 } },
      { id: b.id, appData: {}, createdAt: expect.stringMatching(TIME), workerPid: pids[1], workerPids: [pids[1]], counts: { transports: 0, producers: 0, consumers: 0, dataProducers: 0, dataConsumers: 0 } },
    ]);

    const one = await api.get(`/internal/v1/routers/${a.id}`);
    expect(one.status).toBe(200);
    routerStateSchema.parse(one.body);
    expect(one.body).toEqual({
      ...list.body.routers[0],
      rtpCapabilities: a.rtpCapabilities,
      transports: [
        {
          id: send.id,
          direction: 'send',
          workerPid: pids[0],
          connected: true,
          iceState: 'new',
          dtlsState: expect.stringMatching(/^(new|connecting)$/),
          appData: { peer: 'alice' },
          producers: [
            { id: mic.id, kind: 'audio', paused: false, appData: { source: 'mic' } },
            { id: cam.id, kind: 'video', paused: true, appData: {} },
          ],
          consumers: [],
          dataProducers: [],
          dataConsumers: [],
        },
        {
          id: recv.id,
          direction: 'recv',
          workerPid: pids[0],
          connected: false,
          iceState: 'new',
          dtlsState: 'new',
          appData: { peer: 'bob' },
          producers: [],
          consumers: [{ id: consumer.body.id, producerId: mic.id, paused: true, producerPaused: false, appData: { for: 'bob' } }],
          dataProducers: [],
          dataConsumers: [],
        },
      ],
      pipeTransports: [],
      plainTransports: [],
      whipEndpoints: [],
      whepEndpoints: [],
    });

    // Closes show at once: the producer's consumer goes with it, the closed router leaves the list.
    expect((await api.del(`/internal/v1/producers/${mic.id}`)).status).toBe(204);
    const after = (await api.get(`/internal/v1/routers/${a.id}`)).body;
    expect(after.counts).toEqual({ transports: 2, producers: 1, consumers: 0, dataProducers: 0, dataConsumers: 0 });
    expect(after.transports[1].consumers).toEqual([]);
    expect((await api.del(`/internal/v1/routers/${a.id}`)).status).toBe(204);
    expect((await api.get('/internal/v1/routers')).body.routers.map((r: { id: string }) => r.id)).toEqual([b.id]);
    expect((await api.get(`/internal/v1/routers/${a.id}`)).body).toMatchObject({ code: 'NOT_FOUND', details: { resource: 'router', id: a.id } });
    expect((await api.get(`/internal/v1/routers/${UNKNOWN_ID}`)).status).toBe(404);
    expect((await api.del(`/internal/v1/routers/${b.id}`)).status).toBe(204);
  });

  it("lists each transport's data producers and data consumers, counts them, and drops them as they close", async () => {
    const router = await api.router({ appData: { room: 'chat' } });
    const send = await api.transport(router.id, 'send', { enableSctp: true });
    const recv = await api.transport(router.id, 'recv', { enableSctp: true });
    const plain = await api.transport(router.id, 'recv');
    const chat = await api.post('/internal/v1/data-producers', { transportId: send.id, label: 'chat', protocol: 'text', appData: { channel: 'chat' } });
    const reactions = await api.post('/internal/v1/data-producers', {
      transportId: send.id,
      label: 'reactions',
      sctpStreamParameters: { streamId: 7, ordered: false, maxRetransmits: 2 },
    });
    expect([chat.status, reactions.status]).toEqual([201, 201]);
    const reader = await api.post('/internal/v1/data-consumers', { transportId: recv.id, dataProducerId: chat.body.id, appData: { for: 'bob' } });
    expect(reader.status).toBe(201);

    const state = (await api.get(`/internal/v1/routers/${router.id}`)).body;
    routerStateSchema.strict().parse(state);
    expect(state.counts).toEqual({ transports: 3, producers: 0, consumers: 0, dataProducers: 2, dataConsumers: 1 });
    const byId = Object.fromEntries(state.transports.map((tr: { id: string }) => [tr.id, tr]));
    expect(byId[send.id].dataProducers).toEqual([
      { id: chat.body.id, transportId: send.id, sctpStreamParameters: { streamId: chat.body.sctpStreamParameters.streamId, ordered: true }, label: 'chat', protocol: 'text', appData: { channel: 'chat' } },
      { id: reactions.body.id, transportId: send.id, sctpStreamParameters: { streamId: 7, ordered: false, maxRetransmits: 2 }, label: 'reactions', protocol: '', appData: {} },
    ]);
    expect(byId[send.id].dataConsumers).toEqual([]);
    expect(byId[recv.id].dataProducers).toEqual([]);
    expect(byId[recv.id].dataConsumers).toEqual([
      {
        id: reader.body.id,
        transportId: recv.id,
        dataProducerId: chat.body.id,
        sctpStreamParameters: reader.body.sctpStreamParameters,
        label: 'chat',
        protocol: 'text',
        appData: { for: 'bob' },
      },
    ]);
    expect([byId[plain.id].dataProducers, byId[plain.id].dataConsumers]).toEqual([[], []]);
    const summary = (await api.get('/internal/v1/routers')).body.routers.find((r: { id: string }) => r.id === router.id);
    expect(summary.counts).toEqual(state.counts);

    // The data producer closed: its consumer goes with it, at once.
    expect((await api.del(`/internal/v1/data-producers/${chat.body.id}`)).status).toBe(204);
    const after = (await api.get(`/internal/v1/routers/${router.id}`)).body;
    expect(after.counts).toMatchObject({ dataProducers: 1, dataConsumers: 0 });
    expect(after.transports.flatMap((tr: { dataProducers: { id: string }[] }) => tr.dataProducers.map((p) => p.id))).toEqual([reactions.body.id]);
    expect(after.transports.flatMap((tr: { dataConsumers: unknown[] }) => tr.dataConsumers)).toEqual([]);
    expect((await api.del(`/internal/v1/routers/${router.id}`)).status).toBe(204);
  });

  it('the typed client reads them (listRouters, getRouter)', async () => {
    const client = createRelayClient({ baseUrl: 'http://relay.test', token: t.internalToken, fetch: (input, init) => t.app.request(input, init) });
    const router = await client.createRouter({ appData: { room: 'typed' } });
    expect(router.routerId).toBe(router.id);
    const transport = await client.createTransport({ routerId: router.routerId, direction: 'send' });
    const { routers } = await client.listRouters();
    expect(routers.map((r) => [r.id, r.counts.transports, r.appData])).toEqual([[router.id, 1, { room: 'typed' }]]);
    const state = await client.getRouter(router.id);
    expect(state.transports.map((tr) => [tr.id, tr.direction, tr.iceState])).toEqual([[transport.id, 'send', 'new']]);
    await client.closeRouter(router.id);
    const missing = await client.getRouter(router.id).catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(RelayClientError);
    expect((missing as RelayClientError).code).toBe('NOT_FOUND');
  });
});
