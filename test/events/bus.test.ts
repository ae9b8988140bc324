import { describe, expect, it } from 'vitest';
import { createEventBus, type Subscription } from '../../src/events/bus.js';
import { relayEventSchema, relayStreamEventSchema, type RelayEvent, type RelayEventInput, type RelayStreamEvent } from '../../src/relay/contract/events.js';

const closed = (routerId: string): RelayEventInput => ({ type: 'router.closed', routerId, appData: { room: routerId }, reason: 'api' });
const ice = (routerId: string, n: number): RelayEventInput => ({
  type: 'transport.ice',
  transportId: `t${n}`,
  routerId,
  appData: {},
  state: 'connected',
});

function drain(sub: Subscription<RelayEvent>): RelayStreamEvent[] {
  const out: RelayStreamEvent[] = [];
  for (let e = sub.poll(); e !== undefined; e = sub.poll()) out.push(e);
  return out;
}

describe('event bus', () => {
  it('assigns decimal integer ids that increase strictly, and the spec time format', () => {
    const bus = createEventBus<RelayEvent>({ clock: () => new Date('2024-01-02T03:04:05Z') });
    const ids: string[] = [];
    for (let i = 0; i < 1200; i++) {
      const event = bus.publish(ice('r', i));
      expect(relayEventSchema.parse(event)).toEqual(event);
      ids.push(event.id);
    }
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[1-9][0-9]*$/);
    expect(ids.map(Number)).toEqual([...ids.map(Number)].sort((a, b) => a - b));
    // Without an event log, a bus numbers its own events from 1.
    expect(ids[0]).toBe('1');
    expect(bus.publish(closed('r')).time).toBe('2024-01-02 11:04:05');
  });

  it("carries another node's live-only event to subscribers with the next live id here, never to listeners or followers", () => {
    const stored: string[] = [];
    const bus = createEventBus<RelayEvent>({ durable: (type) => type !== 'transport.ice', store: (type) => void stored.push(type) });
    bus.start(7);
    const sub = bus.subscribe();
    const heard: string[] = [];
    bus.listen((event) => void heard.push(`listen ${event.type}`));
    bus.follow((event) => void heard.push(`follow ${event.type}`));
    const own = bus.publish(ice('r', 1));
    const remote = { ...ice('r', 2), time: '2026-12-03 10:00:00', nodeId: 'node-b' } as Omit<RelayEvent, 'id'>;
    bus.carry(remote);
    bus.deliver(8, JSON.stringify(closed('r')));
    bus.carry(remote);
    const read = drain(sub);
    expect(read.map((event) => [event.type, event.id])).toEqual([
      ['transport.ice', String(7 * 1_000_000 + 1)],
      ['transport.ice', String(7 * 1_000_000 + 2)],
      ['router.closed', String(8 * 1_000_000)],
      ['transport.ice', String(8 * 1_000_000 + 1)],
    ]);
    expect(read[1]).toMatchObject({ transportId: 't2', nodeId: 'node-b', time: '2026-12-03 10:00:00' });
    expect(own.id).toBe(read[0]!.id);
    // Listeners hear this process's own events; followers (the webhook) its own and the log's: never a carried one.
    expect(heard).toEqual(['listen transport.ice', 'follow transport.ice', 'follow router.closed']);
    expect(stored).toEqual([]);
  });

  it('stamps the object it is given, with the members in the order a copy would have; an object published twice is copied', () => {
    const bus = createEventBus<RelayEvent>();
    const input = closed('r');
    const event = bus.publish(input);
    expect(event).toBe(input);
    expect(Object.keys(event)).toEqual(['type', 'routerId', 'appData', 'reason', 'id', 'time']);
    const again = bus.publish(input);
    expect(again).not.toBe(event);
    expect(Number(again.id) > Number(event.id)).toBe(true);
    const sub = bus.subscribe({ lastEventId: '0' });
    expect(drain(sub).map((e) => e.id)).toEqual([event.id, again.id]);
  });

  it('wakes a filtered reader waiting in ready() only for its own routers and relay-wide events', async () => {
    const bus = createEventBus<RelayEvent>();
    const sub = bus.subscribe({ routerIds: ['a'] });
    let woke: boolean | undefined;
    void sub.ready().then((ready) => (woke = ready));
    for (let i = 0; i < 5; i++) bus.publish(closed('b'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(woke).toBeUndefined();
    // Events of other routers left unread are passed over too, not taken for something to read.
    const again = bus.subscribe({ routerIds: ['a'], lastEventId: '0' });
    let wokeAgain: boolean | undefined;
    void again.ready().then((ready) => (wokeAgain = ready));
    await new Promise((resolve) => setImmediate(resolve));
    expect(wokeAgain).toBeUndefined();
    bus.publish({ type: 'relay.draining' });
    await new Promise((resolve) => setImmediate(resolve));
    expect([woke, wokeAgain]).toEqual([true, true]);
    expect(sub.pollEncoded()).toMatchObject({ type: 'relay.draining' });
    expect(sub.pollEncoded()).toBeUndefined();
    sub.close();
    expect(await sub.ready()).toBe(false);
  });

  it('delivers to waiting and iterating subscribers in order, filtered by router', async () => {
    const bus = createEventBus<RelayEvent>();
    const all = bus.subscribe();
    const onlyA = bus.subscribe({ routerIds: ['a'] });
    const waiting = all.next();
    bus.publish(closed('a'));
    bus.publish(closed('b'));
    bus.publish({ type: 'worker.died', workerPid: 1, routerIds: ['b', 'a'], restartInMs: 500 });
    bus.publish({ type: 'worker.died', workerPid: 2, routerIds: ['c'], restartInMs: 500 });
    bus.publish({ type: 'relay.draining' });
    expect(await waiting).toMatchObject({ type: 'router.closed', routerId: 'a' });
    expect(drain(all).map((e) => e.type)).toEqual(['router.closed', 'worker.died', 'worker.died', 'relay.draining']);
    const a = drain(onlyA);
    expect(a.map((e) => [e.type, 'workerPid' in e ? e.workerPid : undefined])).toEqual([
      ['router.closed', undefined],
      ['worker.died', 1],
      ['relay.draining', undefined],
    ]);
    const iterated: string[] = [];
    const reader = (async () => {
      for await (const e of onlyA) {
        iterated.push(e.id);
        if (iterated.length === 2) break;
      }
    })();
    const e1 = bus.publish(closed('a'));
    bus.publish(closed('z'));
    const e2 = bus.publish(closed('a'));
    await reader;
    expect(iterated).toEqual([e1.id, e2.id]);
    expect(onlyA.ended).toBe('closed');
    expect(bus.stats().subscribers).toBe(1);
  });

  it('replays every buffered event after Last-Event-ID once, in order, then goes live', () => {
    const bus = createEventBus<RelayEvent>({ bufferSize: 100 });
    const events = Array.from({ length: 30 }, (_, i) => bus.publish(ice(i % 2 ? 'a' : 'b', i)));
    const sub = bus.subscribe({ lastEventId: events[9]!.id });
    expect(drain(sub).map((e) => e.id)).toEqual(events.slice(10).map((e) => e.id));
    const more = bus.publish(closed('a'));
    expect(drain(sub).map((e) => e.id)).toEqual([more.id]);
    const filtered = bus.subscribe({ lastEventId: events[9]!.id, routerIds: ['a'] });
    expect(drain(filtered).map((e) => e.id)).toEqual([...events.slice(10).filter((_, i) => i % 2 === 1), more].map((e) => e.id));
    // The cursor of a fresh subscriber continues exactly where it joined.
    const fresh = bus.subscribe();
    const after = bus.publish(closed('b'));
    const resumed = bus.subscribe({ lastEventId: fresh.cursor });
    expect(drain(resumed).map((e) => e.id)).toEqual([after.id]);
  });

  it('accepts the id of the oldest buffered event and the one just before it, and resyncs beyond', () => {
    const bus = createEventBus<RelayEvent>({ bufferSize: 10 });
    const events = Array.from({ length: 25 }, (_, i) => bus.publish(ice('a', i)));
    // Buffer holds events[15..24]; an id of events[14] misses nothing.
    expect(drain(bus.subscribe({ lastEventId: events[14]!.id })).map((e) => e.id)).toEqual(events.slice(15).map((e) => e.id));
    const old = drain(bus.subscribe({ lastEventId: events[13]!.id }));
    expect(old).toHaveLength(1);
    expect(relayStreamEventSchema.parse(old[0])).toMatchObject({ type: 'resync', reason: 'too_old', id: events[24]!.id });
  });

  it('starts with resync for an id never issued, an id of the old format, or garbage', () => {
    const bus = createEventBus<RelayEvent>();
    let e = bus.publish(closed('a'));
    const cases: Array<[string, string]> = [
      ['4f1c2a9b7e01-0000000000000533', 'unknown_id'],
      ['9999999999999999', 'unknown_id'],
      ['99999999999999999999', 'unknown_id'],
      ['-1', 'unknown_id'],
      ['01', 'unknown_id'],
      ['garbage', 'unknown_id'],
      ['', 'unknown_id'],
      ['x'.repeat(10_000), 'unknown_id'],
      [`${e.id}\n`, 'unknown_id'],
    ];
    for (const [lastEventId, reason] of cases) {
      const sub = bus.subscribe({ lastEventId });
      const got = drain(sub);
      expect(got).toEqual([expect.objectContaining({ type: 'resync', reason, id: e.id })]);
      const next = bus.publish(closed('a'));
      expect(drain(sub).map((x) => x.id)).toEqual([next.id]);
      sub.close();
      e = next;
    }
    expect(bus.stats().resyncs).toEqual({ unknown_id: cases.length, too_old: 0 });
  });

  it('cuts off a subscriber that leaves more than maxQueued live events unread, not one that replays', () => {
    const bus = createEventBus<RelayEvent>({ bufferSize: 1000, maxQueued: 10, overflowGraceMs: 0 });
    const history = Array.from({ length: 500 }, (_, i) => bus.publish(ice('a', i)));
    const replaying = bus.subscribe({ lastEventId: history[0]!.id });
    const stalled = bus.subscribe();
    let endedWith: string | undefined;
    stalled.onEnd((reason) => (endedWith = reason));
    for (let i = 0; i < 10; i++) bus.publish(ice('a', i));
    expect(stalled.ended).toBeUndefined();
    expect(stalled.pending).toBe(10);
    expect(replaying.ended).toBeUndefined();
    bus.publish(ice('a', 11));
    expect(stalled.ended).toBe('overflow');
    expect(endedWith).toBe('overflow');
    expect(stalled.poll()).toBeUndefined();
    expect(replaying.ended).toBe('overflow'); // 11 live events unread as well
    expect(bus.stats()).toMatchObject({ subscribers: 0, overflows: 2 });
  });

  it('lets a reader that keeps up ride out a burst larger than its limit, and cuts a stalled one after the grace', async () => {
    // The grace is wide enough for a loaded CI machine to read 2,000 events in it (the reader yields
    // to the event loop every 50, as a socket write does); the stalled reader is cut once it has passed.
    const bus = createEventBus<RelayEvent>({ bufferSize: 10_000, maxQueued: 100, overflowGraceMs: 1000 });
    const reader = bus.subscribe();
    const stalled = bus.subscribe();
    let read = 0;
    const reading = (async () => {
      while (read < 2000) {
        const e = await reader.next();
        if (!e) return;
        read++;
        if (read % 50 === 0) await new Promise((r) => setImmediate(r)); // a socket write now and then
      }
    })();
    const t0 = Date.now();
    for (let i = 0; i < 2000; i++) bus.publish(ice('a', i)); // one tick: closing a big room
    expect(reader.ended).toBeUndefined();
    expect(stalled.ended).toBeUndefined();
    await reading;
    expect(read).toBe(2000);
    expect(reader.ended).toBeUndefined();
    expect(stalled.ended).toBeUndefined(); // still within its grace
    expect(Date.now() - t0).toBeLessThan(1000);
    for (let i = 0; i < 100 && stalled.ended === undefined; i++) await new Promise((r) => setTimeout(r, 50));
    expect(stalled.ended).toBe('overflow');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
    expect(reader.ended).toBeUndefined();
  });

  it('cuts off a filtered subscriber whose place left the ring even under its limit', () => {
    const bus = createEventBus<RelayEvent>({ bufferSize: 20, maxQueued: 10 });
    const sub = bus.subscribe({ routerIds: ['a'] });
    bus.publish(closed('a'));
    for (let i = 0; i < 25; i++) bus.publish(ice('b', i));
    expect(sub.ended).toBe('overflow');
  });

  it('never evicts a caught-up filtered reader for events of other routers, and gives it its next own event', async () => {
    const bus = createEventBus<RelayEvent>({ bufferSize: 20, maxQueued: 10 });
    const waiting = bus.subscribe({ routerIds: ['quiet'] }); // waits in ready(), as a stream does
    const iterating = bus.subscribe({ routerIds: ['quiet'] }); // waits in next()
    const idle = bus.subscribe({ routerIds: ['quiet'] }); // reads only when asked
    const ready = waiting.ready();
    const next = iterating.next();
    const others: RelayStreamEvent[] = [];
    for (let i = 0; i < 1000; i++) others.push(bus.publish(ice('busy', i)));
    for (const sub of [waiting, iterating, idle]) expect(sub.ended).toBeUndefined();
    expect(bus.stats().overflows).toBe(0);
    // Its position went past what its filter excludes: a client that resumes from it misses nothing.
    for (const sub of [waiting, iterating, idle]) expect(sub.position).toBe(others.at(-1)!.id);
    const own = bus.publish(closed('quiet'));
    expect(await ready).toBe(true);
    expect(drain(waiting).map((e) => e.id)).toEqual([own.id]);
    expect((await next)?.id).toBe(own.id);
    expect(drain(idle).map((e) => e.id)).toEqual([own.id]);
    // And again after it read: more of the others, then its own.
    for (let i = 0; i < 500; i++) bus.publish(ice('busy', i));
    const again = bus.publish({ type: 'worker.died', workerPid: 1, routerIds: ['busy', 'quiet'], restartInMs: 0 });
    for (const sub of [waiting, iterating, idle]) {
      expect(sub.ended).toBeUndefined();
      expect(drain(sub).map((e) => e.id)).toEqual([again.id]);
    }
  });

  it('still cuts off a filtered reader that is behind on its own events, and resyncs an id older than the ring', () => {
    const bus = createEventBus<RelayEvent>({ bufferSize: 20, maxQueued: 10 });
    const behind = bus.subscribe({ routerIds: ['quiet'] });
    const first = bus.publish(closed('quiet'));
    expect(drain(behind).map((e) => e.id)).toEqual([first.id]);
    bus.publish(closed('quiet')); // unread
    for (let i = 0; i < 25; i++) bus.publish(ice('busy', i));
    expect(behind.ended).toBe('overflow');
    // A client whose Last-Event-ID left the ring starts with resync too_old, even when all it missed
    // were events of other routers: what left the ring is not known any more. (A quiet stream's
    // heartbeat carries its position, so a client that was connected resumes from a recent id.)
    const resumed = bus.subscribe({ routerIds: ['quiet'], lastEventId: first.id });
    expect(drain(resumed).map((e) => e.type)).toEqual(['resync']);
    const fromPosition = bus.subscribe({ routerIds: ['quiet'] });
    for (let i = 0; i < 25; i++) bus.publish(ice('busy', i));
    const own = bus.publish(closed('quiet'));
    const resumedFromPosition = bus.subscribe({ routerIds: ['quiet'], lastEventId: fromPosition.position });
    expect(drain(resumedFromPosition).map((e) => e.id)).toEqual([own.id]);
  });

  it('keeps a reader that keeps up, however many events pass', () => {
    const bus = createEventBus<RelayEvent>({ bufferSize: 50, maxQueued: 5 });
    const sub = bus.subscribe();
    let read = 0;
    for (let i = 0; i < 5000; i++) {
      bus.publish(ice('a', i));
      if (i % 4 === 3) read += drain(sub).length;
    }
    read += drain(sub).length;
    expect(read).toBe(5000);
    expect(sub.ended).toBeUndefined();
  });

  it('calls listeners synchronously, isolates a throwing one, and close() ends subscriptions but not listeners', async () => {
    const errors: unknown[] = [];
    const bus = createEventBus<RelayEvent>({ onListenerError: (e) => errors.push(e) });
    const seen: string[] = [];
    bus.listen(() => {
      throw new Error('boom');
    });
    const off = bus.listen((e) => seen.push(e.type));
    const sub = bus.subscribe();
    const pending = sub.next();
    bus.publish(closed('a'));
    expect(seen).toEqual(['router.closed']);
    expect(errors).toHaveLength(1);
    expect(await pending).toMatchObject({ type: 'router.closed' });
    const waiting = sub.next();
    bus.close();
    expect(await waiting).toBeUndefined();
    expect(bus.subscribe().ended).toBe('closed');
    bus.publish({ type: 'relay.draining' });
    expect(seen).toEqual(['router.closed', 'relay.draining']);
    off();
    bus.publish({ type: 'relay.draining' });
    expect(seen).toHaveLength(2);
    expect(bus.stats().published).toMatchObject({ 'router.closed': 1, 'relay.draining': 2 });
  });
});

describe('event bus time', () => {
  it('follows the clock across seconds', () => {
    let t = Date.parse('2024-12-31T15:59:59.400Z');
    const bus = createEventBus<RelayEvent>({ clock: () => new Date(t) });
    expect(bus.publish(closed('a')).time).toBe('2024-12-31 23:59:59');
    t += 500;
    expect(bus.publish(closed('a')).time).toBe('2024-12-31 23:59:59');
    t += 200;
    expect(bus.publish(closed('a')).time).toBe('2025-01-01 00:00:00');
    t -= 5000; // a clock stepped back is followed too
    expect(bus.publish(closed('a')).time).toBe('2024-12-31 23:59:55');
  });
});
