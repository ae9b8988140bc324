import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createRelayClient, RelayClientError, type RelayStreamEvent } from '../../src/client/relay-client.js';
import type { RelayEventInput } from '../../src/relay/contract/events.js';
import { eventually, TOKEN, useStreamServers } from '../events/support.js';

const closed = (routerId: string): RelayEventInput => ({ type: 'router.closed', routerId, appData: { room: routerId }, reason: 'api' });

const { start, abortable: signal } = useStreamServers();

/** Reads from the iterator in the background, collecting what it yields. */
function collect(iterator: AsyncIterator<RelayStreamEvent>) {
  const got: RelayStreamEvent[] = [];
  let error: unknown;
  const done = (async () => {
    try {
      for (;;) {
        const r = await iterator.next();
        if (r.done) return;
        got.push(r.value);
      }
    } catch (e) {
      error = e;
    }
  })();
  return { got, done, error: () => error };
}

describe('relay client events()', () => {
  it('yields typed events in order, filtered by routerIds', async () => {
    const s = await start();
    const relay = createRelayClient({ baseUrl: s.url, token: TOKEN });
    const stop = signal();
    const reader = collect(relay.events({ routerIds: ['a', 'b:c'], signal: stop.signal }));
    await eventually(() => s.streams.open() === 1);
    const a = s.bus.publish(closed('a'));
    s.bus.publish(closed('z'));
    const bc = s.bus.publish(closed('b:c'));
    const draining = s.bus.publish({ type: 'relay.draining' });
    await eventually(() => reader.got.length === 3, 5000, 'three events');
    expect(reader.got).toEqual([a, bc, draining]);
    const first = reader.got[0]!;
    if (first.type === 'router.closed') expect(first.reason).toBe('api'); // narrowed by type
    stop.abort();
    await reader.done;
    await eventually(() => s.streams.open() === 0, 5000, 'the stream to close after abort');
  });

  it('reconnects with Last-Event-ID after the server drops the connection: every missed event once, in order', async () => {
    const s = await start({ overflowGraceMs: 0, bufferSize: 1000 }, { maxQueued: 20 });
    const relay = createRelayClient({ baseUrl: s.url, token: TOKEN });
    const iterator = relay.events({ signal: signal().signal });
    const reader = collect(iterator);
    await eventually(() => s.streams.open() === 1);
    // Dropped before any event: the client resumes from the cursor the stream announced.
    s.server.closeAllConnections();
    const whileAway = [s.bus.publish(closed('1')), s.bus.publish(closed('2'))];
    await eventually(() => reader.got.length === 2, 10_000, 'the events missed before the first one');
    expect(reader.got).toEqual(whileAway);
    expect(s.streams.stats().opened).toBe(2);
    // Dropped mid-stream, twice: cut off by the relay (a burst above its limit, no grace), then a cut socket.
    const batch2 = Array.from({ length: 50 }, (_, i) => s.bus.publish(closed(`b${i}`)));
    expect(s.streams.stats().cutOff).toBe(1);
    await eventually(() => s.streams.open() === 1 && reader.got.length === 52, 10_000, 'reconnect 2');
    s.server.closeAllConnections();
    const batch3 = Array.from({ length: 5 }, (_, i) => s.bus.publish(closed(`c${i}`)));
    await eventually(() => reader.got.length === 57, 10_000, 'reconnect 3');
    expect(reader.got).toEqual([...whileAway, ...batch2, ...batch3]);
    expect(iterator.lastEventId).toBe(batch3.at(-1)!.id);
    expect(s.streams.stats().opened).toBe(4);
  });

  it('yields resync when a relay without an event log restarted (its ids start over), then follows the new one', async () => {
    const first = await start();
    const port = (first.server.address() as AddressInfo).port;
    const relay = createRelayClient({ baseUrl: first.url, token: TOKEN });
    const reader = collect(relay.events({ signal: signal().signal }));
    await eventually(() => first.streams.open() === 1);
    const e = first.bus.publish(closed('x'));
    await eventually(() => reader.got.length === 1);
    await first.close();
    const second = await start({}, {}, undefined, port);
    await eventually(() => reader.got.length === 2, 10_000, 'the resync');
    expect(reader.got[1]).toMatchObject({ type: 'resync', reason: 'unknown_id' });
    const after = second.bus.publish(closed('y'));
    await eventually(() => reader.got.length === 3);
    expect(reader.got).toEqual([e, reader.got[1], after]);
  });

  it('resumes from a given lastEventId, and throws RelayClientError for answers a retry cannot fix', async () => {
    const s = await start();
    const events = Array.from({ length: 4 }, (_, i) => s.bus.publish(closed(`r${i}`)));
    const relay = createRelayClient({ baseUrl: s.url, token: TOKEN });
    const reader = collect(relay.events({ lastEventId: events[1]!.id, signal: signal().signal }));
    await eventually(() => reader.got.length === 2);
    expect(reader.got).toEqual(events.slice(2));

    const intruder = createRelayClient({ baseUrl: s.url, token: 'wrong' });
    await expect(intruder.events().next()).rejects.toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
    const bad = relay.events({ routerIds: Array.from({ length: 101 }, (_, i) => `r${i}`) }).next();
    await expect(bad).rejects.toBeInstanceOf(RelayClientError);
    await expect(bad).rejects.toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
  });

  it('waits and retries while the relay refuses with 503 or is unreachable', async () => {
    const s = await start({}, { maxStreams: 1 });
    const holder = signal();
    const relay = createRelayClient({ baseUrl: s.url, token: TOKEN });
    const hold = collect(relay.events({ signal: holder.signal }));
    await eventually(() => s.streams.open() === 1);
    const waiting = collect(relay.events({ signal: signal().signal }));
    await eventually(() => s.streams.stats().refused >= 1, 5000, 'a refusal');
    holder.abort();
    await hold.done;
    await eventually(() => s.streams.open() === 1 && s.streams.stats().opened === 2, 15_000, 'the waiting client to get the slot');
    const e = s.bus.publish(closed('late'));
    await eventually(() => waiting.got.length === 1);
    expect(waiting.got).toEqual([e]);
    expect(waiting.error()).toBeUndefined();
  });

  it('reconnects when the connection goes silent (no event, no heartbeat) for idleTimeoutMs', async () => {
    const requests: IncomingHttpHeaders[] = [];
    const silent = createServer((req, res) => {
      requests.push(req.headers);
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write(`: cursor aaaaaaaaaaaa-000000000000000${requests.length}\nid: x\n\n`); // then nothing, ever
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const relay = createRelayClient({ baseUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, token: TOKEN });
      const stop = signal();
      const reader = collect(relay.events({ signal: stop.signal, idleTimeoutMs: 200 }));
      await eventually(() => requests.length >= 3, 10_000, 'two reconnects');
      expect(requests[0]!['last-event-id']).toBeUndefined();
      expect(requests[1]!['last-event-id']).toBe('aaaaaaaaaaaa-0000000000000001');
      expect(requests[2]!['last-event-id']).toBe('aaaaaaaaaaaa-0000000000000002');
      stop.abort();
      await reader.done;
      expect(reader.error()).toBeUndefined();
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('drops a connection that sends an oversized event (over 4 MiB) and reconnects, holding nothing of it', async () => {
    let requests = 0;
    const hostile = createServer((_req, res) => {
      requests++;
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      if (requests === 1) res.write(`data: ${'x'.repeat(5 * 1024 * 1024)}`); // never ends the line
      else res.write(`id: a\nevent: relay.draining\ndata: {"id":"a","type":"relay.draining","time":"2025-01-01 00:00:00"}\n\n`);
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    try {
      const relay = createRelayClient({ baseUrl: `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`, token: TOKEN });
      const stop = signal();
      const reader = collect(relay.events({ signal: stop.signal }));
      await eventually(() => reader.got.length === 1, 10_000, 'the event after the reconnect');
      expect(reader.got[0]).toMatchObject({ type: 'relay.draining' });
      expect(requests).toBe(2);
      stop.abort();
      await reader.done;
    } finally {
      hostile.closeAllConnections();
      await new Promise<void>((resolve) => hostile.close(() => resolve()));
    }
  });
});
