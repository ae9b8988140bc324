// Writes published durable events to the event log in batches: one statement in flight at a time, up
// to MAX_BATCH events each, and at least `minIntervalMs` between two statements' starts, so a busy
// relay costs the database a few inserts a second (each holding the log's commit lock) instead of one
// per request, and an idle one writes an event on the next turn.
// An event survives a crash from the moment its batch is stored. While the database refuses, the
// batch is retried with backoff and new events wait behind it, up to `maxQueued`: beyond that the
// oldest waiting are dropped, counted and logged (memory is bounded; the database is the problem then,
// not a slow receiver).
import type { Logger } from '../../logger.js';
import type { EventLog, EventToStore } from './log.js';

/** Events one insert stores at most. */
export const MAX_BATCH = 1_000;
export const DEFAULT_MAX_QUEUED = 100_000;
/** Between two inserts' starts at least: at most 20 statements a second; an event waits 50 ms at most for it. */
export const DEFAULT_MIN_INTERVAL_MS = 50;
const RETRY_MIN_MS = 50;
const RETRY_MAX_MS = 2_000;

export interface AppenderStats {
  /** Events stored since the start. */
  appended: number;
  /** Events waiting, the batch in flight included. */
  queued: number;
  /** Events dropped because `maxQueued` were waiting on a database that refused. */
  dropped: number;
  /** Failed inserts (each retried). */
  failures: number;
}

export interface AppenderOptions {
  log: Pick<EventLog, 'append'>;
  /** Called after each stored batch with the ids it took (one after the other, under the commit lock) and its events. */
  onStored?: (lastId: number, events: readonly EventToStore[]) => void;
  maxQueued?: number;
  minIntervalMs?: number;
  logger?: Logger;
}

/**
 * @example
 * const appender = createAppender({ log, onStored: () => tail.wake() })
 * bus = createEventBus({ durable, store: appender.enqueue })
 */
export function createAppender(options: AppenderOptions) {
  const maxQueued = options.maxQueued ?? DEFAULT_MAX_QUEUED;
  const minIntervalMs = options.minIntervalMs ?? DEFAULT_MIN_INTERVAL_MS;
  /** When the last insert started (performance.now()). */
  let lastStart = -Infinity;
  let queue: EventToStore[] = [];
  let inFlight: EventToStore[] = [];
  let running: Promise<void> | undefined;
  let stopped = false;
  const stats = { appended: 0, dropped: 0, failures: 0 };
  let retryTimer: NodeJS.Timeout | undefined;
  let wakeRetry: (() => void) | undefined;

  async function run(): Promise<void> {
    let delay = RETRY_MIN_MS;
    while (queue.length > 0) {
      // Also between the inserts of one run: events that came while one was in flight wait their turn.
      // A timer can fire up to a millisecond before performance.now() says it is due (libuv counts whole
      // milliseconds): wait again for what is left, so the interval holds as stated.
      for (let wait = lastStart + minIntervalMs - performance.now(); wait > 0 && !stopped; wait = lastStart + minIntervalMs - performance.now()) {
        await new Promise((resolve) => setTimeout(resolve, Math.ceil(wait)));
      }
      inFlight = queue.length <= MAX_BATCH ? queue : queue.slice(0, MAX_BATCH);
      queue = queue.length <= MAX_BATCH ? [] : queue.slice(MAX_BATCH);
      try {
        lastStart = performance.now();
        const stored = inFlight;
        const last = await options.log.append(stored);
        stats.appended += stored.length;
        inFlight = [];
        delay = RETRY_MIN_MS;
        if (last !== undefined) options.onStored?.(last, stored);
      } catch (err) {
        stats.failures++;
        queue = inFlight.concat(queue);
        inFlight = [];
        if (stopped) return;
        options.logger?.warn({ err, queued: queue.length, retryInMs: delay }, 'event log: storing events failed; retrying');
        await new Promise<void>((resolve) => {
          wakeRetry = resolve;
          retryTimer = setTimeout(resolve, delay);
          retryTimer.unref();
        });
        wakeRetry = undefined;
        delay = Math.min(RETRY_MAX_MS, delay * 2);
      }
    }
  }

  function kick(): void {
    if (running || stopped) return;
    // Started on the next turn at the earliest (events published in the same tick, a close cascade,
    // share the batch); run() keeps minIntervalMs between two inserts' starts.
    running = new Promise<void>((resolve) => setImmediate(resolve))
      .then(run)
      .finally(() => {
        running = undefined;
        if (queue.length > 0 && !stopped) kick();
      });
  }

  return {
    /** Synchronous and cheap: for the bus's `store`. */
    enqueue(this: void, type: string, payload: string): void {
      if (queue.length + inFlight.length >= maxQueued) {
        queue.shift();
        stats.dropped++;
        if (stats.dropped === 1 || stats.dropped % 10_000 === 0) options.logger?.error({ dropped: stats.dropped, maxQueued }, 'event log: the database has refused events for too long; dropping the oldest waiting');
      }
      queue.push({ type, payload });
      kick();
    },
    /** Stores what is waiting, within `deadlineMs`; resolves with how many were left unstored. */
    async flush({ deadlineMs = 1_000 } = {}): Promise<{ unstored: number }> {
      const deadline = Date.now() + deadlineMs;
      while ((queue.length > 0 || running) && Date.now() < deadline) {
        kick();
        wakeRetry?.();
        await Promise.race([running, new Promise((resolve) => setTimeout(resolve, Math.max(1, deadline - Date.now())))]);
      }
      stopped = true;
      clearTimeout(retryTimer);
      const unstored = queue.length + inFlight.length;
      if (unstored > 0) options.logger?.error({ unstored }, 'event log: events left unstored at shutdown');
      return { unstored };
    },
    stats(): AppenderStats {
      return { ...stats, queued: queue.length + inFlight.length };
    },
  };
}

export type Appender = ReturnType<typeof createAppender>;
