// The event metrics (bus, streams, webhook), read from the sources' own counters when scraped.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { EventBus } from './bus.js';
import type { EventStreams } from './sse.js';
import type { WebhookSink } from './webhook.js';

export interface EventMetricSources {
  bus: Pick<EventBus, 'stats'>;
  streams?: Pick<EventStreams, 'stats'> | undefined;
  webhook?: Pick<WebhookSink, 'stats'> | undefined;
}

/**
 * The relay event metrics, read from the sources' own counters when scraped (nothing on the publish path).
 * @example registerEventMetrics(metrics.registry, { bus, streams, webhook })
 */
export function registerEventMetrics(registry: Registry, { bus, streams, webhook }: EventMetricSources): void {
  const registers = [registry];
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
  new Counter({
    name: 'media_events_subscriber_overflows_total',
    help: 'Subscribers cut off for leaving more than EVENTS_SUBSCRIBER_MAX_QUEUED events unread',
    registers,
    collect() {
      this.reset();
      this.inc(bus.stats().overflows);
    },
  });
  if (streams) {
    new Gauge({
      name: 'media_event_streams_open',
      help: 'GET /internal/v1/events streams open now',
      registers,
      collect() {
        this.set(streams.stats().open);
      },
    });
    new Counter({
      name: 'media_event_streams_refused_total',
      help: 'Event streams refused with STREAM_LIMIT_EXCEEDED (EVENTS_MAX_STREAMS reached)',
      registers,
      collect() {
        this.reset();
        this.inc(streams.stats().refused);
      },
    });
  }
  if (webhook) {
    const counter = (name: string, help: string, read: (s: ReturnType<WebhookSink['stats']>) => number) =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(read(webhook.stats()));
        },
      });
    counter('media_events_webhook_delivered_total', 'Events the webhook receiver accepted (2xx)', (s) => s.delivered);
    counter('media_events_webhook_failures_total', 'Failed webhook attempts (non-2xx, network error, timeout), each retried', (s) => s.failures);
    counter('media_events_webhook_dropped_total', 'Events never delivered: webhook queue overflow (EVENTS_WEBHOOK_QUEUE_MAX) or left at shutdown', (s) => s.dropped);
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
