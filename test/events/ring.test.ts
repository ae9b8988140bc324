// The event bus's replay buffer (src/events/ring.ts): events' JSON in reused byte segments
// outside the JS heap, bounded by count and by bytes, never corrupted by the reuse.
import fc from 'fast-check';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { createEventBus } from '../../src/events/bus.js';
import { BYTES_PER_EVENT, EventRing, SEGMENT_BYTES } from '../../src/events/ring.js';

const json = (seq: number, size = 0) => JSON.stringify({ type: 'router.silence', routerId: `r${seq}`, pad: 'x'.repeat(size) });

describe('EventRing', () => {
  it('gives back each event as appended, and keeps the last `capacity` of them', () => {
    const ring = new EventRing(3);
    expect(ring.stats()).toEqual({ events: 0, segmentBytes: 0, large: 0 });
    for (let seq = 1; seq <= 5; seq++) ring.append(seq, seq, 'router.silence', `r${seq}`, json(seq));
    expect([ring.first, ring.last]).toEqual([3, 5]);
    for (let seq = 3; seq <= 5; seq++) {
      expect(ring.json(seq)).toBe(json(seq));
      expect(ring.typeOf(seq)).toBe('router.silence');
      expect(ring.routersOf(seq)).toBe(`r${seq}`);
    }
    expect(() => ring.append(7, 7, 'router.silence', undefined, '{}')).toThrow(/seq 7 after 5/);
  });

  it('drops the oldest events when their bytes are needed, within capacity × 1 KiB, whatever the count', () => {
    // 400 events may take 400 KiB: two segments of 256 KiB; events of 100 KB fill a segment with two.
    const ring = new EventRing(400);
    const big = (seq: number) => json(seq, 100_000);
    for (let seq = 1; seq <= 5; seq++) ring.append(seq, seq, 'router.silence', undefined, big(seq));
    expect([ring.first, ring.last]).toEqual([3, 5]);
    expect(ring.stats().segmentBytes).toBe(2 * SEGMENT_BYTES);
    for (let seq = 3; seq <= 5; seq++) expect(ring.json(seq)).toBe(big(seq));
    expect(400 * BYTES_PER_EVENT).toBeLessThan(3 * SEGMENT_BYTES);
  });

  it('keeps an event larger than half a segment as a string, and forgets it with the others', () => {
    const ring = new EventRing(2);
    const huge = json(1, SEGMENT_BYTES);
    ring.append(1, 1, 'worker.died', ['a', 'b'], huge);
    expect(ring.stats().large).toBe(1);
    expect(ring.json(1)).toBe(huge);
    expect(ring.routersOf(1)).toEqual(['a', 'b']);
    ring.append(2, 2, 'router.silence', 'r', json(2));
    ring.append(3, 3, 'router.silence', 'r', json(3));
    expect(ring.stats()).toMatchObject({ events: 2, large: 0 });
  });

  it('gives back JSON with multi-byte characters exactly', () => {
    const ring = new EventRing(10);
    const text = JSON.stringify({ appData: { name: 'Zoë 🎧 会议' } });
    ring.append(1, 1, 'router.closed', 'r', text);
    expect(ring.json(1)).toBe(text);
  });

  it('never corrupts what it holds, for any sizes and capacities (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.array(fc.oneof(fc.integer({ min: 0, max: 2_000 }), fc.integer({ min: 60_000, max: 140_000 })), { minLength: 1, maxLength: 120 }),
        (capacity, sizes) => {
          const ring = new EventRing(capacity);
          const sent = new Map<number, string>();
          let first = 1;
          sizes.forEach((size, i) => {
            const seq = i + 1;
            const text = json(seq, size) + (seq % 3 === 0 ? '"é"' : '');
            sent.set(seq, text);
            ring.append(seq, seq, 'router.silence', `r${seq}`, text);
            expect(ring.first).toBeGreaterThanOrEqual(first);
            first = ring.first;
            expect(ring.last).toBe(seq);
            expect(ring.last - ring.first + 1).toBeLessThanOrEqual(capacity);
            expect(ring.first).toBeLessThanOrEqual(seq); // the newest is always held
            for (let s = ring.first; s <= ring.last; s++) expect(ring.json(s)).toBe(sent.get(s));
          });
          expect(ring.stats().segmentBytes).toBeLessThanOrEqual(Math.max(2, Math.ceil((capacity * BYTES_PER_EVENT) / SEGMENT_BYTES)) * SEGMENT_BYTES);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('the bus keeps no published object', () => {
  it('lets a published event be collected while its JSON stays replayable, as it was when published', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const bus = createEventBus({ bufferSize: 100 });
    const from = '0';
    // In a function of its own: an async function's frame would keep its locals alive across awaits.
    const publishOne = () => {
      const appData = { room: 'before' };
      const event = bus.publish({ type: 'router.closed', routerId: 'r', appData, reason: 'api' });
      appData.room = 'changed after publishing';
      return new WeakRef(event);
    };
    const ref = publishOne();
    for (let i = 0; i < 10 && ref.deref() !== undefined; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      gc();
    }
    expect(ref.deref()).toBeUndefined();
    const replayed = bus.subscribe({ lastEventId: from }).poll();
    expect(replayed).toMatchObject({ type: 'router.closed', routerId: 'r', appData: { room: 'before' } });
    expect(bus.stats().bufferBytes).toBe(SEGMENT_BYTES);
  });
});
