// Follows the event log (issue 39): hands every durable event that any instance stores to this
// instance's bus, in id order, within `intervalMs` of its commit, and at once for this instance's own
// writes: the appender hands its batches over (stored()), and on PGlite, where every writer is this
// process, the other writes' notification wakes it (Database.listen; the poll is then only a safety
// net, LISTENING_INTERVAL_MS). On PostgreSQL polling follows the other instances and survives a
// database restart; each poll is one indexed read of the rows after the last id it handed over.
import type { Logger } from '../../logger.js';
import { MAX_READ, type EventLog } from './log.js';

export const DEFAULT_INTERVAL_MS = 100;
/** The poll where every write wakes the follower (PGlite): each read costs the embedded database about a millisecond of CPU. */
export const LISTENING_INTERVAL_MS = 1_000;
const RETRY_MAX_MS = 2_000;

export interface TailOptions {
  log: Pick<EventLog, 'after' | 'bounds'>;
  /** Called for each stored event, in id order, each once. */
  deliver: (logId: number, payload: string) => void;
  intervalMs?: number;
  logger?: Logger;
}

/**
 * @example
 * const tail = createTail({ log, deliver: bus.deliver })
 * bus.start(await tail.start())   // follows from the newest stored event
 */
export function createTail(options: TailOptions) {
  const intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS;
  let last = 0;
  let stopped = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  let pending = false;

  async function sleep(ms: number): Promise<void> {
    if (pending || stopped) {
      pending = false;
      return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      timer.unref();
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    wake = undefined;
    pending = false;
  }

  async function follow(): Promise<void> {
    let retryMs = intervalMs;
    while (!stopped) {
      try {
        const events = await options.log.after(last, MAX_READ);
        for (const event of events) {
          if (stopped) return;
          if (event.id <= last) continue; // handed over by catchUp() meanwhile
          last = event.id;
          options.deliver(event.id, event.payload);
        }
        retryMs = intervalMs;
        // A full page: more is waiting.
        if (events.length === MAX_READ) continue;
        await sleep(intervalMs);
      } catch (err) {
        if (stopped) return;
        options.logger?.warn({ err, retryInMs: retryMs }, 'event log: reading new events failed; retrying');
        await sleep(retryMs);
        retryMs = Math.min(RETRY_MAX_MS, retryMs * 2);
      }
    }
  }

  function tailWake(): void {
    if (wake) wake();
    else pending = true;
  }

  return {
    /** Starts following after the newest stored event; resolves with its log id (0: none). */
    async start(): Promise<number> {
      last = (await options.log.bounds()).last;
      loop = follow();
      return last;
    },
    /** Reads now (after this instance stored events) instead of at the next interval. */
    wake: tailWake,
    /**
     * This instance stored `events` with the ids up to `lastId` (consecutive: taken under the commit
     * lock). Right after the last one handed over, nothing can be between: they are handed over at
     * once, without reading them back; otherwise (another writer's events between) the follower reads.
     */
    stored(this: void, lastId: number, events: readonly { payload: string }[]): void {
      const firstId = lastId - events.length + 1;
      if (stopped || firstId !== last + 1) {
        if (lastId > last) tailWake();
        return;
      }
      events.forEach((event, i) => options.deliver(firstId + i, event.payload));
      last = lastId;
    },
    /** The log id of the last event handed over. */
    last: () => last,
    /**
     * Hands over every event stored so far (at shutdown, after the appender's last batch), within
     * `deadlineMs`. Reads beside the follower: the bus takes each log id once.
     */
    async catchUp({ deadlineMs = 1_000 } = {}): Promise<void> {
      const deadline = Date.now() + deadlineMs;
      while (Date.now() < deadline) {
        const events = await options.log.after(last, MAX_READ);
        for (const event of events) {
          if (event.id <= last) continue;
          last = event.id;
          options.deliver(event.id, event.payload);
        }
        if (events.length < MAX_READ) return;
      }
    },
    async stop(): Promise<void> {
      stopped = true;
      wake?.();
      await loop;
    },
  };
}

export type Tail = ReturnType<typeof createTail>;
