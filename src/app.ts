// createApp(modules): the HTTP surface of the composed modules, without listening and without
// module-level state. Common middleware, the mounts of every module, one onError and one notFound.
import { Hono, type Context } from 'hono';
import { requestId } from 'hono/request-id';
import { secureHeaders } from 'hono/secure-headers';
import { HTTPException } from 'hono/http-exception';
import { bodyLimit } from './http/body-limit.js';
import { apiCors, type ApiCorsOptions } from './http/cors.js';
import type { AppEnv } from './http/env.js';
import { handleInternalError, routeNotFound } from './http/internal-errors.js';
import { internalToken } from './http/internal-token.js';
import type { ErrorScope, Module, Surface } from './http/module.js';
import { requestLog } from './http/request-log.js';
import type { Logger } from './logger.js';
import { httpMetrics, type Metrics } from './observability/metrics.js';

export type { AppEnv } from './http/env.js';

/**
 * Which faces one listener serves: `all` (the default), or, with a separate internal listener,
 * `public` (account API and docs; /internal/* answers 404 without looking at any token) and
 * `internal` (the relay, info and metrics). Mounts of every surface (/healthz, /readyz) answer on each.
 */
export type AppSurface = 'all' | Surface;

export const API_BODY_LIMIT = 64 * 1024;
export const INTERNAL_BODY_LIMIT = 256 * 1024;

export interface AppOptions {
  logger: Logger;
  /** The internal token in force (config's, or the one generated at start-up); required when an internal mount is served. */
  internalToken?: string;
  /** Where the request histogram goes; none when absent. */
  metrics?: Metrics;
  surface?: AppSurface;
  /** Browsers allowed to call /api/* (config.cors); none when absent. */
  cors?: ApiCorsOptions;
}

/**
 * @example
 * const { modules, metrics } = await compose(config, { logger })
 * const app = createApp(modules, { logger, internalToken, metrics })
 * const res = await app.request('/healthz')
 */
export function createApp(modules: readonly Module[], options: AppOptions) {
  const { logger } = options;
  const surface = options.surface ?? 'all';
  const serves = (s: Surface | 'every') => s === 'every' || surface === 'all' || s === surface;
  const servesPublic = serves('public');
  const servesInternal = serves('internal');
  const scopes: ErrorScope[] = modules.flatMap((m) => m.errors ?? []);
  const app = new Hono<AppEnv>();

  // The client's X-Request-Id when it is a sane token (at most 255 of [A-Za-z0-9_=-]), else a UUID;
  // echoed in the answer's X-Request-Id. Then the log line and the metrics of every request.
  app.use(requestId({ headerName: 'X-Request-Id', limitLength: 255 }), requestLog(logger));
  if (options.metrics) app.use(httpMetrics(options.metrics));

  if (servesPublic) {
    // First, so that every answer (a 401, a 413, a 429 with its Retry-After) carries the CORS headers
    // a browser needs to let the page read it, and preflights are answered before any limit counts them.
    if (options.cors) app.use('/api/*', apiCors(options.cors));
    app.use('/api/*', secureHeaders());
    app.use('/docs', secureHeaders());
    // Answered by the /api scope's onError (the envelope's 413).
    app.use('/api/*', bodyLimit({ maxSize: API_BODY_LIMIT, onError: () => { throw new HTTPException(413); } }));
  }
  const internalMounts = modules.flatMap((m) => m.mounts).filter((mount) => mount.surface === 'internal');
  if (servesInternal && internalMounts.length > 0) {
    if (!options.internalToken) throw new Error('createApp: an internal mount needs the internal token');
    // What holds no data (the relay's docs page shell) answers before the guard: Hono runs a path's
    // handlers in the order they were added, and these routes answer without calling the rest.
    for (const mount of internalMounts) if (mount.withoutToken) app.route(mount.prefix, mount.routes);
    // Every /internal path checks X-Internal-Token before anything else (401 before 404 or 413), then
    // its 256 KiB body limit.
    const tooLarge = (c: Context) => c.json(internalBodyTooLarge, 413);
    app.use('/internal/*', internalToken({ token: options.internalToken }), bodyLimit({ maxSize: INTERNAL_BODY_LIMIT, onError: tooLarge }));
  }

  for (const module of modules) {
    for (const mount of module.mounts) if (serves(mount.surface) && !mount.withoutToken) app.route(mount.prefix, mount.routes);
  }

  app.notFound((c) => {
    const { path, method } = c.req;
    // Where the internal mounts are served, the token guard has already answered 401 for a bad token.
    if (isUnder(path, '/internal')) return handleInternalError(routeNotFound(method, path), c, logger);
    const scope = scopes.find((s) => isUnder(path, s.scope));
    if (scope?.notFound) {
      const allowed = [...new Set(app.routes.filter((r) => r.method !== 'ALL' && matches(r.path, path)).map((r) => r.method))];
      return scope.notFound(c, allowed);
    }
    // Every other path (/healthz, /docs, …) answers in the internal face's shape: one shape outside /api.
    return handleInternalError(routeNotFound(method, path), c, logger);
  });

  // One onError for the whole app, choosing the shape by path: a sub-app's own onError would make Hono
  // wrap each of that sub-app's handlers in an error-handling compose on every request.
  app.onError((error, c) => {
    const { path } = c.req;
    if (servesInternal && isUnder(path, '/internal')) return handleInternalError(error, c, logger);
    const scope = scopes.find((s) => isUnder(path, s.scope));
    if (scope) return scope.onError(error, c);
    return handleInternalError(error, c, logger);
  });

  return app;
}

export type App = ReturnType<typeof createApp>;

const internalBodyTooLarge = { code: 'VALIDATION_ERROR', message: 'request body exceeds 256 KiB', details: { issues: [{ path: '', message: 'body too large' }] } };

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
