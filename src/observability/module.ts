// /healthz and /readyz on every listener, /internal/metrics behind the internal token: the process's
// own endpoints. Readiness asks the checks the composition gives (database, modules); no area imported.
import { Hono } from 'hono';
import type { AppEnv } from '../http/env.js';
import type { Module } from '../http/module.js';
import type { Metrics } from './metrics.js';

export interface ObservabilityDeps {
  metrics: Metrics;
  /** Each check `ok` or the reason it is not (database, media, relay, ...), in the order shown. */
  readiness: () => Promise<Record<string, string>>;
}

/** @example createObservability({ metrics, readiness: () => checks() }) */
export function createObservability(deps: ObservabilityDeps): Module {
  const health = new Hono<AppEnv>()
    .get('/healthz', (c) => c.json({ status: 'ok' as const }))
    .get('/readyz', async (c) => {
      const checks = await deps.readiness();
      const ready = Object.values(checks).every((value) => value === 'ok');
      return c.json({ status: ready ? ('ready' as const) : ('not_ready' as const), checks }, ready ? 200 : 503);
    });
  const metrics = new Hono<AppEnv>().get('/metrics', async (c) => {
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
