// Webhook sink of the bus: signed JSON batches POSTed in order, retried with backoff, from a bounded queue.
import { createHmac, randomBytes } from 'node:crypto';
import packageJson from '../../package.json' with { type: 'json' };
import type { Logger } from '../logger.js';
import type { AnyEvent, BusEvent } from './types.js';
import { signStandardWebhook, STANDARD_ID_HEADER, STANDARD_SIGNATURE_HEADER, STANDARD_TIMESTAMP_HEADER, standardWebhooksKey } from './webhook-key.js';

export const SIGNATURE_HEADER = 'X-Relay-Signature';
export const TIMESTAMP_HEADER = 'X-Relay-Timestamp';
export const DEFAULT_BATCH_MAX = 100;
export const DEFAULT_QUEUE_MAX = 10_000;
export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_WATCHDOG_MARGIN_MS = 5_000;

/** `sha256=<hex>`: HMAC-SHA256 of the raw body (which holds the timestamp) under the secret. */
export function signWebhookBody(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/** The headers of a POST: both signature schemes over `raw` (the log's deliveries share them: log/delivery.ts). */
export function webhookHeaders(raw: string, timestamp: number, id: string, secret: string, standardKey: Buffer): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': `chat-backend-relay/${packageJson.version}`,
    [SIGNATURE_HEADER]: signWebhookBody(raw, secret),
    [TIMESTAMP_HEADER]: String(timestamp),
    [STANDARD_ID_HEADER]: id,
    [STANDARD_TIMESTAMP_HEADER]: String(timestamp),
    [STANDARD_SIGNATURE_HEADER]: signStandardWebhook(standardKey, id, timestamp, raw),
  };
}

/**
 * A batch's webhook-id: random, kept with the batch for its retries. Not derived from its events'
 * ids: a gap marker has none, and a random id cannot name two different batches.
 */
export function newMessageId(): string {
  return `msg_${randomBytes(16).toString('hex')}`;
}

/** Whether `id` has the shape newMessageId() gives (anything else names no batch, and is never sent to the database). */
export function isMessageId(id: string): boolean {
  return /^msg_[0-9a-f]{32}$/.test(id);
}

export interface WebhookSinkOptions {
  /** EVENTS_WEBHOOK_URL */
  url: string;
  /**
   * EVENTS_WEBHOOK_SECRET: the HMAC key of X-Relay-Signature as given, and of the Standard Webhooks
   * signature as webhook-key.ts reads it (a `whsec_<base64>` secret: the decoded bytes).
   */
  secret: string;
  /** Events per POST at most (EVENTS_WEBHOOK_BATCH_MAX). */
  batchMax?: number;
  /** Events waiting at most (EVENTS_WEBHOOK_QUEUE_MAX); beyond, new events are dropped and counted. */
  queueMax?: number;
  /** One attempt's deadline; a slower receiver counts as a failure. */
  timeoutMs?: number;
  /**
   * How long after its deadline an attempt that still has not settled is given up and counted as
   * failed (a watchdog, for an HTTP client that lost its abort; the attempt is left to settle unread).
   */
  watchdogMarginMs?: number;
  /** Backoff after the n-th failure in a row: min(max, base * 2^(n-1)), between half and all of it. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  logger?: Logger;
  fetch?: typeof fetch;
  /** Clock for the signed timestamp (ms since the epoch). */
  now?: () => number;
}

export interface WebhookStats {
  /** Events waiting, the batch in flight included. */
  queued: number;
  delivered: number;
  batches: number;
  /** Failed attempts (non-2xx, network error, timeout). */
  failures: number;
  /** Events dropped: queue overflow, or left undelivered at stop(). */
  dropped: number;
}

/** A POST body: `dropped` > 0 says that many events were lost (queue overflow) just before this batch. */
export interface WebhookBatch<E extends BusEvent = AnyEvent> {
  /** Unix seconds when this delivery attempt was signed. */
  timestamp: number;
  dropped: number;
  events: E[];
}

export interface WebhookSink<E extends BusEvent = AnyEvent> {
  /** Synchronous and cheap: for `bus.listen(sink.enqueue)`. */
  enqueue(this: void, event: E): void;
  /**
   * Stops taking events and delivers what is queued until `deadlineMs` has passed (then aborts the
   * attempt in flight). Resolves with what was left undelivered (also counted as dropped and logged).
   */
  stop(options?: { deadlineMs?: number }): Promise<{ undelivered: number }>;
  stats(): WebhookStats;
}

/**
 * Why a request failed, short and specific: `ECONNREFUSED 127.0.0.1:9` rather than undici's
 * `TypeError: fetch failed` (the system error is its `cause`, possibly an AggregateError of several).
 */
export function failureCause(error: unknown): string {
  for (let e = error as { name?: unknown; message?: unknown; code?: unknown; address?: unknown; port?: number; cause?: unknown; errors?: unknown } | undefined, depth = 0; e && depth < 5; depth++) {
    if (typeof e.code === 'string' && /^E[A-Z_]+$/.test(e.code)) {
      return typeof e.address === 'string' ? `${e.code} ${e.address}${e.port === undefined ? '' : `:${String(e.port)}`}` : e.code;
    }
    if (e.name === 'TimeoutError' || e.name === 'AbortError') return `${String(e.name)}: ${String(e.message)}`;
    e = (e.cause ?? (Array.isArray(e.errors) ? e.errors[0] : undefined)) as typeof e;
  }
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** How an attempt ended: accepted, refused or failed (why), or given up by the watchdog or by stop(). */
type Outcome = 'ok' | 'stuck' | 'stopped' | { status?: number; error?: string };

interface Entry<E> {
  event: E | undefined; // undefined: a marker carrying only a gap, for when nothing follows it
  droppedBefore: number;
}

/**
 * @example
 * const webhook = createWebhookSink({ url: config.events.webhook.url, secret: config.events.webhook.secret, logger })
 * bus.listen(webhook.enqueue)
 * // shutdown, after the media closed: await webhook.stop({ deadlineMs: 2000 })
 */
export function createWebhookSink<E extends BusEvent = AnyEvent>(options: WebhookSinkOptions): WebhookSink<E> {
  const batchMax = options.batchMax ?? DEFAULT_BATCH_MAX;
  const queueMax = options.queueMax ?? DEFAULT_QUEUE_MAX;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const watchdogMarginMs = options.watchdogMarginMs ?? DEFAULT_WATCHDOG_MARGIN_MS;
  const retryBaseMs = options.retryBaseMs ?? 500;
  const retryMaxMs = options.retryMaxMs ?? 30_000;
  const doFetch = options.fetch ?? fetch;
  const now = options.now ?? Date.now;
  const logger = options.logger;
  if (!options.secret) throw new Error('createWebhookSink: a secret is required');
  if (!Number.isInteger(batchMax) || batchMax < 1) throw new Error('createWebhookSink: batchMax must be a positive integer');
  if (!Number.isInteger(queueMax) || queueMax < 1) throw new Error('createWebhookSink: queueMax must be a positive integer');
  if (!(timeoutMs > 0)) throw new Error('createWebhookSink: timeoutMs must be positive');
  if (!(watchdogMarginMs >= 0)) throw new Error('createWebhookSink: watchdogMarginMs must not be negative');
  let standardKey: Buffer;
  try {
    standardKey = standardWebhooksKey(options.secret);
  } catch (error) {
    throw new Error(`createWebhookSink: EVENTS_WEBHOOK_SECRET: ${(error as Error).message}`, { cause: error });
  }
  const target = new URL(options.url); // throws on a malformed URL
  const origin = target.origin; // logged instead of the URL, which may carry a token

  const queue: Entry<E>[] = [];
  const stats: WebhookStats = { queued: 0, delivered: 0, batches: 0, failures: 0, dropped: 0 };
  let gap = 0; // events dropped since the last accepted one
  let running: Promise<void> | undefined;
  let stopping = false;
  let deadline = Infinity;
  let stopped = false; // stop()'s deadline passed: no further attempt
  let wake: (() => void) | undefined; // cuts a backoff wait short (stop() retries at once)
  let retryNow = false; // stop() came while an attempt was in flight: its backoff is skipped once
  // Why deliveries fail now (undefined: they do not). Logged when it changes, never per attempt.
  let failing: { cause: string; since: number; attempts: number } | undefined;
  let giveUp: ((outcome: Outcome) => void) | undefined; // ends the attempt in flight without waiting for it (stop()'s deadline)
  // The batch being tried: fixed at its first attempt, so that every retry carries the same events
  // under the same webhook-id (a receiver that skips an id it processed must not skip events that
  // joined the batch later). Cleared when it is accepted.
  let current: { size: number; id: string } | undefined;

  function enqueue(event: E): void {
    if (stopping) {
      stats.dropped++;
      return;
    }
    if (queue.length >= queueMax) {
      if (gap === 0) logger?.warn({ webhook: origin, queueMax }, 'event webhook queue full: new events are dropped until the receiver catches up');
      gap++;
      stats.dropped++;
      return;
    }
    queue.push({ event, droppedBefore: endEpisode() });
    kick();
  }

  /** The overflow episode's count, logged once, for the entry that follows the gap. */
  function endEpisode(): number {
    const dropped = gap;
    if (dropped > 0) logger?.warn({ webhook: origin, dropped }, 'event webhook queue takes events again; the next batch tells the receiver how many were dropped');
    gap = 0;
    return dropped;
  }

  function kick(): void {
    running ??= run().finally(() => {
      running = undefined;
      if (!stopping && queue.length > 0) kick();
    });
  }

  /** The next batch: the one being tried, else a new one from the front, never across a gap after its first entry. */
  function nextBatch(): { entries: Entry<E>[]; id: string } {
    if (current) return { entries: queue.slice(0, current.size), id: current.id };
    const entries = [queue[0]!];
    for (let i = 1; i < queue.length && entries.length < batchMax; i++) {
      if (queue[i]!.droppedBefore > 0) break;
      entries.push(queue[i]!);
    }
    current = { size: entries.length, id: newMessageId() };
    return { entries, id: current.id };
  }

  /**
   * One POST of the batch. Its deadline is a plain timer that aborts a controller held here (an
   * AbortSignal.timeout() inside AbortSignal.any() can be collected by a major GC and never fire:
   * nodejs/node#57736). A watchdog gives up on an attempt that has not settled `watchdogMarginMs` after
   * its deadline all the same: it counts as failed and the loop goes on; what the abandoned request
   * does later (a late answer, an error) is logged and changes nothing (the queue is only touched by
   * run(), after this returns).
   */
  async function attempt({ entries: batch, id }: { entries: Entry<E>[]; id: string }): Promise<boolean> {
    const body: WebhookBatch<E> = {
      timestamp: Math.floor(now() / 1000),
      dropped: batch[0]!.droppedBefore,
      events: batch.flatMap((entry) => (entry.event ? [entry.event] : [])),
    };
    const raw = JSON.stringify(body);
    const controller = new AbortController();
    const deadlineTimer = setTimeout(() => controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError')), timeoutMs);
    let watchdog: NodeJS.Timeout | undefined;
    const abandoned = new Promise<Outcome>((resolve) => {
      watchdog = setTimeout(resolve, timeoutMs + watchdogMarginMs, 'stuck');
      giveUp = resolve;
    });
    const sent = post(raw, body.timestamp, id, controller.signal);
    let outcome: Outcome;
    try {
      outcome = await Promise.race([sent, abandoned]);
    } finally {
      clearTimeout(deadlineTimer);
      clearTimeout(watchdog);
      giveUp = undefined;
    }
    const events = body.events.length;
    switch (outcome) {
      case 'ok':
        return true;
      case 'stuck':
        controller.abort(); // in case the client still listens
        logger?.error({ webhook: origin, events, timeoutMs, watchdogMarginMs }, 'event webhook attempt did not settle after its deadline; counted as failed and retried (the HTTP client lost its abort)');
        break;
      case 'stopped':
        controller.abort();
        break;
      default:
        failed(outcome.status !== undefined ? `HTTP ${outcome.status}` : (outcome.error ?? 'unknown error'), events);
        return false;
    }
    // Abandoned: the request may still settle; say so, and make sure it never throws unhandled.
    void sent.then((late) => {
      if (late === 'ok') logger?.warn({ webhook: origin, events }, 'an abandoned event webhook attempt was accepted late; the batch is sent again (receivers skip ids they processed)');
    });
    return false;
  }

  /** Logs a failure only when its cause differs from the last one's (a state change). */
  function failed(cause: string, events: number): void {
    if (failing?.cause === cause) {
      failing.attempts++;
      return;
    }
    const attemptsBefore = failing?.attempts ?? 0;
    failing = { cause, since: Date.now(), attempts: 1 };
    logger?.warn(
      { webhook: origin, cause, events, ...(attemptsBefore > 0 ? { attemptsBefore } : {}) },
      `event webhook failing: ${cause}; retrying with backoff (logged again when the cause changes or deliveries resume)`,
    );
  }

  function delivered(): void {
    if (!failing) return;
    logger?.info({ webhook: origin, failedAttempts: failing.attempts, failingForMs: Date.now() - failing.since }, 'event webhook delivering again');
    failing = undefined;
  }

  /** The POST itself: 'ok' on a 2xx, else why not. Never rejects. */
  async function post(raw: string, timestamp: number, id: string, signal: AbortSignal): Promise<Exclude<Outcome, 'stuck' | 'stopped'>> {
    try {
      const response = await doFetch(target, {
        method: 'POST',
        headers: webhookHeaders(raw, timestamp, id, options.secret, standardKey),
        body: raw,
        redirect: 'manual',
        signal,
      });
      await response.body?.cancel().catch(() => {});
      if (response.status >= 200 && response.status < 300) return 'ok';
      return { status: response.status };
    } catch (error) {
      return { error: failureCause(error) };
    }
  }

  /**
   * Waits `ms`, or less when stop() cuts the wait short. Resolves `false` when stop()'s deadline ends
   * the wait: no attempt follows then (one begun at the deadline would be given up at once, and a
   * timer can fire a millisecond before `Date.now()` reaches the deadline).
   */
  function sleep(ms: number): Promise<boolean> {
    if (retryNow) {
      retryNow = false;
      return Promise.resolve(true);
    }
    const left = deadline - Date.now();
    const cut = left <= ms;
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(!cut), Math.max(0, Math.min(ms, left)));
      wake = () => done(true);
      function done(goOn: boolean) {
        clearTimeout(timer);
        wake = undefined;
        resolve(goOn);
      }
    });
  }

  async function run(): Promise<void> {
    // Let the publisher's synchronous burst (a cascade of closes) gather into one batch.
    await new Promise((resolve) => setImmediate(resolve));
    let failuresInARow = 0;
    for (;;) {
      if (queue.length === 0 && gap > 0 && !stopping) {
        // Events were dropped and nothing followed: tell the receiver anyway.
        queue.push({ event: undefined, droppedBefore: endEpisode() });
      }
      // A wait that ran to stop()'s deadline ends here: an attempt begun at the deadline would be given
      // up at once by stop()'s own timer.
      if (queue.length === 0 || stopped || Date.now() >= deadline) return;
      const batch = nextBatch();
      if (await attempt(batch)) {
        delivered();
        failuresInARow = 0;
        queue.splice(0, batch.entries.length);
        current = undefined;
        stats.batches++;
        stats.delivered += batch.entries.filter((entry) => entry.event).length;
        continue;
      }
      stats.failures++;
      failuresInARow++;
      if (Date.now() >= deadline) return;
      const backoff = Math.min(retryMaxMs, retryBaseMs * 2 ** Math.min(failuresInARow - 1, 30));
      const wait = backoff / 2 + Math.random() * (backoff / 2);
      // The backoff holds while stopping too (stop() cut the wait under way short once); the deadline
      // ends a wait that would outlast it, and the run with it.
      if (!(await sleep(wait))) return;
    }
  }

  return {
    enqueue,
    async stop({ deadlineMs = 2_000 } = {}) {
      stopping = true;
      deadline = Date.now() + deadlineMs;
      const timer = setTimeout(() => {
        stopped = true;
        giveUp?.('stopped'); // the attempt in flight ends now, whatever its request does
        wake?.();
      }, deadlineMs);
      // Retry at once: cut the wait under way short, or skip the one that follows the attempt in flight.
      if (wake) wake();
      else retryNow = running !== undefined;
      if (queue.length > 0) kick();
      await running;
      clearTimeout(timer);
      stopped = true;
      const undelivered = queue.filter((entry) => entry.event).length + gap;
      if (undelivered > 0) {
        stats.dropped += queue.filter((entry) => entry.event).length;
        logger?.warn({ webhook: origin, undelivered }, 'event webhook stopped with events undelivered');
      }
      queue.length = 0;
      current = undefined;
      gap = 0;
      return { undelivered };
    },
    stats: () => ({ ...stats, queued: queue.filter((entry) => entry.event).length }),
  };
}
