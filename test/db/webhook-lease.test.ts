// The webhook's lease and cursor as statements (log/deliveries.ts): one holder at a time; a holder
// whose lease another took can neither move the cursor nor park a batch; an expired lease is taken.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeliveryStore } from '../../src/events/log/deliveries.js';
import { openTestDatabase } from '../support/app.js';

let test: Awaited<ReturnType<typeof openTestDatabase>>;
beforeAll(async () => {
  test = await openTestDatabase();
});
afterAll(async () => {
  await test.database.close();
  await test.drop();
});

describe('the webhook lease', () => {
  it('one holder; the other takes over once it expires; the old holder then moves nothing', async () => {
    const a = createDeliveryStore(test.database, { holder: 'a', leaseMs: 1_500, exclusive: false });
    const b = createDeliveryStore(test.database, { holder: 'b', leaseMs: 1_500, exclusive: false });
    expect(await a.acquire(10)).toBe(10);
    expect(await b.acquire(99)).toBeUndefined();
    expect(await a.acquire()).toBe(10); // renewed
    expect(await a.advance(20)).toBe(true);
    expect(await a.advance(15)).toBe(true); // never back
    expect(await a.cursor()).toBe(20);
    expect(await b.advance(30)).toBe(false);
    expect(await a.leasedCursor()).toBe(20);

    await new Promise((resolve) => setTimeout(resolve, 1_600));
    expect(await a.leasedCursor()).toBeNull();
    expect(await b.acquire()).toBe(20);
    expect(await a.advance(40)).toBe(false);
    expect(await a.park({ id: 'msg_a', firstLogId: 21, lastLogId: 40, events: 20, attempts: 3, lastError: 'HTTP 500', body: '[]' })).toBe(false);
    expect(await a.list('failed', 10)).toEqual([]);
    expect(await b.cursor()).toBe(20);

    // The holder parks: the row and the cursor together; a long error is cut.
    expect(await b.park({ id: 'msg_b', firstLogId: 21, lastLogId: 40, events: 20, attempts: 3, lastError: 'x'.repeat(2_000), body: '[]' })).toBe(true);
    expect(await b.cursor()).toBe(40);
    const [parked] = await b.list('failed', 10);
    expect(parked).toMatchObject({ id: 'msg_b', firstLogId: 21, lastLogId: 40, events: 20, attempts: 3 });
    expect(parked!.lastError).toHaveLength(500);
    expect(await b.parkedCount()).toBe(1);

    // Released at shutdown: taken at once.
    await b.release();
    expect(await a.acquire()).toBe(40);
  });
});
