import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createEventBus } from '../../src/events/bus.js';
import { relayStreamEventSchema, type RelayEventInput } from '../../src/relay/contract/events.js';
import { eventually, openStream, startStreamServer, TOKEN, useStreamServers } from './support.js';

const closed = (routerId: string): RelayEventInput => ({ type: 'router.closed', routerId, appData: { room: routerId }, reason: 'api' });

const { start, abortable } = useStreamServers();

describe('GET /internal/v1/events', () => {
  it('needs the internal token', async () => {
    const { url } = await start();
    const { response } = await openStream(url, { token: 'wrong' });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('streams every event in order with id, event and data, after a cursor', async () => {
    const { url, bus, streams } = await start();
    const { response, reader } = await openStream(url, { signal: abortable().signal });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    await reader!.until(() => reader!.comments.some((c) => c.startsWith('cursor ')), 5000, 'the cursor comment');
    expect(reader!.comments[0]).toBe(`cursor ${bus.stats().lastId}`);
    const published = Array.from({ length: 20 }, (_, i) => bus.publish(closed(`r${i}`)));
    const frames = await reader!.frameCount(20);
    expect(frames.map((f) => f.id)).toEqual(published.map((e) => e.id));
    expect(frames.map((f) => f.event)).toEqual(published.map((e) => e.type));
    expect(reader!.events()).toEqual(published.map((e) => relayStreamEventSchema.parse(e)));
    expect(streams.open()).toBe(1);
  });

  it('filters by ?routerId= (repeatable), keeping relay-wide events', async () => {
    const { url, bus } = await start();
    const { reader } = await openStream(url, { query: '?routerId=a&routerId=c', signal: abortable().signal });
    await reader!.until(() => reader!.comments.length > 0);
    bus.publish(closed('a'));
    bus.publish(closed('b'));
    bus.publish({ type: 'worker.died', workerPid: 9, routerIds: ['b'], restartInMs: 0 });
    bus.publish({ type: 'worker.died', workerPid: 10, routerIds: ['b', 'c'], restartInMs: 0 });
    bus.publish({ type: 'relay.draining' });
    bus.publish(closed('c'));
    await reader!.frameCount(4);
    expect(reader!.events().map((e) => [e.type, e.routerId ?? e.workerPid ?? null])).toEqual([
      ['router.closed', 'a'],
      ['worker.died', 10],
      ['relay.draining', null],
      ['router.closed', 'c'],
    ]);
  });

  it('refuses a bad filter with VALIDATION_ERROR in the relay error shape', async () => {
    const { url, streams } = await start();
    const tooMany = '?' + Array.from({ length: 101 }, (_, i) => `routerId=r${i}`).join('&');
    for (const query of [tooMany, `?routerId=${'x'.repeat(129)}`, '?routerId=', '?routerId=a%0Ab', '?routerId=%F0%9F%98%80']) {
      const { response } = await openStream(url, { query });
      expect(response.status, query.slice(0, 40)).toBe(400);
      expect(await response.json()).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.any(String), details: { issues: [expect.objectContaining({ path: expect.stringContaining('routerId') })] } });
    }
    const { response } = await openStream(url, { query: '?' + Array.from({ length: 100 }, (_, i) => `routerId=r${i}`).join('&'), signal: abortable().signal });
    expect(response.status).toBe(200);
    expect(streams.stats().opened).toBe(1);
  });

  it('resumes with Last-Event-ID: every missed event once, in order, then live ones', async () => {
    const { url, bus, streams } = await start();
    const first = abortable();
    const a = await openStream(url, { signal: first.signal });
    const before = Array.from({ length: 5 }, (_, i) => bus.publish(closed(`a${i}`)));
    const seen = await a.reader!.frameCount(3);
    first.abort();
    await eventually(() => streams.open() === 0, 5000, 'the first stream to close');
    expect(bus.stats().subscribers).toBe(0);
    const missed = Array.from({ length: 7 }, (_, i) => bus.publish(closed(`b${i}`)));
    const b = await openStream(url, { lastEventId: seen[2]!.id, signal: abortable().signal });
    const live = bus.publish(closed('live'));
    const frames = await b.reader!.frameCount(10);
    expect(frames.map((f) => f.id)).toEqual([...before.slice(3), ...missed, live].map((e) => e.id));
    expect(b.reader!.comments.some((c) => c.startsWith('cursor'))).toBe(false);
  });

  it('lets a client that saw nothing resume from its cursor without a gap', async () => {
    const { url, bus, streams } = await start();
    bus.publish(closed('old'));
    const first = abortable();
    const a = await openStream(url, { signal: first.signal });
    await a.reader!.until(() => a.reader!.comments.length > 0);
    const cursor = a.reader!.comments[0]!.replace('cursor ', '');
    first.abort();
    await eventually(() => streams.open() === 0);
    const missed = bus.publish(closed('while-away'));
    const b = await openStream(url, { lastEventId: cursor, signal: abortable().signal });
    expect((await b.reader!.frameCount(1))[0]!.id).toBe(missed.id);
  });

  it('starts with resync for an id beyond the buffer, never issued, of the old format, or garbage', async () => {
    const { url, bus } = await start({ bufferSize: 5 });
    const events = Array.from({ length: 12 }, (_, i) => bus.publish(closed(`r${i}`)));
    const cases: Array<[string, string]> = [
      [events[2]!.id, 'too_old'],
      ['99999', 'unknown_id'],
      ['4f1c2a9b7e01-0000000000000533', 'unknown_id'],
      ['not-an-id', 'unknown_id'],
      ['z'.repeat(5000), 'unknown_id'],
    ];
    for (const [lastEventId, reason] of cases) {
      const latest = bus.stats().lastId;
      const { reader } = await openStream(url, { lastEventId, signal: abortable().signal });
      const [resync] = await reader!.frameCount(1);
      expect(resync).toMatchObject({ event: 'resync', id: latest });
      expect(relayStreamEventSchema.parse(JSON.parse(resync!.data))).toMatchObject({ type: 'resync', reason });
      const next = bus.publish(closed('after'));
      expect((await reader!.frameCount(2))[1]!.id).toBe(next.id);
    }
  });

  it('sends a heartbeat comment on an idle stream', async () => {
    const { url } = await start({}, { heartbeatMs: 100 });
    const { reader } = await openStream(url, { signal: abortable().signal });
    await reader!.until(() => reader!.comments.filter((c) => c === 'heartbeat').length >= 2, 5000, 'two heartbeats');
  });

  it("gives a filtered stream's position on its heartbeat once other routers' events passed it, and only then", async () => {
    const { url, bus } = await start({}, { heartbeatMs: 100 });
    const filtered = (await openStream(url, { query: '?routerId=quiet', signal: abortable().signal })).reader!;
    const all = (await openStream(url, { signal: abortable().signal })).reader!;
    await filtered.until(() => filtered.comments.length > 0);
    await all.until(() => all.comments.length > 0);
    const busy = Array.from({ length: 5 }, (_, i) => bus.publish(closed(`busy${i}`)));
    await all.frameCount(5);
    await filtered.until(() => filtered.comments.includes(`cursor ${busy.at(-1)!.id}`), 5000, 'the position on a heartbeat');
    const heartbeats = (reader: typeof all) => reader.comments.filter((c) => c === 'heartbeat').length;
    const seen = heartbeats(filtered);
    await filtered.until(() => heartbeats(filtered) >= seen + 2, 5000, 'two more heartbeats');
    await all.until(() => heartbeats(all) >= 3, 5000, 'three heartbeats');
    // Said once; the unfiltered stream, given every event, never repeats an id on a heartbeat.
    expect(filtered.comments.filter((c) => c.startsWith('cursor '))).toHaveLength(2);
    expect(all.comments.filter((c) => c.startsWith('cursor '))).toHaveLength(1);
    expect(filtered.frames).toEqual([]);
  });

  it('caps the number of open streams with 503 STREAM_LIMIT_EXCEEDED, and frees a slot when a client leaves', async () => {
    const { url, streams } = await start({}, { maxStreams: 2 });
    const c1 = abortable();
    await openStream(url, { signal: c1.signal });
    await openStream(url, { signal: abortable().signal });
    const { response } = await openStream(url);
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('5');
    expect(await response.json()).toMatchObject({ code: 'STREAM_LIMIT_EXCEEDED', details: { maxStreams: 2 } });
    c1.abort();
    await eventually(() => streams.open() === 1, 5000, 'a slot to free up');
    expect((await openStream(url, { signal: abortable().signal })).response.status).toBe(200);
    expect(streams.stats()).toMatchObject({ open: 2, opened: 3, refused: 1 });
  });

  it('cuts off a subscriber that never reads, while the process memory stays flat', async () => {
    const { url, bus, streams, connections } = await start({ bufferSize: 2000, overflowGraceMs: 100 }, { maxQueued: 200 });
    const { port } = new URL(url);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.pause(); // never reads a byte
    socket.write(`GET /internal/v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Internal-Token: ${TOKEN}\r\n\r\n`);
    await eventually(() => streams.open() === 1, 5000, 'the stalled stream to open');
    const filler = 'x'.repeat(4096);
    const rssBefore = process.memoryUsage().rss;
    let published = 0;
    // Bounded: 40,000 events of ~4 KiB (160 MiB in all) at most.
    for (; published < 40_000 && streams.open() > 0; published++) {
      bus.publish({ type: 'router.closed', routerId: 'r', appData: { filler }, reason: 'api' });
      if (published % 100 === 99) await new Promise((r) => setImmediate(r));
    }
    await eventually(() => streams.open() === 0, 5000, 'the stalled stream to be cut off');
    expect(streams.stats().cutOff).toBe(1);
    expect(bus.stats()).toMatchObject({ subscribers: 0, overflows: 1 });
    await eventually(async () => (await connections()) === 0, 5000, 'the socket to be dropped');
    const growthMiB = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
    // The ring holds 2,000 events of 4 KiB (8 MiB); the socket buffers a few MiB more.
    expect(growthMiB).toBeLessThan(64);
    expect(published).toBeLessThan(40_000);
    socket.destroy();

    // A client that reads keeps its stream through the same volume.
    const { reader } = await openStream(url, { signal: abortable().signal });
    await reader!.until(() => reader!.comments.length > 0);
    for (let i = 0; i < 3000; i++) {
      bus.publish({ type: 'router.closed', routerId: 'r', appData: { filler }, reason: 'api' });
      if (i % 50 === 49) await reader!.until(() => reader!.frames.length >= i - 100);
    }
    await reader!.frameCount(3000, 20_000);
    expect(streams.stats().cutOff).toBe(1);
  });

  it('keeps a reading client through a burst of events far above its limit in one tick (a big room closing)', async () => {
    const { url, bus, streams } = await start({ overflowGraceMs: 5000 }, { maxQueued: 100 });
    const { reader } = await openStream(url, { signal: abortable().signal });
    await reader!.until(() => reader!.comments.length > 0);
    const burst = Array.from({ length: 3000 }, (_, i) => bus.publish({ type: 'consumer.closed', consumerId: `c${i}`, producerId: 'p', transportId: 't', routerId: 'r', appData: { userId: i }, reason: 'transport_closed' }));
    await reader!.frameCount(3000, 20_000);
    expect(reader!.frames.map((f) => f.id)).toEqual(burst.map((e) => e.id));
    expect(streams.stats()).toMatchObject({ open: 1, cutOff: 0 });
  });

  it('writes the events published just before close() before it ends the stream (no event lost at shutdown)', async () => {
    const s = await startStreamServer();
    const { reader } = await openStream(s.url);
    await reader!.until(() => reader!.comments.length > 0);
    // Published and closed in one tick, well within the stream's COALESCE_MS wait for a burst.
    const last = [s.bus.publish(closed('r1')), s.bus.publish(closed('r2'))];
    s.streams.close();
    await reader!.until(() => reader!.done, 5000, 'the stream to end');
    expect(reader!.frames.map((f) => f.id)).toEqual(last.map((e) => e.id));
    await s.close();
  });

  it('ends open streams gracefully on close(), so the server can shut down', async () => {
    const s = await startStreamServer();
    const { reader } = await openStream(s.url);
    await reader!.until(() => reader!.comments.length > 0);
    s.streams.close();
    await reader!.until(() => reader!.done, 5000, 'the stream to end');
    const late = await openStream(s.url);
    await late.reader!.until(() => late.reader!.done, 5000, 'a stream opened after close() to end');
    expect(late.reader!.comments).toEqual([`cursor ${s.bus.stats().lastId}`]);
    await new Promise<void>((resolve) => s.server.close(() => resolve()));
    expect(s.streams.open()).toBe(0);
  });
});

describe('GET /events without a node socket (app.request)', () => {
  it('ends the stream of a reader past its limit', async () => {
    const { Hono } = await import('hono');
    const { createEventStreams } = await import('../../src/events/sse.js');
    const bus = createEventBus({ bufferSize: 1000, overflowGraceMs: 0 });
    const streams = createEventStreams(bus, { maxQueued: 20 });
    const app = new Hono().route('/v1', streams.routes);
    const res = await app.request('/v1/events');
    expect(res.status).toBe(200);
    // Nobody reads the body: the stream's writes back up, then the bus cuts it off.
    for (let i = 0; i < 500 && streams.open() > 0; i++) {
      bus.publish(closed(`r${i}`));
      await new Promise((r) => setImmediate(r));
    }
    expect(streams.stats().cutOff).toBe(1);
    await eventually(() => streams.open() === 0, 5000, 'the stream to end');
    // What was written before the cut is readable, then the body ends.
    const text = await res.text();
    expect(text.startsWith(': cursor ')).toBe(true);
  });
});
