// Pipe transports between two relays in one process (two apps, each with its own workers and
// registry), on real workers: every endpoint's success and errors, the cascades with their events,
// the cap, the typed client's pipeProducer/followPipes, and each registry equal to mediasoup's dumps.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { types as ms } from 'mediasoup';
import { createPipes, createRelayClient, type RelayClient } from '../../src/client/relay-client.js';
import type { RelayEvent } from '../../src/relay/contract/events.js';
import { EngineWatch } from '../reliability/support/engine.js';
import { allocateRtcPorts, buildTestApp, type TestApp } from '../support/app.js';
import { allowSlowTests, opusParameters, relay, UNKNOWN_ID, vp8Parameters, waitFor } from './support.js';

allowSlowTests();

const engine = EngineWatch.start();
/** One worker's WebRtcServer port and five for pipe transports. */
const PORTS_PER_APP = 6;
const MAX_PIPES = 3;

type Ev = RelayEvent & Record<string, any>;

interface Side {
  t: TestApp;
  api: ReturnType<typeof relay>;
  client: RelayClient;
  events: Ev[];
  ports: { min: number; max: number };
}

async function side(env: Record<string, string> = {}): Promise<Side> {
  const ports = allocateRtcPorts(PORTS_PER_APP);
  const t = await buildTestApp({
    RTC_MIN_PORT: String(ports.min),
    RTC_MAX_PORT: String(ports.max),
    MEDIASOUP_PIPE_LISTEN_IP: '127.0.0.1',
    MEDIASOUP_MAX_PIPE_TRANSPORTS_PER_ROUTER: String(MAX_PIPES),
    ...env,
  }, { areas: { accounts: false } });
  const events: Ev[] = [];
  t.events.bus.listen((event) => void events.push(event as Ev));
  const client = createRelayClient({ baseUrl: 'http://relay.test', token: t.internalToken, fetch: t.app.request });
  return { t, api: relay(t), client, events, ports };
}

let a: Side;
let b: Side;
let off: Side;

beforeAll(async () => {
  a = await side();
  b = await side();
  off = await side({ MEDIASOUP_PIPE_LISTEN_IP: '' });
});
afterAll(async () => {
  for (const s of [a, b, off]) await s?.t.close();
});

const notFound = (resource: string, id: string) => ({ code: 'NOT_FOUND', message: `${resource} not found: ${id}`, details: { resource, id } });

async function pipe(s: Side, routerId: string, extra: object = {}) {
  const res = await s.api.post('/internal/v1/pipe-transports', { routerId, ...extra });
  if (res.status !== 201) throw new Error(`pipe transport: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; routerId: string; ip: string; port: number; srtpParameters?: { cryptoSuite: string; keyBase64: string } };
}

/** A connected pipe pair between a room of A and a room of B. */
async function pair(extra: object = {}) {
  const roomA = await a.api.router();
  const roomB = await b.api.router();
  const pa = await pipe(a, roomA.id, extra);
  const pb = await pipe(b, roomB.id, extra);
  const connectA = await a.api.post(`/internal/v1/pipe-transports/${pa.id}/connect`, { ip: pb.ip, port: pb.port, ...(pb.srtpParameters ? { srtpParameters: pb.srtpParameters } : {}) });
  const connectB = await b.api.post(`/internal/v1/pipe-transports/${pb.id}/connect`, { ip: pa.ip, port: pa.port, ...(pa.srtpParameters ? { srtpParameters: pa.srtpParameters } : {}) });
  expect([connectA.status, connectB.status]).toEqual([200, 200]);
  return { roomA, roomB, pa, pb };
}

function engineRouter(id: string): ms.Router {
  const router = engine.routers.find((r) => r.id === id && !r.closed);
  if (!router) throw new Error(`no open engine router ${id}`);
  return router;
}

/** Each relay's registry (GET /routers/:id, /internal/info) equals what its mediasoup routers hold (dump()). */
async function expectRegistryMatchesEngine(s: Side): Promise<void> {
  const { routers } = (await s.api.get('/internal/v1/routers')).body as { routers: { id: string }[] };
  let pipes = 0;
  for (const { id } of routers) {
    const state = (await s.api.get(`/internal/v1/routers/${id}`)).body;
    const dump = (await engineRouter(id).dump()) as unknown as { transportIds: string[] };
    const registered = [...state.transports, ...state.pipeTransports].map((x: { id: string }) => x.id);
    expect(new Set(dump.transportIds)).toEqual(new Set(registered));
    for (const p of state.pipeTransports) {
      pipes += 1;
      const transport = engine.transports.find((x) => x.id === p.id)!;
      const pd = (await transport.dump()) as unknown as { producerIds: string[]; consumerIds: string[] };
      expect(new Set(pd.producerIds)).toEqual(new Set(p.producers.map((x: { id: string }) => x.id)));
      expect(new Set(pd.consumerIds)).toEqual(new Set(p.consumers.map((x: { id: string }) => x.id)));
    }
  }
  expect((await s.api.get('/internal/info')).body.counts.pipeTransports).toBe(pipes);
}

describe('POST /internal/v1/pipe-transports', () => {
  it('creates a pipe transport with SRTP by default, on a port the WebRtcServer does not use', async () => {
    const room = await a.api.router();
    const res = await a.api.post('/internal/v1/pipe-transports', { routerId: room.id, appData: { peerRelay: 'b' } });
    expect(res).toEqual({
      status: 201,
      body: {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        routerId: room.id,
        ip: '127.0.0.1',
        port: expect.any(Number),
        srtpParameters: { cryptoSuite: expect.stringMatching(/^(AEAD_AES_256_GCM|AEAD_AES_128_GCM|AES_CM_128_HMAC_SHA1_80|AES_CM_128_HMAC_SHA1_32)$/), keyBase64: expect.any(String) },
      },
    });
    expect(res.body.port).toBeGreaterThan(a.ports.min);
    expect(res.body.port).toBeLessThanOrEqual(a.ports.max);
    const plain = await pipe(a, room.id, { enableSrtp: false });
    expect(plain.srtpParameters).toBeUndefined();
    const state = (await a.api.get(`/internal/v1/routers/${room.id}`)).body;
    expect(state.pipeTransports).toEqual([
      { id: res.body.id, connected: false, appData: { peerRelay: 'b' }, producers: [], consumers: [] },
      { id: plain.id, connected: false, appData: {}, producers: [], consumers: [] },
    ]);
    expect(state.counts).toEqual({ transports: 0, producers: 0, consumers: 0, dataProducers: 0, dataConsumers: 0 });
    await expectRegistryMatchesEngine(a);
    expect((await a.api.del(`/internal/v1/routers/${room.id}`)).status).toBe(204);
  });

  it('refuses bad bodies, unknown routers, a relay without pipes, and more than the cap per router', async () => {
    const room = await a.api.router();
    for (const body of [{}, { routerId: '' }, { routerId: 'x'.repeat(129) }, { routerId: room.id, enableSrtp: 'yes' }, { routerId: room.id, appData: 'x' }]) {
      const res = await a.api.post('/internal/v1/pipe-transports', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
    }
    expect(await a.api.post('/internal/v1/pipe-transports', { routerId: UNKNOWN_ID })).toEqual({ status: 404, body: notFound('router', UNKNOWN_ID) });
    const offRoom = await off.api.router();
    expect(await off.api.post('/internal/v1/pipe-transports', { routerId: offRoom.id })).toMatchObject({
      status: 409,
      body: { code: 'CONFLICT', details: { setting: 'MEDIASOUP_PIPE_LISTEN_IP' } },
    });
    // The cap counts creations under way: MAX_PIPES concurrent requests and one more.
    const answers = await Promise.all(Array.from({ length: MAX_PIPES + 1 }, () => a.api.post('/internal/v1/pipe-transports', { routerId: room.id })));
    expect(answers.map((r) => r.status).sort()).toEqual([...Array(MAX_PIPES).fill(201), 429]);
    expect(answers.find((r) => r.status === 429)!.body).toMatchObject({
      code: 'ROUTER_CAPACITY_EXCEEDED',
      details: { routerId: room.id, resource: 'pipeTransport', max: MAX_PIPES },
    });
    const unauthorized = await a.t.app.request('/internal/v1/pipe-transports', { method: 'POST', body: JSON.stringify({ routerId: room.id }), headers: { 'Content-Type': 'application/json' } });
    expect(unauthorized.status).toBe(401);
    await expectRegistryMatchesEngine(a);
    // Closing one frees a place.
    expect((await a.api.del(`/internal/v1/pipe-transports/${answers.find((r) => r.status === 201)!.body.id}`)).status).toBe(204);
    expect((await a.api.post('/internal/v1/pipe-transports', { routerId: room.id })).status).toBe(201);
    await a.api.del(`/internal/v1/routers/${room.id}`);
    await off.api.del(`/internal/v1/routers/${offRoom.id}`);
  });
});

describe('POST /internal/v1/pipe-transports/:id/connect', () => {
  it('connects once; a second connect is a CONFLICT; bad addresses and SRTP mismatches are refused', async () => {
    const room = await a.api.router();
    const srtp = await pipe(a, room.id);
    const plain = await pipe(a, room.id, { enableSrtp: false });
    const path = (id: string) => `/internal/v1/pipe-transports/${id}/connect`;
    const key = srtp.srtpParameters!;
    for (const body of [
      {},
      { ip: 'relay-b', port: 4000, srtpParameters: key },
      { ip: '127.0.0.2', port: 0, srtpParameters: key },
      { ip: '127.0.0.2', port: 65536, srtpParameters: key },
      { ip: '127.0.0.2', port: 4000, srtpParameters: { cryptoSuite: 'NONE', keyBase64: key.keyBase64 } },
      { ip: '127.0.0.2', port: 4000, srtpParameters: { cryptoSuite: key.cryptoSuite, keyBase64: 'x'.repeat(61) } },
      { ip: '127.0.0.2', port: 4000, srtpParameters: { cryptoSuite: key.cryptoSuite, keyBase64: 'not base64!' } },
      { ip: '127.0.0.2', port: 4000 },
    ]) {
      const res = await a.api.post(path(srtp.id), body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
    }
    expect(await a.api.post(path(plain.id), { ip: '127.0.0.2', port: 4000, srtpParameters: key })).toMatchObject({
      status: 400,
      body: { code: 'VALIDATION_ERROR', details: { issues: [{ path: 'srtpParameters' }] } },
    });
    expect(await a.api.post(path(UNKNOWN_ID), { ip: '127.0.0.2', port: 4000 })).toEqual({ status: 404, body: notFound('pipeTransport', UNKNOWN_ID) });
    expect(await a.api.post(path(srtp.id), { ip: '127.0.0.2', port: 4000, srtpParameters: key })).toEqual({ status: 200, body: { id: srtp.id, connected: true } });
    expect(await a.api.post(path(srtp.id), { ip: '127.0.0.3', port: 4000, srtpParameters: key })).toMatchObject({
      status: 409,
      body: { code: 'CONFLICT', details: { pipeTransportId: srtp.id } },
    });
    expect(await a.api.post(path(plain.id), { ip: '127.0.0.4', port: 4000 })).toEqual({ status: 200, body: { id: plain.id, connected: true } });
    expect((await a.api.get(`/internal/v1/routers/${room.id}`)).body.pipeTransports.map((p: { connected: boolean }) => p.connected)).toEqual([true, true]);
    await a.api.del(`/internal/v1/routers/${room.id}`);
  });
  it('connects only to a unicast address of the pipe\'s family: broadcast, multicast, unspecified, link-local, metadata and IPv4-mapped are refused naming ip', async () => {
    const room = await a.api.router();
    const path = (id: string) => `/internal/v1/pipe-transports/${id}/connect`;
    const plain = await pipe(a, room.id, { enableSrtp: false });
    const refused = [
      '0.0.0.0', '0.1.2.3', '255.255.255.255', '240.0.0.1', '224.0.0.1', '239.255.255.250', '169.254.169.254', '169.254.10.20', '100.100.100.200',
      // IPv6 on this IPv4 pipe (a loopback, a global one), and IPv6 forms of the above.
      '::1', '2001:db8::1', '::', 'ff02::1', 'fe80::1', '::ffff:127.0.0.1', '::ffff:169.254.169.254', 'fd00:ec2::254',
    ];
    for (const ip of refused) {
      const res = await a.api.post(path(plain.id), { ip, port: 4000 });
      expect(res, ip).toMatchObject({ status: 400, body: { code: 'VALIDATION_ERROR', details: { issues: [{ path: 'ip', message: expect.any(String) }] } } });
    }
    // None of those left the transport connected: a unicast IPv4 address still connects.
    expect(await a.api.post(path(plain.id), { ip: '127.0.0.5', port: 4000 })).toEqual({ status: 200, body: { id: plain.id, connected: true } });
    await a.api.del(`/internal/v1/routers/${room.id}`);

    // An IPv6 pipe: IPv4 targets refused, and the IPv6 classes as above; ::1 connects.
    const v6 = await side({ MEDIASOUP_PIPE_LISTEN_IP: '::1' });
    try {
      const room6 = await v6.api.router();
      const p6 = await pipe(v6, room6.id, { enableSrtp: false });
      expect(p6.ip).toBe('::1');
      for (const ip of ['127.0.0.1', '::', 'ff02::1', 'ff0e::1', 'fe80::1', 'febf::1', '::ffff:127.0.0.1', 'fd00:ec2::254']) {
        expect(await v6.api.post(path(p6.id), { ip, port: 4000 }), ip).toMatchObject({ status: 400, body: { code: 'VALIDATION_ERROR', details: { issues: [{ path: 'ip' }] } } });
      }
      expect(await v6.api.post(path(p6.id), { ip: '::1', port: 4000 })).toEqual({ status: 200, body: { id: p6.id, connected: true } });
    } finally {
      await v6.t.close();
    }
  });

  it('with MEDIASOUP_PIPE_PEER_CIDRS, connects only to addresses in those ranges (a pipe pair on 127.0.0.1 still connects and produces)', async () => {
    const fenced = await side({ MEDIASOUP_PIPE_PEER_CIDRS: '127.0.0.1/32, fdaa::/16' });
    try {
      const room = await fenced.api.router();
      const path = (id: string) => `/internal/v1/pipe-transports/${id}/connect`;
      const p = await pipe(fenced, room.id, { enableSrtp: false });
      for (const ip of ['127.0.0.2', '192.0.2.1', '8.8.8.8']) {
        expect(await fenced.api.post(path(p.id), { ip, port: 4000 }), ip).toMatchObject({
          status: 400,
          body: { code: 'VALIDATION_ERROR', details: { issues: [{ path: 'ip', message: expect.stringContaining('MEDIASOUP_PIPE_PEER_CIDRS') }] } },
        });
      }
      // A relay of the allowed range: a full pipe from A, and the piped producer is consumable on this side.
      const roomA = await a.api.router();
      const pa = await pipe(a, roomA.id);
      const pf = await pipe(fenced, room.id);
      expect((await a.api.post(path(pa.id), { ip: pf.ip, port: pf.port, srtpParameters: pf.srtpParameters })).status).toBe(200);
      expect(await fenced.api.post(path(pf.id), { ip: pa.ip, port: pa.port, srtpParameters: pa.srtpParameters })).toEqual({ status: 200, body: { id: pf.id, connected: true } });
      const sendA = await a.api.transport(roomA.id, 'send');
      const producer = await a.api.producer(sendA.id, 'audio');
      const consumed = (await a.api.post(`/internal/v1/pipe-transports/${pa.id}/consumers`, { producerId: producer.id })).body;
      const produced = await fenced.api.post(`/internal/v1/pipe-transports/${pf.id}/producers`, { producerId: producer.id, kind: 'audio', rtpParameters: consumed.rtpParameters });
      expect(produced.status).toBe(201);
      await a.api.del(`/internal/v1/routers/${roomA.id}`);
    } finally {
      await fenced.t.close();
    }
  });
});

describe('pipe consumers and pipe producers', () => {
  it('carries a producer of A into a room of B under its own id, where it is consumable like any other', async () => {
    const { roomA, roomB, pa, pb } = await pair();
    const sendA = await a.api.transport(roomA.id, 'send');
    const producer = await a.api.producer(sendA.id, 'video', { appData: { peer: 'alice' } });

    const consumed = await a.api.post(`/internal/v1/pipe-transports/${pa.id}/consumers`, { producerId: producer.id });
    expect(consumed).toEqual({
      status: 201,
      body: { id: expect.stringMatching(/^[0-9a-f-]{36}$/), producerId: producer.id, kind: 'video', rtpParameters: expect.any(Object), paused: false, producerPaused: false },
    });
    const produced = await b.api.post(`/internal/v1/pipe-transports/${pb.id}/producers`, {
      producerId: producer.id,
      kind: consumed.body.kind,
      rtpParameters: consumed.body.rtpParameters,
      appData: { peer: 'alice', from: 'relay-a' },
    });
    expect(produced).toEqual({ status: 201, body: { id: producer.id, kind: 'video', paused: false } });

    // On B: an ordinary producer of the room, in GET /routers/:id under its pipe transport.
    const stateB = (await b.api.get(`/internal/v1/routers/${roomB.id}`)).body;
    expect(stateB.counts).toEqual({ transports: 0, producers: 1, consumers: 0, dataProducers: 0, dataConsumers: 0 });
    expect(stateB.pipeTransports).toEqual([
      { id: pb.id, connected: true, appData: {}, producers: [{ id: producer.id, kind: 'video', paused: false, appData: { peer: 'alice', from: 'relay-a' } }], consumers: [] },
    ]);
    const stateA = (await a.api.get(`/internal/v1/routers/${roomA.id}`)).body;
    expect(stateA.pipeTransports[0].consumers).toEqual([{ id: consumed.body.id, producerId: producer.id, paused: false, producerPaused: false, appData: {} }]);
    const recvB = await b.api.transport(roomB.id, 'recv');
    const consumerB = await b.api.consumer(recvB.id, producer.id, roomB.rtpCapabilities);
    expect(consumerB).toMatchObject({ producerId: producer.id, kind: 'video', paused: true });
    // Its pause reaches the consumer of B, with the events of any producer.
    expect((await b.api.post(`/internal/v1/producers/${producer.id}/pause`)).status).toBe(200);
    await waitFor('producer.paused on B', () => b.events.some((e) => e.type === 'producer.paused' && e.producerId === producer.id && e.transportId === pb.id));
    expect((await b.api.post(`/internal/v1/producers/${producer.id}/resume`)).status).toBe(200);
    await expectRegistryMatchesEngine(a);
    await expectRegistryMatchesEngine(b);

    // Closing the producer on A closes the pipe consumer on A (producer_closed).
    expect((await a.api.del(`/internal/v1/producers/${producer.id}`)).status).toBe(204);
    const closedOnA = await waitFor('consumer.closed on A', () => a.events.find((e) => e.type === 'consumer.closed' && e.consumerId === consumed.body.id));
    expect(closedOnA).toMatchObject({ producerId: producer.id, transportId: pa.id, routerId: roomA.id, reason: 'producer_closed' });
    // The signaling server then closes the piped producer on B: its consumers close (producer_closed).
    expect((await b.api.del(`/internal/v1/producers/${producer.id}`)).status).toBe(204);
    expect(b.events.find((e) => e.type === 'producer.closed' && e.producerId === producer.id)).toMatchObject({ transportId: pb.id, reason: 'api' });
    expect(b.events.find((e) => e.type === 'consumer.closed' && e.consumerId === consumerB.id)).toMatchObject({ reason: 'producer_closed' });
    await expectRegistryMatchesEngine(a);
    await expectRegistryMatchesEngine(b);
    await a.api.del(`/internal/v1/routers/${roomA.id}`);
    await b.api.del(`/internal/v1/routers/${roomB.id}`);
  });

  it('answers every error of the consumer and producer endpoints', async () => {
    const { roomA, roomB, pa, pb } = await pair();
    const other = await a.api.router();
    const sendA = await a.api.transport(roomA.id, 'send');
    const sendOther = await a.api.transport(other.id, 'send');
    const producer = await a.api.producer(sendA.id, 'audio');
    const elsewhere = await a.api.producer(sendOther.id, 'audio');
    const consumers = (id: string) => `/internal/v1/pipe-transports/${id}/consumers`;
    const producers = (id: string) => `/internal/v1/pipe-transports/${id}/producers`;

    for (const body of [{}, { producerId: '' }, { producerId: 'x'.repeat(129) }]) expect((await a.api.post(consumers(pa.id), body)).status).toBe(400);
    expect(await a.api.post(consumers(UNKNOWN_ID), { producerId: producer.id })).toEqual({ status: 404, body: notFound('pipeTransport', UNKNOWN_ID) });
    expect(await a.api.post(consumers(pa.id), { producerId: UNKNOWN_ID })).toEqual({ status: 404, body: notFound('producer', UNKNOWN_ID) });
    expect(await a.api.post(consumers(pa.id), { producerId: elsewhere.id })).toMatchObject({
      status: 400,
      body: { code: 'CAN_NOT_CONSUME', details: { producerId: elsewhere.id, routerId: roomA.id, reason: 'producer belongs to another router' } },
    });
    const consumed = (await a.api.post(consumers(pa.id), { producerId: producer.id })).body;

    const good = { producerId: producer.id, kind: 'audio', rtpParameters: consumed.rtpParameters };
    for (const body of [{}, { ...good, kind: 'text' }, { ...good, rtpParameters: { codecs: [] } }, { ...good, producerId: '' }, { ...good, paused: 1 }]) {
      const res = await b.api.post(producers(pb.id), body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect(await b.api.post(producers(UNKNOWN_ID), good)).toEqual({ status: 404, body: notFound('pipeTransport', UNKNOWN_ID) });
    // Concurrent requests for one id: one producer, the other refused.
    const both = await Promise.all([b.api.post(producers(pb.id), good), b.api.post(producers(pb.id), good)]);
    expect(both.map((r) => r.status).sort()).toEqual([201, 409]);
    // An id already present in the room (or anywhere on the relay) is a CONFLICT naming where it is.
    expect(await b.api.post(producers(pb.id), good)).toMatchObject({
      status: 409,
      body: { code: 'CONFLICT', details: { producerId: producer.id, routerId: roomB.id, transportId: pb.id } },
    });
    const sendB = await b.api.transport(roomB.id, 'send');
    const local = await b.api.producer(sendB.id, 'audio');
    expect(await b.api.post(producers(pb.id), { ...good, producerId: local.id })).toMatchObject({ status: 409, body: { details: { producerId: local.id, transportId: sendB.id } } });
    // A paused pipe producer: its consumers on B start with producerPaused.
    const otherSsrcs = structuredClone(consumed.rtpParameters);
    for (const encoding of otherSsrcs.encodings) encoding.ssrc += 1000;
    // Under another id but with the same ssrcs: the engine's clash, a CONFLICT too.
    expect(await b.api.post(producers(pb.id), { ...good, producerId: UNKNOWN_ID.replace(/0$/, '2') })).toMatchObject({ status: 409, body: { code: 'CONFLICT' } });
    for (const encoding of otherSsrcs.encodings) if (encoding.rtx) encoding.rtx.ssrc += 1000;
    const paused = await b.api.post(producers(pb.id), { ...good, producerId: UNKNOWN_ID.replace(/0$/, '1'), rtpParameters: otherSsrcs, paused: true });
    expect(paused).toEqual({ status: 201, body: { id: UNKNOWN_ID.replace(/0$/, '1'), kind: 'audio', paused: true } });
    await expectRegistryMatchesEngine(a);
    await expectRegistryMatchesEngine(b);
    for (const id of [roomA.id, other.id]) await a.api.del(`/internal/v1/routers/${id}`);
    await b.api.del(`/internal/v1/routers/${roomB.id}`);
  });

  it('refuses a pipe producer id another resource of the relay holds (any kind) with 409, and an id outside [A-Za-z0-9_-]{1,64} with 400', async () => {
    const { roomA, roomB, pa, pb } = await pair();
    const sendA = await a.api.transport(roomA.id, 'send');
    const producer = await a.api.producer(sendA.id, 'audio');
    const consumed = (await a.api.post(`/internal/v1/pipe-transports/${pa.id}/consumers`, { producerId: producer.id })).body;
    const producers = `/internal/v1/pipe-transports/${pb.id}/producers`;
    const good = { producerId: producer.id, kind: 'audio', rtpParameters: consumed.rtpParameters };

    // Resources of every kind on B (one worker: they share mediasoup's id space with the pipe producer).
    const sendB = await b.api.transport(roomB.id, 'send', { enableSctp: true });
    const recvB = await b.api.transport(roomB.id, 'recv', { enableSctp: true });
    const localB = await b.api.producer(sendB.id, 'audio');
    const consumerB = await b.api.consumer(recvB.id, localB.id, roomB.rtpCapabilities);
    const dataProducerB = (await b.api.post('/internal/v1/data-producers', { transportId: sendB.id })).body as { id: string };
    const dataConsumerB = (await b.api.post('/internal/v1/data-consumers', { transportId: recvB.id, dataProducerId: dataProducerB.id })).body as { id: string };
    const taken = { router: roomB.id, transport: sendB.id, pipeTransport: pb.id, consumer: consumerB.id, dataProducer: dataProducerB.id, dataConsumer: dataConsumerB.id };
    for (const [resource, id] of Object.entries(taken)) {
      expect(id, resource).toMatch(/^[0-9a-f-]{36}$/);
      const res = await b.api.post(producers, { ...good, producerId: id });
      expect(res, resource).toMatchObject({ status: 409, body: { code: 'CONFLICT', details: { producerId: id, resource } } });
    }
    // An id only the engine knows (the room's active-speaker observer: not a resource of the API) is
    // refused by the engine; that refusal is a CONFLICT too, not a 500.
    const speakerRoom = await b.api.router({ speakerDetection: { activeSpeaker: true } });
    const dump = (await engineRouter(speakerRoom.id).dump()) as unknown as { rtpObserverIds: string[] };
    const hidden = dump.rtpObserverIds[0]!;
    expect(hidden).toMatch(/^[0-9a-f-]{36}$/);
    const pipeS = await pipe(b, speakerRoom.id);
    const clash = await b.api.post(`/internal/v1/pipe-transports/${pipeS.id}/producers`, { ...good, producerId: hidden });
    expect(clash, 'observer id').toMatchObject({ status: 409, body: { code: 'CONFLICT' } });
    // Outside the documented character set: refused before the engine, naming the field.
    for (const producerId of ['', 'x'.repeat(65), 'a b', 'a/b', 'é', 'a\u0000b', '../x', 'a.b']) {
      const res = await b.api.post(producers, { ...good, producerId });
      expect(res, JSON.stringify(producerId)).toMatchObject({ status: 400, body: { code: 'VALIDATION_ERROR', details: { issues: [{ path: 'producerId' }] } } });
    }
    // 64 characters of the set, and a mediasoup UUID, are accepted.
    expect((await b.api.post(producers, { ...good, producerId: `A_-${'z9'.repeat(30)}0` })).status).toBe(201);
    expect((await b.api.post(producers, good)).status).toBe(409); // ssrc clash with the one above, no 500
    await expectRegistryMatchesEngine(b);
    await a.api.del(`/internal/v1/routers/${roomA.id}`);
    for (const id of [roomB.id, speakerRoom.id]) await b.api.del(`/internal/v1/routers/${id}`);
  });

  it('closes in cascade: a pipe transport takes its pipe producers (and their consumers) and pipe consumers with it, a router its pipe transports', async () => {
    const { roomA, roomB, pa, pb } = await pair();
    const sendA = await a.api.transport(roomA.id, 'send');
    const producer = await a.api.producer(sendA.id, 'audio');
    const consumed = (await a.api.post(`/internal/v1/pipe-transports/${pa.id}/consumers`, { producerId: producer.id })).body;
    await b.api.post(`/internal/v1/pipe-transports/${pb.id}/producers`, { producerId: producer.id, kind: 'audio', rtpParameters: consumed.rtpParameters });
    const recvB = await b.api.transport(roomB.id, 'recv');
    const consumerB = await b.api.consumer(recvB.id, producer.id, roomB.rtpCapabilities);

    expect((await b.api.del(`/internal/v1/pipe-transports/${pb.id}`)).status).toBe(204);
    const closes = b.events.filter((e) => e.type.endsWith('.closed') && [pb.id, producer.id, consumerB.id].includes(e.pipeTransportId ?? e.consumerId ?? e.producerId));
    expect(closes.map((e) => [e.type, e.reason])).toEqual([
      ['consumer.closed', 'producer_closed'],
      ['producer.closed', 'transport_closed'],
      ['pipeTransport.closed', 'api'],
    ]);
    expect(await b.api.del(`/internal/v1/pipe-transports/${pb.id}`)).toEqual({ status: 404, body: notFound('pipeTransport', pb.id) });
    expect((await b.api.get(`/internal/v1/routers/${roomB.id}`)).body.counts).toEqual({ transports: 1, producers: 0, consumers: 0, dataProducers: 0, dataConsumers: 0 });

    // On A: the router's close takes the pipe transport (router_closed) and its pipe consumer (transport_closed).
    expect((await a.api.del(`/internal/v1/routers/${roomA.id}`)).status).toBe(204);
    expect(a.events.find((e) => e.type === 'pipeTransport.closed' && e.pipeTransportId === pa.id)).toMatchObject({ routerId: roomA.id, reason: 'router_closed' });
    expect(a.events.find((e) => e.type === 'consumer.closed' && e.consumerId === consumed.id)).toMatchObject({ transportId: pa.id });
    await b.api.del(`/internal/v1/routers/${roomB.id}`);
    await expectRegistryMatchesEngine(a);
    await expectRegistryMatchesEngine(b);
  });
});

describe('typed client: pipeProducer and followPipes', () => {
  it('pipes with one transport pair per pair of rooms, and closes the piped producer on B when its producer on A closes', async () => {
    const roomA = await a.client.createRouter();
    const roomB = await b.client.createRouter();
    const sendA = await a.client.createTransport({ routerId: roomA.id, direction: 'send' });
    const audio = await a.client.createProducer({ transportId: sendA.id, kind: 'audio', rtpParameters: opusParameters() });
    const video = await a.client.createProducer({ transportId: sendA.id, kind: 'video', rtpParameters: vp8Parameters() });
    const pipes = createPipes();
    const from = { relay: a.client, routerId: roomA.id };
    const to = { relay: b.client, routerId: roomB.id };
    const [pipedAudio, pipedVideo] = await Promise.all([
      pipes.pipeProducer({ from, to, producerId: audio.id }),
      pipes.pipeProducer({ from, to, producerId: video.id }),
    ]);
    expect(pipedAudio.from.pipeTransportId).toBe(pipedVideo.from.pipeTransportId);
    expect(pipedAudio.to.pipeTransportId).toBe(pipedVideo.to.pipeTransportId);
    expect(await pipes.pipeProducer({ from, to, producerId: audio.id })).toBe(pipedAudio);
    expect((await a.client.getRouter(roomA.id)).pipeTransports).toHaveLength(1);
    expect((await b.client.getRouter(roomB.id)).pipeTransports).toHaveLength(1);
    const stateB = await b.client.getRouter(roomB.id);
    expect(stateB.pipeTransports[0]!.producers.map((p) => p.id).sort()).toEqual([audio.id, video.id].sort());

    const recvB = await b.client.createTransport({ routerId: roomB.id, direction: 'recv' });
    const consumerB = await b.client.createConsumer({ transportId: recvB.id, producerId: audio.id, rtpCapabilities: roomB.rtpCapabilities as never });

    // The signaling server follows A's events (here, the bus of A's app, fed as the stream would be).
    const handled: Promise<void>[] = [];
    const stop = a.t.events.bus.listen((event) => void handled.push(pipes.handleEvent(event)));
    try {
      // A's producer paused and resumed: its copy on B follows, and B's consumer sees it.
      await a.client.pauseProducer(audio.id);
      await waitFor('the piped producer paused on B', async () => (await b.client.getRouter(roomB.id)).pipeTransports[0]!.producers.find((p) => p.id === audio.id)?.paused === true);
      expect(b.events.find((e) => e.type === 'consumer.paused' && e.consumerId === consumerB.id)).toBeUndefined(); // B's consumer starts paused itself
      expect((await b.client.getRouter(roomB.id)).transports[0]!.consumers[0]).toMatchObject({ id: consumerB.id, producerPaused: true });
      await a.client.resumeProducer(audio.id);
      await waitFor('the piped producer resumed on B', async () => (await b.client.getRouter(roomB.id)).pipeTransports[0]!.producers.find((p) => p.id === audio.id)?.paused === false);
      await a.client.closeProducer(audio.id);
      await waitFor('the piped producer closed on B', () => b.events.some((e) => e.type === 'consumer.closed' && e.consumerId === consumerB.id));
      await Promise.all(handled);
      expect(b.events.find((e) => e.type === 'producer.closed' && e.producerId === audio.id)).toMatchObject({ reason: 'api', transportId: pipedAudio.to.pipeTransportId });
      expect(b.events.find((e) => e.type === 'consumer.closed' && e.consumerId === consumerB.id)).toMatchObject({ reason: 'producer_closed' });
      expect(pipes.piped()).toEqual([pipedVideo]);
      // close() of a pipe: the pipe consumer on A and the producer on B.
      await pipedVideo.close();
      expect(pipes.piped()).toEqual([]);
      expect((await b.client.getRouter(roomB.id)).counts).toMatchObject({ producers: 0 });
      // A pipe transport closing on A: the client closes B's side and forgets the pair.
      await a.client.closePipeTransport(pipedAudio.from.pipeTransportId);
      await waitFor('B side of the pair closed', async () => (await b.client.getRouter(roomB.id)).pipeTransports.length === 0);
      await Promise.all(handled);
      const again = await pipes.pipeProducer({ from, to, producerId: video.id });
      expect(again.from.pipeTransportId).not.toBe(pipedAudio.from.pipeTransportId);
    } finally {
      stop();
    }
    await expectRegistryMatchesEngine(a);
    await expectRegistryMatchesEngine(b);
    await a.client.closeRouter(roomA.id);
    await b.client.closeRouter(roomB.id);
  });
});

describe('ports', () => {
  it('takes pipe ports only from what the WebRtcServers leave, and says so when none is left', async () => {
    // Two workers on the first two ports, three ports for pipe transports.
    const ports = allocateRtcPorts(5);
    const c = await side({ MEDIASOUP_WORKERS: '2', RTC_MIN_PORT: String(ports.min), RTC_MAX_PORT: String(ports.max) });
    try {
      const rooms = [await c.api.router(), await c.api.router()];
      const workerPorts = (await c.api.get('/internal/info')).body.workers.map((w: { port: number }) => w.port);
      expect(workerPorts).toEqual([ports.min, ports.min + 1]);
      const pipes = [await pipe(c, rooms[0]!.id), await pipe(c, rooms[1]!.id), await pipe(c, rooms[1]!.id)];
      expect(pipes.map((p) => p.port).sort()).toEqual([ports.min + 2, ports.min + 3, ports.min + 4]);
      expect(await c.api.post('/internal/v1/pipe-transports', { routerId: rooms[0]!.id })).toEqual({
        status: 500,
        body: {
          code: 'MEDIASOUP_ERROR',
          message: 'no port left for pipe transports: the 3 of RTC_MIN_PORT-RTC_MAX_PORT beyond the WebRtcServers are in use',
          details: { pipeTransports: 3, ports: 3 },
        },
      });
      expect((await c.api.del(`/internal/v1/pipe-transports/${pipes[0]!.id}`)).status).toBe(204);
      expect((await pipe(c, rooms[0]!.id)).port).toBe(pipes[0]!.port);
      await expectRegistryMatchesEngine(c);
    } finally {
      await c.t.close();
    }
  });
});

describe('a worker death', () => {
  it('closes the pipe transports of its routers with the events any transport gets, and leaves nothing registered', async () => {
    const c = await side({ MEDIASOUP_RESTART_BASE_MS: '100' });
    try {
      const room = await c.api.router();
      const send = await c.api.transport(room.id, 'send');
      const producer = await c.api.producer(send.id, 'audio');
      const p = await pipe(c, room.id);
      const consumed = (await c.api.post(`/internal/v1/pipe-transports/${p.id}/consumers`, { producerId: producer.id })).body;
      const pid = (await c.api.get('/internal/info')).body.workers[0].pid as number;
      process.kill(pid, 'SIGKILL');
      const closed = await waitFor('pipeTransport.closed', () => c.events.find((e) => e.type === 'pipeTransport.closed' && e.pipeTransportId === p.id));
      const transportClosed = c.events.find((e) => e.type === 'transport.closed' && e.transportId === send.id)!;
      expect(closed.reason).toBe(transportClosed.reason);
      const consumerClosed = c.events.find((e) => e.type === 'consumer.closed' && e.consumerId === consumed.id);
      expect(consumerClosed).toBeDefined();
      const { counts } = (await c.api.get('/internal/info')).body;
      expect(Object.values(counts).every((n) => n === 0), JSON.stringify(counts)).toBe(true);
      expect(await c.api.del(`/internal/v1/pipe-transports/${p.id}`)).toEqual({ status: 404, body: notFound('pipeTransport', p.id) });
      await waitFor('the worker restarted', async () => (await c.api.get('/internal/info')).body.workers[0].alive === true);
    } finally {
      await c.t.close();
    }
  });
});

describe('a room over two workers', () => {
  it('pipes a producer of one worker to the pipe transport on the other, and releases that copy with the pipe consumer', async () => {
    const c = await side({ MEDIASOUP_WORKERS: '2', MEDIASOUP_WORKER_MAX_CONSUMERS: '1' });
    try {
      const pids = ((await c.api.get('/internal/info')).body.workers as { pid: number }[]).map((w) => w.pid);
      const room = await c.api.router();
      const send = await c.api.transport(room.id, 'send');
      const producer = await c.api.producer(send.id, 'video');
      // One consumer fills the first worker (limit 1): what the room opens next goes to the second.
      const recv = await c.api.transport(room.id, 'recv');
      await c.api.consumer(recv.id, producer.id, room.rtpCapabilities);
      const p = await pipe(c, room.id);
      const roomEntry = c.t.roomOf(room.id)!;
      const homePid = (await c.api.get(`/internal/v1/routers/${room.id}`)).body.transports[0].workerPid as number;
      expect(roomEntry.parts.size).toBe(2);
      const otherPid = pids.find((pid) => pid !== homePid)!;

      const consumed = await c.api.post(`/internal/v1/pipe-transports/${p.id}/consumers`, { producerId: producer.id });
      expect(consumed).toMatchObject({ status: 201, body: { producerId: producer.id, kind: 'video' } });
      // The producer was piped to the pipe transport's worker once, and that copy lives there.
      const copies = c.t.roomOf(room.id)!.pipes.get(producer.id)!;
      expect([...copies.keys()].map((w) => w.pid)).toEqual([otherPid]);

      // The pipe consumer was the copy's only user: closing its pipe transport releases the copy.
      expect((await c.api.del(`/internal/v1/pipe-transports/${p.id}`)).status).toBe(204);
      await waitFor('the copy released', () => c.t.roomOf(room.id)!.pipes.get(producer.id) === undefined);
      expect(c.events.find((e) => e.type === 'consumer.closed' && e.consumerId === consumed.body.id)).toMatchObject({ reason: 'transport_closed' });
      expect((await c.api.del(`/internal/v1/routers/${room.id}`)).status).toBe(204);
      const { counts } = (await c.api.get('/internal/info')).body;
      expect(Object.values(counts).every((n) => n === 0), JSON.stringify(counts)).toBe(true);
    } finally {
      await c.t.close();
    }
  });
});

describe('the end', () => {
  it('leaves both relays and their engines empty', async () => {
    for (const s of [a, b, off]) {
      const { counts } = (await s.api.get('/internal/info')).body;
      expect(Object.values(counts).every((n) => n === 0), JSON.stringify(counts)).toBe(true);
    }
    expect(engine.open()).toEqual({ routers: 0, transports: 0, producers: 0, consumers: 0, dataProducers: 0, dataConsumers: 0 });
  });
});
