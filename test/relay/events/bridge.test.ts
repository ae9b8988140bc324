// The engine-fed events end to end: real workers, the app's own GET /internal/v1/events over real
// HTTP, and each action that causes an event with the reason it must carry.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RelayEvent } from '../../../src/relay/contract/events.js';
import { relayStreamEventSchema } from '../../../src/relay/contract/events.js';
import { buildTestApp, type TestApp } from '../../support/app.js';
import { allowSlowTests, opusParameters, relay } from '../support.js';
import { openStream, serveApp, type AppServer, type SseReader } from '../../events/support.js';

allowSlowTests();

type Ev = RelayEvent & Record<string, any>;

/** Every event read so far, each checked against the published schema. */
function eventsOf(reader: SseReader): Ev[] {
  return reader.frames.map((f) => {
    const event = relayStreamEventSchema.parse(JSON.parse(f.data));
    expect(f.id).toBe(event.id);
    expect(f.event).toBe(event.type);
    return event as Ev;
  });
}

async function until(reader: SseReader, predicate: (events: Ev[]) => boolean, what: string, timeoutMs = 10_000): Promise<Ev[]> {
  await reader.until(() => predicate(eventsOf(reader)), timeoutMs, what);
  return eventsOf(reader);
}

const has = (type: string, match: Record<string, unknown> = {}) => (events: Ev[]) =>
  events.some((e) => e.type === type && Object.entries(match).every(([k, v]) => e[k] === v));

describe('engine events on the stream', () => {
  let t: TestApp;
  let server: AppServer;
  let api: ReturnType<typeof relay>;
  const aborts: AbortController[] = [];

  beforeAll(async () => {
    t = await buildTestApp({ MEDIASOUP_WORKERS: '2', MEDIASOUP_RESTART_BASE_MS: '200' }, { areas: { accounts: false } });
    server = await serveApp(t);
    api = relay(t);
  });
  afterEach(() => {
    for (const a of aborts.splice(0)) a.abort();
  });
  afterAll(async () => {
    await server?.close();
    await t?.close();
  });

  async function stream(options: { query?: string; lastEventId?: string } = {}) {
    const controller = new AbortController();
    aborts.push(controller);
    const { response, reader } = await openStream(server.url, { ...options, token: t.internalToken, signal: controller.signal });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    return { reader: reader!, stop: () => controller.abort() };
  }

  /** A room: router, a send transport with one producer, a recv transport consuming it. */
  async function room(tag: string) {
    const router = await api.router({ appData: { room: tag } });
    const send = await api.transport(router.id, 'send', { appData: { room: tag, user: 'alice' } });
    const recv = await api.transport(router.id, 'recv', { appData: { room: tag, user: 'bob' } });
    const producer = await api.producer(send.id, 'audio', { appData: { room: tag, user: 'alice', track: 'mic' } });
    const consumer = await api.consumer(recv.id, producer.id, router.rtpCapabilities);
    return { router, send, recv, producer, consumer };
  }

  it('answers 401 without the token, like every /internal/ path', async () => {
    const { response } = await openStream(server.url, { token: 'wrong-token-wrong-token-wrong-token' });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { code: string }).code).toBe('UNAUTHORIZED');
  });

  it('router closed through the API: router.closed api, transport.closed router_closed for each, producer and consumer transport_closed', async () => {
    const r = await room('close-router');
    const { reader } = await stream({ query: `?routerId=${r.router.id}` });
    expect((await api.del(`/internal/v1/routers/${r.router.id}`)).status).toBe(204);
    const events = await until(reader, has('router.closed'), 'router.closed');

    // Children before parents, as mediasoup closes them: the consumer goes as its producer goes.
    expect(events.map((e) => [e.type, e.reason])).toEqual([
      ['consumer.closed', 'transport_closed'],
      ['producer.closed', 'transport_closed'],
      ['transport.closed', 'router_closed'],
      ['transport.closed', 'router_closed'],
      ['router.closed', 'api'],
    ]);
    for (const e of events) expect(e.routerId).toBe(r.router.id);
    const byType = (type: string) => events.filter((e) => e.type === type);
    expect(byType('router.closed')[0]!.appData).toEqual({ room: 'close-router' });
    expect(byType('transport.closed').map((e) => [e.transportId, e.appData])).toEqual([
      [r.send.id, { room: 'close-router', user: 'alice' }],
      [r.recv.id, { room: 'close-router', user: 'bob' }],
    ]);
    expect(byType('producer.closed')[0]).toMatchObject({ producerId: r.producer.id, transportId: r.send.id, appData: { track: 'mic' } });
    expect(byType('consumer.closed')[0]).toMatchObject({ consumerId: r.consumer.id, producerId: r.producer.id, transportId: r.recv.id });
    // Ids increase strictly within the process.
    const ids = events.map((e) => e.id);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('data channels: dataProducer.closed api, its data consumers data_producer_closed; a transport close gives transport_closed', async () => {
    const router = await api.router({ appData: { room: 'data' } });
    const send = await api.transport(router.id, 'send', { enableSctp: true });
    const recv = await api.transport(router.id, 'recv', { enableSctp: true });
    const post = async (path: string, body: object) => {
      const res = await api.post(path, body);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body as { id: string };
    };
    const chat = await post('/internal/v1/data-producers', { transportId: send.id, label: 'chat', appData: { user: 'alice' } });
    const chatIn = await post('/internal/v1/data-consumers', { transportId: recv.id, dataProducerId: chat.id, appData: { user: 'bob' } });
    const other = await post('/internal/v1/data-producers', { transportId: send.id, label: 'reactions' });
    const otherIn = await post('/internal/v1/data-consumers', { transportId: recv.id, dataProducerId: other.id });
    const { reader } = await stream({ query: `?routerId=${router.id}` });

    expect((await api.del(`/internal/v1/data-producers/${chat.id}`)).status).toBe(204);
    let events = await until(reader, has('dataProducer.closed', { dataProducerId: chat.id }), 'dataProducer.closed');
    expect(events.map((e) => [e.type, e.reason])).toEqual([
      ['dataConsumer.closed', 'data_producer_closed'],
      ['dataProducer.closed', 'api'],
    ]);
    expect(events[0]).toMatchObject({ dataConsumerId: chatIn.id, dataProducerId: chat.id, transportId: recv.id, routerId: router.id, appData: { user: 'bob' } });
    expect(events[1]).toMatchObject({ dataProducerId: chat.id, transportId: send.id, routerId: router.id, appData: { user: 'alice' } });

    expect((await api.del(`/internal/v1/transports/${recv.id}`)).status).toBe(204);
    events = await until(reader, has('transport.closed', { transportId: recv.id }), 'transport.closed');
    expect(events.slice(2).map((e) => [e.type, e.reason, e.dataConsumerId ?? e.transportId])).toEqual([
      ['dataConsumer.closed', 'transport_closed', otherIn.id],
      ['transport.closed', 'api', recv.id],
    ]);
    expect((await api.get('/internal/info')).body.counts).toMatchObject({ dataProducers: 1, dataConsumers: 0 });
    expect((await api.del(`/internal/v1/routers/${router.id}`)).status).toBe(204);
  });

  it('transport closed: transport.closed api, its producers transport_closed, their consumers elsewhere producer_closed', async () => {
    const r = await room('close-transport');
    const { reader } = await stream({ query: `?routerId=${r.router.id}` });
    expect((await api.del(`/internal/v1/transports/${r.send.id}`)).status).toBe(204);
    const events = await until(reader, has('transport.closed'), 'transport.closed');
    expect(events.map((e) => [e.type, e.reason])).toEqual([
      ['consumer.closed', 'producer_closed'],
      ['producer.closed', 'transport_closed'],
      ['transport.closed', 'api'],
    ]);
    expect(events[0]).toMatchObject({ consumerId: r.consumer.id, transportId: r.recv.id });
    expect(events[2]).toMatchObject({ transportId: r.send.id, appData: { room: 'close-transport', user: 'alice' } });
    // The recv transport stays open.
    const c = await api.producer((await api.transport(r.router.id, 'send')).id, 'audio');
    expect((await api.consumer(r.recv.id, c.id, r.router.rtpCapabilities)).id).toEqual(expect.any(String));
  });

  it('producer closed: consumer.closed producer_closed, producer.closed api; consumer closed: consumer.closed api', async () => {
    const r = await room('close-producer');
    const { reader } = await stream({ query: `?routerId=${r.router.id}` });
    expect((await api.del(`/internal/v1/producers/${r.producer.id}`)).status).toBe(204);
    let events = await until(reader, has('producer.closed'), 'producer.closed');
    expect(events.map((e) => [e.type, e.reason])).toEqual([
      ['consumer.closed', 'producer_closed'],
      ['producer.closed', 'api'],
    ]);

    const producer2 = await api.producer(r.send.id, 'audio');
    const consumer2 = await api.consumer(r.recv.id, producer2.id, r.router.rtpCapabilities);
    expect((await api.del(`/internal/v1/consumers/${consumer2.id}`)).status).toBe(204);
    events = await until(reader, has('consumer.closed', { consumerId: consumer2.id }), 'consumer.closed of the second consumer');
    expect(events.slice(2).map((e) => [e.type, e.reason, e.consumerId])).toEqual([['consumer.closed', 'api', consumer2.id]]);
  });

  it('pause and resume: producer.paused/resumed, consumer.paused/resumed with `by`', async () => {
    const router = await api.router({ appData: { room: 'pause' } });
    const send = await api.transport(router.id, 'send');
    const recv = await api.transport(router.id, 'recv');
    // Producers have no pause route yet: the op hands back the engine's producer, paused through it.
    const producer = await t.media.createProducer({ transportId: send.id, kind: 'audio', rtpParameters: opusParameters(), appData: { user: 'carol' } });
    const { consumer } = await t.media.createConsumer({ transportId: recv.id, producerId: producer.id, rtpCapabilities: router.rtpCapabilities });
    const { reader } = await stream({ query: `?routerId=${router.id}` });

    expect((await api.post(`/internal/v1/consumers/${consumer.id}/resume`)).status).toBe(200);
    await until(reader, has('consumer.resumed'), 'consumer.resumed by api');
    await producer.pause();
    await until(reader, has('consumer.paused'), 'consumer.paused by producer');
    await producer.resume();
    await until(reader, (evs) => evs.filter((e) => e.type === 'consumer.resumed').length === 2, 'consumer.resumed by producer');
    // Paused by the API, then the producer pauses and resumes meanwhile: the consumer stays paused
    // (no event for it) until the API resumes it.
    await consumer.pause();
    await producer.pause();
    await until(reader, (evs) => evs.filter((e) => e.type === 'producer.paused').length === 2, 'second producer.paused');
    await producer.resume();
    await until(reader, (evs) => evs.filter((e) => e.type === 'producer.resumed').length === 2, 'second producer.resumed');
    await new Promise((r) => setTimeout(r, 100)); // the worker's producerresume notification to the consumer, if any
    await consumer.resume();
    const events = await until(reader, (evs) => evs.filter((e) => e.type === 'consumer.resumed').length === 3, 'consumer.resumed by api');

    // Each resource's events in order. Between a producer's pause or resume and its consumer's, the
    // engine sets no order: the worker's notification to the consumer and its answer to the producer's
    // request race (either came first in CI runs), so the two sequences are checked apart.
    const of = (prefix: string) => events.filter((e) => e.type.startsWith(prefix)).map((e) => [e.type, e.by]);
    expect(of('producer.')).toEqual([
      ['producer.paused', undefined],
      ['producer.resumed', undefined],
      ['producer.paused', undefined],
      ['producer.resumed', undefined],
    ]);
    expect(of('consumer.')).toEqual([
      ['consumer.resumed', 'api'],
      ['consumer.paused', 'producer'],
      ['consumer.resumed', 'producer'],
      ['consumer.paused', 'api'],
      ['consumer.resumed', 'api'],
    ]);
    expect(events).toHaveLength(9);
    expect(events.find((e) => e.type === 'producer.paused')).toMatchObject({ producerId: producer.id, transportId: send.id, routerId: router.id, appData: { user: 'carol' } });
    expect(events.find((e) => e.type === 'consumer.paused')).toMatchObject({ consumerId: consumer.id, producerId: producer.id, transportId: recv.id, routerId: router.id });
  });

  it('a reconnect with Last-Event-ID receives every event missed while away, once, in order', async () => {
    const first = await stream();
    const r1 = await room('before');
    await api.del(`/internal/v1/routers/${r1.router.id}`);
    const seen = await until(first.reader, has('router.closed', { routerId: r1.router.id }), 'first router.closed');
    const lastSeen = seen.at(-1)!.id;
    first.stop();

    // While disconnected: published on the bus the app's media writes to (durable: without an id until
    // the event log gives them theirs).
    const published: RelayEvent[] = [];
    const unlisten = t.events.bus.listen((e) => published.push(e));
    const r2 = await room('away-1');
    const r3 = await room('away-2');
    await api.del(`/internal/v1/transports/${r2.send.id}`);
    await api.del(`/internal/v1/routers/${r3.router.id}`);
    await api.del(`/internal/v1/routers/${r2.router.id}`);
    unlisten();
    // 3 for the transport, 5 for the first router, 2 for what was left of the second.
    expect(published).toHaveLength(10);

    const again = await stream({ lastEventId: lastSeen });
    const replayed = await until(again.reader, (evs) => evs.length >= published.length, `${published.length} replayed events`);
    expect(replayed.map((e) => e.type)).not.toContain('resync');
    expect(replayed.map(({ id: _id, ...event }) => event)).toEqual(published);
    const ids = replayed.map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(ids[0]).toBeGreaterThan(Number(lastSeen));
    // Exactly those: nothing more arrives.
    await new Promise((r) => setTimeout(r, 300));
    expect(eventsOf(again.reader)).toHaveLength(published.length);
  });

  it('a worker SIGKILLed: worker.died with exactly its routers, router.closed worker_died for each, then worker.restarted', { timeout: 30_000 }, async () => {
    const routers = [];
    for (let i = 0; i < 4; i++) {
      const router = await api.router({ appData: { room: `w${i}` } });
      await api.transport(router.id, 'send');
      routers.push(router.id);
    }
    const victim = t.media.pool.slots[0]!.worker!;
    const { routerIds: held } = (await victim.dump()) as { routerIds: string[] };
    expect(held.length).toBeGreaterThan(0);
    const survivors = routers.filter((id) => !held.includes(id));
    expect(survivors.length).toBeGreaterThan(0);

    const { reader } = await stream();
    process.kill(victim.pid, 'SIGKILL');
    const events = await until(reader, has('worker.restarted'), 'worker.restarted', 15_000);

    const died = events.findIndex((e) => e.type === 'worker.died');
    expect(died).toBe(0);
    expect(events[died]).toMatchObject({ workerPid: victim.pid, restartInMs: 200 });
    expect([...events[died]!.routerIds].sort()).toEqual([...held].sort());
    const after = events.slice(died + 1);
    const closed = after.filter((e) => e.type === 'router.closed');
    expect(closed.map((e) => e.reason)).toEqual(held.map(() => 'worker_died'));
    expect(closed.map((e) => e.routerId).sort()).toEqual([...held].sort());
    for (const e of after.filter((e) => e.type === 'transport.closed')) {
      expect(e.reason).toBe('router_closed');
      expect(held).toContain(e.routerId);
    }
    // Nothing about the other worker's routers; worker.restarted comes last, with the new pid.
    expect(after.some((e) => 'routerId' in e && survivors.includes(e.routerId))).toBe(false);
    const restarted = after.at(-1)!;
    expect(restarted.type).toBe('worker.restarted');
    expect(restarted.workerPid).toBe(t.media.pool.slots[0]!.pid);
    expect(restarted.workerPid).not.toBe(victim.pid);
    for (const id of held) expect((await api.del(`/internal/v1/routers/${id}`)).status).toBe(404);
  });
});

describe('shutdown', () => {
  it('media.close() publishes router.closed shutdown, its transports router_closed', async () => {
    const t = await buildTestApp({}, { areas: { accounts: false } });
    try {
      const api = relay(t);
      const router = await api.router({ appData: { room: 'bye' } });
      const transport = await api.transport(router.id, 'send');
      const published: RelayEvent[] = [];
      t.events.bus.listen((e) => published.push(e));
      await t.media.close();
      expect(published.map((e) => [e.type, (e as Ev).reason, (e as Ev).routerId])).toEqual([
        ['transport.closed', 'router_closed', router.id],
        ['router.closed', 'shutdown', router.id],
      ]);
      expect(published[0]).toMatchObject({ transportId: transport.id });
    } finally {
      await t.close();
    }
  });
});
