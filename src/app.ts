// createApp(deps): the whole HTTP surface, without listening and without module-level state.
import { Hono } from 'hono';
import { bodyLimit } from './http/body-limit.js';
import { requestId, type RequestIdVariables } from 'hono/request-id';
import { secureHeaders } from 'hono/secure-headers';
import { AuditLog } from './accounts/audit.js';
import { createAuthEventsApp } from './accounts/audit-routes.js';
import { createAuthApp } from './accounts/routes.js';
import type { Config } from './config.js';
import type { Database } from './db/client.js';
import { createDocsApp, createInternalDocsApp } from './docs/routes.js';
import { handleApiError } from './http/api-errors.js';
import { ApiCode, ApiError, envelopeError } from './http/envelope.js';
import { internalToken } from './http/internal-token.js';
import { requestLog } from './http/request-log.js';
import type { RateLimitStores } from './http/rate-limit-store.js';
import { AuthKeys } from './secrets/auth-key.js';
import type { Logger } from './logger.js';
import { notFound as relayNotFound } from './relay/errors.js';
import { createInternalApp } from './relay/http/app.js';
import { handleRelayError } from './relay/http/errors.js';
import type { RelayEvents } from './relay/events/index.js';
import type { MediaService } from './relay/index.js';
import { httpMetrics, Metrics } from './observability/metrics.js';

export interface AppDeps {
  config: Config;
  database: Database;
  media: MediaService;
  /** The relay's event bus and its sinks (createRelayEvents); the same bus the media service publishes on. */
  events: RelayEvents;
  logger: Logger;
  /** Injected so tests can move time; defaults to the wall clock. */
  now?: () => Date;
  /** The internal token in force (config's, or the one generated at start-up). */
  internalToken: string;
  /**
   * Subkeys of the AUTH_KEY_SECRET in force (config's, or the one generated at start-up); when absent,
   * made from `config.authKeySecret`, and the account API refuses to start without either.
   */
  authKeys?: AuthKeys;
  /** Shared by the listeners of one process; created for the app when absent. */
  metrics?: Metrics;
  /** The audit trail of authentication events; created for the app when absent. */
  audit?: AuditLog;
  /** Where rate-limit counters live; when absent, each budget counts in this app's memory. */
  rateLimitStores?: RateLimitStores;
}

/**
 * Which faces one listener serves: `all` (the default), or, with a separate internal listener,
 * `public` (account API and docs; /internal/* answers 404 without looking at any token) and
 * `internal` (the relay, info and metrics). /healthz and /readyz answer on every surface.
 */
export type Surface = 'all' | 'public' | 'internal';

export type AppEnv = { Variables: RequestIdVariables };

const API_BODY_LIMIT = 64 * 1024;

/**
 * @example
 * const events = createRelayEvents(config.events, logger)
 * const media = await createMedia(config.media, logger, { bus: events.bus })
 * const app = createApp({ config, database, media, events, logger, internalToken })
 * const res = await app.request('/healthz')
 */
export function createApp(appDeps: AppDeps, options: { surface?: Surface } = {}) {
  const surface = options.surface ?? 'all';
  const servesPublic = surface !== 'internal';
  const servesInternal = surface !== 'public';
  const secret = appDeps.config.authKeySecret;
  const deps: AppDeps & { metrics: Metrics; audit: AuditLog } = {
    ...appDeps,
    ...(appDeps.authKeys === undefined && secret !== undefined ? { authKeys: new AuthKeys(secret) } : {}),
    metrics: appDeps.metrics ?? withEventMetrics(new Metrics(appDeps.media), appDeps.events),
    audit:
      appDeps.audit ??
      new AuditLog({ db: appDeps.database.db, now: appDeps.now ?? (() => new Date()), logger: appDeps.logger, retentionDays: appDeps.config.auth.eventsRetentionDays }),
  };
  const { logger } = deps;
  const app = new Hono<AppEnv>();

  // The client's X-Request-Id when it is a sane token (at most 255 of [A-Za-z0-9_=-]), else a UUID;
  // echoed in the answer's X-Request-Id. Then the log line and the metrics of every request.
  app.use(requestId({ headerName: 'X-Request-Id', limitLength: 255 }), requestLog(logger), httpMetrics(deps.metrics));

  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    const [database, media] = await Promise.all([
      deps.database.ping().then(
        () => 'ok' as const,
        () => 'unavailable' as const,
      ),
      deps.media.aliveWorkerCount() > 0 ? ('ok' as const) : ('no live worker' as const),
    ]);
    // A draining relay takes no new clients: the proxy routes them to another machine at once.
    const relay = deps.media.draining ? ('draining' as const) : ('ok' as const);
    const ready = database === 'ok' && media === 'ok' && relay === 'ok';
    return c.json({ status: ready ? 'ready' : 'not_ready', checks: { database, media, relay } }, ready ? 200 : 503);
  });

  if (servesPublic) {
    app.use('/api/*', secureHeaders());
    app.use('/docs', secureHeaders());
    app.use(
      '/api/*',
      bodyLimit({
        maxSize: API_BODY_LIMIT,
        onError: (c) => envelopeError(c, new ApiError(ApiCode.INVALID_REQUEST, 'request body exceeds 64 KiB', 413)),
      }),
    );
    app.route('/api/v1/auth', createAuthApp(deps));
    app.route('/', createDocsApp());
  }

  if (servesInternal) {
    // Operations endpoints beside the relay (metrics, docs, the audit trail), each behind the same token guard.
    const guard = internalToken({ token: deps.internalToken });
    const operations = new Hono<AppEnv>()
      .get('/metrics', guard, async (c) => {
        const text = await deps.metrics.registry.metrics();
        return c.text(text, 200, { 'Content-Type': deps.metrics.registry.contentType });
      })
      .route('/', createInternalDocsApp(guard))
      .route('/', createAuthEventsApp(deps.audit, guard));
    app.route('/internal', operations);
    // The internal app checks X-Internal-Token before anything else (401 before 404 or 413), then its
    // 256 KiB body limit. Its errors are answered in the relay's shape by app.onError below.
    app.route('/internal', createInternalApp(deps));
  }

  app.notFound((c) => {
    const { path, method } = c.req;
    // Where the relay is served, its token guard has already answered 401 for a bad token.
    if (isUnder(path, '/internal')) return handleRelayError(relayNotFound('route', `${method} ${path}`), c, logger);
    if (isUnder(path, '/api')) {
      const allowed = [...new Set(app.routes.filter((r) => r.method !== 'ALL' && matches(r.path, path)).map((r) => r.method))];
      return allowed.length > 0 && !allowed.includes(method)
        ? envelopeError(c, new ApiError(ApiCode.NOT_FOUND, `method ${method} not allowed on ${path}`, 405, { Allow: allowed.join(', ') }))
        : envelopeError(c, new ApiError(ApiCode.NOT_FOUND, `no such route: ${method} ${path}`, 404));
    }
    return c.json({ error: 'not found' }, 404);
  });

  // One onError for the whole app, choosing the shape by path: a sub-app's own onError would make Hono
  // wrap each of that sub-app's handlers in an error-handling compose on every request.
  app.onError((error, c) => {
    if (isUnder(c.req.path, '/api')) return handleApiError(error, c, logger);
    if (servesInternal && isUnder(c.req.path, '/internal')) return handleRelayError(error, c, logger);
    logger.error({ err: error, requestId: c.get('requestId') }, 'unhandled error');
    return c.json({ error: 'internal error' }, 500);
  });

  return app;
}

function withEventMetrics(metrics: Metrics, events: RelayEvents): Metrics {
  metrics.trackEvents(events);
  return metrics;
}

function isUnder(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

/** Whether a registered route pattern (with `:param` segments) matches a concrete path. */
function matches(pattern: string, path: string): boolean {
  if (pattern.includes('*')) return false;
  const p = pattern.split('/');
  const s = path.split('/');
  return p.length === s.length && p.every((seg, i) => seg.startsWith(':') || seg === s[i]);
}
