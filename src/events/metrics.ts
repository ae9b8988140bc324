// The event metrics (bus, streams, webhook), read from the sources' own counters when scraped.
import { Counter, Gauge, type Registry } from 'prom-client';
import { registerTotals } from '../observability/totals.js';
import type { EventBus } from './bus.js';
import type { AppenderStats } from './log/appender.js';
import type { LogDeliveryStats } from './log/delivery.js';
import type { EventStreams } from './sse.js';
import type { WebhookSink } from './webhook.js';

export interface EventMetricSources {
  bus: Pick<EventBus, 'stats'>;
  streams?: Pick<EventStreams, 'stats'> | undefined;
  webhook?: Pick<WebhookSink, 'stats'> | undefined;
  /** The event log's writer. */
  log?: { appender: { stats(): AppenderStats } } | undefined;
  /** The webhook's durable part: this instance's counts, and the lag and parked batches from the database. */
  delivery?: { delivery: { stats(): LogDeliveryStats }; store: { lagSeconds(): Promise<number>; parkedCount(): Promise<number> } } | undefined;
}

/**
 * The relay event metrics, read from the sources' own counters when scraped (nothing on the publish path).
 * @example registerEventMetrics(metrics.registry, { bus, streams, webhook })
 */
export function registerEventMetrics(registry: Registry, { bus, streams, webhook, log, delivery }: EventMetricSources): void {
  const registers = [registry];
  if (log) registerTotals(registry, () => log.appender.stats(), [['events_log_appended_total', 'Durable events this instance stored in the event log', (s) => s.appended]]);
  if (delivery) {
    new Gauge({
      name: 'events_webhook_lag_seconds',
      help: 'Age of the oldest durable event the webhook has not delivered (or parked) yet; 0 when none waits',
      registers,
      async collect() {
        this.set(await delivery.store.lagSeconds().catch(() => NaN));
      },
    });
    new Gauge({
      name: 'events_webhook_parked',
      help: 'Webhook batches parked as failed after EVENTS_WEBHOOK_GIVE_UP_S and not delivered again',
      registers,
      async collect() {
        this.set(await delivery.store.parkedCount().catch(() => NaN));
      },
    });
    registerTotals(registry, () => delivery.delivery.stats(), [['events_webhook_parked_total', 'Webhook batches this instance parked as failed after EVENTS_WEBHOOK_GIVE_UP_S', (s) => s.parked]]);
    new Gauge({
      name: 'events_webhook_lease_held',
      help: '1 when this instance holds the webhook lease (delivers durable events from the log)',
      registers,
      collect() {
        this.set(delivery.delivery.stats().holder ? 1 : 0);
      },
    });
  }
  new Counter({
    name: 'media_events_published_total',
    help: 'Relay events published on the bus, by type',
    labelNames: ['type'],
    registers,
    collect() {
      this.reset();
      for (const [type, count] of Object.entries(bus.stats().published)) this.inc({ type }, count ?? 0);
    },
  });
  new Counter({
    name: 'media_events_resyncs_total',
    help: 'Subscriptions that started with resync, by reason (unknown_id, too_old)',
    labelNames: ['reason'],
    registers,
    collect() {
      this.reset();
      for (const [reason, count] of Object.entries(bus.stats().resyncs)) this.inc({ reason }, count);
    },
  });
  registerTotals(registry, () => bus.stats(), [['media_events_subscriber_overflows_total', 'Subscribers cut off for leaving more than EVENTS_SUBSCRIBER_MAX_QUEUED events unread', (s) => s.overflows]]);
  if (streams) {
    new Gauge({
      name: 'media_event_streams_open',
      help: 'GET /internal/v1/events streams open now',
      registers,
      collect() {
        this.set(streams.stats().open);
      },
    });
    registerTotals(registry, () => streams.stats(), [['media_event_streams_refused_total', 'Event streams refused with STREAM_LIMIT_EXCEEDED (EVENTS_MAX_STREAMS reached)', (s) => s.refused]]);
  }
  if (webhook) {
    registerTotals(registry, () => webhook.stats(), [
      ['media_events_webhook_delivered_total', 'Events the webhook receiver accepted (2xx)', (s) => s.delivered],
      ['media_events_webhook_failures_total', 'Failed webhook attempts (non-2xx, network error, timeout), each retried', (s) => s.failures],
      ['media_events_webhook_dropped_total', 'Events never delivered: webhook queue overflow (EVENTS_WEBHOOK_QUEUE_MAX) or left at shutdown', (s) => s.dropped],
    ]);
    new Gauge({
      name: 'media_events_webhook_queued',
      help: 'Events waiting for the webhook receiver',
      registers,
      collect() {
        this.set(webhook.stats().queued);
      },
    });
  }
}
