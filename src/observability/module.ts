// /healthz and /readyz on every listener, /internal/metrics behind the internal token: the process's
// own endpoints, declared with createRoute so the documents list them. Readiness asks the checks the
// composition gives (database, modules); no area imported.
import { createRoute, OpenAPIHono } from '@hono/zod-openapi';
import { z } from 'zod';
import type { AppEnv } from '../http/env.js';
import type { Module } from '../http/module.js';
import type { Metrics } from './metrics.js';

export interface ObservabilityDeps {
  metrics: Metrics;
  /** Each check `ok` or the reason it is not (database, media, relay, ...), in the order shown. */
  readiness: () => Promise<Record<string, string>>;
}

const readiness = z.strictObject({
  status: z.enum(['ready', 'not_ready']),
  checks: z.record(z.string(), z.string()).describe('each check (the database, then each module: media, relay, ...): ok, or why it is not'),
});

const healthz = createRoute({
  tags: ['observability'],
  method: 'get',
  path: '/healthz',
  summary: 'Liveness: 200 while the process runs',
  responses: { 200: { description: 'alive', content: { 'application/json': { schema: z.strictObject({ status: z.literal('ok') }) } } } },
});

const readyz = createRoute({
  tags: ['observability'],
  method: 'get',
  path: '/readyz',
  summary: 'Readiness: the database answers and every composed module is ready (at least one media worker alive, the relay not draining); 503 otherwise',
  responses: {
    200: { description: 'ready', content: { 'application/json': { schema: readiness } } },
    503: { description: 'not ready: the same shape, status not_ready', content: { 'application/json': { schema: readiness } } },
  },
});

const metricsRoute = createRoute({
  tags: ['observability'],
  method: 'get',
  path: '/metrics',
  summary: 'Prometheus metrics (text exposition format)',
  responses: { 200: { description: 'metrics', content: { 'text/plain': { schema: z.string() } } } },
});

/** @example createObservability({ metrics, readiness: () => checks() }) */
export function createObservability(deps: ObservabilityDeps): Module {
  const health = new OpenAPIHono<AppEnv>()
    .openapi(healthz, (c) => c.json({ status: 'ok' as const }, 200))
    .openapi(readyz, async (c) => {
      const checks = await deps.readiness();
      const ready = Object.values(checks).every((value) => value === 'ok');
      return ready ? c.json({ status: 'ready' as const, checks }, 200) : c.json({ status: 'not_ready' as const, checks }, 503);
    });
  const metrics = new OpenAPIHono<AppEnv>().openapi(metricsRoute, async (c) => {
    const text = await deps.metrics.registry.metrics();
    return c.text(text, 200, { 'Content-Type': deps.metrics.registry.contentType });
  });
  return {
    name: 'observability',
    mounts: [
      { prefix: '/', surface: 'every', routes: health },
      { prefix: '/internal', surface: 'internal', routes: metrics },
    ],
  };
}
