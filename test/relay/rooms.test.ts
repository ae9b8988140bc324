// One room over two workers: placement past MEDIASOUP_WORKER_MAX_CONSUMERS, identical
// capabilities on every part, a producer piped once per worker and closed when nothing needs it,
// pause reaching the other worker, a worker death closing only its part, and the registry agreeing
// with the workers' own dumps until everything is gone. Real workers, 2 of them, a limit of 2.
import type { types as ms } from 'mediasoup';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RelayEvent } from '../../src/relay/contract/events.js';
import { allocateRtcPorts, buildTestApp, type TestApp } from '../support/app.js';
import { allowSlowTests, relay, waitFor } from './support.js';

allowSlowTests();

let t: TestApp;
let api: ReturnType<typeof relay>;
const events: RelayEvent[] = [];
beforeAll(async () => {
  // Two WebRtcServer ports and spare ones for the pipe transports between the workers.
  const ports = allocateRtcPorts(12);
  t = await buildTestApp({
    MEDIASOUP_WORKERS: '2',
    MEDIASOUP_WORKER_MAX_CONSUMERS: '2',
    MEDIASOUP_RESTART_BASE_MS: '200',
    RTC_MIN_PORT: String(ports.min),
    RTC_MAX_PORT: String(ports.max),
  }, { areas: { accounts: false } });
  api = relay(t);
  t.events.bus.listen((event) => events.push(event));
});
afterAll(async () => {
  await t?.close();
});
// A failed test leaves no room behind for the next one (worker loads decide placement).
afterEach(async () => {
  for (const { id } of (await api.get('/internal/v1/routers')).body.routers as { id: string }[]) await api.del(`/internal/v1/routers/${id}`);
});

type Room = Awaited<ReturnType<ReturnType<typeof relay>['router']>>;

async function roomState(id: string) {
  const res = await api.get(`/internal/v1/routers/${id}`);
  expect(res.status).toBe(200);
  return res.body as { workerPid: number; workerPids: number[]; transports: { id: string; workerPid: number; consumers: { id: string; producerPaused: boolean }[] }[] };
}

async function transportOn(room: Room, direction: 'send' | 'recv') {
  const transport = await api.transport(room.id, direction);
  const state = await roomState(room.id);
  return { id: transport.id, workerPid: state.transports.find((tr) => tr.id === transport.id)!.workerPid };
}

/** Two consumers of `producerId` on the room's worker: its load reaches the limit (2), so what the room opens next goes to the other worker. */
async function fillWorker(room: Room, producerId: string): Promise<void> {
  for (let i = 0; i < 2; i++) await api.consumer((await transportOn(room, 'recv')).id, producerId, room.rtpCapabilities);
}

/** A room whose video producer's worker is full, and a recv transport the room opened on the other worker. */
async function producerAcrossWorkers() {
  const room = await api.router();
  const send = await transportOn(room, 'send');
  const producer = await api.producer(send.id, 'video');
  await fillWorker(room, producer.id);
  const far = await transportOn(room, 'recv');
  expect(far.workerPid).not.toBe(send.workerPid);
  return { room, producer, far };
}

function copiesOf(roomId: string, producerId: string) {
  return t.roomOf(roomId)?.pipes.get(producerId);
}

/**
 * What the registry holds equals what the workers hold: the same routers, and on each part the
 * public producers and consumers plus exactly the piped copies and pipe consumers the room records.
 */
async function expectEngineAgrees(): Promise<void> {
  const rooms = (await api.get('/internal/v1/routers')).body.routers as { id: string }[];
  const partRouters = new Map<string, ms.Router>();
  for (const { id } of rooms) for (const part of t.roomOf(id)!.parts.values()) partRouters.set(part.router.id, part.router);
  const dumped: string[] = [];
  for (const slot of t.media.pool.slots) if (slot.worker) dumped.push(...((await slot.worker.dump()) as { routerIds: string[] }).routerIds);
  expect(dumped.sort()).toEqual([...partRouters.keys()].sort());
  for (const { id } of rooms) {
    const room = t.roomOf(id)!;
    const state = await roomState(id);
    for (const part of room.parts.values()) {
      const dump = (await part.router.dump()) as { mapProducerIdConsumerIds: { key: string }[] | Record<string, unknown>; mapConsumerIdProducerId: { key: string }[] | Record<string, unknown> };
      const keys = (m: { key: string }[] | Record<string, unknown>) => (Array.isArray(m) ? m.map((e) => e.key) : Object.keys(m)).sort();
      const here = state.transports.filter((tr) => tr.workerPid === part.worker.pid);
      const producers = here.flatMap((tr) => (tr as unknown as { producers: { id: string }[] }).producers.map((p) => p.id));
      const consumers = here.flatMap((tr) => tr.consumers.map((c) => c.id));
      const copiesHere: string[] = [];
      const pipeConsumersHere: string[] = [];
      for (const copies of room.pipes.values()) {
        for (const copy of copies.values()) {
          if (copy.target === part) copiesHere.push(copy.producerId);
          else if (producers.includes(copy.producerId) && copy.pipeConsumer) pipeConsumersHere.push(copy.pipeConsumer.id);
        }
      }
      expect(keys(dump.mapProducerIdConsumerIds)).toEqual([...producers, ...copiesHere].sort());
      expect(keys(dump.mapConsumerIdProducerId)).toEqual([...consumers, ...pipeConsumersHere].sort());
    }
  }
}

async function closeRoom(room: Room): Promise<void> {
  expect((await api.del(`/internal/v1/routers/${room.id}`)).status).toBe(204);
}

describe('a room over two workers', () => {
  it('places transports on the room’s worker until it carries MEDIASOUP_WORKER_MAX_CONSUMERS consumers, then on the other, with identical capabilities', async () => {
    const room = await api.router({ appData: { room: 'spread' } });
    const home = (await roomState(room.id)).workerPid;
    const send = await transportOn(room, 'send');
    const producer = await api.producer(send.id, 'video');
    const r1 = await transportOn(room, 'recv');
    const r2 = await transportOn(room, 'recv');
    expect([send.workerPid, r1.workerPid, r2.workerPid]).toEqual([home, home, home]);
    await api.consumer(r1.id, producer.id, room.rtpCapabilities);
    await api.consumer(r2.id, producer.id, room.rtpCapabilities);
    // The home worker now carries 2 consumers: the next transport goes to the other worker.
    const r3 = await transportOn(room, 'recv');
    expect(r3.workerPid).not.toBe(home);
    const state = await roomState(room.id);
    expect(state.workerPids).toEqual([home, r3.workerPid]);
    expect(state.workerPid).toBe(home);
    const parts = [...t.roomOf(room.id)!.parts.values()];
    expect(parts).toHaveLength(2);
    expect(parts[1]!.router.rtpCapabilities).toEqual(parts[0]!.router.rtpCapabilities);
    expect(parts[0]!.router.rtpCapabilities).toEqual(room.rtpCapabilities);
    // A consumer there answers like any other.
    const c3 = await api.consumer(r3.id, producer.id, room.rtpCapabilities);
    expect(c3).toMatchObject({ producerId: producer.id, kind: 'video', paused: true, producerPaused: false });
    // /internal/info counts what each worker holds.
    const info = (await api.get('/internal/info')).body as { workers: { pid: number; routers: number; counts: { consumers: number; transports: number } }[] };
    const byPid = new Map(info.workers.map((w) => [w.pid, w]));
    expect(byPid.get(home)).toMatchObject({ routers: 1, counts: { consumers: 2, transports: 3 } });
    expect(byPid.get(r3.workerPid)).toMatchObject({ routers: 1, counts: { consumers: 1, transports: 1 } });
    await expectEngineAgrees();
    await closeRoom(room);
  });

  it('pipes a producer to another worker once, reuses the pipe, and closes it with the last consumer there or with the producer', async () => {
    const { room, producer, far } = await producerAcrossWorkers();
    const a = await api.consumer(far.id, producer.id, room.rtpCapabilities);
    const copies = copiesOf(room.id, producer.id)!;
    expect(copies.size).toBe(1);
    const copy = [...copies.values()][0]!;
    const b = await api.consumer(far.id, producer.id, room.rtpCapabilities);
    expect([...copiesOf(room.id, producer.id)!.values()]).toEqual([copy]);
    await expectEngineAgrees();

    // The first consumer's close leaves the pipe to the second; the second's close takes it.
    expect((await api.del(`/internal/v1/consumers/${a.id}`)).status).toBe(204);
    expect(copy.pipeConsumer!.closed).toBe(false);
    expect((await api.del(`/internal/v1/consumers/${b.id}`)).status).toBe(204);
    expect(copy.pipeConsumer!.closed).toBe(true);
    expect(copiesOf(room.id, producer.id)).toBeUndefined();
    await expectEngineAgrees();

    // A new consumer there pipes again; the producer's close closes it and the pipe, with the usual event.
    const c = await api.consumer(far.id, producer.id, room.rtpCapabilities);
    const again = [...copiesOf(room.id, producer.id)!.values()][0]!;
    expect(again).not.toBe(copy);
    const seen = events.length;
    expect((await api.del(`/internal/v1/producers/${producer.id}`)).status).toBe(204);
    const closed = await waitFor('consumer.closed', () => events.slice(seen).find((e) => e.type === 'consumer.closed' && e.consumerId === c.id));
    expect(closed).toMatchObject({ reason: 'producer_closed', producerId: producer.id, transportId: far.id });
    expect(again.pipeConsumer!.closed).toBe(true);
    expect(copiesOf(room.id, producer.id)).toBeUndefined();
    await expectEngineAgrees();
    await closeRoom(room);
  });

  it('a producer paused and resumed reaches its consumers on the other worker, with the same events', async () => {
    const { room, producer, far } = await producerAcrossWorkers();
    const c = await api.consumer(far.id, producer.id, room.rtpCapabilities);
    expect((await api.post(`/internal/v1/consumers/${c.id}/resume`)).status).toBe(200);

    let seen = events.length;
    expect((await api.post(`/internal/v1/producers/${producer.id}/pause`)).status).toBe(200);
    const paused = await waitFor('consumer.paused', () => events.slice(seen).find((e) => e.type === 'consumer.paused' && e.consumerId === c.id));
    expect(paused).toMatchObject({ by: 'producer', producerId: producer.id, transportId: far.id, routerId: room.id });
    const consumerState = async () => (await roomState(room.id)).transports.find((tr) => tr.id === far.id)!.consumers[0]!;
    expect((await consumerState()).producerPaused).toBe(true);

    seen = events.length;
    expect((await api.post(`/internal/v1/producers/${producer.id}/resume`)).status).toBe(200);
    const resumed = await waitFor('consumer.resumed', () => events.slice(seen).find((e) => e.type === 'consumer.resumed' && e.consumerId === c.id));
    expect(resumed).toMatchObject({ by: 'producer' });
    expect((await consumerState()).producerPaused).toBe(false);
    // A producer paused before a consumer comes: the consumer on the other worker starts producerPaused.
    expect((await api.post(`/internal/v1/producers/${producer.id}/pause`)).status).toBe(200);
    const late = await api.consumer(far.id, producer.id, room.rtpCapabilities);
    expect(late.producerPaused).toBe(true);
    // No event ever names a pipe object: every consumer and producer event is about public ids.
    const publicIds = new Set((await roomState(room.id)).transports.flatMap((tr) => tr.consumers.map((x) => x.id)));
    for (const e of events.slice(seen)) {
      if ('consumerId' in e) expect(publicIds).toContain(e.consumerId);
      if ('producerId' in e) expect(e.producerId).toBe(producer.id);
    }
    await expectEngineAgrees();
    await closeRoom(room);
  });

  it('a data producer on one worker reaches a data consumer on the other through one pipe, closed with the last data consumer', async () => {
    const room = await api.router();
    const send = await api.transport(room.id, 'send', { enableSctp: true });
    const producer = await api.producer(send.id, 'video');
    await fillWorker(room, producer.id);
    const recv = await api.transport(room.id, 'recv', { enableSctp: true });
    const state = await roomState(room.id);
    const where = (id: string) => state.transports.find((tr) => tr.id === id)!.workerPid;
    expect(where(recv.id)).not.toBe(where(send.id));
    const dataProducer = await api.post('/internal/v1/data-producers', { transportId: send.id, label: 'chat' });
    expect(dataProducer.status).toBe(201);
    const dataConsumer = await api.post('/internal/v1/data-consumers', { transportId: recv.id, dataProducerId: dataProducer.body.id });
    expect(dataConsumer.status).toBe(201);
    expect(dataConsumer.body).toMatchObject({ dataProducerId: dataProducer.body.id, label: 'chat' });
    const copy = [...copiesOf(room.id, dataProducer.body.id)!.values()][0]!;
    expect(copy.kind).toBe('dataProducer');
    expect((await api.del(`/internal/v1/data-consumers/${dataConsumer.body.id}`)).status).toBe(204);
    expect(copy.pipeConsumer!.closed).toBe(true);
    expect(copiesOf(room.id, dataProducer.body.id)).toBeUndefined();
    await closeRoom(room);
  });

  it('SIGKILL of one worker closes only its part of the room, with the events that say so; the rest goes on', { timeout: 60_000 }, async () => {
    const room = await api.router({ appData: { room: 'survivor' } });
    const sendA = await transportOn(room, 'send');
    const pa = await api.producer(sendA.id, 'video');
    const recvA1 = await transportOn(room, 'recv');
    const recvA2 = await transportOn(room, 'recv');
    await api.consumer(recvA1.id, pa.id, room.rtpCapabilities);
    await api.consumer(recvA2.id, pa.id, room.rtpCapabilities);
    const sendB = await transportOn(room, 'send');
    expect(sendB.workerPid).not.toBe(sendA.workerPid);
    const pb = await api.producer(sendB.id, 'video');
    const recvB = await transportOn(room, 'recv');
    expect(recvB.workerPid).toBe(sendB.workerPid);
    const onB = await api.consumer(recvB.id, pa.id, room.rtpCapabilities);
    const onA = await api.consumer(recvA1.id, pb.id, room.rtpCapabilities);
    await expectEngineAgrees();

    const victim = sendA.workerPid;
    const seen = events.length;
    process.kill(victim, 'SIGKILL');
    await waitFor('worker.restarted', () => events.slice(seen).some((e) => e.type === 'worker.restarted'), 15_000);
    const after = events.slice(seen);
    const died = after.find((e) => e.type === 'worker.died');
    expect(died).toMatchObject({ workerPid: victim, routerIds: [] });
    expect(after.some((e) => e.type === 'router.closed')).toBe(false);
    const transportsClosed = after.filter((e) => e.type === 'transport.closed');
    expect(transportsClosed.map((e) => [e.transportId, e.reason]).sort()).toEqual(
      [sendA.id, recvA1.id, recvA2.id].map((id) => [id, 'worker_died']).sort(),
    );
    expect(after.find((e) => e.type === 'producer.closed')).toMatchObject({ producerId: pa.id, reason: 'transport_closed' });
    expect(after.find((e) => e.type === 'consumer.closed' && e.consumerId === onB.id)).toMatchObject({ reason: 'producer_closed', transportId: recvB.id });
    expect(after.find((e) => e.type === 'consumer.closed' && e.consumerId === onA.id)).toMatchObject({ reason: 'transport_closed' });
    expect(after.some((e) => e.type === 'producer.closed' && e.producerId === pb.id)).toBe(false);

    // The room lives on the other worker: listed, its surviving part there, and it keeps working.
    const state = await roomState(room.id);
    expect(state.workerPids).toEqual([sendB.workerPid]);
    expect(state.workerPid).toBe(sendB.workerPid);
    expect(state.transports.map((tr) => tr.id).sort()).toEqual([sendB.id, recvB.id].sort());
    const fresh = await transportOn(room, 'recv');
    const consumer = await api.consumer(fresh.id, pb.id, room.rtpCapabilities);
    expect(consumer.producerId).toBe(pb.id);
    await expectEngineAgrees();

    // Closing it closes it everywhere, once.
    const before = events.length;
    await closeRoom(room);
    const closed = await waitFor('router.closed', () => events.slice(before).filter((e) => e.type === 'router.closed'));
    expect(closed).toHaveLength(1);
    expect(closed[0]).toMatchObject({ routerId: room.id, reason: 'api' });
  });

  it('a room whose parts all die closes with worker_died', { timeout: 60_000 }, async () => {
    const room = await api.router();
    const send = await transportOn(room, 'send');
    const seen = events.length;
    process.kill(send.workerPid, 'SIGKILL');
    const closed = await waitFor('router.closed', () => events.slice(seen).find((e) => e.type === 'router.closed' && e.routerId === room.id), 15_000);
    expect(closed).toMatchObject({ reason: 'worker_died' });
    expect(events.slice(seen).find((e) => e.type === 'worker.died')).toMatchObject({ routerIds: [room.id] });
    expect((await api.get(`/internal/v1/routers/${room.id}`)).status).toBe(404);
    await waitFor('restart', () => t.media.aliveWorkerCount() === 2, 15_000);
  });

  it('ends with nothing in the registry and nothing in the workers', async () => {
    const info = (await api.get('/internal/info')).body as { counts: Record<string, number> };
    expect(Object.values(info.counts).every((n) => n === 0)).toBe(true);
    for (const slot of t.media.pool.slots) {
      expect(((await slot.worker!.dump()) as { routerIds: string[] }).routerIds).toEqual([]);
    }
  });
});
