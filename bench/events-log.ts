// `node --import tsx bench/events-log.ts` (issue 39): the event log on PostgreSQL.
//   events-log-appends-per-s: relay events published in bursts (100 per turn of the event loop, as a
//     close cascade does) through the bus, the batching appender and the commit lock, until all are
//     stored; three rounds, median and spread.
//   events-log-reader-p99-ms / -p50-ms: commit -> delivery on another instance (its own connection pool
//     and follower), 100 events/s for 10 s.
//   events-log-webhook-p99-ms / -p50-ms: commit -> the receiver's POST, 100 events/s for 10 s, the lease
//     holder being the writing instance (woken by its own appends); -other-: the holder another instance
//     (its own pool, reading the log on its poll), as for account events and a second relay's events.
// Each round runs on a scratch database that is dropped afterwards, also on failure.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { openDatabase, type Database } from '../src/db/client.js';
import { migrateDatabase } from '../src/db/migrate.js';
import { createEventBus } from '../src/events/bus.js';
import { createAppender } from '../src/events/log/appender.js';
import { createDeliveryStore } from '../src/events/log/deliveries.js';
import { createLogDelivery } from '../src/events/log/delivery.js';
import { LIVE_SLOTS } from '../src/events/ids.js';
import { createEventLog } from '../src/events/log/log.js';
import { createTail } from '../src/events/log/tail.js';
import { bench, info, median, percentile, postgresReachable, scratchPostgresDatabase } from './lib.js';

const EVENTS = Number(process.env.BENCH_EVENTS_LOG_EVENTS ?? 50_000);
const BURST = 100;
const ROUNDS = 3;

async function withDatabase<T>(task: (open: () => Promise<Database>) => Promise<T>): Promise<T> {
  const scratch = await scratchPostgresDatabase('events_log');
  const opened: Database[] = [];
  try {
    const open = async () => {
      const database = await openDatabase({ kind: 'postgres', url: scratch.url });
      opened.push(database);
      return database;
    };
    await migrateDatabase(await open());
    return await task(open);
  } finally {
    for (const database of opened) await database.close().catch(() => {});
    await scratch.drop();
  }
}

/** Events per second from the first publish to the last one stored. */
async function appendRound(): Promise<number> {
  return withDatabase(async (open) => {
    const log = createEventLog(await open());
    let done: () => void = () => {};
    const all = new Promise<void>((resolve) => (done = resolve));
    const appender = createAppender({ log, onStored: () => (appender.stats().appended >= EVENTS ? done() : undefined) });
    const bus = createEventBus({ durable: () => true, store: appender.enqueue });
    const started = performance.now();
    for (let i = 0; i < EVENTS; i += BURST) {
      for (let j = 0; j < BURST && i + j < EVENTS; j++) {
        bus.publish({ type: 'transport.closed', transportId: `t-${i + j}`, routerId: `r-${i}`, appData: { room: `room-${i}` }, reason: 'router_closed' });
      }
      // The next burst comes on a later turn, as requests do.
      await new Promise((resolve) => setImmediate(resolve));
    }
    await all;
    const seconds = (performance.now() - started) / 1000;
    const stored = appender.stats().appended;
    if (stored !== EVENTS) throw new Error(`stored ${stored} of ${EVENTS}`);
    await appender.flush();
    return EVENTS / seconds;
  });
}

/** Milliseconds from each batch's commit (the writer's callback) to its delivery on another instance. */
async function readerLatencies(): Promise<number[]> {
  return withDatabase(async (open) => {
    const writerLog = createEventLog(await open());
    const readerLog = createEventLog(await open());
    const committedAt = new Map<number, number>();
    const latencies: number[] = [];
    const appender = createAppender({ log: { append: async (events) => {
      const last = await writerLog.append(events);
      if (last !== undefined) committedAt.set(last, performance.now());
      return last;
    } } });
    const tail = createTail({
      log: readerLog,
      deliver: (logId) => {
        const at = committedAt.get(logId);
        if (at !== undefined) latencies.push(performance.now() - at);
      },
    });
    await tail.start();
    // 100 events/s for 10 s, one at a time (each its own batch: the worst case for the follower).
    for (let i = 0; i < 1_000; i++) {
      appender.enqueue('router.closed', JSON.stringify({ type: 'router.closed', routerId: `r-${i}`, appData: {}, reason: 'api' }));
      await sleep(10);
    }
    await appender.flush();
    await sleep(500);
    await tail.stop();
    return latencies.sort((a, b) => a - b);
  });
}

/** Milliseconds from each event's commit to its arrival in the webhook receiver's POST. */
async function webhookLatencies(holder: 'writer' | 'other'): Promise<number[]> {
  const committedAt = new Map<number, number>();
  const arrivedAt = new Map<number, number>();
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = performance.now();
      const { events } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { events: { id: string }[] };
      for (const event of events) if (!arrivedAt.has(Number(event.id) / LIVE_SLOTS)) arrivedAt.set(Number(event.id) / LIVE_SLOTS, at);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  try {
    return await withDatabase(async (open) => {
      const writerDb = await open();
      const writerLog = createEventLog(writerDb);
      const holderDb = holder === 'writer' ? writerDb : await open();
      const delivery = createLogDelivery({
        url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
        secret: 'bench-webhook-secret-0123456789',
        log: createEventLog(holderDb),
        store: createDeliveryStore(holderDb, { holder: 'bench', leaseMs: 10_000, exclusive: false }),
        batchMax: 100,
        giveUpMs: 86_400_000,
      });
      const appender = createAppender({
        log: { append: async (events) => {
          const last = await writerLog.append(events);
          if (last !== undefined) committedAt.set(last, performance.now());
          return last;
        } },
        ...(holder === 'writer' ? { onStored: () => delivery.wake() } : {}),
      });
      delivery.start();
      await sleep(300);
      for (let i = 0; i < 1_000; i++) {
        appender.enqueue('router.closed', JSON.stringify({ type: 'router.closed', routerId: `r-${i}`, appData: {}, reason: 'api' }));
        await sleep(10);
      }
      await appender.flush();
      const deadline = Date.now() + 5_000;
      const missing = () => [...committedAt.keys()].filter((logId) => !arrivedAt.has(logId));
      while (missing().length > 0 && Date.now() < deadline) await sleep(50);
      await delivery.stop();
      if (missing().length > 0) throw new Error(`webhook: ${missing().length} of ${committedAt.size} batches not delivered`);
      // A poll can read a row before the writer's callback noted its commit: counted as 0 ms.
      return [...committedAt].map(([logId, at]) => Math.max(0, arrivedAt.get(logId)! - at)).sort((a, b) => a - b);
    });
  } finally {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  }
}

if (!(await postgresReachable())) {
  console.error('events-log: PostgreSQL is not reachable at BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test)');
  process.exit(1);
}
const rates: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const rate = await appendRound();
  info(`round ${round + 1}: ${EVENTS} relay events stored at ${rate.toFixed(0)} events/s`);
  rates.push(rate);
}
bench('events-log-appends-per-s', Math.round(median(rates)), `events/s (median of ${ROUNDS}; spread ${Math.round(Math.min(...rates))}-${Math.round(Math.max(...rates))})`);
const latencies = await readerLatencies();
info(`${latencies.length} batches delivered on the other instance`);
bench('events-log-reader-p50-ms', percentile(latencies, 50), 'ms (commit -> delivery on another instance, 100 events/s)');
bench('events-log-reader-p99-ms', percentile(latencies, 99), 'ms');
for (const holder of ['writer', 'other'] as const) {
  const webhook = await webhookLatencies(holder);
  const name = holder === 'writer' ? 'events-log-webhook' : 'events-log-webhook-other';
  info(`${webhook.length} events posted to the webhook (lease holder: ${holder === 'writer' ? 'the writing instance' : 'another instance'})`);
  bench(`${name}-p50-ms`, percentile(webhook, 50), 'ms (commit -> webhook POST received, 100 events/s)');
  bench(`${name}-p99-ms`, percentile(webhook, 99), 'ms');
}
