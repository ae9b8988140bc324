// Retention of the event log (EVENTS_RETENTION_HOURS): a prune removes only the rows older than the
// retention, in batches, while writers go on (none waits more than 100 ms on it, beyond the longest
// wait of the same writers without a prune: the machine's own noise); with a webhook it
// keeps what the webhook has not delivered yet, whatever its age, and says so; each prune is logged
// with its count.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEventLog, type EventLog } from '../../src/events/log/log.js';
import { createRetention } from '../../src/events/log/retention.js';
import { eventLog } from '../../src/events/log/schema.js';
import type { Logger } from '../../src/logger.js';
import { openTestDatabase } from '../support/app.js';

let test: Awaited<ReturnType<typeof openTestDatabase>>;
let log: EventLog;

beforeAll(async () => {
  test = await openTestDatabase();
  log = createEventLog(test.database);
});
afterAll(async () => {
  await test.database.close();
  await test.drop();
});

const HOUR = 3_600_000;

/** `n` events stored `hoursAgo` ago (their `at` set back: what a long-running log holds). */
async function old(n: number, hoursAgo: number): Promise<void> {
  const before = (await log.bounds()).last;
  await log.append(Array.from({ length: n }, (_, i) => ({ type: 'test.old', payload: JSON.stringify({ type: 'test.old', i }) })));
  await test.database.db.execute(sql`update ${eventLog} set at = now() - ${`${hoursAgo} hours`}::interval where ${eventLog.id} > ${before}`);
}

function recorder() {
  const lines: Array<{ level: string; fields: Record<string, unknown>; msg: string }> = [];
  const at = (level: string) => (fields: Record<string, unknown>, msg: string) => lines.push({ level, fields, msg });
  return { lines, logger: { info: at('info'), debug: at('debug'), warn: at('warn'), error: at('error') } as unknown as Logger };
}

describe('event log retention', () => {
  it('prunes only rows older than the retention, in batches, while writers go on', async () => {
    await old(12_000, 3);
    const fresh = (await log.bounds()).last;
    const { lines, logger } = recorder();
    const retention = createRetention({ log, retentionMs: HOUR, batch: 1_000, logger });

    // Writers append one event at a time, each timed: first alone (the machine's own noise), then
    // while the prune runs.
    let writing = true;
    let waits: number[] = [];
    const writer = async () => {
      while (writing) {
        const started = performance.now();
        await log.append([{ type: 'test.new', payload: '{"type":"test.new"}' }]);
        waits.push(performance.now() - started);
        // PGlite answers through microtasks alone: a writer that never yields would starve the timers.
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    const writers = [writer(), writer()];
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const alone = waits;
    waits = [];
    const pruned = await retention.prune();
    writing = false;
    await Promise.all(writers);
    await retention.stop();

    expect(pruned).toBe(12_000);
    const [left] = await test.database.db.select({ old: sql<number>`count(*) filter (where ${eventLog.type} = 'test.old')::int`, first: sql<string>`min(${eventLog.id})` }).from(eventLog);
    expect({ old: left!.old, first: Number(left!.first) }).toEqual({ old: 0, first: fresh + 1 });
    expect(waits.length).toBeGreaterThan(10);
    // What a writer waits on the prune: beyond the longest wait of the writers alone (the machine's noise).
    expect(Math.max(...waits), `writer waits (ms): max of ${waits.length}; alone: max ${Math.max(...alone).toFixed(0)} of ${alone.length}`).toBeLessThan(100 + Math.max(...alone));
    expect(lines).toContainEqual(expect.objectContaining({ level: 'info', fields: expect.objectContaining({ pruned: 12_000 }) }));
  }, 60_000);

  it('keeps what the webhook has not delivered, whatever its age, and logs that retention is held back', async () => {
    const start = (await log.bounds()).last;
    await old(300, 3);
    const delivered = start + 100;
    const { lines, logger } = recorder();
    const retention = createRetention({ log, retentionMs: HOUR, delivered: () => Promise.resolve(delivered), logger });
    expect(await retention.prune()).toBeGreaterThanOrEqual(100);
    const [row] = await test.database.db
      .select({ below: sql<number>`count(*) filter (where ${eventLog.id} <= ${delivered})::int`, above: sql<number>`count(*) filter (where ${eventLog.id} > ${delivered})::int` })
      .from(eventLog)
      .where(sql`${eventLog.type} = 'test.old'`);
    expect(row).toEqual({ below: 0, above: 200 });
    expect(lines).toContainEqual(expect.objectContaining({ level: 'warn', fields: { held: 200 } }));
    // Without a cursor yet (the webhook never started), nothing goes.
    const waiting = createRetention({ log, retentionMs: HOUR, delivered: () => Promise.resolve(undefined) });
    expect(await waiting.prune()).toBe(0);
    // No webhook anywhere (no lease held): by age alone.
    const byAge = createRetention({ log, retentionMs: HOUR, delivered: () => Promise.resolve(null) });
    expect(await byAge.prune()).toBe(200);
  }, 60_000);
});
