// Retention of the event log (EVENTS_RETENTION_HOURS): every instance prunes the rows older than it,
// at least every min(retention, 1 minute), in small batches by id. Every instance rather than the
// webhook's lease holder: the log needs pruning with no webhook configured too, and two instances
// pruning at once skip each other's rows (log.prune) instead of waiting. With a webhook, rows the
// webhook has not delivered (or parked) yet are kept whatever their age: nothing durable is lost
// because a receiver is slow; that is logged, and seen in events_webhook_lag_seconds.
import type { Logger } from '../../logger.js';
import type { EventLog } from './log.js';

export const PRUNE_BATCH = 5_000;
/** Batches one round deletes at most: a backlog is worked off over rounds, never in one long loop. */
const MAX_BATCHES = 1_000;
const MIN_BATCH = 50;
/** What one delete should take. */
const TARGET_MS = 20;
const MAX_INTERVAL_MS = 60_000;

export interface RetentionOptions {
  log: Pick<EventLog, 'prune' | 'olderThanAfter'>;
  retentionMs: number;
  /**
   * The log id the webhook delivered up to: nothing above it is pruned (undefined: it has not started
   * yet, nothing is pruned; null: no webhook anywhere, rows go by age alone). Absent: null.
   */
  delivered?: () => Promise<number | null | undefined>;
  batch?: number;
  logger?: Logger;
}

/**
 * @example
 * const retention = createRetention({ log, retentionMs: 72 * 3_600_000, delivered: () => store.cursor(), logger })
 * retention.start(); // shutdown: await retention.stop()
 */
export function createRetention(options: RetentionOptions) {
  const intervalMs = Math.max(10, Math.min(options.retentionMs, MAX_INTERVAL_MS));
  const batch = options.batch ?? PRUNE_BATCH;
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<number> | undefined;
  let stopped = false;

  /** One round: resolves with how many rows it deleted. */
  async function prune(): Promise<number> {
    const before = new Date(Date.now() - options.retentionMs);
    const delivered = options.delivered ? await options.delivered() : null;
    if (delivered === undefined) return 0;
    const upTo = delivered ?? undefined;
    let pruned = 0;
    // The batch follows how long a delete takes: small enough that a writer queued behind one (on
    // PGlite every statement of the process waits its turn) waits a few milliseconds, not hundreds.
    let size = Math.min(batch, 500);
    for (let i = 0; i < MAX_BATCHES && !stopped; i++) {
      const started = performance.now();
      const n = await options.log.prune(before, size, upTo);
      const tookMs = performance.now() - started;
      pruned += n;
      if (n < size) break;
      size = tookMs > TARGET_MS * 2 ? Math.max(MIN_BATCH, Math.floor(size / 2)) : tookMs < TARGET_MS / 2 ? Math.min(batch, size * 2) : size;
      // Writers that queued meanwhile go first.
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    options.logger?.[pruned > 0 ? 'info' : 'debug']({ pruned, before: before.toISOString() }, 'event log: pruned events older than EVENTS_RETENTION_HOURS');
    if (upTo !== undefined) {
      const held = await options.log.olderThanAfter(before, upTo);
      if (held > 0) options.logger?.warn({ held }, 'event log: retention held back: events older than EVENTS_RETENTION_HOURS are kept until the webhook delivers or parks them');
    }
    return pruned;
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      round = prune()
        .catch((err: unknown) => {
          options.logger?.warn({ err }, 'event log: pruning failed; trying again at the next round');
          return 0;
        })
        .finally(schedule);
    }, intervalMs);
    timer.unref();
  }

  return {
    start(): void {
      if (timer === undefined && !stopped) schedule();
    },
    /** One round now (tests; the timer's rounds go on). */
    prune,
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      await round;
    },
  };
}

export type Retention = ReturnType<typeof createRetention>;
