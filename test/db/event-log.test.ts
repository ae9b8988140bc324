// The event log's ids (issue 39): given in commit order, so a reader that resumes after the last id it
// read never skips an event that a slower writer commits later. On PostgreSQL the writers are two
// connection pools (two instances) and a reader on a third; a control run without the commit lock
// shows the same reader skipping, so the check can fail.
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/client.js';
import { createAppender } from '../../src/events/log/appender.js';
import { createEventLog, EVENT_LOG_CHANNEL, logEvents, type EventLog } from '../../src/events/log/log.js';
import { createTail } from '../../src/events/log/tail.js';
import { eventLog } from '../../src/events/log/schema.js';
import { openTestDatabase, usesPostgres } from '../support/app.js';

let test: Awaited<ReturnType<typeof openTestDatabase>>;
const others: Database[] = [];

beforeAll(async () => {
  test = await openTestDatabase();
});
afterAll(async () => {
  for (const database of others) await database.close();
  await test.database.close();
  await test.drop();
});

/** Another instance's connections to the same database (PostgreSQL), or the same database (PGlite: one process's own). */
async function anotherInstance(): Promise<Database> {
  if (!usesPostgres()) return test.database;
  const database = await openDatabase(test.dbConfig);
  others.push(database);
  return database;
}

const payload = (writer: number, n: number) => JSON.stringify({ type: 'test.event', writer, n });

/**
 * Appends `events` in one statement that, after drawing its ids, waits `holdMs` before it commits
 * (a writer whose transaction is slow to end). `locked: false` draws ids from the sequence without the
 * log's commit lock: the outbox trap the lock exists for.
 */
async function slowAppend(database: Database, events: string[], holdMs: number, locked = true): Promise<void> {
  const { db } = database;
  const batch = JSON.stringify(events);
  const rows = sql`select 'test.event' as type, x.e #>> '{}' as payload, x.ord from json_array_elements(${batch}::json) with ordinality as x(e, ord)`;
  if (locked) {
    const [lock, logged] = logEvents(db, rows);
    const slow = db.$with('slow', { n: sql<number>`n`.as('n') }).as(sql`select count(*)::int as n, pg_sleep(${holdMs / 1000}) from ${logged}`);
    await db.with(lock, logged, slow).select({ n: slow.n }).from(slow);
  } else {
    const logged = db.$with('logged', { id: sql<number>`id`.as('id') }).as(sql`insert into ${eventLog} (type, payload) select e.type, e.payload from (${rows}) as e order by e.ord returning id`);
    const slow = db.$with('slow', { n: sql<number>`n`.as('n') }).as(sql`select count(*)::int as n, pg_sleep(${holdMs / 1000}) from ${logged}`);
    await db.with(logged, slow).select({ n: slow.n }).from(slow);
  }
}

/**
 * Writers on two instances and a reader that resumes after the last id it read, all at once; returns
 * what the reader read and what the log holds at the end (only the rows written by this run).
 */
async function race(options: { locked: boolean; writers: number; statements: number }): Promise<{ read: number[]; stored: number[] }> {
  const instances = [test.database, await anotherInstance()];
  const readerDb = await anotherInstance();
  const log: EventLog = createEventLog(readerDb);
  const start = (await log.bounds()).last;
  let writing = true;
  const read: number[] = [];
  const reader = (async () => {
    let last = start;
    // Bounded: the writers end within the test's timeout; one read after they ended takes the rest.
    for (let round = 0; round < 100_000; round++) {
      const done = !writing;
      const events = await log.after(last);
      for (const event of events) {
        read.push(event.id);
        last = event.id;
      }
      if (done && events.length === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  })();
  await Promise.all(
    Array.from({ length: options.writers }, async (_, writer) => {
      const database = instances[writer % instances.length]!;
      for (let n = 0; n < options.statements; n++) {
        const size = 1 + ((writer * 7 + n * 3) % 12);
        const holdMs = (writer * 13 + n * 5) % 25;
        await slowAppend(database, Array.from({ length: size }, (_, i) => payload(writer, n * 100 + i)), holdMs, options.locked);
      }
    }),
  );
  writing = false;
  await reader;
  const rows = await test.database.db.select({ id: eventLog.id }).from(eventLog).where(sql`${eventLog.id} > ${start}`).orderBy(eventLog.id);
  return { read, stored: rows.map((row) => Number(row.id)) };
}

describe('the event log (issue 39)', () => {
  it('stores a batch in its order and reads it back after an id, with its bounds', async () => {
    const log = createEventLog(test.database);
    const before = (await log.bounds()).last;
    const last = await log.append([
      { type: 'a.one', payload: '{"type":"a.one","x":1}' },
      { type: 'a.two', payload: '{"type":"a.two","x":"é\\n"}' },
    ]);
    expect(await log.append([])).toBeUndefined();
    const read = await log.after(before);
    expect(read.map((event) => event.type)).toEqual(['a.one', 'a.two']);
    expect(read[1]!.id).toBe(last);
    expect(read[0]!.id).toBeLessThan(read[1]!.id);
    expect(JSON.parse(read[1]!.payload)).toEqual({ type: 'a.two', x: 'é\n' });
    expect((await log.bounds()).last).toBe(last);
    expect(await log.after(last!)).toEqual([]);
  });

  it('a reader resuming after the last id it read gets every event of concurrent writers on two instances, in order, each once', async () => {
    const { read, stored } = await race({ locked: true, writers: 8, statements: 25 });
    expect(stored.length).toBeGreaterThan(1000);
    expect(read).toEqual(stored);
    for (let i = 1; i < read.length; i++) expect(read[i]).toBeGreaterThan(read[i - 1]!);
  }, 60_000);

  // PostgreSQL only: on PGlite, one process's own database, statements never overlap.
  if (usesPostgres()) it('(control) without the commit lock, the same reader skips events a slower writer committed later', async () => {
    // Several rounds at most: each round's writers interleave differently; one skip shows the trap.
    let skipped = 0;
    for (let round = 0; round < 5 && skipped === 0; round++) {
      const { read, stored } = await race({ locked: false, writers: 8, statements: 15 });
      const seen = new Set(read);
      skipped = stored.filter((id) => !seen.has(id)).length;
    }
    expect(skipped).toBeGreaterThan(0);
  }, 60_000);

  it('prunes only events stored before the cut, in batches', async () => {
    const log = createEventLog(test.database);
    await log.append([{ type: 'old.one', payload: '{}' }]);
    const { db } = test.database;
    // Everything so far is made old; what comes after the cut stays.
    await db.update(eventLog).set({ at: new Date(Date.now() - 3_600_000) });
    const kept = await log.append([{ type: 'new.one', payload: '{}' }]);
    const cut = new Date(Date.now() - 60_000);
    let pruned = 0;
    for (let n = await log.prune(cut, 500); n > 0; n = await log.prune(cut, 500)) {
      expect(n).toBeLessThanOrEqual(500);
      pruned += n;
    }
    expect(pruned).toBeGreaterThan(0);
    const left = await db.select({ id: eventLog.id }).from(eventLog);
    expect(left.map((row) => Number(row.id))).toEqual([kept]);
    expect(await log.bounds()).toEqual({ first: kept, last: kept, given: kept });
  }, 60_000);
});

describe('the tail and the appender', () => {
  it("hands this instance's stored batch over without reading it back, and reads when another writer's events are between; the appender spaces its inserts", async () => {
    const log = createEventLog(test.database);
    const other = createEventLog(await anotherInstance());
    let reads = 0;
    const counted = { after: (id: number, limit?: number) => (reads++, log.after(id, limit)), bounds: () => log.bounds() };
    const got: number[] = [];
    const tail = createTail({ log: counted, deliver: (logId) => got.push(logId), intervalMs: 60_000 });
    await tail.start();
    // The follower reads once at its start, then sleeps for the interval: reads from now on are wakes and catch-ups.
    for (let i = 0; reads === 0 && i < 100; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    // flush() ends an appender: one per step.
    const appenderFor = () => createAppender({ log, onStored: (lastId, events) => tail.stored(lastId, events), minIntervalMs: 40 });
    // A first event, handed over however it comes (after a gap in the sequence, from the earlier
    // tests' writes, the tail reads): from then on the tail stands right before this writer's next ids.
    const warm = appenderFor();
    warm.enqueue('test.event', payload(1, 0));
    await warm.flush();
    for (let i = 0; got.length === 0 && i < 100; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    got.length = 0;
    reads = 0;
    const appender = appenderFor();
    appender.enqueue('test.event', payload(1, 1));
    appender.enqueue('test.event', payload(1, 2));
    await appender.flush();
    expect(reads).toBe(0);
    expect(got).toHaveLength(2);
    expect(got[1]).toBe(got[0]! + 1);

    // Another instance writes in between: the next batch of ours is not next to what was handed over.
    const between = await other.append([{ type: 'test.event', payload: payload(2, 1) }]);
    const appender2 = appenderFor();
    appender2.enqueue('test.event', payload(1, 3));
    await appender2.flush();
    for (let i = 0; got.length < 4 && i < 100; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(got).toEqual([got[0], got[0]! + 1, between, between! + 1]);
    expect(reads).toBeGreaterThan(0);
    await tail.stop();

    // Two enqueues on different turns: the second insert starts 40 ms after the first at the earliest.
    const starts: number[] = [];
    const spaced = createAppender({ log: { append: (events) => (starts.push(performance.now()), log.append(events)) }, minIntervalMs: 40 });
    spaced.enqueue('test.event', payload(3, 1));
    await new Promise((resolve) => setTimeout(resolve, 5));
    spaced.enqueue('test.event', payload(3, 2));
    await spaced.flush();
    expect(starts).toHaveLength(2);
    // The appender spaces its own clock readings by 40 ms (it waits again for a timer that fires early);
    // this test reads the clock just after it, so a process descheduled between the two readings (a loaded
    // CI machine: 37.7 ms once) shows less. Without the spacing the second insert starts about 5 ms in.
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(30);
  });

  // PGlite: every writer is this process, so the follower polls only as a safety net and a write of
  // another module (an account change's outbox row) wakes it through the commit's notification.
  if (!usesPostgres()) it("on PGlite a statement that logs events wakes the listening follower at its commit; the appender's own batches do not", async () => {
    const log = createEventLog(test.database);
    const got: number[] = [];
    let reads = 0;
    const counted = { after: (id: number, limit?: number) => (reads++, log.after(id, limit)), bounds: () => log.bounds() };
    const tail = createTail({ log: counted, deliver: (logId) => got.push(logId), intervalMs: 60_000 });
    let notices = 0;
    const unlisten = await test.database.listen!(EVENT_LOG_CHANNEL, () => {
      notices++;
      tail.wake();
    });
    try {
      await tail.start();
      for (let i = 0; reads === 0 && i < 100; i++) await new Promise((resolve) => setTimeout(resolve, 10));

      await slowAppend(test.database, [payload(4, 1), payload(4, 2)], 0);
      const woken = performance.now();
      for (let i = 0; got.length < 2 && i < 100; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(got).toHaveLength(2);
      expect(performance.now() - woken).toBeLessThan(1_000); // the poll would take 60 s
      expect(notices).toBe(1);

      // The appender's batch: stored and handed over by its writer, no notification, no read.
      const readsBefore = reads;
      const appender = createAppender({ log, onStored: (lastId, events) => tail.stored(lastId, events) });
      appender.enqueue('test.event', payload(4, 3));
      await appender.flush();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(got).toHaveLength(3);
      expect(notices).toBe(1);
      expect(reads).toBe(readsBefore);
    } finally {
      await unlisten();
      await tail.stop();
    }
  });
  // PostgreSQL: nobody listens (readers poll, Database.listen is absent), so no statement notifies.
  if (usesPostgres()) it('on PostgreSQL a statement that logs events sends no notification', async () => {
    if (test.dbConfig.kind !== 'postgres') throw new Error('expected a PostgreSQL test database');
    const listener = postgres(test.dbConfig.url, { max: 1, fetch_types: false, onnotice: () => {} });
    let notices = 0;
    try {
      await listener.listen(EVENT_LOG_CHANNEL, () => notices++);
      const log = createEventLog(test.database);
      const before = (await log.bounds()).last;
      await slowAppend(test.database, [payload(5, 1)], 0);
      // The same statement with a notice, sent by hand: the listener hears that one, so it would have heard ours.
      await listener`select pg_notify(${EVENT_LOG_CHANNEL}, 'control')`;
      for (let i = 0; notices === 0 && i < 100; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect((await log.after(before)).map((event) => event.payload)).toEqual([payload(5, 1)]);
      expect(notices).toBe(1);
    } finally {
      await listener.end({ timeout: 2 });
    }
  });
});
