// The webhook's durable part: one instance at a time (the lease holder) reads the event log after the
// cursor the database keeps, POSTs the events in batches, in id order, and moves the cursor after a
// 2xx. At least once: a holder that dies between a POST and the cursor's move leaves the batch to the
// next holder, which sends it again (receivers skip ids they processed). A batch refused for
// `giveUpMs` is parked (kept with its events, listed, sent again on request) and the cursor moves past
// it, so one bad batch never holds the stream for ever. Nothing durable waits in memory: a slow
// receiver only makes the cursor lag behind (events_webhook_lag_seconds).
import { failureCause, newMessageId, webhookHeaders } from '../webhook.js';
import { standardWebhooksKey } from '../webhook-key.js';
import { durableId } from '../ids.js';
import type { Logger } from '../../logger.js';
import type { EventLog, StoredEvent } from './log.js';
import type { DeliveryStore } from './deliveries.js';

export const DEFAULT_LEASE_MS = 10_000;
export const DEFAULT_POLL_MS = 100;
const DB_RETRY_MAX_MS = 2_000;

export interface LogDeliveryOptions {
  url: string;
  secret: string;
  log: Pick<EventLog, 'after'>;
  store: DeliveryStore;
  /** Events per POST at most (EVENTS_WEBHOOK_BATCH_MAX). */
  batchMax: number;
  /** How long a batch is retried before it is parked (EVENTS_WEBHOOK_GIVE_UP_S). */
  giveUpMs: number;
  /** The lease's length: renewed every third of it; a successor takes over at most this long after a holder died. */
  leaseMs?: number;
  /** How often a waiting instance asks for the lease, and an idle holder reads the log. */
  pollMs?: number;
  timeoutMs?: number;
  watchdogMarginMs?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  logger?: Logger;
  fetch?: typeof fetch;
  now?: () => number;
}

export interface LogDeliveryStats {
  /** Whether this instance holds the lease (delivers) now. */
  holder: boolean;
  /** The log id of the last event this instance knows delivered or parked. */
  cursor: number;
  delivered: number;
  batches: number;
  failures: number;
  /** Batches this instance parked. */
  parked: number;
  redelivered: number;
}

type Outcome = { ok: true } | { ok: false; cause: string };

/**
 * @example
 * const delivery = createLogDelivery({ url, secret, log, store, batchMax: 100, giveUpMs: 86_400_000, logger })
 * delivery.start(); tail.onStored(delivery.wake)
 * // shutdown: await delivery.stop({ deadlineMs })
 */
export function createLogDelivery(options: LogDeliveryOptions) {
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const watchdogMarginMs = options.watchdogMarginMs ?? 5_000;
  const retryBaseMs = options.retryBaseMs ?? 500;
  const retryMaxMs = options.retryMaxMs ?? 30_000;
  const doFetch = options.fetch ?? fetch;
  const now = options.now ?? Date.now;
  const { store, logger } = options;
  const standardKey = standardWebhooksKey(options.secret);
  const target = new URL(options.url);
  const origin = target.origin;

  const stats: LogDeliveryStats = { holder: false, cursor: 0, delivered: 0, batches: 0, failures: 0, parked: 0, redelivered: 0 };
  let stopping = false;
  let loop: Promise<void> | undefined;
  let wakeUp: (() => void) | undefined;
  let woken = false;
  let inFlight: AbortController | undefined;
  /** When the lease was last renewed (ms, this clock): past `leaseMs` without renewal it may be someone else's. */
  let renewedAt = 0;
  let renewTimer: NodeJS.Timeout | undefined;
  let redeliveryDue = true;
  let failing: string | undefined;

  function sleep(ms: number): Promise<void> {
    if (woken || stopping) {
      woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      wakeUp = done;
      function done() {
        clearTimeout(timer);
        wakeUp = undefined;
        woken = false;
        resolve();
      }
    });
  }

  function wake(): void {
    if (wakeUp) wakeUp();
    else woken = true;
  }

  /** Lost the lease (another instance may deliver now): the attempt in flight is abandoned. */
  function lose(why: string): void {
    if (!stats.holder) return;
    stats.holder = false;
    clearInterval(renewTimer);
    inFlight?.abort();
    logger?.warn({ webhook: origin, why }, 'event webhook: this instance no longer delivers from the event log (lease lost)');
  }

  function holding(): boolean {
    if (stats.holder && now() - renewedAt >= leaseMs) lose('not renewed within the lease');
    return stats.holder && !stopping;
  }

  async function renew(): Promise<void> {
    try {
      const cursor = await store.acquire();
      if (cursor === undefined) lose('taken by another instance');
      else renewedAt = now();
    } catch (err) {
      logger?.warn({ err }, 'event webhook: renewing the lease failed; retrying');
    }
  }

  /** One POST: ok on a 2xx. Bounded by its deadline, and by a watchdog for a client that lost its abort. */
  async function post(raw: string, id: string, timestamp: number): Promise<Outcome> {
    const controller = new AbortController();
    inFlight = controller;
    const deadline = setTimeout(() => controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError')), timeoutMs);
    let watchdog: NodeJS.Timeout | undefined;
    const stuck = new Promise<Outcome>((resolve) => {
      watchdog = setTimeout(() => resolve({ ok: false, cause: 'no answer (watchdog)' }), timeoutMs + watchdogMarginMs);
    });
    const sent = (async (): Promise<Outcome> => {
      try {
        const response = await doFetch(target, { method: 'POST', headers: webhookHeaders(raw, timestamp, id, options.secret, standardKey), body: raw, redirect: 'manual', signal: controller.signal });
        await response.body?.cancel().catch(() => {});
        return response.status >= 200 && response.status < 300 ? { ok: true } : { ok: false, cause: `HTTP ${response.status}` };
      } catch (error) {
        return { ok: false, cause: failureCause(error) };
      }
    })();
    try {
      return await Promise.race([sent, stuck]);
    } finally {
      clearTimeout(deadline);
      clearTimeout(watchdog);
      inFlight = undefined;
    }
  }

  /** The body as the in-memory sink sends it (WebhookBatch), its events' JSON as stored. */
  function bodyOf(events: string, timestamp: number): string {
    return `{"timestamp":${timestamp},"dropped":0,"events":${events}}`;
  }

  function eventsJson(events: readonly StoredEvent[]): string {
    return `[${events.map((event) => `{"id":"${durableId(event.id)}",${event.payload.slice(1)}`).join(',')}]`;
  }

  function failed(cause: string, events: number): void {
    stats.failures++;
    if (failing === cause) return;
    failing = cause;
    logger?.warn({ webhook: origin, cause, events }, `event webhook failing: ${cause}; retrying with backoff (logged again when the cause changes or deliveries resume)`);
  }

  function succeeded(): void {
    if (failing) logger?.info({ webhook: origin }, 'event webhook delivering again');
    failing = undefined;
  }

  /** Runs a database write until it answers (or the lease is gone): its answer, or undefined. */
  async function persist<T>(what: string, write: () => Promise<T>): Promise<T | undefined> {
    let delay = 50;
    while (holding()) {
      try {
        return await write();
      } catch (err) {
        logger?.warn({ err, retryInMs: delay }, `event webhook: ${what} failed; retrying`);
        await sleep(delay);
        delay = Math.min(DB_RETRY_MAX_MS, delay * 2);
      }
    }
    return undefined;
  }

  /** Sends one batch until a 2xx, or parks it after giveUpMs; resolves when the cursor moved past it (false: lease lost). */
  async function deliverBatch(events: StoredEvent[]): Promise<boolean> {
    const id = newMessageId();
    const json = eventsJson(events);
    const first = events[0]!.id;
    const last = events.at(-1)!.id;
    const since = now();
    let attempts = 0;
    let lastError = '';
    for (let failures = 0; holding(); ) {
      const timestamp = Math.floor(now() / 1000);
      attempts++;
      const outcome = await post(bodyOf(json, timestamp), id, timestamp);
      if (!holding()) return false;
      if (outcome.ok) {
        succeeded();
        stats.batches++;
        stats.delivered += events.length;
        const moved = await persist('moving the cursor', () => store.advance(last));
        if (moved === false) lose('taken by another instance');
        if (!moved) return false;
        renewedAt = now();
        stats.cursor = last;
        return true;
      }
      lastError = outcome.cause;
      failed(outcome.cause, events.length);
      if (now() - since >= options.giveUpMs) {
        const parked = await persist('parking a batch', () => store.park({ id, firstLogId: first, lastLogId: last, events: events.length, attempts, lastError, body: json }));
        if (parked === false) lose('taken by another instance');
        if (!parked) return false;
        renewedAt = now();
        stats.parked++;
        stats.cursor = last;
        logger?.error(
          { webhook: origin, deliveryId: id, firstEventId: String(durableId(first)), lastEventId: String(durableId(last)), events: events.length, attempts, lastError },
          'event webhook: gave up on a batch after EVENTS_WEBHOOK_GIVE_UP_S; parked (GET /internal/v1/webhook/deliveries?status=failed, POST …/redeliver)',
        );
        return true;
      }
      failures++;
      const backoff = Math.min(retryMaxMs, retryBaseMs * 2 ** Math.min(failures - 1, 30));
      await sleep(Math.min(backoff / 2 + Math.random() * (backoff / 2), Math.max(0, options.giveUpMs - (now() - since))));
    }
    return false;
  }

  /** Parked batches asked to be sent again: one attempt each per round; parked again after giveUpMs of asking. */
  const redeliveries = new Map<string, { since: number; next: number; failures: number }>();
  async function redeliver(): Promise<void> {
    redeliveryDue = false;
    const rows = await store.requested();
    for (const row of rows) {
      if (!holding()) return;
      const state = redeliveries.get(row.id) ?? { since: now(), next: 0, failures: 0 };
      redeliveries.set(row.id, state);
      if (now() < state.next) continue;
      const timestamp = Math.floor(now() / 1000);
      const outcome = await post(bodyOf(row.body, timestamp), row.id, timestamp);
      if (outcome.ok) {
        redeliveries.delete(row.id);
        stats.redelivered++;
        await store.settleRedelivery(row.id, { delivered: true, attempts: row.attempts + state.failures + 1 });
        logger?.info({ webhook: origin, deliveryId: row.id, events: row.events }, 'event webhook: a parked batch was delivered again');
        continue;
      }
      state.failures++;
      if (now() - state.since >= options.giveUpMs) {
        redeliveries.delete(row.id);
        await store.settleRedelivery(row.id, { delivered: false, attempts: row.attempts + state.failures, lastError: outcome.cause });
        logger?.error({ webhook: origin, deliveryId: row.id, lastError: outcome.cause }, 'event webhook: a redelivery failed for EVENTS_WEBHOOK_GIVE_UP_S; parked again');
        continue;
      }
      state.next = now() + Math.min(retryMaxMs, retryBaseMs * 2 ** Math.min(state.failures - 1, 30));
    }
    // Another round soon while some are still asked for.
    if (rows.length > 0) redeliveryDue = true;
  }

  async function deliverAsHolder(): Promise<void> {
    let lastRedeliveryCheck = 0;
    while (holding()) {
      if (redeliveryDue || now() - lastRedeliveryCheck >= 1_000) {
        lastRedeliveryCheck = now();
        await redeliver();
        if (!holding()) return;
      }
      const events = await options.log.after(stats.cursor, options.batchMax);
      if (events.length === 0) {
        await sleep(redeliveries.size > 0 ? Math.min(pollMs, 250) : pollMs);
        continue;
      }
      if (!(await deliverBatch(events))) return;
    }
  }

  async function run(initial: number | undefined): Promise<void> {
    let delay = pollMs;
    while (!stopping) {
      try {
        const cursor = await store.acquire(initial);
        if (cursor !== undefined && !stopping) {
          renewedAt = now();
          stats.holder = true;
          stats.cursor = cursor;
          delay = pollMs;
          logger?.info({ webhook: origin, cursor: String(durableId(cursor)) }, 'event webhook: this instance delivers from the event log (lease taken)');
          renewTimer = setInterval(() => void renew(), Math.max(100, Math.floor(leaseMs / 3)));
          renewTimer.unref();
          await deliverAsHolder();
          clearInterval(renewTimer);
          continue;
        }
      } catch (err) {
        if (stats.holder) lose('a database error');
        logger?.warn({ err, retryInMs: delay }, 'event webhook: reading or taking the lease failed; retrying');
        delay = Math.min(DB_RETRY_MAX_MS, delay * 2);
      }
      // Not the holder: ask again within a second, so a dead holder's successor starts within the lease + 1 s.
      await sleep(Math.min(1_000, Math.max(pollMs, delay)));
    }
  }

  return {
    /** `joinedAt`: the log id this process joined the log after, where a first delivery ever starts. */
    start(joinedAt?: number): void {
      loop ??= run(joinedAt);
    },
    /** Reads the log now (this instance stored events, or a redelivery was asked for). */
    wake,
    /** A redelivery was asked for on this instance. */
    redeliverSoon(this: void): void {
      redeliveryDue = true;
      wake();
    },
    /**
     * Delivers what the log holds until `deadlineMs` has passed (the shutdown's last events), then
     * gives the lease up so that another instance goes on at once.
     */
    async stop({ deadlineMs = 1_000 } = {}): Promise<void> {
      const deadline = now() + deadlineMs;
      while (stats.holder && now() < deadline) {
        const pending = await options.log.after(stats.cursor, 1).catch(() => []);
        if (pending.length === 0 || failing) break;
        wake();
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      stopping = true;
      inFlight?.abort();
      wake();
      await loop;
      clearInterval(renewTimer);
      if (stats.holder) {
        stats.holder = false;
        await store.release().catch((err: unknown) => logger?.warn({ err }, 'event webhook: releasing the lease failed (another instance takes over when it expires)'));
      }
    },
    stats: (): LogDeliveryStats => ({ ...stats }),
  };
}

export type LogDelivery = ReturnType<typeof createLogDelivery>;
