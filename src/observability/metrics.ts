// Prometheus metrics (prom-client), one registry per service: HTTP, auth outcomes, media, process.
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { matchedRoutes } from 'hono/route';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { MediaService } from '../relay/index.js';
import { KIND_PLURALS } from '../relay/registry/kinds.js';
import type { EventBus } from '../events/bus.js';
import type { EventStreams } from '../events/sse.js';
import type { WebhookSink } from '../events/webhook.js';
import type { RateLimitMode } from '../http/rate-limit-store.js';

export type AuthAction = 'login' | 'refresh';
export type AuthOutcome = 'ok' | 'failed' | 'rate_limited' | 'reused';

const RATE_LIMIT_MODES: readonly RateLimitMode[] = ['memory', 'redis', 'memory-fallback'];

/**
 * @example
 * const metrics = new Metrics(media)
 * app.use(httpMetrics(metrics))
 * const text = await metrics.registry.metrics()
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  private readonly authOutcomes: Counter<'action' | 'outcome'>;
  private readonly rateLimitFallbacks: Counter;
  private rateLimitMode: () => RateLimitMode = () => 'memory';

  constructor(media: MediaService) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });

    // Its `_count` series counts the requests by the same labels: no separate request counter.
    this.httpDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.authOutcomes = new Counter({
      name: 'auth_outcomes_total',
      help: 'Account API outcomes: login and refresh ok/failed/rate_limited; refresh reused (a revoking reuse, also counted as failed)',
      labelNames: ['action', 'outcome'],
      registers,
    });

    this.rateLimitFallbacks = new Counter({
      name: 'rate_limit_store_fallback_total',
      help: 'Switches of the rate-limit counters from Redis to per-instance memory (Redis failed or was late)',
      registers,
    });
    const metrics = this;
    new Gauge({
      name: 'rate_limit_store_mode',
      help: 'Where rate limits count now: 1 for the mode in force (memory by configuration, redis shared, memory-fallback while Redis fails)',
      labelNames: ['mode'],
      registers,
      collect() {
        const current = metrics.rateLimitMode();
        for (const mode of RATE_LIMIT_MODES) this.set({ mode }, mode === current ? 1 : 0);
      },
    });

    new Gauge({
      name: 'media_resources',
      help: 'Open mediasoup resources per worker slot and kind',
      labelNames: ['worker', 'kind'],
      registers,
      async collect() {
        this.reset();
        for (const stats of await media.workerStats()) {
          for (const kind of KIND_PLURALS) this.set({ worker: String(stats.slot), kind }, stats.counts[kind]);
        }
      },
    });
    new Gauge({
      name: 'media_worker_cpu_seconds',
      help: 'CPU time (user + system) used by the current mediasoup worker of each slot, from getResourceUsage()',
      labelNames: ['worker'],
      registers,
      async collect() {
        this.reset();
        for (const stats of await media.workerStats()) {
          this.set({ worker: String(stats.slot) }, (stats.cpuUserMs + stats.cpuSystemMs) / 1000);
        }
      },
    });
    new Gauge({
      name: 'media_worker_max_rss_bytes',
      help: 'Peak resident memory of the current mediasoup worker of each slot, from getResourceUsage()',
      labelNames: ['worker'],
      registers,
      async collect() {
        this.reset();
        for (const stats of await media.workerStats()) this.set({ worker: String(stats.slot) }, stats.maxRssKiB * 1024);
      },
    });
    new Gauge({
      name: 'media_relay_draining',
      help: '1 once a drain has begun (SIGTERM or POST /internal/v1/drain): new routers are refused',
      registers,
      collect() {
        this.set(media.draining ? 1 : 0);
      },
    });
    new Gauge({
      name: 'media_workers_alive',
      help: 'Live mediasoup workers',
      registers,
      collect() {
        this.set(media.aliveWorkerCount());
      },
    });
    new Counter({
      name: 'media_worker_restarts_total',
      help: 'Worker restarts per slot since the service started',
      labelNames: ['worker'],
      registers,
      collect() {
        this.reset();
        for (const [slot, worker] of media.info().workers.entries()) this.inc({ worker: String(slot) }, worker.restarts);
      },
    });
    new Counter({
      name: 'media_worker_deaths_total',
      help: 'Worker deaths per slot since the service started',
      labelNames: ['worker'],
      registers,
      collect() {
        this.reset();
        for (const [slot, worker] of media.info().workers.entries()) this.inc({ worker: String(slot) }, worker.deaths);
      },
    });
  }

  /** Adds the relay event metrics (bus, streams, webhook) to this registry. */
  trackEvents(sources: EventMetricSources): void {
    registerEventMetrics(this.registry, sources);
  }

  /** The gauge of the rate-limit mode reads `mode` from now on. */
  watchRateLimitMode(mode: () => RateLimitMode): void {
    this.rateLimitMode = mode;
  }

  recordRateLimitFallback(): void {
    this.rateLimitFallbacks.inc();
  }

  recordAuth(action: AuthAction, outcome: AuthOutcome): void {
    this.authOutcomes.inc({ action, outcome });
  }

  /**
   * Counts and times a request that has been answered, by its route pattern (never the raw path, which
   * holds ids); `started` is its `performance.now()` at arrival.
   */
  recordHttp(c: Context, started: number): void {
    const { method } = c.req;
    const route = routePattern(c);
    const { status } = c.res;
    this.httpDuration.observe({ method, route, status }, (performance.now() - started) / 1000);
    if (method === 'POST' && route === '/api/v1/auth/login') this.recordAuth('login', outcomeOf(status));
    if (method === 'POST' && route === '/api/v1/auth/refresh-token') this.recordAuth('refresh', outcomeOf(status));
  }
}

/**
 * Times each request and records it in `metrics` once it is answered (`recordHttp`: the latency
 * histogram by route pattern, and the login and refresh outcomes).
 * @example app.use(httpMetrics(metrics))
 */
export function httpMetrics(metrics: Metrics) {
  return createMiddleware(async function httpMetrics(c, next) {
    const started = performance.now();
    await next();
    metrics.recordHttp(c, started);
  });
}

function outcomeOf(status: number): AuthOutcome {
  if (status === 200) return 'ok';
  if (status === 429) return 'rate_limited';
  return 'failed';
}

function routePattern(c: Context): string {
  const handler = matchedRoutes(c).findLast((route) => route.method !== 'ALL');
  return handler?.path ?? 'unmatched';
}

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
    help: 'Subscriptions that started with resync, by reason (unknown_id, too_old, other_process)',
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
