// Prometheus metrics (prom-client), one registry per process: HTTP, rate limits, process; each module
// registers its own collectors on `registry` (Module.collect: the relay's media, the accounts' outcomes).
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { matchedRoutes } from 'hono/route';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { RateLimitMode } from '../http/rate-limit-store.js';

const RATE_LIMIT_MODES: readonly RateLimitMode[] = ['memory', 'redis', 'memory-fallback'];

/**
 * @example
 * const metrics = new Metrics()
 * relay.collect?.(metrics.registry)
 * app.use(httpMetrics(metrics))
 * const text = await metrics.registry.metrics()
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  private readonly rateLimitFallbacks: Counter;
  private rateLimitMode: () => RateLimitMode = () => 'memory';

  constructor() {
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

    this.rateLimitFallbacks = new Counter({
      name: 'rate_limit_store_fallback_total',
      help: 'Switches of the rate-limit counters from Redis to per-instance memory (Redis failed or was late)',
      registers,
    });
    const currentMode = () => this.rateLimitMode();
    new Gauge({
      name: 'rate_limit_store_mode',
      help: 'Where rate limits count now: 1 for the mode in force (memory by configuration, redis shared, memory-fallback while Redis fails)',
      labelNames: ['mode'],
      registers,
      collect() {
        const current = currentMode();
        for (const mode of RATE_LIMIT_MODES) this.set({ mode }, mode === current ? 1 : 0);
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

  /**
   * Counts and times a request that has been answered, by its route pattern (never the raw path, which
   * holds ids); `started` is its `performance.now()` at arrival.
   */
  recordHttp(c: Context, started: number): void {
    const { method } = c.req;
    const route = routePattern(c);
    const { status } = c.res;
    this.httpDuration.observe({ method, route, status }, (performance.now() - started) / 1000);
  }
}

/**
 * Times each request and records it in `metrics` once it is answered (`recordHttp`: the latency
 * histogram by route pattern).
 * @example app.use(httpMetrics(metrics))
 */
export function httpMetrics(metrics: Metrics) {
  return createMiddleware(async function httpMetrics(c, next) {
    const started = performance.now();
    await next();
    metrics.recordHttp(c, started);
  });
}

function routePattern(c: Context): string {
  const handler = matchedRoutes(c).findLast((route) => route.method !== 'ALL');
  return handler?.path ?? 'unmatched';
}
