// Prometheus metrics (prom-client), one registry per service: HTTP, auth outcomes, media, process.
import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { RateLimitMode } from '../http/rate-limit-store.js';
import type { MediaService } from '../media/service.js';

export type AuthAction = 'login' | 'refresh';
export type AuthOutcome = 'ok' | 'failed' | 'rate_limited' | 'reused';

const RESOURCE_KINDS = ['routers', 'transports', 'producers', 'consumers'] as const;
const RATE_LIMIT_MODES: readonly RateLimitMode[] = ['memory', 'redis', 'memory-fallback'];

/**
 * @example
 * const metrics = new Metrics(media)
 * app.use(metrics.httpMiddleware())
 * const text = await metrics.registry.metrics()
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  private readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  private readonly authOutcomes: Counter<'action' | 'outcome'>;
  private readonly rateLimitFallbacks: Counter;
  private rateLimitMode: () => RateLimitMode = () => 'memory';

  constructor(media: MediaService) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });

    this.httpRequests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
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
          for (const kind of RESOURCE_KINDS) this.set({ worker: String(stats.slot), kind }, stats.counts[kind]);
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

  /** Counts and times every request by its route pattern (never the raw path, which holds ids). */
  httpMiddleware(): MiddlewareHandler {
    const metrics = this;
    return async function httpMetrics(c, next) {
      const end = metrics.httpDuration.startTimer();
      await next();
      const labels = { method: c.req.method, route: routePattern(c), status: String(c.res.status) };
      end(labels);
      metrics.httpRequests.inc(labels);
      if (c.req.method === 'POST' && labels.route === '/api/v1/auth/login') metrics.recordAuth('login', outcomeOf(c.res.status));
      if (c.req.method === 'POST' && labels.route === '/api/v1/auth/refresh-token') metrics.recordAuth('refresh', outcomeOf(c.res.status));
    };
  }
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
